package interp

import (
	"math"
	"math/big"
	"strconv"
)

// Integers beyond 64 bits are *big.Int, as Python's int has no bound. An
// integer of more than maxIntDigits digits is an error (Python itself
// refuses to write one), which bounds the work of an operation on them.

// maxIntDigits is Python's limit on writing an integer in decimal.
const maxIntDigits = 4300

// maxIntBits is the size of the largest integer of maxIntDigits digits.
var maxIntBits = int(math.Ceil(maxIntDigits * math.Log2(10)))

// normInt is n as an int64 when it fits, else n, or an error past the bound.
func normInt(n *big.Int) (any, error) {
	if n.IsInt64() {
		return n.Int64(), nil
	}
	if n.BitLen() > maxIntBits {
		return nil, valueErr("an integer of more than %d digits", maxIntDigits)
	}
	return n, nil
}

// Integer is the value of an integer's decimal text (a JSON number
// without fraction or exponent) as templates hold it: an int64 when it
// fits, else an exact *big.Int, past Python's limit of maxIntDigits too,
// where writing it or computing with it is then the error Python gives,
// never a float's inf; ok is false for text that is not one.
func Integer(text string) (any, bool) {
	if n, err := strconv.ParseInt(text, 10, 64); err == nil {
		return n, true
	}
	b, ok := new(big.Int).SetString(text, 10)
	if !ok {
		return nil, false
	}
	return b, true
}

// bigOf reads an integer (or bool) as a big.Int.
func bigOf(v any) (*big.Int, bool) {
	switch x := v.(type) {
	case *big.Int:
		return x, true
	case int64:
		return big.NewInt(x), true
	case bool:
		if x {
			return big.NewInt(1), true
		}
		return big.NewInt(0), true
	}
	return nil, false
}

// bigFloat is float(n), an error when it is too large for a float.
func bigFloat(n *big.Int) (float64, error) {
	f, _ := new(big.Float).SetInt(n).Float64()
	if math.IsInf(f, 0) {
		return 0, valueErr("int too large to convert to float")
	}
	return f, nil
}

// bigBinary is an operator with a big integer operand: against an integer in
// integers, against a float in floats.
func bigBinary(op string, l, r any) (any, bool, error) {
	a, aok := bigOf(l)
	b, bok := bigOf(r)
	if aok && bok {
		v, err := bigOp(op, a, b)
		return v, true, err
	}
	x, xok := l.(float64)
	y, yok := r.(float64)
	switch {
	case aok && yok:
		n, err := bigFloat(a)
		x = n
		if err != nil {
			return nil, true, err
		}
	case bok && xok:
		n, err := bigFloat(b)
		y = n
		if err != nil {
			return nil, true, err
		}
	default:
		return nil, false, nil
	}
	v, err := floatOp(op, x, y)
	return v, true, err
}

func bigOp(op string, a, b *big.Int) (any, error) {
	switch op {
	case "+":
		return normInt(new(big.Int).Add(a, b))
	case "-":
		return normInt(new(big.Int).Sub(a, b))
	case "*":
		if a.BitLen()+b.BitLen() > maxIntBits+1 {
			return nil, valueErr("an integer of more than %d digits", maxIntDigits)
		}
		return normInt(new(big.Int).Mul(a, b))
	case "/":
		if b.Sign() == 0 {
			return nil, valueErr("division by zero")
		}
		f, _ := new(big.Rat).SetFrac(a, b).Float64()
		if math.IsInf(f, 0) {
			return nil, valueErr("integer division result too large for a float")
		}
		return f, nil
	case "//", "%":
		if b.Sign() == 0 {
			return nil, valueErr("integer division or modulo by zero")
		}
		q, m := new(big.Int).QuoRem(a, b, new(big.Int))
		if m.Sign() != 0 && (m.Sign() < 0) != (b.Sign() < 0) {
			q.Sub(q, big.NewInt(1))
			m.Add(m, b)
		}
		if op == "//" {
			return normInt(q)
		}
		return normInt(m)
	case "**":
		if b.Sign() < 0 {
			x, err := bigFloat(a)
			if err != nil {
				return nil, err
			}
			y, err := bigFloat(b)
			if err != nil {
				return nil, err
			}
			return floatOp("**", x, y)
		}
		if a.CmpAbs(big.NewInt(1)) > 0 && (!b.IsInt64() || int64(a.BitLen()-1)*b.Int64() > int64(maxIntBits)) {
			return nil, valueErr("an integer of more than %d digits", maxIntDigits)
		}
		return normInt(new(big.Int).Exp(a, b, nil))
	}
	return nil, unsupported(op, a, b)
}

// bigCompare orders a big integer and a number: ok is false when one of
// them is no number.
func bigCompare(l, r any) (c int, ok bool) {
	a, aok := bigOf(l)
	b, bok := bigOf(r)
	if aok && bok {
		return a.Cmp(b), true
	}
	for _, v := range []any{l, r} {
		if f, isF := v.(float64); isF && math.IsNaN(f) && (aok || bok) {
			return 2, true // unordered, as cmp says of NaN
		}
	}
	toFloat := func(v any) (*big.Float, bool) {
		if f, ok := v.(float64); ok && !math.IsNaN(f) && !math.IsInf(f, 0) {
			return big.NewFloat(f), true
		}
		if n, ok := bigOf(v); ok {
			return new(big.Float).SetInt(n), true
		}
		return nil, false
	}
	x, xok := toFloat(l)
	y, yok := toFloat(r)
	if xok && yok {
		return x.Cmp(y), true
	}
	if f, isF := r.(float64); isF && aok && math.IsInf(f, 0) {
		return -int(math.Copysign(1, f)), true
	}
	if f, isF := l.(float64); isF && bok && math.IsInf(f, 0) {
		return int(math.Copysign(1, f)), true
	}
	return 0, false
}

func isBig(v any) bool {
	_, ok := v.(*big.Int)
	return ok
}
