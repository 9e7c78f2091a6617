package jsonschema

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// compile compiles the schema v found at pointer (for error messages). The
// keywords are checked as draft-07's meta-schema checks them: a keyword of
// the wrong shape is an error naming its place.
func (d *Document) compile(v any, pointer string) (*Schema, error) {
	switch x := v.(type) {
	case bool:
		return &Schema{always: &x}, nil
	case map[string]any:
		c := compiler{doc: d, m: x, at: pointer}
		return c.schema()
	}
	return nil, fmt.Errorf("%s: a schema must be an object or a boolean, got %s", place(pointer), describe(v))
}

// compiler compiles one schema object.
type compiler struct {
	doc *Document
	m   map[string]any
	at  string
	err error
}

func (c *compiler) schema() (*Schema, error) {
	s := &Schema{minProperties: -1, maxProperties: -1, minItems: -1, maxItems: -1, minLength: -1, maxLength: -1}
	c.annotations()
	if r, ok := c.m["$ref"]; ok {
		target, isString := r.(string)
		if !isString {
			c.fail("$ref", "must be a string")
			return nil, c.err
		}
		if _, err := fragmentPointer(target); err != nil {
			return nil, err
		}
		s.ref = &ref{doc: c.doc, target: target}
		return s, c.err
	}
	c.types(s)
	if v, ok := c.m["const"]; ok {
		s.hasConst, s.constant = true, v
	}
	if v, ok := c.m["enum"]; ok {
		if s.enum, ok = v.([]any); !ok {
			c.fail("enum", "must be a list")
		}
	}
	s.minProperties, s.maxProperties = c.count("minProperties"), c.count("maxProperties")
	s.required = c.strings("required")
	s.properties = c.properties()
	s.patternProperties = c.patternProperties()
	s.additionalProperties, s.noAdditionalProperties = c.additional("additionalProperties")
	s.propertyNames = c.sub("propertyNames")
	s.dependencies = c.dependencies()
	s.minItems, s.maxItems = c.count("minItems"), c.count("maxItems")
	if v, ok := c.m["uniqueItems"]; ok {
		if s.uniqueItems, ok = v.(bool); !ok {
			c.fail("uniqueItems", "must be true or false")
		}
	}
	if list, isList := c.m["items"].([]any); isList {
		s.itemList = c.subList("items", list)
		s.additionalItems, s.noAdditionalItems = c.additional("additionalItems")
	} else {
		s.items = c.sub("items")
		c.sub("additionalItems") // checked, but it means nothing without a list of items
	}
	s.contains = c.sub("contains")
	s.minLength, s.maxLength = c.count("minLength"), c.count("maxLength")
	if v, ok := c.m["pattern"]; ok {
		s.pattern = c.regexp("pattern", v)
	}
	s.minimum, s.exclusiveMinimum = c.bounds("minimum", "exclusiveMinimum")
	s.maximum, s.exclusiveMaximum = c.bounds("maximum", "exclusiveMaximum")
	if b := c.bound("multipleOf"); b.set {
		if b.value <= 0 {
			c.fail("multipleOf", "must be greater than 0")
		}
		s.multipleOf = b.value
	}
	s.not = c.sub("not")
	s.allOf, s.anyOf, s.oneOf = c.schemas("allOf"), c.schemas("anyOf"), c.schemas("oneOf")
	if c.m["if"] != nil {
		s.ifSchema, s.thenSchema, s.elseSchema = c.sub("if"), c.sub("then"), c.sub("else")
	}
	if defs, ok := c.m["definitions"]; ok {
		dm, isMap := defs.(map[string]any)
		if !isMap {
			c.fail("definitions", "must be an object")
		} else if c.doc.eager {
			for _, name := range slices.Sorted(maps.Keys(dm)) {
				c.compileAt("definitions/"+Escape(name), dm[name])
			}
		}
	}
	return s, c.err
}

// annotations checks the shape of the keywords that only annotate.
func (c *compiler) annotations() {
	for _, k := range []string{"$id", "$schema", "$comment", "title", "description", "format", "contentMediaType", "contentEncoding"} {
		if v, ok := c.m[k]; ok {
			if _, isString := v.(string); !isString {
				c.fail(k, "must be a string, got %s", describe(v))
			}
		}
	}
	for _, k := range []string{"readOnly", "writeOnly"} {
		if v, ok := c.m[k]; ok {
			if _, isBool := v.(bool); !isBool {
				c.fail(k, "must be true or false, got %s", describe(v))
			}
		}
	}
	if v, ok := c.m["examples"]; ok {
		if _, isList := v.([]any); !isList {
			c.fail("examples", "must be a list, got %s", describe(v))
		}
	}
}

func (c *compiler) fail(keyword, format string, args ...any) {
	if c.err == nil {
		c.err = fmt.Errorf("%s: %s", place(c.at+"/"+Escape(keyword)), fmt.Sprintf(format, args...))
	}
}

func (c *compiler) types(s *Schema) {
	v, ok := c.m["type"]
	if !ok {
		return
	}
	var names []string
	switch x := v.(type) {
	case string:
		names = []string{x}
	case []any:
		for _, e := range x {
			name, isString := e.(string)
			if !isString || slices.Contains(names, name) {
				c.fail("type", "must be a type name or a list of different type names, got %s", describe(v))
				return
			}
			names = append(names, name)
		}
	default:
		c.fail("type", "must be a type name or a list of them, got %s", describe(v))
		return
	}
	for _, name := range names {
		t, known := typeNamed[name]
		if !known {
			c.fail("type", "%q is not a type (null, boolean, object, array, number, integer or string)", name)
			return
		}
		s.types |= t
	}
	if len(names) == 0 {
		s.types = anyType // "type": [] restricts nothing
	}
	s.typeNames = strings.Join(names, " or ")
}

// count is a non-negative integer keyword, -1 when absent.
func (c *compiler) count(keyword string) int {
	v, ok := c.m[keyword]
	if !ok {
		return -1
	}
	f, isNumber := toFloat(v)
	if !isNumber || f < 0 || f != float64(int(f)) {
		c.fail(keyword, "must be a non-negative integer, got %s", describe(v))
		return -1
	}
	return int(f)
}

// bounds reads minimum and exclusiveMinimum (or the maximums): numbers, or
// as draft-04 wrote them, exclusiveMinimum true making minimum exclusive.
func (c *compiler) bounds(inclusive, exclusive string) (bound, bound) {
	if flag, isBool := c.m[exclusive].(bool); isBool {
		b := c.bound(inclusive)
		if flag {
			return bound{}, b
		}
		return b, bound{}
	}
	return c.bound(inclusive), c.bound(exclusive)
}

func (c *compiler) bound(keyword string) bound {
	v, ok := c.m[keyword]
	if !ok {
		return bound{}
	}
	f, isNumber := toFloat(v)
	if !isNumber {
		c.fail(keyword, "must be a number, got %s", describe(v))
		return bound{}
	}
	return bound{set: true, value: f}
}

func (c *compiler) strings(keyword string) []string {
	v, ok := c.m[keyword]
	if !ok {
		return nil
	}
	list, isList := v.([]any)
	out := make([]string, 0, len(list))
	for _, e := range list {
		name, isString := e.(string)
		if !isString || slices.Contains(out, name) {
			isList = false
			break
		}
		out = append(out, name)
	}
	if !isList {
		c.fail(keyword, "must be a list of different names, got %s", describe(v))
	}
	return out
}

func (c *compiler) regexp(keyword string, v any) *regexp.Regexp {
	text, ok := v.(string)
	if !ok {
		c.fail(keyword, "must be a regular expression, got %s", describe(v))
		return nil
	}
	re, err := regexp.Compile(text)
	if err != nil {
		c.fail(keyword, "%q is not a regular expression Go supports: %s", text, strings.TrimPrefix(err.Error(), "error parsing regexp: "))
		return nil
	}
	return re
}

// compileAt compiles the subschema v at a path below this schema.
func (c *compiler) compileAt(path string, v any) *Schema {
	s, err := c.doc.compile(v, c.at+"/"+path)
	if err != nil && c.err == nil {
		c.err = err
	}
	return s
}

func (c *compiler) sub(keyword string) *Schema {
	v, ok := c.m[keyword]
	if !ok {
		return nil
	}
	return c.compileAt(Escape(keyword), v)
}

func (c *compiler) subList(keyword string, list []any) []*Schema {
	out := make([]*Schema, len(list))
	for i, e := range list {
		out[i] = c.compileAt(keyword+"/"+strconv.Itoa(i), e)
	}
	return out
}

// schemas is allOf, anyOf or oneOf: a list of one schema or more.
func (c *compiler) schemas(keyword string) []*Schema {
	v, ok := c.m[keyword]
	if !ok {
		return nil
	}
	list, isList := v.([]any)
	if !isList || len(list) == 0 {
		c.fail(keyword, "must be a list of schemas, got %s", describe(v))
		return nil
	}
	return c.subList(keyword, list)
}

// additional is additionalProperties or additionalItems: a schema, where
// false (refuse any) is kept apart for its own message.
func (c *compiler) additional(keyword string) (*Schema, bool) {
	v, ok := c.m[keyword]
	if !ok {
		return nil, false
	}
	switch x := v.(type) {
	case bool:
		return nil, !x
	}
	return c.compileAt(keyword, v), false
}

func (c *compiler) object(keyword string) map[string]any {
	v, ok := c.m[keyword]
	if !ok {
		return nil
	}
	m, isMap := v.(map[string]any)
	if !isMap {
		c.fail(keyword, "must be an object, got %s", describe(v))
	}
	return m
}

func (c *compiler) properties() []property {
	m := c.object("properties")
	out := make([]property, len(m))
	for i, name := range slices.Sorted(maps.Keys(m)) {
		out[i] = property{name: name, value: m[name], at: c.at + "/properties/" + Escape(name), doc: c.doc}
		if c.doc.eager {
			if _, err := out[i].schema(); err != nil && c.err == nil {
				c.err = err
			}
		}
	}
	return out
}

func (c *compiler) patternProperties() []patternProperty {
	m := c.object("patternProperties")
	out := make([]patternProperty, 0, len(m))
	for _, text := range slices.Sorted(maps.Keys(m)) {
		re := c.regexp("patternProperties", text)
		out = append(out, patternProperty{pattern: re, schema: c.compileAt("patternProperties/"+Escape(text), m[text])})
	}
	return out
}

func (c *compiler) dependencies() []dependency {
	m := c.object("dependencies")
	out := make([]dependency, 0, len(m))
	for _, name := range slices.Sorted(maps.Keys(m)) {
		dep := dependency{name: name}
		if list, isList := m[name].([]any); isList {
			for _, e := range list {
				p, isString := e.(string)
				if !isString {
					c.fail("dependencies", "%q must be a schema or a list of names, got %s", name, describe(m[name]))
				}
				dep.required = append(dep.required, p)
			}
		} else {
			dep.schema = c.compileAt("dependencies/"+Escape(name), m[name])
		}
		out = append(out, dep)
	}
	return out
}

// place names a schema location for an error: "the schema's root" or a
// JSON pointer.
func place(pointer string) string {
	if pointer == "" {
		return "the schema's root"
	}
	return pointer
}
