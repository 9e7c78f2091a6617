// Package transform changes records between extraction and emission: the
// record filter, the manifest's transformations (AddFields, RemoveFields,
// KeysToLower, KeysToSnakeCase, KeysReplace, FlattenFields,
// DpathFlattenFields) and schema normalization.
//
// A record is decoded once into an Object, which keeps its keys in the order
// the API sent them (as the reference's Python dicts do), changed in place,
// and encoded once. Values are nil, bool, string, Number (a JSON number as
// sent), int64 or float64 (numbers computed by templates), []any and *Object.
package transform

import (
	"encoding/json"
	"math"
	"strconv"
	"time"

	"github.com/airbyte-go/source-declarative/lang/interp"
)

// Number is a JSON number kept exactly as the API wrote it.
type Number string

// Field is one key of an object and its value.
type Field struct {
	Key   string
	Value any
}

// Object is a JSON object whose keys keep their order.
type Object struct {
	Fields []Field
}

func (o *Object) index(key string) int {
	for i := range o.Fields {
		if o.Fields[i].Key == key {
			return i
		}
	}
	return -1
}

// Get returns the value under key.
func (o *Object) Get(key string) (any, bool) {
	if i := o.index(key); i >= 0 {
		return o.Fields[i].Value, true
	}
	return nil, false
}

// Set replaces the value under key in place, or appends the key.
func (o *Object) Set(key string, v any) {
	if i := o.index(key); i >= 0 {
		o.Fields[i].Value = v
		return
	}
	o.Fields = append(o.Fields, Field{key, v})
}

// Delete removes key and tells whether it was there.
func (o *Object) Delete(key string) bool {
	i := o.index(key)
	if i < 0 {
		return false
	}
	o.Fields = append(o.Fields[:i], o.Fields[i+1:]...)
	return true
}

// Len is the number of keys.
func (o *Object) Len() int { return len(o.Fields) }

// FromPlain turns decoded JSON or YAML values (maps, lists, json.Number)
// into the record model; map keys are sorted, having no order of their own.
func FromPlain(v any) any {
	switch x := v.(type) {
	case map[string]any:
		o := &Object{Fields: make([]Field, 0, len(x))}
		for _, k := range interp.SortedKeys(x) {
			o.Fields = append(o.Fields, Field{k, FromPlain(x[k])})
		}
		return o
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = FromPlain(e)
		}
		return out
	case interp.List:
		return FromPlain([]any(x))
	case json.Number:
		return Number(x)
	case nil, bool, string, int64, float64, Number, *Object:
		return x
	case int:
		return int64(x)
	case time.Time, time.Duration:
		return interp.String(x)
	}
	return interp.String(v)
}

// ToPlain turns the record model into plain values: maps, lists, int64 or
// float64 numbers.
func ToPlain(v any) any {
	switch x := v.(type) {
	case *Object:
		m := make(map[string]any, len(x.Fields))
		for _, f := range x.Fields {
			m[f.Key] = ToPlain(f.Value)
		}
		return m
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = ToPlain(e)
		}
		return out
	case Number:
		return numberValue(x)
	}
	return v
}

// TemplateValue is a value as templates see it: objects as maps, arrays as
// interp.List, numbers as int64 or float64.
func TemplateValue(v any) any {
	switch x := v.(type) {
	case *Object:
		m := make(map[string]any, len(x.Fields))
		for _, f := range x.Fields {
			m[f.Key] = TemplateValue(f.Value)
		}
		return m
	case []any:
		out := make(interp.List, len(x))
		for i, e := range x {
			out[i] = TemplateValue(e)
		}
		return out
	case Number:
		return numberValue(x)
	}
	return v
}

// recordVar is the record variable of a template: only the top-level keys
// the template reads are converted, unless it reads the record as a whole.
func recordVar(o *Object, u interp.Usage) map[string]any {
	if u.All {
		return TemplateValue(o).(map[string]any)
	}
	m := make(map[string]any, len(u.Keys))
	for _, f := range o.Fields {
		if u.Keys[f.Key] {
			m[f.Key] = TemplateValue(f.Value)
		}
	}
	return m
}

func numberValue(n Number) any {
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return i
	}
	f, _ := strconv.ParseFloat(string(n), 64)
	return f
}

// AppendJSON appends the compact JSON text of v.
func AppendJSON(dst []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...)
	case bool:
		return strconv.AppendBool(dst, x)
	case string:
		return AppendString(dst, x)
	case Number:
		return append(dst, x...)
	case int64:
		return strconv.AppendInt(dst, x, 10)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return append(dst, "null"...)
		}
		return append(dst, interp.FormatFloat(x)...)
	case *Object:
		dst = append(dst, '{')
		for i, f := range x.Fields {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendString(dst, f.Key)
			dst = append(dst, ':')
			dst = AppendJSON(dst, f.Value)
		}
		return append(dst, '}')
	case []any:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendJSON(dst, e)
		}
		return append(dst, ']')
	}
	return AppendJSON(dst, FromPlain(v))
}

const hexDigits = "0123456789abcdef"

// AppendString quotes s as JSON, escaping only what JSON requires; s is
// valid UTF-8.
func AppendString[T string | []byte](dst []byte, s T) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
