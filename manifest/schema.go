package manifest

import (
	"embed"
	"encoding/json"
	"io/fs"
	"strings"
	"sync"

	"github.com/airbyte-go/source-declarative/manifest/jsonschema"
)

// The embedded schema: one file per component family (schema/*.json), each
// holding definitions; together they are one document, so that
// "#/definitions/x" references work across files. One definition per
// supported component, listing ALL its fields as Airbyte's schema does: a
// field it does not list is refused when the definition says
// additionalProperties false, and warned about otherwise. Each component is
// validated on its own, and its child components when they are decoded, so
// child fields are only "object" in their parent's definition.
//
// A run pays only for the definitions its manifest uses: the files are
// indexed in one pass without decoding, and a definition is decoded and
// compiled when a component of its type (or a $ref to it) is first met.
//
//go:embed schema/*.json
var schemaFiles embed.FS

// schemaIndex is each definition's JSON text, by name.
var schemaIndex = sync.OnceValue(func() map[string][]byte {
	index := map[string][]byte{}
	files, err := fs.Glob(schemaFiles, "schema/*.json")
	if err != nil {
		panic(err)
	}
	for _, f := range files {
		b, err := schemaFiles.ReadFile(f)
		if err != nil {
			panic(err)
		}
		defs, err := definitionTexts(b)
		if err != nil {
			panic(f + ": " + err.Error())
		}
		for name, text := range defs {
			if _, dup := index[name]; dup {
				panic(f + ": definition " + name + " is also in another schema file")
			}
			index[name] = text
		}
	}
	return index
})

// schemaDocument is the embedded schema as one document, compiled lazily.
var schemaDocument = sync.OnceValue(func() *jsonschema.Document {
	return jsonschema.NewDocument(func(pointer string) (any, bool) {
		name, rest, _ := strings.Cut(strings.TrimPrefix(pointer, "/definitions/"), "/")
		if !strings.HasPrefix(pointer, "/definitions/") {
			return nil, false
		}
		def := rawDefinition(jsonschema.Unescape(name))
		if def == nil {
			return nil, false
		}
		if rest == "" {
			return def, true
		}
		return jsonschema.Tree(def)("/" + rest)
	})
})

var (
	rawDefsMu sync.Mutex
	rawDefs   = map[string]map[string]any{}
)

// rawDefinition is one definition of the embedded schema as written, or nil.
func rawDefinition(name string) map[string]any {
	rawDefsMu.Lock()
	defer rawDefsMu.Unlock()
	if def, ok := rawDefs[name]; ok {
		return def
	}
	text, ok := schemaIndex()[name]
	if !ok {
		return nil
	}
	var def map[string]any
	if err := json.Unmarshal(text, &def); err != nil {
		panic("schema definition " + name + ": " + err.Error())
	}
	rawDefs[name] = def
	return def
}

// definition is one component's schema, compiled and as written.
type definition struct {
	schema *jsonschema.Schema
	raw    map[string]any
	fields map[string]bool // the properties it lists
	closed bool            // additionalProperties: false
}

var (
	definitionsMu sync.Mutex
	definitions   = map[string]*definition{}
)

// componentDefinition returns the definition of one component type, or nil.
func componentDefinition(typ string) *definition {
	definitionsMu.Lock()
	defer definitionsMu.Unlock()
	if d, ok := definitions[typ]; ok {
		return d
	}
	raw := rawDefinition(typ)
	if raw == nil {
		definitions[typ] = nil
		return nil
	}
	s, err := schemaDocument().Schema("#/definitions/" + jsonschema.Escape(typ))
	if err != nil {
		panic("schema definition " + typ + ": " + err.Error())
	}
	d := &definition{schema: s, raw: raw, fields: map[string]bool{}, closed: raw["additionalProperties"] == false}
	props, _ := raw["properties"].(map[string]any)
	for k := range props {
		d.fields[k] = true
	}
	definitions[typ] = d
	return d
}

// definitionTexts cuts each definition's JSON text out of a schema file
// ({"definitions": {"name": {...}, ...}}) in one pass, without decoding it.
func definitionTexts(b []byte) (map[string][]byte, error) {
	s := scanner{b: b}
	out := map[string][]byte{}
	err := s.object(func(key string) error {
		if key != "definitions" {
			s.skip()
			return nil
		}
		return s.object(func(name string) error {
			start := s.i
			s.skip()
			out[name] = b[start:s.i]
			return nil
		})
	})
	if err == nil && s.err != nil {
		err = s.err
	}
	return out, err
}
