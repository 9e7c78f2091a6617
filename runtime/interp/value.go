package interp

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/airbyte-go/source-declarative/runtime/datetime"
	"github.com/nikolalohinski/gonja/v2/exec"
)

// native turns a gonja value into plain Go values: nil, bool, int64, float64,
// string, []any, map[string]any, time.Time or time.Duration.
func native(v *exec.Value) any {
	if v == nil || v.IsNil() {
		return nil
	}
	switch x := v.Interface().(type) {
	case time.Time, time.Duration, json.Number:
		return x
	}
	switch {
	case v.IsBool():
		return v.Bool()
	case v.IsInteger():
		return int64(v.Integer())
	case v.IsFloat():
		return v.Float()
	case v.IsString():
		return v.String()
	case v.IsList():
		var out []any
		v.Iterate(func(_, _ int, e, _ *exec.Value) bool {
			out = append(out, native(e))
			return true
		}, func() {})
		if out == nil {
			out = []any{}
		}
		return out
	case v.IsDict():
		if m, ok := v.Interface().(map[string]any); ok {
			return m
		}
		out := map[string]any{}
		v.Iterate(func(_, _ int, k, e *exec.Value) bool {
			out[k.String()] = native(e)
			return true
		}, func() {})
		return out
	}
	return v.Interface()
}

// String renders a value as text the way a user expects it in a URL, header
// or body: nil is empty, booleans are true/false, numbers have no exponent,
// lists and objects are JSON.
func String(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		if x {
			return "true"
		}
		return "false"
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return FormatFloat(x)
	case json.Number:
		return x.String()
	case time.Time:
		return datetime.PythonString(x)
	case time.Duration:
		return datetime.PythonDuration(x)
	case []any, map[string]any, List:
		b, err := json.Marshal(x)
		if err != nil {
			return fmt.Sprint(x)
		}
		return string(b)
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(rv.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.FormatUint(rv.Uint(), 10)
	case reflect.Float32:
		return FormatFloat(rv.Float())
	}
	if b, err := json.Marshal(v); err == nil {
		return string(b)
	}
	return fmt.Sprint(v)
}

// FormatFloat writes a float without exponent when it is a whole number of
// reasonable size (10000000000, not 1e+10), and in the shortest form otherwise.
func FormatFloat(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// Truthy tells whether a value counts as true in a condition.
func Truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		s := strings.TrimSpace(x)
		switch strings.ToLower(s) {
		case "", "false", "0", "0.0", "none", "null", "{}", "[]", "()":
			return false
		}
		return true
	case int:
		return x != 0
	case int64:
		return x != 0
	case float64:
		return x != 0
	case json.Number:
		f, err := x.Float64()
		return err != nil || f != 0
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Map:
		return rv.Len() > 0
	}
	return true
}

// Native converts decoded JSON (with json.Number) into the values templates
// compare and compute with: int64 for integers, float64 otherwise.
func Native(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return i
		}
		if f, err := x.Float64(); err == nil {
			return f
		}
		return string(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = Native(e)
		}
		return out
	case []any:
		out := make(List, len(x))
		for i, e := range x {
			out[i] = Native(e)
		}
		return out
	}
	return v
}

// List is a JSON array as templates see it. It exists so that negative
// indexes reach every element: gonja's own lookup misses x[-1] on a list of
// one element, which is exactly the last page of many APIs.
type List []any

// GetItem implements gonja's item lookup with Python's index rules.
func (l List) GetItem(key any) (*exec.Value, bool) {
	i, ok := key.(int)
	if !ok {
		return exec.AsValue(nil), false
	}
	if i < 0 {
		i += len(l)
	}
	if i < 0 || i >= len(l) {
		return exec.AsValue(nil), false
	}
	return exec.AsValue(l[i]), true
}

// SortedKeys returns the keys of m in order.
func SortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
