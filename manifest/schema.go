package manifest

import (
	"strings"
	"sync"

	"github.com/airbyte-go/source-declarative/manifest/jsonschema"
)

// The manifest's JSON Schema: one file per component family (schema/*.json),
// each holding definitions; together they are one document, so that
// "#/definitions/x" references work across files. One definition per
// supported component, listing ALL its fields as Airbyte's schema does: a
// field it does not list is refused when the definition says
// additionalProperties false, and warned about otherwise. Each component is
// validated on its own, and its child components when they are decoded, so
// child fields are only "object" in their parent's definition.
//
// A run pays only for the definitions its manifest uses: go generate writes
// each definition as Go code (schema_gen.go, checked against the files by a
// test), and a definition is built and compiled when a component of its type
// (or a $ref to it) is first met.
//
//go:generate go run ./internal/schemagen

// schemaDocument is the schema as one document, compiled lazily.
var schemaDocument = sync.OnceValue(func() *jsonschema.Document {
	return jsonschema.NewDocument(func(pointer string) (any, bool) {
		rest, ok := strings.CutPrefix(pointer, "/definitions/")
		if !ok {
			return nil, false
		}
		name, rest, _ := strings.Cut(rest, "/")
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

// rawDefinition is one definition of the schema as written, or nil.
func rawDefinition(name string) map[string]any {
	rawDefsMu.Lock()
	defer rawDefsMu.Unlock()
	def, ok := rawDefs[name]
	if !ok {
		def = definitionValue(name)
		rawDefs[name] = def
	}
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
