// Package decode turns response bodies into JSON documents as a manifest's
// decoder says (JSON, JSON lines, JSON items, CSV, XML, plain lines, and
// gzip or zip archives of those), reading streaming formats as the body
// arrives, so that a body of any size is never held whole. Records are then
// extracted from each document.
package decode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/airbyte-go/source-declarative/manifest"
)

// Doc is one document of a body, as JSON.
type Doc struct {
	JSON []byte // valid until the emit function returns
	// Elements says a top-level array is a list of documents, as the JSON
	// decoders read a body.
	Elements bool
	// Line is the line number of a JSON lines document, whose syntax is left
	// to the extractor: a line that is not JSON is skipped with a warning.
	Line int
	// Ignored says what of the body the document leaves out (text after an
	// XML document's root element), for a warning.
	Ignored string
}

// Error is a body that is not what the decoder expects.
type Error struct {
	Decoder string // the decoder's name, GzipDecoder(CsvDecoder)
	Err     error
}

func (e *Error) Error() string { return e.Decoder + ": " + e.Err.Error() }

func (e *Error) Unwrap() error { return e.Err }

// Decoder decodes bodies as one decoder component says.
type Decoder struct {
	m     *manifest.Decoder // never nil: a JsonDecoder when the manifest has none
	inner *Decoder
	max   int64 // the largest document held whole (a JSON or XML body, a line, a zip archive), in bytes
}

// New returns the decoder of m (nil: JsonDecoder); a document larger than
// maxDoc bytes is an error.
func New(m *manifest.Decoder, maxDoc int64) *Decoder {
	if m == nil {
		m = &manifest.Decoder{Type: manifest.JSONDecoder}
	}
	if maxDoc <= 0 {
		maxDoc = 256 << 20
	}
	d := &Decoder{m: m, max: maxDoc}
	if m.Inner != nil {
		d.inner = New(m.Inner, maxDoc)
	}
	return d
}

// Name is the decoder's type with what it wraps, for messages.
func (d *Decoder) Name() string { return d.m.Name() }

// Custom is the custom Python decoder this is, or nil: the extractor asks
// the components host for its documents, given the whole response.
func (d *Decoder) Custom() *manifest.Custom { return d.m.Custom }

// IsJSON tells whether this is the plain JsonDecoder, whose body is its one
// document.
func (d *Decoder) IsJSON() bool { return d.m.Type == manifest.JSONDecoder }

// Streams tells whether documents come as the body arrives (JSON lines,
// CSV, lines, JSON items, and archives of them) rather than from a body
// read whole (JSON, XML, gzip of JSON: the decoders pagination can read).
func (d *Decoder) Streams() bool { return !d.m.Paginates() }

// Decode reads the body and hands each of its documents to emit, in order.
// An error of emit is returned as it is; any other is an *Error.
func (d *Decoder) Decode(body io.Reader, emit func(Doc) error) error {
	var emitErr error
	err := d.decode(body, func(doc Doc) error {
		emitErr = emit(doc)
		return emitErr
	})
	switch {
	case err == nil:
		return nil
	case emitErr != nil:
		return emitErr
	}
	return &Error{Decoder: d.Name(), Err: err}
}

// DecodeBytes is Decode of a body held whole; the JSON decoder hands the
// body itself to emit.
func (d *Decoder) DecodeBytes(body []byte, emit func(Doc) error) error {
	if d.IsJSON() {
		return emit(Doc{JSON: TrimBOM(body), Elements: true})
	}
	return d.Decode(bytes.NewReader(body), emit)
}

func (d *Decoder) decode(r io.Reader, emit func(Doc) error) error {
	switch d.m.Type {
	case manifest.JSONDecoder:
		body, err := d.readAll(r)
		if err != nil {
			return err
		}
		return emit(Doc{JSON: TrimBOM(body), Elements: true})
	case manifest.XMLDecoder:
		return d.xml(r, emit)
	case manifest.JSONLinesDecoder:
		return d.jsonLines(r, emit)
	case manifest.IterableDecoder:
		return d.iterable(r, emit)
	case manifest.CSVDecoder:
		return d.csv(r, emit)
	case manifest.JSONItemsDecoder:
		return d.jsonItems(r, emit)
	case manifest.GzipDecoder:
		return d.gzip(r, emit)
	case manifest.ZipfileDecoder:
		return d.zip(r, emit)
	case manifest.CustomDecoder:
		return fmt.Errorf("%s: a custom decoder decodes a whole response, in the components host", d.m.Path)
	}
	return fmt.Errorf("unknown decoder %s", d.m.Type)
}

// TrimBOM drops a UTF-8 byte order mark that starts a body or its first
// line, as a user expects of text that is UTF-8 anyway (the reference
// drops a JSON body or line that starts with one, and keeps it in an
// IterableDecoder's first line).
func TrimBOM(b []byte) []byte { return bytes.TrimPrefix(b, utf8BOM) }

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// readAll reads a document held whole, up to the size limit.
func (d *Decoder) readAll(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, d.max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > d.max {
		return nil, fmt.Errorf("the body is larger than %d bytes", d.max)
	}
	return b, nil
}

// Value decodes a body held whole into its first document, as values of
// encoding/json with json.Number numbers (a login response's token, read
// with the session token authenticator's decoder).
func Value(m *manifest.Decoder, body []byte, maxDoc int64) (any, error) {
	var v any
	found := false
	err := New(m, maxDoc).DecodeBytes(body, func(doc Doc) error {
		if found {
			return nil
		}
		found = true
		d := json.NewDecoder(bytes.NewReader(doc.JSON))
		d.UseNumber()
		if err := d.Decode(&v); err != nil {
			if strings.Contains(err.Error(), "exceeded max depth") {
				return &Error{Decoder: m.Name(), Err: notJSON(err)}
			}
			return &Error{Decoder: m.Name(), Err: fmt.Errorf("the body is not valid JSON")}
		}
		if d.More() {
			return &Error{Decoder: m.Name(), Err: fmt.Errorf("the body is not valid JSON")}
		}
		return nil
	})
	if err == nil && !found {
		err = &Error{Decoder: m.Name(), Err: fmt.Errorf("the body is empty")}
	}
	return v, err
}
