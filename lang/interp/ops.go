package interp

import (
	"math"
	"math/big"
	"math/bits"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"
)

// Python's operators on the engine's values.

// num reads a number (bools count as 0 and 1, as in Python).
func num(v any) (i int64, f float64, isFloat, ok bool) {
	switch x := v.(type) {
	case int64:
		return x, 0, false, true
	case float64:
		return 0, x, true, true
	case bool:
		if x {
			return 1, 0, false, true
		}
		return 0, 0, false, true
	}
	return 0, 0, false, false
}

func toFloat(i int64, f float64, isFloat bool) float64 {
	if isFloat {
		return f
	}
	return float64(i)
}

func unsupported(op string, l, r any) error {
	return typeErr("unsupported operand type(s) for %s: '%s' and '%s'", op, typeName(l), typeName(r))
}

var errOverflow error = &evalError{kind: kindValue, msg: "integer overflow: the result does not fit in 64 bits"}

func binary(s *state, op string, l, r any) (any, error) {
	if u, ok := l.(*undefined); ok {
		return nil, u.err()
	}
	if u, ok := r.(*undefined); ok {
		return nil, u.err()
	}
	if isBig(l) || isBig(r) {
		if v, ok, err := bigBinary(op, l, r); ok {
			return v, err
		}
	}
	li, lf, lfl, lok := num(l)
	ri, rf, rfl, rok := num(r)
	if lok && rok {
		if !lfl && !rfl {
			v, err := intOp(op, li, ri)
			if err == errOverflow {
				return bigOp(op, big.NewInt(li), big.NewInt(ri))
			}
			return v, err
		}
		return floatOp(op, toFloat(li, lf, lfl), toFloat(ri, rf, rfl))
	}
	switch op {
	case "+":
		return add(s, l, r)
	case "-":
		return sub(l, r)
	case "*":
		return mul(s, l, r)
	case "%":
		if f, ok := l.(string); ok {
			out, err := percentFormat(f, r)
			if err != nil {
				return nil, err
			}
			return out, checkLen(len(out))
		}
	case "/", "//":
		if d, ok := l.(time.Duration); ok {
			return divDuration(op, d, r)
		}
	}
	return nil, unsupported(op, l, r)
}

func intOp(op string, a, b int64) (any, error) {
	switch op {
	case "+":
		c := a + b
		if (c > a) != (b > 0) {
			return nil, errOverflow
		}
		return c, nil
	case "-":
		c := a - b
		if (c < a) != (b > 0) {
			return nil, errOverflow
		}
		return c, nil
	case "*":
		if a == 0 || b == 0 {
			return int64(0), nil
		}
		c := a * b
		if c/b != a || (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64) {
			return nil, errOverflow
		}
		return c, nil
	case "/":
		if b == 0 {
			return nil, valueErr("division by zero")
		}
		return float64(a) / float64(b), nil
	case "//":
		if b == 0 {
			return nil, valueErr("integer division or modulo by zero")
		}
		q := a / b
		if (a%b != 0) && ((a < 0) != (b < 0)) {
			q--
		}
		return q, nil
	case "%":
		if b == 0 {
			return nil, valueErr("integer division or modulo by zero")
		}
		m := a % b
		if m != 0 && ((m < 0) != (b < 0)) {
			m += b
		}
		return m, nil
	case "**":
		if b < 0 {
			if a == 0 {
				return nil, valueErr("0.0 cannot be raised to a negative power")
			}
			return math.Pow(float64(a), float64(b)), nil
		}
		return intPow(a, b)
	}
	return nil, unsupported(op, a, b)
}

func intPow(a, b int64) (any, error) {
	result := int64(1)
	for b > 0 {
		if b&1 == 1 {
			hi, lo := bits.Mul64(uint64(abs64(result)), uint64(abs64(a)))
			if hi != 0 || lo > math.MaxInt64 {
				return nil, errOverflow
			}
			neg := (result < 0) != (a < 0)
			result = int64(lo)
			if neg {
				result = -result
			}
		}
		b >>= 1
		if b > 0 {
			hi, lo := bits.Mul64(uint64(abs64(a)), uint64(abs64(a)))
			if hi != 0 || lo > math.MaxInt64 {
				return nil, errOverflow
			}
			a = int64(lo)
		}
	}
	return result, nil
}

func abs64(a int64) int64 {
	if a < 0 {
		return -a
	}
	return a
}

func floatOp(op string, a, b float64) (any, error) {
	switch op {
	case "+":
		return a + b, nil
	case "-":
		return a - b, nil
	case "*":
		return a * b, nil
	case "/":
		if b == 0 {
			return nil, valueErr("float division by zero")
		}
		return a / b, nil
	case "//":
		if b == 0 {
			return nil, valueErr("float floor division by zero")
		}
		return floatFloorDiv(a, b), nil
	case "%":
		if b == 0 {
			return nil, valueErr("float modulo")
		}
		return floatMod(a, b), nil
	case "**":
		if a == 0 && b < 0 {
			return nil, valueErr("0.0 cannot be raised to a negative power")
		}
		if a < 0 && b != math.Trunc(b) {
			return nil, valueErr("a negative number cannot be raised to a fractional power")
		}
		r := math.Pow(a, b)
		if math.IsInf(r, 0) && !math.IsInf(a, 0) && !math.IsInf(b, 0) {
			return nil, valueErr("numerical result out of range")
		}
		return r, nil
	}
	return nil, unsupported(op, a, b)
}

// floatMod and floatFloorDiv follow CPython's float_rem and float_floor_div.
func floatMod(a, b float64) float64 {
	m := math.Mod(a, b)
	if m != 0 {
		if (b < 0) != (m < 0) {
			m += b
		}
	} else {
		m = math.Copysign(0, b)
	}
	return m
}

func floatFloorDiv(a, b float64) float64 {
	m := math.Mod(a, b)
	div := (a - m) / b
	if m != 0 && (b < 0) != (m < 0) {
		div -= 1
	}
	if div == 0 {
		return math.Copysign(0, a/b)
	}
	floor := math.Floor(div)
	if div-floor > 0.5 {
		floor += 1
	}
	return floor
}

func add(s *state, l, r any) (any, error) {
	switch a := l.(type) {
	case string:
		if b, ok := r.(string); ok {
			if err := checkLen(len(a) + len(b)); err != nil {
				return nil, err
			}
			return a + b, s.charge(len(a) + len(b))
		}
	case []any:
		if b, ok := r.([]any); ok {
			if err := checkItems(len(a) + len(b)); err != nil {
				return nil, err
			}
			out := make([]any, 0, len(a)+len(b))
			return append(append(out, a...), b...), s.charge(len(a) + len(b))
		}
	case tuple:
		if b, ok := r.(tuple); ok {
			if err := checkItems(len(a) + len(b)); err != nil {
				return nil, err
			}
			out := make(tuple, 0, len(a)+len(b))
			return append(append(out, a...), b...), s.charge(len(a) + len(b))
		}
	case time.Time:
		switch b := r.(type) {
		case time.Duration:
			return a.Add(b), nil
		case monthDuration:
			return addMonths(a, b, 1), nil
		}
	case date:
		switch b := r.(type) {
		case time.Duration:
			return date{a.t.AddDate(0, 0, int(floorDays(b)))}, nil
		case monthDuration:
			return date{addMonths(a.t, b, 1)}, nil
		}
	case time.Duration:
		switch b := r.(type) {
		case time.Duration:
			return a + b, nil
		case time.Time, date, monthDuration:
			return add(s, r, l)
		}
	case monthDuration:
		switch b := r.(type) {
		case time.Duration:
			d := a.d
			d.Fixed += b
			return monthDuration{d}, nil
		case monthDuration:
			d := a.d
			d.Years += b.d.Years
			d.Months += b.d.Months
			d.Fixed += b.d.Fixed
			return monthDuration{d}, nil
		case time.Time, date:
			return add(s, r, l)
		}
	}
	return nil, unsupported("+", l, r)
}

// floorDays is a timedelta's days attribute: whole days, rounded down.
func floorDays(d time.Duration) int64 {
	day := int64(24 * time.Hour)
	n := int64(d) / day
	if int64(d)%day < 0 {
		n--
	}
	return n
}

// addMonths adds (sign 1) or subtracts (-1) an isodate Duration: years and
// months first, the day clamped to the month's length, then the rest.
func addMonths(t time.Time, d monthDuration, sign int) time.Time {
	months := int(t.Month()) - 1 + sign*(d.d.Years*12+d.d.Months)
	year := t.Year() + floorDiv(months, 12)
	month := time.Month(months - floorDiv(months, 12)*12 + 1)
	day := t.Day()
	if last := daysIn(year, month); day > last {
		day = last
	}
	moved := time.Date(year, month, day, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), t.Location())
	return moved.Add(time.Duration(sign) * d.d.Fixed)
}

func floorDiv(a, b int) int {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func daysIn(year int, month time.Month) int {
	return time.Date(year, month+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

func sub(l, r any) (any, error) {
	switch a := l.(type) {
	case time.Time:
		switch b := r.(type) {
		case time.Duration:
			return a.Add(-b), nil
		case time.Time:
			return a.Sub(b), nil
		case monthDuration:
			return addMonths(a, b, -1), nil
		}
	case date:
		switch b := r.(type) {
		case time.Duration:
			return date{a.t.AddDate(0, 0, -int(floorDays(b)))}, nil
		case date:
			return a.t.Sub(b.t), nil
		case monthDuration:
			return date{addMonths(a.t, b, -1)}, nil
		}
	case time.Duration:
		switch b := r.(type) {
		case time.Duration:
			return a - b, nil
		case monthDuration:
			d := b.d
			d.Years, d.Months, d.Fixed = -d.Years, -d.Months, a-d.Fixed
			return monthDuration{d}, nil
		}
	case monthDuration:
		switch b := r.(type) {
		case time.Duration:
			d := a.d
			d.Fixed -= b
			return monthDuration{d}, nil
		case monthDuration:
			d := a.d
			d.Years -= b.d.Years
			d.Months -= b.d.Months
			d.Fixed -= b.d.Fixed
			return monthDuration{d}, nil
		}
	}
	return nil, unsupported("-", l, r)
}

func mul(s *state, l, r any) (any, error) {
	n, ok := intLike(r)
	if !ok {
		if m, lok := intLike(l); lok {
			n, ok, l, r = m, true, r, l
		}
	}
	if ok {
		switch a := l.(type) {
		case string:
			if n <= 0 {
				return "", nil
			}
			if err := checkLen(len(a) * int(min(n, MaxOutput+1))); err != nil {
				return nil, err
			}
			return strings.Repeat(a, int(n)), s.charge(len(a) * int(n))
		case []any:
			return repeatItems(s, a, n)
		case tuple:
			out, err := repeatItems(s, a, n)
			if err != nil {
				return nil, err
			}
			return tuple(out), nil
		case time.Duration:
			c := int64(a) * n
			if n != 0 && c/n != int64(a) {
				return nil, errOverflow
			}
			return time.Duration(c), nil
		case monthDuration:
			d := a.d
			d.Years *= int(n)
			d.Months *= int(n)
			d.Fixed *= time.Duration(n)
			return monthDuration{d}, nil
		}
	}
	if f, ok := r.(float64); ok {
		if d, ok := l.(time.Duration); ok {
			return roundMicro(float64(d) * f), nil
		}
	}
	if f, ok := l.(float64); ok {
		if d, ok := r.(time.Duration); ok {
			return roundMicro(float64(d) * f), nil
		}
	}
	return nil, unsupported("*", l, r)
}

func intLike(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

func repeatItems(s *state, items []any, n int64) ([]any, error) {
	if n <= 0 {
		return []any{}, nil
	}
	if err := checkItems(len(items) * int(min(n, MaxItems+1))); err != nil {
		return nil, err
	}
	out := make([]any, 0, len(items)*int(n))
	for i := int64(0); i < n; i++ {
		out = append(out, items...)
	}
	return out, s.charge(len(out))
}

// roundMicro rounds nanoseconds to whole microseconds, half to even, as
// timedelta does.
func roundMicro(ns float64) time.Duration {
	return time.Duration(math.RoundToEven(ns/1e3) * 1e3)
}

func divDuration(op string, d time.Duration, r any) (any, error) {
	switch b := r.(type) {
	case time.Duration:
		if b == 0 {
			return nil, valueErr("division by zero")
		}
		if op == "/" {
			return float64(d) / float64(b), nil
		}
		q, _ := intOp("//", int64(d), int64(b))
		return q, nil
	case int64:
		if b == 0 {
			return nil, valueErr("division by zero")
		}
		if op == "//" {
			q, _ := intOp("//", int64(d)/1e3, b)
			return time.Duration(q.(int64) * 1e3), nil
		}
		return roundMicro(float64(d) / float64(b)), nil
	case float64:
		if b == 0 {
			return nil, valueErr("division by zero")
		}
		if op == "/" {
			return roundMicro(float64(d) / b), nil
		}
	}
	return nil, unsupported(op, d, r)
}

func neg(v any) (any, error) {
	switch x := v.(type) {
	case int64:
		if x == math.MinInt64 {
			return normInt(new(big.Int).Neg(big.NewInt(x)))
		}
		return -x, nil
	case *big.Int:
		return normInt(new(big.Int).Neg(x))
	case float64:
		return -x, nil
	case bool:
		if x {
			return int64(-1), nil
		}
		return int64(0), nil
	case time.Duration:
		return -x, nil
	case monthDuration:
		d := x.d
		d.Years, d.Months, d.Fixed = -d.Years, -d.Months, -d.Fixed
		return monthDuration{d}, nil
	case *undefined:
		return nil, x.err()
	}
	return nil, typeErr("bad operand type for unary -: '%s'", typeName(v))
}

func pos(v any) (any, error) {
	switch x := v.(type) {
	case int64, float64, *big.Int, time.Duration, monthDuration:
		return x, nil
	case bool:
		if x {
			return int64(1), nil
		}
		return int64(0), nil
	case *undefined:
		return nil, x.err()
	}
	return nil, typeErr("bad operand type for unary +: '%s'", typeName(v))
}

// equal is Python's ==.
func equal(a, b any) bool { return equalAt(a, b, 0) }

// equalAt is equal at a depth of nested containers: a dict is equal to
// itself without a look inside (Python compares a container's items by
// identity first), and past 4 × maxNesting levels (dicts holding each other)
// nothing is equal, where Python fails with a RecursionError.
func equalAt(a, b any, depth int) bool {
	if depth > 4*maxNesting {
		return false
	}
	a, b = canon(a), canon(b)
	if isBig(a) || isBig(b) {
		c, ok := bigCompare(a, b)
		return ok && c == 0
	}
	ai, af, afl, aok := num(a)
	bi, bf, bfl, bok := num(b)
	if aok && bok {
		if !afl && !bfl {
			return ai == bi
		}
		return toFloat(ai, af, afl) == toFloat(bi, bf, bfl)
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case string:
		y, ok := b.(string)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		return ok && equalItems(x, y, depth)
	case tuple:
		y, ok := b.(tuple)
		return ok && equalItems(x, y, depth)
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		if reflect.ValueOf(x).Pointer() == reflect.ValueOf(y).Pointer() {
			return true
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !equalAt(v, w, depth+1) {
				return false
			}
		}
		return true
	case time.Time:
		y, ok := b.(time.Time)
		return ok && x.Equal(y)
	case date:
		y, ok := b.(date)
		return ok && x.t.Equal(y.t)
	case time.Duration:
		switch y := b.(type) {
		case time.Duration:
			return x == y
		case monthDuration:
			return y.d.Years == 0 && y.d.Months == 0 && y.d.Fixed == x
		}
	case monthDuration:
		switch y := b.(type) {
		case monthDuration:
			return x.d.Years*12+x.d.Months == y.d.Years*12+y.d.Months && x.d.Fixed == y.d.Fixed
		case time.Duration:
			return equalAt(b, a, depth)
		}
	case *undefined:
		_, ok := b.(*undefined)
		return ok
	case *view:
		y, ok := b.(*view)
		return ok && x.kind == y.kind && equalItems(x.items, y.items, depth)
	case *pyDict:
		y, ok := b.(*pyDict)
		if !ok || len(x.keys) != len(y.keys) {
			return false
		}
		if x == y {
			return true
		}
		for i, k := range x.keys {
			if w, found := y.get(k); !found || !equalAt(x.vals[i], w, depth+1) {
				return false
			}
		}
		return true
	}
	return a == b
}

func equalItems(x, y []any, depth int) bool {
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if !equalAt(x[i], y[i], depth+1) {
			return false
		}
	}
	return true
}

// less orders two values as Python's < does, or fails with a TypeError.
func less(a, b any) (bool, error) {
	c, err := cmp(a, b, "<")
	return c < 0, err
}

func cmp(a, b any, op string) (int, error) {
	a, b = canon(a), canon(b)
	if isBig(a) || isBig(b) {
		if c, ok := bigCompare(a, b); ok {
			return c, nil
		}
	}
	ai, af, afl, aok := num(a)
	bi, bf, bfl, bok := num(b)
	if aok && bok {
		if !afl && !bfl {
			return compareOrdered(ai, bi), nil
		}
		x, y := toFloat(ai, af, afl), toFloat(bi, bf, bfl)
		if math.IsNaN(x) || math.IsNaN(y) {
			return 2, nil
		}
		return compareOrdered(x, y), nil
	}
	switch x := a.(type) {
	case string:
		if y, ok := b.(string); ok {
			return strings.Compare(x, y), nil
		}
	case []any:
		if y, ok := b.([]any); ok {
			return cmpItems(x, y, op)
		}
	case tuple:
		if y, ok := b.(tuple); ok {
			return cmpItems(x, y, op)
		}
	case time.Time:
		if y, ok := b.(time.Time); ok {
			return x.Compare(y), nil
		}
	case date:
		if y, ok := b.(date); ok {
			return x.t.Compare(y.t), nil
		}
	case time.Duration:
		if y, ok := b.(time.Duration); ok {
			return compareOrdered(x, y), nil
		}
	case *undefined:
		return 0, x.err()
	}
	if u, ok := b.(*undefined); ok {
		return 0, u.err()
	}
	return 0, typeErr("'%s' not supported between instances of '%s' and '%s'", op, typeName(a), typeName(b))
}

func compareOrdered[T int64 | float64 | time.Duration](x, y T) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

func cmpItems(x, y []any, op string) (int, error) {
	for i := 0; i < len(x) && i < len(y); i++ {
		if !equal(x[i], y[i]) {
			return cmp(x[i], y[i], op)
		}
	}
	return compareOrdered(int64(len(x)), int64(len(y))), nil
}

func compareOp(op string, l, r any) (bool, error) {
	switch op {
	case "eq":
		return equal(l, r), nil
	case "ne":
		return !equal(l, r), nil
	case "in":
		return contains(r, l)
	case "notin":
		ok, err := contains(r, l)
		return !ok, err
	}
	sym := map[string]string{"lt": "<", "lteq": "<=", "gt": ">", "gteq": ">="}[op]
	c, err := cmp(l, r, sym)
	if err != nil {
		return false, err
	}
	if c == 2 { // NaN
		return false, nil
	}
	switch op {
	case "lt":
		return c < 0, nil
	case "lteq":
		return c <= 0, nil
	case "gt":
		return c > 0, nil
	}
	return c >= 0, nil
}

// contains is Python's `item in container`.
func contains(container, item any) (bool, error) {
	switch c := canon(container).(type) {
	case string:
		s, ok := item.(string)
		if !ok {
			if u, isU := item.(*undefined); isU {
				return false, u.err()
			}
			return false, typeErr("'in <string>' requires string as left operand, not %s", typeName(item))
		}
		return strings.Contains(c, s), nil
	case []any:
		return containsItem(c, item), nil
	case tuple:
		return containsItem(c, item), nil
	case *view:
		return containsItem(c.items, item), nil
	case *pyDict:
		if _, err := dictKey(item); err != nil {
			return false, err
		}
		_, ok := c.get(item)
		return ok, nil
	case map[string]any:
		switch k := item.(type) {
		case string:
			_, ok := c[k]
			return ok, nil
		case []any, map[string]any:
			return false, typeErr("unhashable type: '%s'", typeName(item))
		}
		return false, nil
	case *undefined:
		return false, nil
	case *namespace:
		return false, typeErr("argument of type 'Namespace' is not iterable")
	}
	return false, typeErr("argument of type '%s' is not iterable", typeName(container))
}

func containsItem(items []any, item any) bool {
	for _, e := range items {
		if equal(e, item) {
			return true
		}
	}
	return false
}

// iterate lists what a for loop over v visits.
func iterate(v any) ([]any, error) {
	switch x := canon(v).(type) {
	case []any:
		return x, nil
	case tuple:
		return x, nil
	case map[string]any:
		keys := SortedKeys(x)
		out := make([]any, len(keys))
		for i, k := range keys {
			out[i] = k
		}
		return out, nil
	case string:
		out := make([]any, 0, len(x))
		for _, r := range x {
			out = append(out, string(r))
		}
		return out, nil
	case *undefined:
		return nil, nil
	case *view:
		return x.items, nil
	case pyBytes:
		return byteItems(x), nil
	case *pyDict:
		return x.keys, nil
	}
	return nil, typeErr("'%s' object is not iterable", typeName(v))
}

// slice is Python's x[lo:hi:step] on lists, tuples and strings.
func slice(v, lo, hi, step any) (any, error) {
	if u, ok := v.(*undefined); ok {
		return nil, u.err()
	}
	var n int
	var runes []rune
	switch x := canon(v).(type) {
	case []any:
		n = len(x)
	case tuple:
		n = len(x)
	case string:
		if !utf8.ValidString(x) || strings.IndexFunc(x, func(r rune) bool { return r >= utf8.RuneSelf }) >= 0 {
			runes = []rune(x)
			n = len(runes)
		} else {
			n = len(x)
		}
	default:
		return &undefined{hint: "'" + typeName(v) + " object' has no attribute 'slice'"}, nil
	}
	idx := func(b any, def int) (int, error) {
		if b == nil {
			return def, nil
		}
		i, _, isF, ok := num(b)
		if !ok || isF {
			return 0, typeErr("slice indices must be integers or None")
		}
		return int(max(min(i, math.MaxInt32), math.MinInt32)), nil
	}
	st, err := idx(step, 1)
	if err != nil {
		return nil, err
	}
	if st == 0 {
		return nil, valueErr("slice step cannot be zero")
	}
	var start, stop int
	if st > 0 {
		if start, err = idx(lo, 0); err != nil {
			return nil, err
		}
		if stop, err = idx(hi, n); err != nil {
			return nil, err
		}
		start, stop = clampIndex(start, n, 0, n), clampIndex(stop, n, 0, n)
	} else {
		if start, err = idx(lo, n-1); err != nil {
			return nil, err
		}
		if stop, err = idx(hi, -n-1); err != nil {
			return nil, err
		}
		start, stop = clampIndex(start, n, -1, n-1), clampIndex(stop, n, -1, n-1)
	}
	var picks []int
	for i := start; (st > 0 && i < stop) || (st < 0 && i > stop); i += st {
		picks = append(picks, i)
	}
	switch x := canon(v).(type) {
	case []any:
		out := make([]any, len(picks))
		for j, i := range picks {
			out[j] = x[i]
		}
		return out, nil
	case tuple:
		out := make(tuple, len(picks))
		for j, i := range picks {
			out[j] = x[i]
		}
		return out, nil
	case string:
		var b strings.Builder
		for _, i := range picks {
			if runes != nil {
				b.WriteRune(runes[i])
			} else {
				b.WriteByte(x[i])
			}
		}
		return b.String(), nil
	}
	return nil, nil
}

// clampIndex resolves a negative index and clamps it into [lo, hi].
func clampIndex(i, n, lo, hi int) int {
	if i < 0 {
		i += n
		if i < lo {
			i = lo
		}
	}
	if i > hi {
		i = hi
	}
	return i
}
