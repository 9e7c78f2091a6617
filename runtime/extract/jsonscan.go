package extract

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/airbyte-go/source-declarative/runtime/jsontext"

	"github.com/airbyte-go/source-declarative/lang/interp"
)

// scanner walks JSON bytes once, validating them and returning the spans of
// values, so records are cut out of a response without decoding or copying.
type scanner struct {
	b     []byte
	depth int
	lines int // line breaks skipped as whitespace so far
}

var errSyntax = errors.New("invalid JSON")

// maxDepth bounds how deeply a response's JSON nests, as Python's json
// module is bounded by its recursion limit (1,000).
const maxDepth = 1000

// errTooDeep is JSON nested deeper than maxDepth: valid JSON, maybe, but
// not read.
var errTooDeep = fmt.Errorf("the response body is JSON nested more than %d levels deep, deeper than it is read", maxDepth)

func (s *scanner) ws(i int) int {
	for i < len(s.b) {
		switch s.b[i] {
		case ' ', '\t':
			i++
		case '\n', '\r':
			s.lines++
			i++
		default:
			return i
		}
	}
	return i
}

// value skips the value at i (after whitespace) and returns where it ends.
func (s *scanner) value(i int) (int, error) {
	i = s.ws(i)
	if i >= len(s.b) {
		return 0, errSyntax
	}
	switch c := s.b[i]; {
	case c == '{':
		return s.members(i, nil)
	case c == '[':
		return s.items(i, nil)
	case c == '"':
		return s.str(i)
	case c == 't':
		return s.literal(i, "true")
	case c == 'f':
		return s.literal(i, "false")
	case c == 'n':
		return s.literal(i, "null")
	case c == '-' || (c >= '0' && c <= '9'):
		return s.number(i)
	}
	return 0, errSyntax
}

func (s *scanner) literal(i int, lit string) (int, error) {
	if len(s.b)-i < len(lit) || string(s.b[i:i+len(lit)]) != lit {
		return 0, errSyntax
	}
	return i + len(lit), nil
}

func (s *scanner) number(i int) (int, error) {
	if s.b[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(s.b) && s.b[i] >= '0' && s.b[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if i < len(s.b) && s.b[i] == '0' {
		i++
	} else if digits() == 0 {
		return 0, errSyntax
	}
	if i < len(s.b) && s.b[i] == '.' {
		i++
		if digits() == 0 {
			return 0, errSyntax
		}
	}
	if i < len(s.b) && (s.b[i] == 'e' || s.b[i] == 'E') {
		i++
		if i < len(s.b) && (s.b[i] == '+' || s.b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return 0, errSyntax
		}
	}
	return i, nil
}

// str skips a string starting at its opening quote, eight bytes at a time
// up to the next quote, backslash or control byte (jsontext.Special).
func (s *scanner) str(i int) (int, error) {
	b := s.b
	i++
	for {
		i += jsontext.Special(b[i:])
		if i >= len(b) {
			return 0, errSyntax
		}
		switch b[i] {
		case '"':
			return i + 1, nil
		case '\\':
			if i+1 >= len(b) {
				return 0, errSyntax
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) || !hex4(b[i+2:i+6]) {
					return 0, errSyntax
				}
				i += 6
			default:
				return 0, errSyntax
			}
		default:
			return 0, errSyntax // a control byte
		}
	}
}

func hex4(b []byte) bool {
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// object skips an object; each member is handed to member with the raw key
// (quotes included) and the value's span.
func (s *scanner) object(i int, member func(key []byte, start, end int)) (int, error) {
	return s.members(i, func(key []byte, start int) (int, error) {
		end, err := s.value(start)
		if err == nil && member != nil {
			member(key, start, end)
		}
		return end, err
	})
}

// members walks an object whose members' values visit scans: visit gets the
// raw key (quotes included) and where the value starts, and returns where it
// ends, so a caller can look into a value while scanning it once. Without
// visit, values are skipped (the hot path inside records: no call through a
// function value).
func (s *scanner) members(i int, visit func(key []byte, start int) (int, error)) (int, error) {
	if s.depth++; s.depth > maxDepth {
		return 0, errTooDeep
	}
	defer func() { s.depth-- }()
	i = s.ws(i + 1)
	if i < len(s.b) && s.b[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(s.b) || s.b[i] != '"' {
			return 0, errSyntax
		}
		kend, err := s.str(i)
		if err != nil {
			return 0, err
		}
		key := s.b[i:kend]
		i = s.ws(kend)
		if i >= len(s.b) || s.b[i] != ':' {
			return 0, errSyntax
		}
		start := s.ws(i + 1)
		if start >= len(s.b) {
			return 0, errSyntax
		}
		var end int
		if visit == nil {
			end, err = s.value(start)
		} else {
			end, err = visit(key, start)
		}
		if err != nil {
			return 0, err
		}
		i = s.ws(end)
		if i >= len(s.b) {
			return 0, errSyntax
		}
		switch s.b[i] {
		case ',':
			i = s.ws(i + 1)
		case '}':
			return i + 1, nil
		default:
			return 0, errSyntax
		}
	}
}

// array skips an array; each item's span is handed to item.
func (s *scanner) array(i int, item func(start, end int)) (int, error) {
	return s.items(i, func(start int) (int, error) {
		end, err := s.value(start)
		if err == nil && item != nil {
			item(start, end)
		}
		return end, err
	})
}

// items walks an array whose items visit scans (or skips them, without
// visit), as members does for objects.
func (s *scanner) items(i int, visit func(start int) (int, error)) (int, error) {
	if s.depth++; s.depth > maxDepth {
		return 0, errTooDeep
	}
	defer func() { s.depth-- }()
	i = s.ws(i + 1)
	if i < len(s.b) && s.b[i] == ']' {
		return i + 1, nil
	}
	for {
		start := s.ws(i)
		if start >= len(s.b) {
			return 0, errSyntax
		}
		var end int
		var err error
		if visit == nil {
			end, err = s.value(start)
		} else {
			end, err = visit(start)
		}
		if err != nil {
			return 0, err
		}
		i = s.ws(end)
		if i >= len(s.b) {
			return 0, errSyntax
		}
		switch s.b[i] {
		case ',':
			i++
		case ']':
			return i + 1, nil
		default:
			return 0, errSyntax
		}
	}
}

// keyEquals compares a raw JSON key (with quotes) to a plain name.
func keyEquals(raw []byte, name string) bool {
	inner := raw[1 : len(raw)-1]
	for _, c := range inner {
		if c == '\\' {
			var k string
			return json.Unmarshal(raw, &k) == nil && k == name
		}
	}
	return string(inner) == name
}

// decode parses the value at i into template values (int64 or float64
// numbers, List arrays, map objects) in the same single pass as value.
func (s *scanner) decode(i int) (any, int, error) {
	i = s.ws(i)
	if i >= len(s.b) {
		return nil, 0, errSyntax
	}
	switch c := s.b[i]; {
	case c == '{':
		m := map[string]any{}
		var ferr error
		end, err := s.object(i, func(key []byte, vs, _ int) {
			if ferr != nil {
				return
			}
			v, _, err := s.decode(vs)
			if err != nil {
				ferr = err
				return
			}
			m[unquote(key)] = v
		})
		if err == nil {
			err = ferr
		}
		return m, end, err
	case c == '[':
		l := interp.List{}
		var ferr error
		end, err := s.array(i, func(vs, _ int) {
			if ferr != nil {
				return
			}
			v, _, err := s.decode(vs)
			if err != nil {
				ferr = err
				return
			}
			l = append(l, v)
		})
		if err == nil {
			err = ferr
		}
		return l, end, err
	case c == '"':
		end, err := s.str(i)
		if err != nil {
			return nil, 0, err
		}
		return unquote(s.b[i:end]), end, nil
	case c == 't':
		end, err := s.literal(i, "true")
		return true, end, err
	case c == 'f':
		end, err := s.literal(i, "false")
		return false, end, err
	case c == 'n':
		end, err := s.literal(i, "null")
		return nil, end, err
	}
	end, err := s.number(i)
	if err != nil {
		return nil, 0, err
	}
	text := string(s.b[i:end])
	if n, ok := interp.Integer(text); ok {
		return n, end, nil // exact beyond 64 bits, as Python reads it
	}
	f, _ := strconv.ParseFloat(text, 64)
	return f, end, nil
}

// unquote returns the text of a raw JSON string.
func unquote(raw []byte) string {
	inner := raw[1 : len(raw)-1]
	for _, c := range inner {
		if c == '\\' {
			var s string
			json.Unmarshal(raw, &s)
			return s
		}
	}
	return string(inner)
}
