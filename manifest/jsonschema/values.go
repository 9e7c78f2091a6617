package jsonschema

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// kind is the JSON type of a decoded value.
type kind uint8

const (
	notJSON kind = iota
	nullKind
	booleanKind
	numberKind
	stringKind
	arrayKind
	objectKind
)

var kindNames = [...]string{"not JSON", "null", "boolean", "number", "string", "array", "object"}

func (k kind) String() string { return kindNames[k] }

func kindOf(v any) kind {
	switch v.(type) {
	case nil:
		return nullKind
	case bool:
		return booleanKind
	case string:
		return stringKind
	case []any:
		return arrayKind
	case map[string]any:
		return objectKind
	}
	if _, ok := toFloat(v); ok {
		return numberKind
	}
	return notJSON
}

// typeSet is the types a "type" keyword allows, one bit per kind, with
// integers apart.
type typeSet uint16

const integerType typeSet = 1 << 15

const anyType typeSet = 1<<nullKind | 1<<booleanKind | 1<<numberKind | 1<<stringKind | 1<<arrayKind | 1<<objectKind

var typeNamed = map[string]typeSet{
	"null": 1 << nullKind, "boolean": 1 << booleanKind, "number": 1 << numberKind, "string": 1 << stringKind,
	"array": 1 << arrayKind, "object": 1 << objectKind, "integer": integerType,
}

func (t typeSet) allows(k kind, v any) bool {
	return t&(1<<k) != 0 || (k == numberKind && t&integerType != 0 && isInteger(v))
}

// toFloat reads any number a JSON or YAML decoder makes.
func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case float32:
		return float64(x), true
	case int8:
		return float64(x), true
	case int16:
		return float64(x), true
	case int32:
		return float64(x), true
	case uint:
		return float64(x), true
	case uint8:
		return float64(x), true
	case uint16:
		return float64(x), true
	case uint32:
		return float64(x), true
	case uint64:
		return float64(x), true
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		return f, err == nil
	}
	return 0, false
}

// isInteger tells whether a number has no fractional part (2.0 is an integer).
func isInteger(v any) bool {
	switch x := v.(type) {
	case float64:
		return x == math.Trunc(x) && !math.IsInf(x, 0)
	case float32:
		return float64(x) == math.Trunc(float64(x)) && !math.IsInf(float64(x), 0)
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		return err == nil && f == math.Trunc(f) && !math.IsInf(f, 0)
	}
	_, ok := toFloat(v)
	return ok
}

// equal tells whether two JSON values are equal: numbers by value (1 and 1.0
// are equal), objects whatever their key order.
func equal(a, b any) bool {
	ka, kb := kindOf(a), kindOf(b)
	if ka != kb {
		return false
	}
	switch ka {
	case numberKind:
		x, _ := toFloat(a)
		y, _ := toFloat(b)
		return x == y
	case arrayKind:
		x, y := a.([]any), b.([]any)
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case objectKind:
		x, y := a.(map[string]any), b.(map[string]any)
		if len(x) != len(y) {
			return false
		}
		for k, e := range x {
			f, ok := y[k]
			if !ok || !equal(e, f) {
				return false
			}
		}
		return true
	case stringKind:
		return a.(string) == b.(string)
	case booleanKind:
		return a.(bool) == b.(bool)
	}
	return true // both null
}

// multipleOf tells whether x is a multiple of m, exactly, with the decimal
// values they are written with (0.3 is a multiple of 0.1).
func multipleOf(x, m float64) bool {
	if x == math.Trunc(x) && m == math.Trunc(m) && math.Abs(x) < 1<<53 && math.Abs(m) < 1<<53 {
		return math.Mod(x, m) == 0
	}
	rx, okx := new(big.Rat).SetString(strconv.FormatFloat(x, 'g', -1, 64))
	rm, okm := new(big.Rat).SetString(strconv.FormatFloat(m, 'g', -1, 64))
	if !okx || !okm || rm.Sign() == 0 {
		return false
	}
	return new(big.Rat).Quo(rx, rm).IsInt()
}

// describe names a value in a schema error: its JSON text, cut short.
func describe(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%T", v)
	}
	if len(b) > 60 {
		return string(b[:57]) + "..."
	}
	return string(b)
}

// goSyntax writes a const or enum value as the messages always have: Go
// syntax, with numbers quoted as the JSON text they are written with.
func goSyntax(v any) string {
	switch x := v.(type) {
	case string:
		return strconv.Quote(x)
	case nil:
		return "<nil>"
	case bool:
		return strconv.FormatBool(x)
	}
	b, _ := json.Marshal(v)
	return strconv.Quote(string(b))
}

// quote single-quotes a name, as the messages always have.
func quote(s string) string {
	q := strconv.Quote(s)
	q = strings.ReplaceAll(q, `\"`, `"`)
	q = strings.ReplaceAll(q, `'`, `\'`)
	return "'" + q[1:len(q)-1] + "'"
}
