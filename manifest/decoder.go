package manifest

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/airbyte-go/source-declarative/lang/charset"
)

// Decoder types.
const (
	JSONDecoder      = "JsonDecoder"
	JSONLinesDecoder = "JsonlDecoder"
	JSONItemsDecoder = "JsonItemsDecoder"
	IterableDecoder  = "IterableDecoder"
	CSVDecoder       = "CsvDecoder"
	XMLDecoder       = "XmlDecoder"
	GzipDecoder      = "GzipDecoder"
	ZipfileDecoder   = "ZipfileDecoder"
	// CustomDecoder is a custom Python decoder (Decoder.Custom): Go asks it
	// for the documents of each response.
	CustomDecoder = "CustomDecoder"
)

// Decoder says how a response body becomes documents to extract records
// from. A nil *Decoder is the default JsonDecoder.
type Decoder struct {
	Type      string
	Path      string   // manifest path, for messages
	Encoding  string   // CsvDecoder, JsonItemsDecoder: a Python codec name
	Delimiter rune     // CsvDecoder
	Nulls     []string // CsvDecoder set_values_to_none: cells read as null
	ItemsPath []string // JsonItemsDecoder: the dotted items_path, split
	Inner     *Decoder // GzipDecoder, ZipfileDecoder
	Custom    *Custom  // CustomDecoder
}

// The decoders a retriever takes, and those a GzipDecoder or ZipfileDecoder wraps.
var (
	retrieverDecoders = []string{JSONDecoder, XMLDecoder, CSVDecoder, JSONLinesDecoder, JSONItemsDecoder, GzipDecoder, IterableDecoder, ZipfileDecoder}
	innerDecoders     = []string{CSVDecoder, GzipDecoder, JSONDecoder, JSONItemsDecoder, JSONLinesDecoder}
	sessionDecoders   = []string{JSONDecoder, XMLDecoder}
)

// Name is the decoder's type, with what it wraps: GzipDecoder(CsvDecoder).
func (dec *Decoder) Name() string {
	if dec == nil {
		return JSONDecoder
	}
	if dec.Inner != nil {
		return dec.Type + "(" + dec.Inner.Name() + ")"
	}
	return dec.Type
}

// Paginates tells whether a DefaultPaginator may read responses of this
// decoder: JSON, XML and gzip of JSON, as the reference accepts; whether a
// custom one may is the CDK's factory's to say when the components host
// builds it (a subclass of JsonDecoder may).
func (dec *Decoder) Paginates() bool {
	switch {
	case dec == nil, dec.Type == JSONDecoder, dec.Type == XMLDecoder, dec.Type == CustomDecoder:
		return true
	case dec.Type == GzipDecoder:
		return dec.Inner != nil && dec.Inner.Type == JSONDecoder
	}
	return false
}

// responseDecoder decodes a decoder component; absent gives nil (JSON).
func (d *decoder) responseDecoder(v any, path string, allowed []string) *Decoder {
	if v == nil {
		return nil
	}
	if c := d.custom(v, path); c != nil {
		return &Decoder{Type: CustomDecoder, Path: path, Custom: c}
	}
	m, typ, ok := d.component(v, path, allowed...)
	if !ok {
		return nil
	}
	dec := &Decoder{Type: typ, Path: path, Encoding: str(m, "encoding", "utf-8")}
	switch typ {
	case CSVDecoder:
		dec.Delimiter = d.delimiter(str(m, "delimiter", ","), path+".delimiter")
		dec.Nulls = strList(m["set_values_to_none"])
	case JSONItemsDecoder:
		if p := str(m, "items_path", ""); p != "" {
			dec.ItemsPath = strings.Split(p, ".")
		}
	case GzipDecoder, ZipfileDecoder:
		dec.Inner = d.responseDecoder(m["decoder"], path+".decoder", innerDecoders)
		if dec.Inner == nil {
			return nil
		}
	}
	if typ == CSVDecoder || typ == JSONItemsDecoder {
		if err := charset.Check(dec.Encoding); err != nil {
			d.fail(path+".encoding", "%v", err)
		}
	}
	return dec
}

// delimiter reads a CSV delimiter: one character, where a text starting
// with a backslash is an escape sequence (\t, \x1f, \u0001), as the
// reference decodes it.
func (d *decoder) delimiter(s, path string) rune {
	text := s
	if strings.HasPrefix(s, `\`) {
		var b strings.Builder
		for rest := s; rest != ""; {
			r, _, tail, err := strconv.UnquoteChar(rest, 0)
			if err != nil {
				d.fail(path, "%q is not a valid escape sequence", s)
				return ','
			}
			b.WriteRune(r)
			rest = tail
		}
		text = b.String()
	}
	r, size := utf8.DecodeRuneInString(text)
	if size == 0 || size != len(text) || r == '"' || r == '\r' || r == '\n' || r == utf8.RuneError {
		d.fail(path, "must be one character other than a quote or a line break, got %q", s)
		return ','
	}
	return r
}
