// Package jsonschema validates decoded JSON values (maps, slices, strings,
// numbers, booleans and nil, as encoding/json and YAML decoders make them)
// against a draft-07 JSON Schema: every draft-07 validation keyword, local
// $refs ("#", "#/definitions/x") compiled on first use, format as an
// annotation only (not asserted), unknown keywords ignored. Validating a value
// that is valid allocates nothing; the errors of an invalid one are every
// failed keyword, in a stable order, with the instance location of each.
package jsonschema

import (
	"regexp"
	"sync"
)

// Schema is a compiled schema or subschema.
type Schema struct {
	always *bool // a boolean schema: true accepts everything, false nothing
	ref    *ref  // $ref; in draft-07 the keywords beside it are ignored

	types     typeSet
	typeNames string // the types as written, joined with " or "

	hasConst bool
	constant any
	enum     []any

	minProperties, maxProperties int // -1 when absent
	required                     []string
	properties                   []property // sorted by name
	patternProperties            []patternProperty
	additionalProperties         *Schema
	noAdditionalProperties       bool
	propertyNames                *Schema
	dependencies                 []dependency // sorted by name

	minItems, maxItems int // -1 when absent
	uniqueItems        bool
	items              *Schema   // items as one schema
	itemList           []*Schema // items as a list of schemas
	additionalItems    *Schema   // after itemList
	noAdditionalItems  bool
	contains           *Schema

	minLength, maxLength int // -1 when absent
	pattern              *regexp.Regexp

	minimum, maximum, exclusiveMinimum, exclusiveMaximum bound
	multipleOf                                           float64 // 0 when absent

	not                              *Schema
	allOf, anyOf                     []*Schema
	oneOf                            []*Schema
	ifSchema, thenSchema, elseSchema *Schema
}

// property is one entry of "properties". In a document compiled lazily its
// schema is compiled when a value first has the property: a component's
// definition lists every field, a manifest uses a few.
type property struct {
	name  string
	value any    // the schema as written
	at    string // its JSON pointer
	doc   *Document
	once  sync.Once
	sch   *Schema
	err   error
}

// schema compiles the property's schema on first use.
func (p *property) schema() (*Schema, error) {
	p.once.Do(func() { p.sch, p.err = p.doc.compile(p.value, p.at) })
	return p.sch, p.err
}

type patternProperty struct {
	pattern *regexp.Regexp
	schema  *Schema
}

// dependency is one entry of "dependencies": the properties required, or the
// schema the object must match, when the named property is present.
type dependency struct {
	name     string
	required []string
	schema   *Schema
}

// bound is one of minimum, maximum, exclusiveMinimum, exclusiveMaximum.
type bound struct {
	set   bool
	value float64
}

// ref is a $ref, resolved when a value first reaches it.
type ref struct {
	doc    *Document
	target string // as written: "#" or "#/definitions/x"
	once   sync.Once
	schema *Schema
	err    error
}

func (r *ref) resolve() (*Schema, error) {
	r.once.Do(func() { r.schema, r.err = r.doc.Schema(r.target) })
	return r.schema, r.err
}

// subschemas calls fn with each schema compiled inside s, $ref targets
// excluded.
func (s *Schema) subschemas(fn func(*Schema)) {
	for _, one := range []*Schema{s.additionalProperties, s.propertyNames, s.items, s.additionalItems, s.contains, s.not, s.ifSchema, s.thenSchema, s.elseSchema} {
		if one != nil {
			fn(one)
		}
	}
	for i := range s.properties {
		if sch, err := s.properties[i].schema(); err == nil {
			fn(sch)
		}
	}
	for _, p := range s.patternProperties {
		fn(p.schema)
	}
	for _, d := range s.dependencies {
		if d.schema != nil {
			fn(d.schema)
		}
	}
	for _, list := range [][]*Schema{s.itemList, s.allOf, s.anyOf, s.oneOf} {
		for _, one := range list {
			fn(one)
		}
	}
}
