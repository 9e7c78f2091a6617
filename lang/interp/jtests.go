package interp

import (
	"strings"
	"sync"
	"time"
	"unicode"
)

// testFunc is a Jinja test: x is name(args).
type testFunc func(s *state, in any, a *args) (any, error)

// testFuncsTable is Jinja's built-in tests.
var (
	testFuncsTable     map[string]testFunc
	testFuncsTableOnce sync.Once
)

// testFuncs returns the table, built on first use rather than at package init:
// a run builds only the tables its templates need.
func testFuncs() map[string]testFunc {
	testFuncsTableOnce.Do(buildTestFuncs)
	return testFuncsTable
}

func buildTestFuncs() {
	compare := func(op string) testFunc {
		return func(_ *state, in any, a *args) (any, error) {
			if len(a.pos) != 1 {
				return nil, typeErr("the test takes one argument")
			}
			return compareOp(op, in, a.pos[0])
		}
	}
	is := func(f func(any) bool) testFunc {
		return func(_ *state, in any, _ *args) (any, error) { return f(canon(in)), nil }
	}
	testFuncsTable = map[string]testFunc{
		"defined":   is(func(v any) bool { _, u := v.(*undefined); return !u }),
		"undefined": is(func(v any) bool { _, u := v.(*undefined); return u }),
		"none":      is(func(v any) bool { return v == nil }),
		"boolean":   is(func(v any) bool { _, ok := v.(bool); return ok }),
		"false":     is(func(v any) bool { b, ok := v.(bool); return ok && !b }),
		"true":      is(func(v any) bool { b, ok := v.(bool); return ok && b }),
		"integer":   is(func(v any) bool { _, ok := v.(int64); return ok }),
		"float":     is(func(v any) bool { _, ok := v.(float64); return ok }),
		"number": is(func(v any) bool {
			_, _, _, ok := num(v)
			return ok
		}),
		"string":  is(func(v any) bool { _, ok := v.(string); return ok }),
		"mapping": is(func(v any) bool { _, ok := v.(map[string]any); return ok }),
		"iterable": is(func(v any) bool {
			_, err := iterate(v)
			return err == nil
		}),
		"sequence": is(func(v any) bool {
			switch v.(type) {
			case string, []any, tuple, map[string]any, *view, *undefined:
				return true
			}
			return false
		}),
		"callable": is(func(v any) bool {
			switch v.(type) {
			case *callable, *boundMethod:
				return true
			}
			return false
		}),
		"escaped":     is(func(any) bool { return false }),
		"lower":       is(func(v any) bool { s, err := pyText(v); return err == nil && strings.ToLower(s) == s }),
		"upper":       is(func(v any) bool { s, err := pyText(v); return err == nil && strings.ToUpper(s) == s }),
		"odd":         parity(1),
		"even":        parity(0),
		"divisibleby": tDivisible,
		"sameas": func(_ *state, in any, a *args) (any, error) {
			if len(a.pos) != 1 {
				return nil, typeErr("sameas takes one argument")
			}
			return sameAs(in, a.pos[0]), nil
		},
		"in": func(_ *state, in any, a *args) (any, error) {
			if len(a.pos) != 1 {
				return nil, typeErr("in takes one argument")
			}
			return contains(a.pos[0], in)
		},
		"eq": compare("eq"), "equalto": compare("eq"), "==": compare("eq"),
		"ne": compare("ne"), "!=": compare("ne"),
		"lt": compare("lt"), "lessthan": compare("lt"), "<": compare("lt"),
		"le": compare("lteq"), "<=": compare("lteq"),
		"gt": compare("gt"), "greaterthan": compare("gt"), ">": compare("gt"),
		"ge": compare("gteq"), ">=": compare("gteq"),
		"filter": func(_ *state, in any, _ *args) (any, error) {
			name, ok := in.(string)
			_, found := filterFuncs()[name]
			return ok && found, nil
		},
		"test": func(_ *state, in any, _ *args) (any, error) {
			name, ok := in.(string)
			_, found := testFuncs()[name]
			return ok && found, nil
		},
	}
}

func parity(rem int64) testFunc {
	return func(_ *state, in any, _ *args) (any, error) {
		i, ok := intLike(in)
		if !ok {
			if f, isF := in.(float64); isF {
				return floatMod(f, 2) == float64(rem), nil
			}
			if err := failUndefined(in); err != nil {
				return nil, err
			}
			return nil, typeErr("unsupported operand type(s) for %%: '%s' and 'int'", typeName(in))
		}
		m, _ := intOp("%", i, 2)
		return m == rem, nil
	}
}

func tDivisible(_ *state, in any, a *args) (any, error) {
	if len(a.pos) != 1 {
		return nil, typeErr("divisibleby takes one argument")
	}
	if err := failUndefined(in); err != nil {
		return nil, err
	}
	m, err := binary(nil, "%", in, a.pos[0])
	if err != nil {
		return nil, err
	}
	return equal(m, int64(0)), nil
}

// sameAs is Python's `is`: identity, which for the engine's immutable values
// is equality of the same type.
func sameAs(a, b any) bool {
	switch x := a.(type) {
	case nil, bool:
		return a == b
	case int64:
		y, ok := b.(int64)
		return ok && x == y && x >= -5 && x <= 256
	case string:
		y, ok := b.(string)
		return ok && x == y && (len(x) <= 1 || isIdentifier(x))
	case time.Time, time.Duration, float64:
		return false
	case *undefined:
		return false
	}
	return false
}

func isIdentifier(s string) bool {
	for i, r := range s {
		if r != '_' && !unicode.IsLetter(r) && (i == 0 || !unicode.IsDigit(r)) {
			return false
		}
	}
	return s != ""
}
