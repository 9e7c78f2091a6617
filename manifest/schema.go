package manifest

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v5"
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
// test), and a definition is built and compiled (santhosh-tekuri/jsonschema)
// when a component of its type is first met, with the definitions it refers
// to.
//
//go:generate go run ./internal/schemagen

// definitionsURL is where the schema's definitions live for the compiler:
// each is a document of its own, read when a component of its type (or a
// $ref to it) is first met, with its "#/definitions/x" references made
// relative ("x"). (The schema compiled whole, which the library validates
// against the draft-07 meta-schema first, made spec --manifest take 48 ms.)
const definitionsURL = "schema:///definitions/"

// definitionCompiler compiles the schema's definitions, once each, under
// definitionsMu.
var definitionCompiler = sync.OnceValues(newDefinitionCompiler)

// newDefinitionCompiler is a compiler of the schema's definitions and the
// definitions it has read.
func newDefinitionCompiler() (*jsonschema.Compiler, *schemaDocuments) {
	docs := &schemaDocuments{byURL: map[string]any{}}
	return newSchemaCompiler(func(u string) ([]byte, error) {
		var def map[string]any
		if name, ok := strings.CutPrefix(u, definitionsURL); ok {
			def = rawDefinition(name)
		}
		if def == nil {
			return nil, nil
		}
		docs.add(u, def)
		text, err := json.Marshal(def)
		// A $ref member is written exactly so, and the text cannot occur
		// inside a string, whose quotes are escaped.
		return bytes.ReplaceAll(text, []byte(`"$ref":"#/definitions/`), []byte(`"$ref":"`)), err
	}), docs
}

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
	schema *JSONSchema
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
	compiler, docs := definitionCompiler()
	s, err := compiler.Compile(definitionsURL + typ)
	if err != nil {
		panic("schema definition " + typ + ": " + err.Error())
	}
	d := &definition{schema: &JSONSchema{schema: s, docs: docs}, raw: raw, fields: map[string]bool{}, closed: raw["additionalProperties"] == false}
	props, _ := raw["properties"].(map[string]any)
	for k := range props {
		d.fields[k] = true
	}
	definitions[typ] = d
	return d
}
