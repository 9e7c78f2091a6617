package interp

import (
	"encoding/json"
	"math"
	"math/big"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/airbyte-go/source-declarative/lang/datetime"
)

// The values templates compute with are plain Go values: nil (None), bool,
// int64, float64, string, []any (list), map[string]any (dict), time.Time (an
// aware datetime), time.Duration (timedelta), and the few types below.

// List is a JSON array as some callers build it; templates treat it as any
// other list (negative indexes count from the end).
type List []any

// tuple is a Python tuple: from `(a, b)`, dict items and `1, 2`.
type tuple []any

// date is a Python date (today_utc(), datetime.date()): midnight UTC.
type date struct{ t time.Time }

// monthDuration is an ISO duration with years or months (isodate.Duration).
type monthDuration struct{ d datetime.Duration }

// undefined is Jinja's lenient Undefined: it renders empty, is false, iterates
// as nothing, and fails when used any further.
type undefined struct {
	hint   string
	unsafe bool // an attribute the sandbox refuses: using it is an error
	// pastEnd: an element past the end of a list or text (last_records[-1]
	// of an empty page), not a key or attribute that is not there.
	pastEnd bool
}

func (u *undefined) err() error {
	if u.unsafe {
		return valueErr("%s", u.hint)
	}
	return &evalError{kind: kindUndefined, msg: u.hint, pastEnd: u.pastEnd}
}

// view is what dict.keys(), .values() and .items() return.
type view struct {
	kind  string // "keys", "values" or "items"
	items []any
}

// String renders a value as a template writes it with {{ }}: None is empty,
// booleans are true/false, everything else as Python's str() writes it
// (1.5, 10000000000.0, ['a', 1], {'k': 'v'}, 2021-09-01 00:00:00+00:00).
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
	}
	if text, ok := scalarText(v); ok {
		return text
	}
	var b strings.Builder
	w := &textWriter{b: &b, limit: math.MaxInt, exact: true}
	w.str(v)
	return b.String()
}

// pyStr is Python's str(), cut a little past MaxOutput bytes (see
// textWriter): for a text that is then refused, or whose length is
// checked, never for one kept as it is (see boundedText).
func pyStr(v any) string {
	if text, ok := scalarText(v); ok {
		return text
	}
	var b strings.Builder
	w := &textWriter{b: &b, limit: MaxOutput}
	w.str(v)
	return b.String()
}

// Repr is Python's repr() of a value.
func Repr(v any) string {
	var b strings.Builder
	w := &textWriter{b: &b, limit: math.MaxInt, exact: true}
	w.repr(v)
	return b.String()
}

// repr is Python's repr(), cut as pyStr is.
func repr(v any) string {
	var b strings.Builder
	w := &textWriter{b: &b, limit: MaxOutput}
	w.repr(v)
	return b.String()
}

// quotePy quotes a string as Python's repr does.
func quotePy(s string) string { return quoteRepr(s, false) }

// quoteRepr quotes a string, or bytes (isBytes: each byte a character,
// only printable ASCII as it is), as Python's repr does.
func quoteRepr(s string, isBytes bool) string {
	q := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		q = '"'
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte(q)
	write := func(r rune) {
		switch {
		case r == rune(q) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f || isBytes && r > 0x7f:
			b.WriteString(`\x`)
			b.WriteString(hex2(int(r)))
		case r < 0x7f || unicode.IsPrint(r):
			b.WriteRune(r)
		case r < 0x100:
			b.WriteString(`\x`)
			b.WriteString(hex2(int(r)))
		case r < 0x10000:
			b.WriteString(`\u`)
			b.WriteString(hexN(int(r), 4))
		default:
			b.WriteString(`\U`)
			b.WriteString(hexN(int(r), 8))
		}
	}
	if isBytes {
		for i := 0; i < len(s); i++ {
			write(rune(s[i]))
		}
	} else {
		for _, r := range s {
			write(r)
		}
	}
	b.WriteByte(q)
	return b.String()
}

func hex2(n int) string { return hexN(n, 2) }

func hexN(n, width int) string {
	s := strconv.FormatInt(int64(n), 16)
	for len(s) < width {
		s = "0" + s
	}
	return s
}

// FormatFloat writes a float as Python's repr does: the shortest form that
// reads back, with ".0" on whole numbers and an exponent from 1e+16 and below
// 0.0001 (1.5, 10000000000.0, 1e+16, 1e-05, inf, nan).
func FormatFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64)
	i := strings.LastIndexByte(e, 'e')
	exp, _ := strconv.Atoi(e[i+1:])
	if exp < -4 || exp >= 16 {
		return e
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return s
}

// Truthy tells whether a value is true as Python's bool() says: None, false,
// zero, empty strings, lists and objects are false; any other string (even
// "false") is true.
func Truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case int64:
		return x != 0
	case float64:
		return x != 0
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	case List:
		return len(x) > 0
	case tuple:
		return len(x) > 0
	case *undefined:
		return false
	case time.Duration:
		return x != 0
	case *view:
		return len(x.items) > 0
	case pyBytes:
		return len(x) > 0
	case *big.Int:
		return x.Sign() != 0
	case *pyDict:
		return len(x.keys) > 0
	case monthDuration:
		return x.d.Years != 0 || x.d.Months != 0 || x.d.Fixed != 0
	case time.Time, date, *namespace, *callable, *boundMethod, *loopInfo, *templateRef:
		return true
	}
	return Truthy(canon(v))
}

// canon turns values from outside the engine (other integer and float
// types, typed slices and maps, json.Number) into the engine's own types.
func canon(v any) any {
	switch x := v.(type) {
	case nil, bool, int64, float64, string, []any, map[string]any, time.Time, time.Duration,
		tuple, date, monthDuration, pyBytes, *big.Int, *pyDict, *undefined, *view, *namespace, *callable, *boundMethod, *loopInfo, *templateRef:
		return v
	case List:
		return []any(x)
	case *pyList:
		return x.items
	case *Object:
		return x.Map
	case groupTuple:
		return tuple(x)
	case int:
		return int64(x)
	case json.Number:
		if n, ok := Integer(string(x)); ok {
			return n
		}
		f, err := x.Float64()
		if err != nil {
			return string(x)
		}
		return f
	case map[string]string:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = e
		}
		return m
	case []string:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = e
		}
		return l
	case []map[string]any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = e
		}
		return l
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Bool:
		return rv.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		u := rv.Uint()
		if u > math.MaxInt64 {
			return float64(u)
		}
		return int64(u)
	case reflect.Float32, reflect.Float64:
		return rv.Float()
	case reflect.String:
		return rv.String()
	case reflect.Slice, reflect.Array:
		l := make([]any, rv.Len())
		for i := range l {
			l[i] = rv.Index(i).Interface()
		}
		return l
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			break
		}
		m := make(map[string]any, rv.Len())
		it := rv.MapRange()
		for it.Next() {
			m[it.Key().String()] = it.Value().Interface()
		}
		return m
	case reflect.Pointer:
		if rv.IsNil() {
			return nil
		}
		return canon(rv.Elem().Interface())
	}
	return pyStr(fmtOther(v))
}

// fmtOther names a value of a type templates do not know.
func fmtOther(v any) string { return "<" + reflect.TypeOf(v).String() + " object>" }

// Native converts decoded JSON (with json.Number) into the values templates
// compare and compute with: int64 for integers, float64 otherwise.
func Native(v any) any {
	switch x := v.(type) {
	case json.Number:
		return canon(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = Native(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = Native(e)
		}
		return out
	}
	return v
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

// TypeName is Python's type(v).__name__ of a template's value, for error
// messages (never the value: it may be a secret).
func TypeName(v any) string { return typeName(v) }

// typeName is Python's type(v).__name__, for error messages (never the value:
// it may be a secret).
func typeName(v any) string {
	switch canon(v).(type) {
	case nil:
		return "NoneType"
	case bool:
		return "bool"
	case int64, *big.Int:
		return "int"
	case float64:
		return "float"
	case string:
		return "str"
	case []any:
		return "list"
	case tuple:
		return "tuple"
	case map[string]any, *pyDict:
		return "dict"
	case time.Time:
		return "datetime"
	case date:
		return "date"
	case time.Duration:
		return "timedelta"
	case monthDuration:
		return "Duration"
	case *undefined:
		return "Undefined"
	case pyBytes:
		return "bytes"
	case *view:
		return "dict_view"
	case *namespace:
		return "Namespace"
	case *callable, *boundMethod:
		return "builtin_function_or_method"
	case *loopInfo:
		return "LoopContext"
	case *templateRef:
		return "TemplateReference"
	}
	return "object"
}
