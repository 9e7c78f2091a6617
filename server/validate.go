package server

import (
	"encoding/json"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode"
)

// A request body that does not fit its model is answered 422 with FastAPI's
// list of pydantic (v2, lax mode) errors, each with its type, location,
// message, input and context as pydantic writes them.

// fieldError is one item of a 422's detail list.
type fieldError struct {
	Type  string          `json:"type"`
	Loc   []any           `json:"loc"`
	Msg   string          `json:"msg"`
	Input json.RawMessage `json:"input"`
	Ctx   map[string]any  `json:"ctx,omitempty"`
}

// kind is what a model's field holds.
type kind int

const (
	object     kind = iota // a pydantic model with extra="allow": any JSON object
	text                   // str
	maybeText              // Optional[str]
	anyList                // List[Any]
	integer                // int, within min..max
	reqContext             // Optional[RequestContext]
)

// field is one field of a request model, in the model's order (errors come
// in that order).
type field struct {
	name     string
	kind     kind
	required bool
	min, max int64 // for integer
	dflt     any   // the default when absent and not required
	// secret: the field holds credentials (the config), which an error's
	// input never shows (each text of it is ****).
	secret bool
}

var contextFields = []field{{name: "workspace_id", kind: maybeText}, {name: "project_id", kind: maybeText}}

// validateModel checks a decoded body (numbers as json.Number) against a
// model's fields, returning the values of the fields (defaults filled in;
// integers as int) or the errors.
func validateModel(body any, fields []field, loc []any) (map[string]any, []fieldError) {
	m, ok := body.(map[string]any)
	if !ok {
		return nil, []fieldError{modelTypeError(loc, body)}
	}
	out := map[string]any{}
	var errs []fieldError
	for _, f := range fields {
		at := append(append([]any(nil), loc...), f.name)
		v, present := m[f.name]
		if !present {
			if f.required {
				errs = append(errs, fieldError{Type: "missing", Loc: at, Msg: "Field required", Input: pyJSON(maskSecrets(m, fields))})
			} else {
				out[f.name] = f.dflt
			}
			continue
		}
		value, ferrs := f.validate(v, at)
		if f.secret {
			for i := range ferrs {
				ferrs[i].Input = pyJSON(maskTexts(v))
			}
		}
		errs = append(errs, ferrs...)
		out[f.name] = value
	}
	return out, errs
}

func (f field) validate(v any, at []any) (any, []fieldError) {
	switch f.kind {
	case object:
		if _, ok := v.(map[string]any); !ok {
			return nil, []fieldError{modelTypeError(at, v)}
		}
		return v, nil
	case maybeText:
		if v == nil {
			return nil, nil
		}
		fallthrough
	case text:
		if _, ok := v.(string); !ok {
			return nil, []fieldError{{Type: "string_type", Loc: at, Msg: "Input should be a valid string", Input: pyJSON(v)}}
		}
		return v, nil
	case anyList:
		if _, ok := v.([]any); !ok {
			return nil, []fieldError{{Type: "list_type", Loc: at, Msg: "Input should be a valid list", Input: pyJSON(v)}}
		}
		return v, nil
	case integer:
		return f.integer(v, at)
	case reqContext:
		if v == nil {
			return nil, nil
		}
		return validateModel(v, contextFields, at)
	}
	return v, nil
}

// maskSecrets is a body as an error echoes it: its secret fields' texts
// masked.
func maskSecrets(body map[string]any, fields []field) map[string]any {
	out := make(map[string]any, len(body))
	for k, v := range body {
		out[k] = v
	}
	for _, f := range fields {
		if v, ok := out[f.name]; ok && f.secret {
			out[f.name] = maskTexts(v)
		}
	}
	return out
}

// maskTexts is v with every string in it replaced by ****.
func maskTexts(v any) any {
	switch x := v.(type) {
	case string:
		return masked
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = maskTexts(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = maskTexts(e)
		}
		return out
	}
	return v
}

func modelTypeError(at []any, v any) fieldError {
	return fieldError{Type: "model_attributes_type", Loc: at, Msg: "Input should be a valid dictionary or object to extract fields from", Input: pyJSON(v)}
}

// integer validates an int field as pydantic's lax mode does: a JSON
// integer, a float without a fractional part, a bool, or a string holding a
// whole number (spaces around it, underscores between digits, a fraction of
// zeros), then within min..max.
func (f field) integer(v any, at []any) (any, []fieldError) {
	fail := func(typ, msg string) (any, []fieldError) {
		return nil, []fieldError{{Type: typ, Loc: at, Msg: msg, Input: pyJSON(v)}}
	}
	var n *big.Int
	switch x := v.(type) {
	case bool:
		n = big.NewInt(0)
		if x {
			n.SetInt64(1)
		}
	case json.Number:
		if isFloatLiteral(string(x)) {
			fl, err := strconv.ParseFloat(string(x), 64)
			switch {
			case err != nil && !math.IsInf(fl, 0):
				return fail("int_parsing", "Input should be a valid integer, unable to parse string as an integer")
			case math.IsInf(fl, 0) || math.IsNaN(fl):
				return fail("finite_number", "Input should be a finite number")
			case fl != math.Trunc(fl):
				return fail("int_from_float", "Input should be a valid integer, got a number with a fractional part")
			}
			n, _ = new(big.Float).SetFloat64(fl).Int(nil)
		} else {
			n, _ = new(big.Int).SetString(string(x), 10)
		}
	case string:
		var ok bool
		if n, ok = parseIntText(x); !ok {
			return fail("int_parsing", "Input should be a valid integer, unable to parse string as an integer")
		}
	default:
		return fail("int_type", "Input should be a valid integer")
	}
	if n == nil {
		return fail("int_parsing", "Input should be a valid integer, unable to parse string as an integer")
	}
	if n.Cmp(big.NewInt(f.min)) < 0 {
		return nil, []fieldError{{Type: "greater_than_equal", Loc: at, Msg: "Input should be greater than or equal to " + strconv.FormatInt(f.min, 10), Input: pyJSON(v), Ctx: map[string]any{"ge": f.min}}}
	}
	if n.Cmp(big.NewInt(f.max)) > 0 {
		return nil, []fieldError{{Type: "less_than_equal", Loc: at, Msg: "Input should be less than or equal to " + strconv.FormatInt(f.max, 10), Input: pyJSON(v), Ctx: map[string]any{"le": f.max}}}
	}
	return int(n.Int64()), nil
}

// parseIntText reads a whole number from a string as pydantic does:
// surrounding whitespace trimmed, an optional sign, ASCII digits with single
// underscores between them, and an optional fraction of zeros ("3.0").
func parseIntText(s string) (*big.Int, bool) {
	s = strings.TrimFunc(s, unicode.IsSpace)
	if whole, frac, ok := strings.Cut(s, "."); ok {
		if frac == "" || strings.Trim(frac, "0") != "" {
			return nil, false
		}
		s = whole
	}
	digits := strings.TrimLeft(s, "+-")
	if len(s)-len(digits) > 1 || digits == "" || digits[0] == '_' || digits[len(digits)-1] == '_' || strings.Contains(digits, "__") {
		return nil, false
	}
	digits = strings.ReplaceAll(digits, "_", "")
	for i := 0; i < len(digits); i++ {
		if !isDigit(digits[i]) {
			return nil, false
		}
	}
	n, ok := new(big.Int).SetString(digits, 10)
	if ok && s[0] == '-' {
		n.Neg(n)
	}
	return n, ok
}

// isFloatLiteral tells whether a JSON number is a float to Python (it has a
// fraction or an exponent).
func isFloatLiteral(s string) bool { return strings.ContainsAny(s, ".eE") }

// pyJSON writes a decoded value (numbers as json.Number) as FastAPI writes a
// Python value: an integer as written, a float as Python's repr.
func pyJSON(v any) json.RawMessage {
	return marshal(pythonNumbers(v))
}

func pythonNumbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = pythonNumbers(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = pythonNumbers(e)
		}
		return out
	case json.Number:
		return json.RawMessage(pythonNumber(string(x)))
	}
	return v
}

// pythonNumber is a JSON number as Python prints the value json.loads makes
// of it: an integer as its digits, a float as its repr (1000.0, 1e+16,
// 1.5e-07); one too large for a float is left as written.
func pythonNumber(s string) string {
	if !isFloatLiteral(s) {
		if n, ok := new(big.Int).SetString(s, 10); ok {
			return n.String()
		}
		return s
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) {
		return s
	}
	return floatRepr(f)
}

// floatRepr is Python's repr of a float: the shortest digits that read back,
// fixed notation from 1e-4 up to 1e16 (with at least one decimal), else
// scientific with a signed exponent of at least two digits.
func floatRepr(f float64) string {
	if f == 0 {
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±XX
	mant, expText, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expText)
	if exp < -4 || exp >= 16 {
		sign := "+"
		if exp < 0 {
			sign, exp = "-", -exp
		}
		return mant + "e" + sign + pad2(exp)
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

func pad2(n int) string {
	if n < 10 {
		return "0" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}
