package interp

import (
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"
)

// pyJSON writes v as Python's json.dumps does with its defaults: ", " and
// ": " separators, non-ASCII escaped, NaN and Infinity allowed; indent > 0
// breaks lines. Dict keys are sorted (the engine keeps no insertion order).
func pyJSON(v any, indent int) (string, error) {
	var b strings.Builder
	if err := writeJSON(&b, v, indent, 0); err != nil {
		return "", err
	}
	return b.String(), nil
}

func writeJSON(b *strings.Builder, v any, indent, depth int) error {
	if depth > maxNesting*4 {
		return valueErr("circular reference detected")
	}
	if err := checkLen(b.Len()); err != nil {
		return err
	}
	newline := func(d int) {
		if indent > 0 {
			b.WriteByte('\n')
			b.WriteString(strings.Repeat(" ", indent*d))
		}
	}
	itemSep := ", "
	if indent > 0 {
		itemSep = ","
	}
	switch x := canon(v).(type) {
	case nil:
		b.WriteString("null")
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case *big.Int:
		if x.BitLen() > maxIntBits {
			return valueErr("Exceeds the limit (%d digits) for integer string conversion", maxIntDigits)
		}
		b.WriteString(x.String())
	case float64:
		switch {
		case math.IsNaN(x):
			b.WriteString("NaN")
		case math.IsInf(x, 1):
			b.WriteString("Infinity")
		case math.IsInf(x, -1):
			b.WriteString("-Infinity")
		default:
			b.WriteString(FormatFloat(x))
		}
	case string:
		writeJSONString(b, x)
	case []any, tuple:
		list := items(x)
		if len(list) == 0 {
			b.WriteString("[]")
			return nil
		}
		b.WriteByte('[')
		for i, e := range list {
			if i > 0 {
				b.WriteString(itemSep)
			}
			newline(depth + 1)
			if err := writeJSON(b, e, indent, depth+1); err != nil {
				return err
			}
		}
		newline(depth)
		b.WriteByte(']')
	case *pyDict:
		pairs, err := x.sortedPairs()
		if err != nil {
			return err
		}
		m := make(map[string]any, len(pairs))
		for _, p := range pairs {
			m[jsonKey(p.(tuple)[0])] = p.(tuple)[1]
		}
		return writeJSON(b, m, indent, depth)
	case map[string]any:
		if len(x) == 0 {
			b.WriteString("{}")
			return nil
		}
		b.WriteByte('{')
		for i, k := range SortedKeys(x) {
			if i > 0 {
				b.WriteString(itemSep)
			}
			newline(depth + 1)
			writeJSONString(b, k)
			b.WriteString(": ")
			if err := writeJSON(b, x[k], indent, depth+1); err != nil {
				return err
			}
		}
		newline(depth)
		b.WriteByte('}')
	default:
		return typeErr("Object of type %s is not JSON serializable", typeName(v))
	}
	return nil
}

func writeJSONString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20 || (r > 0x7e && r < 0x10000):
			if r == 0x7f {
				b.WriteRune(r)
				continue
			}
			b.WriteString(`\u`)
			b.WriteString(hexN(int(r), 4))
		case r >= 0x10000 && r != utf8.RuneError:
			r -= 0x10000
			b.WriteString(`\u`)
			b.WriteString(hexN(int(0xd800+(r>>10)), 4))
			b.WriteString(`\u`)
			b.WriteString(hexN(int(0xdc00+(r&0x3ff)), 4))
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}
