package transform

import (
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/airbyte-go/source-declarative/lang/interp"
)

// Normalizer casts record values to the types a stream's JSON schema
// declares (schema_normalization: Default), as the reference does for each
// property present in the record and declared in properties (recursively
// through properties, items and local $refs) whose type is one type, or one
// type and null:
//
//   - string: numbers keep their JSON text ("1.50"), booleans become "true"
//     and "false", objects and lists their JSON text;
//   - integer: "12" -> 12, 1.9 -> 1 (truncated, as the reference), true -> 1;
//   - number: "1.5" -> 1.5, true -> 1;
//   - boolean: y/yes/t/true/on/1 and n/no/f/false/off/0 in any case, other
//     values by truthiness (0, "", [] and {} are false);
//   - array of simple items: a lone scalar becomes a one-item list.
//
// A null is never cast (the reference makes it "None" under a plain string
// type and false under a plain boolean). A value that cannot be cast stays as
// it is, and Warn is told once per field.
type Normalizer struct {
	root   map[string]any
	warn   func(field, got, want string)
	warned map[string]bool
}

// NewNormalizer prepares the casts of a schema; warn may be nil.
func NewNormalizer(schema map[string]any, warn func(field, got, want string)) *Normalizer {
	return &Normalizer{root: schema, warn: warn, warned: map[string]bool{}}
}

// Apply casts the record's values in place.
func (n *Normalizer) Apply(rec *Object) {
	n.children(rec, n.root, "")
}

// children normalizes the properties of an object and the items of a list.
func (n *Normalizer) children(v any, schema map[string]any, path string) {
	switch x := v.(type) {
	case *Object:
		props, _ := schema["properties"].(map[string]any)
		if len(props) == 0 {
			return
		}
		for i := range x.Fields {
			sub, ok := props[x.Fields[i].Key].(map[string]any)
			if !ok {
				continue
			}
			x.Fields[i].Value = n.value(x.Fields[i].Value, n.resolve(sub), join(path, x.Fields[i].Key))
		}
	case []any:
		items, ok := schema["items"].(map[string]any)
		if !ok {
			return
		}
		items = n.resolve(items)
		for i := range x {
			x[i] = n.value(x[i], items, path+"["+strconv.Itoa(i)+"]")
		}
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func (n *Normalizer) value(v any, schema map[string]any, path string) any {
	out, ok := cast(v, schema)
	if !ok && n.warn != nil && !n.warned[path] {
		// A copy: the path's keys are text of the page (Decode), whose
		// buffer is read into again once the page is emitted.
		n.warned[strings.Clone(path)] = true
		n.warn(path, jsonType(v), typeText(schema["type"]))
	}
	n.children(out, schema, path)
	return out
}

// resolve follows a local $ref ("#/definitions/x") of the root schema.
func (n *Normalizer) resolve(schema map[string]any) map[string]any {
	for depth := 0; depth < 32; depth++ {
		ref, ok := schema["$ref"].(string)
		if !ok || !strings.HasPrefix(ref, "#") {
			return schema
		}
		var cur any = n.root
		for _, seg := range strings.Split(strings.TrimPrefix(strings.TrimPrefix(ref, "#"), "/"), "/") {
			if seg == "" {
				continue
			}
			seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
			m, _ := cur.(map[string]any)
			cur = m[seg]
		}
		next, ok := cur.(map[string]any)
		if !ok {
			return schema
		}
		schema = next
	}
	return schema
}

// cast converts v to the schema's single type; ok is false when v does not
// have a declared type afterwards.
func cast(v any, schema map[string]any) (any, bool) {
	types := typeList(schema["type"])
	if len(types) == 0 {
		return v, true
	}
	var target string
	nullable := false
	for _, t := range types {
		if t == "null" {
			nullable = true
		} else if target == "" {
			target = t
		} else {
			return v, matches(v, types) // a union of types: left alone
		}
	}
	if v == nil {
		return nil, nullable || target == ""
	}
	out := v
	switch target {
	case "string":
		out = toString(v)
	case "integer":
		out = toInteger(v)
	case "number":
		out = toNumber(v)
	case "boolean":
		out = toBoolean(v)
	case "array":
		if isScalar(v) && simpleItems(schema["items"]) {
			out = []any{v}
		}
	}
	return out, matches(out, types)
}

func typeList(t any) []string {
	switch x := t.(type) {
	case string:
		return []string{x}
	case []any:
		return strList(x)
	case []string:
		return x
	}
	return nil
}

func strList(l []any) []string {
	out := make([]string, 0, len(l))
	for _, e := range l {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func typeText(t any) string {
	return strings.Join(typeList(t), " or ")
}

// simpleItems tells whether an array's items are declared as scalar types
// only (or not declared).
func simpleItems(items any) bool {
	m, _ := items.(map[string]any)
	for _, t := range typeList(m["type"]) {
		switch t {
		case "string", "number", "integer", "boolean", "null":
		default:
			return false
		}
	}
	return true
}

func toString(v any) any {
	switch x := v.(type) {
	case string:
		return x
	case Number:
		return string(x)
	case *Object, []any:
		return string(AppendJSON(nil, x))
	}
	return interp.String(v)
}

// boolNumber is a boolean as the number Python's int() and float() make of it.
func boolNumber(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func toInteger(v any) any {
	switch x := v.(type) {
	case bool:
		return boolNumber(x)
	case string:
		t := strings.TrimSpace(x)
		if i, err := strconv.ParseInt(t, 10, 64); err == nil {
			return i
		}
		if i, ok := new(big.Int).SetString(t, 10); ok {
			return Number(i.String()) // beyond 64 bits, exact as Python's int()
		}
	case Number:
		if isIntegerText(string(x)) {
			return x
		}
		if f, err := strconv.ParseFloat(string(x), 64); err == nil {
			return truncated(f)
		}
	case float64:
		return truncated(x)
	}
	return v
}

// isIntegerText tells whether a JSON number is written as an integer (no
// fraction, no exponent), whatever its size.
func isIntegerText(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func truncated(f float64) any {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return f
	}
	if t := math.Trunc(f); math.Abs(t) < 1<<63 {
		return int64(t)
	}
	return Number(strconv.FormatFloat(math.Trunc(f), 'f', -1, 64))
}

func toNumber(v any) any {
	switch x := v.(type) {
	case bool:
		return boolNumber(x)
	case string:
		t := strings.TrimSpace(x)
		if f, err := strconv.ParseFloat(t, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
			if _, err := strconv.ParseInt(t, 10, 64); err == nil {
				return Number(t)
			}
			return f
		}
	}
	return v
}

func toBoolean(v any) any {
	switch x := v.(type) {
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "y", "yes", "t", "true", "on", "1":
			return true
		case "n", "no", "f", "false", "off", "0":
			return false
		}
		return v
	case Number:
		f, _ := strconv.ParseFloat(string(x), 64)
		return f != 0
	case int64:
		return x != 0
	case float64:
		return x != 0
	case *Object:
		return x.Len() > 0
	case []any:
		return len(x) > 0
	}
	return v
}

// jsonType names the JSON type of a value.
func jsonType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case Number:
		if f, err := strconv.ParseFloat(string(x), 64); err == nil && f == math.Trunc(f) {
			return "integer"
		}
		return "number"
	case int64:
		return "integer"
	case float64:
		if x == math.Trunc(x) {
			return "integer"
		}
		return "number"
	case *Object:
		return "object"
	case []any:
		return "array"
	}
	return "object"
}

// matches tells whether v has one of the types (an integer is a number).
func matches(v any, types []string) bool {
	t := jsonType(v)
	for _, want := range types {
		if want == t || (want == "number" && t == "integer") {
			return true
		}
	}
	return false
}
