package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// JSONSchema is a compiled draft-07 JSON Schema (santhosh-tekuri/jsonschema
// v5) with the schema documents it was compiled from, which word its errors:
// a missing property at its own place, the values an enum allows.
type JSONSchema struct {
	schema *jsonschema.Schema
	docs   *schemaDocuments
}

// schemaDocuments are the documents a compiler has read, by URL, as decoded
// values: its errors point into them.
type schemaDocuments struct {
	mu    sync.Mutex
	byURL map[string]any
}

func (d *schemaDocuments) add(u string, doc any) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.byURL[u] = doc
}

// at is the schema value at an absolute location (URL#/json/pointer).
func (d *schemaDocuments) at(location string) (any, bool) {
	u, fragment, _ := strings.Cut(location, "#")
	fragment = libraryPointer(fragment)
	d.mu.Lock()
	doc, ok := d.byURL[u]
	d.mu.Unlock()
	if !ok {
		return nil, false
	}
	return valueAt(doc, fragment)
}

// documentURL is where a schema compiled on its own (a spec, a base_schema)
// lives for the compiler.
const documentURL = "schema:///document.json"

// CompileJSONSchema compiles a whole draft-07 schema document, such as a
// user's specification; a schema the draft-07 meta-schema refuses is refused
// before any value is validated. Formats are annotations, as for the
// reference (which validates without a format checker: a spec asking for
// format date and pattern dd-mm-yyyy, source-coingecko-coins, must accept
// 01-01-2024), a pattern is a Python regular expression (pythonpattern.go),
// and a $ref may only point inside the document.
func CompileJSONSchema(doc any) (*JSONSchema, error) {
	moved, err := movePatterns(doc)
	if err != nil {
		return nil, err
	}
	docs := &schemaDocuments{byURL: map[string]any{documentURL: doc}}
	c := newSchemaCompiler(func(u string) ([]byte, error) {
		if u != documentURL {
			return nil, nil
		}
		return json.Marshal(moved)
	})
	c.RegisterExtension("python-pattern", pythonPatternMeta, pythonPatterns{})
	s, err := c.Compile(documentURL)
	if err != nil {
		return nil, schemaCompileError(err, doc)
	}
	if u, _, _ := strings.Cut(s.Location, "#"); u != documentURL {
		docs.add(u, doc) // its $id: the errors' locations start there
	}
	return &JSONSchema{schema: s, docs: docs}, nil
}

// newSchemaCompiler is a draft-07 compiler that reads the documents load
// gives as JSON text (nil: there is none), and nothing else: no file or
// network access for a $ref. Formats are not asserted.
func newSchemaCompiler(load func(url string) ([]byte, error)) *jsonschema.Compiler {
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft7
	for name := range jsonschema.Formats {
		c.Formats[name] = func(any) bool { return true }
	}
	c.LoadURL = func(u string) (io.ReadCloser, error) {
		text, err := load(u)
		if err == nil && text == nil {
			err = fmt.Errorf("$ref %q: only references inside the schema (#/...) are supported", strings.TrimPrefix(u, "schema:///"))
		}
		return io.NopCloser(bytes.NewReader(text)), err
	}
	return c
}

// valueAt is the value at a JSON pointer of v.
func valueAt(v any, pointer string) (any, bool) {
	return Lookup(v, pointerSegments(pointer))
}

// pointerSegments splits a JSON pointer into its segments, unescaped.
func pointerSegments(pointer string) []string {
	if pointer == "" {
		return nil
	}
	segs := strings.Split(strings.TrimPrefix(pointer, "/"), "/")
	for i, seg := range segs {
		segs[i] = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
	}
	return segs
}

// escapeSegment escapes one JSON pointer segment.
func escapeSegment(segment string) string {
	return strings.ReplaceAll(strings.ReplaceAll(segment, "~", "~0"), "/", "~1")
}

// libraryPointer is a JSON pointer as the library writes it in a location,
// each segment also percent-encoded, as a plain JSON pointer.
func libraryPointer(pointer string) string {
	if plain, err := url.PathUnescape(pointer); err == nil {
		return plain
	}
	return pointer
}

// schemaCompileError words why a schema does not compile: the place in it
// and what is wrong there.
func schemaCompileError(err error, doc any) error {
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) { // the schema breaks the draft-07 meta-schema
		return errors.New(wordErrors(ve, doc, nil).Error())
	}
	var loop jsonschema.InfiniteLoopError
	if errors.As(err, &loop) {
		return fmt.Errorf("its $refs loop without going into the value (%s)", strings.ReplaceAll(string(loop), documentURL, ""))
	}
	msg := err.Error()
	var se *jsonschema.SchemaError
	if errors.As(err, &se) && se.Err != nil {
		msg = se.Err.Error()
	}
	msg = strings.ReplaceAll(strings.TrimPrefix(msg, "jsonschema: "), documentURL, "")
	if ref, ok := strings.CutSuffix(msg, " not found"); ok {
		msg = fmt.Sprintf("$ref %q: the schema has nothing there", ref)
	}
	return errors.New(msg)
}
