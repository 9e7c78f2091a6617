package decode

// NonFiniteToNull rewrites the NaN, Infinity and -Infinity outside strings
// of a JSON text as null; ok is false when it has none. JSON has no such
// values, but APIs written in Python send them, and the reference reads them
// (with Python's json module) and writes them as null.
func NonFiniteToNull(b []byte) (out []byte, ok bool) {
	last := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		case 'N', 'I', '-':
			n := nonFiniteLen(b[i:])
			if n == 0 {
				continue
			}
			out = append(append(out, b[last:i]...), "null"...)
			i += n - 1
			last = i + 1
		}
	}
	if out == nil {
		return b, false
	}
	return append(out, b[last:]...), true
}

// nonFinite are the words replaced, as text: static data, nothing built at
// package init.
var nonFinite = [...]string{"NaN", "Infinity", "-Infinity"}

func nonFiniteLen(b []byte) int {
	for _, w := range nonFinite {
		if len(b) >= len(w) && string(b[:len(w)]) == w {
			return len(w)
		}
	}
	return 0
}
