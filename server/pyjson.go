package server

import "unicode/utf8"

// jsonSyntaxError is where and why a request body is not JSON, in the words
// and at the position (a character index, not a byte offset) Python's json
// module gives, which FastAPI puts in its json_invalid error: the builder's
// client sees what it would see from Airbyte's server. Python also reads
// NaN, Infinity and -Infinity; JSON has no such values and we refuse them
// ("Expecting value"), as every other JSON reader does.
type jsonSyntaxError struct {
	pos int // in characters from the start of the body
	msg string
}

// pythonJSONError scans b (valid UTF-8) as Python's json.loads does and
// returns its first error, nil when b is one JSON value.
func pythonJSONError(b []byte) *jsonSyntaxError {
	s := &pyScanner{b: b}
	i := s.space(0)
	end, err := s.value(i)
	if err != nil {
		return s.errorAt(err.at, err.msg)
	}
	if end = s.space(end); end != len(b) {
		return s.errorAt(end, "Extra data")
	}
	return nil
}

type pyScanner struct {
	b     []byte
	depth int
}

// maxDepth bounds the nesting of a body where Python's recursion limit
// does (json.loads reads 9,998 nested lists; its RecursionError past them is
// FastAPI's 400); tooDeep says a body went past it.
const (
	maxDepth = 9998
	tooDeep  = "nested too deep"
)

type scanError struct {
	at  int // byte offset
	msg string
}

func (s *pyScanner) errorAt(at int, msg string) *jsonSyntaxError {
	return &jsonSyntaxError{pos: utf8.RuneCount(s.b[:at]), msg: msg}
}

func (s *pyScanner) space(i int) int {
	for i < len(s.b) && (s.b[i] == ' ' || s.b[i] == '\t' || s.b[i] == '\n' || s.b[i] == '\r') {
		i++
	}
	return i
}

func (s *pyScanner) value(i int) (int, *scanError) {
	if i >= len(s.b) {
		return i, &scanError{i, "Expecting value"}
	}
	switch c := s.b[i]; {
	case c == '"':
		return s.str(i)
	case c == '{' || c == '[':
		if s.depth++; s.depth > maxDepth {
			return i, &scanError{i, tooDeep}
		}
		defer func() { s.depth-- }()
		if c == '{' {
			return s.object(i)
		}
		return s.array(i)
	case c == 'n' && s.has(i, "null"):
		return i + 4, nil
	case c == 't' && s.has(i, "true"):
		return i + 4, nil
	case c == 'f' && s.has(i, "false"):
		return i + 5, nil
	}
	if end := s.number(i); end > i {
		return end, nil
	}
	return i, &scanError{i, "Expecting value"}
}

func (s *pyScanner) has(i int, lit string) bool {
	return len(s.b)-i >= len(lit) && string(s.b[i:i+len(lit)]) == lit
}

// number matches Python's NUMBER_RE, -?(0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?,
// returning i when nothing matches.
func (s *pyScanner) number(i int) int {
	j := i
	if j < len(s.b) && s.b[j] == '-' {
		j++
	}
	switch {
	case j < len(s.b) && s.b[j] == '0':
		j++
	case j < len(s.b) && s.b[j] >= '1' && s.b[j] <= '9':
		j = s.digits(j)
	default:
		return i
	}
	if j+1 < len(s.b) && s.b[j] == '.' && isDigit(s.b[j+1]) {
		j = s.digits(j + 1)
	}
	if j < len(s.b) && (s.b[j] == 'e' || s.b[j] == 'E') {
		k := j + 1
		if k < len(s.b) && (s.b[k] == '+' || s.b[k] == '-') {
			k++
		}
		if k < len(s.b) && isDigit(s.b[k]) {
			j = s.digits(k)
		}
	}
	return j
}

func (s *pyScanner) digits(j int) int {
	for j < len(s.b) && isDigit(s.b[j]) {
		j++
	}
	return j
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// str scans the string whose quote is at i, as py_scanstring does.
func (s *pyScanner) str(i int) (int, *scanError) {
	for j := i + 1; ; {
		if j >= len(s.b) {
			return j, &scanError{i, "Unterminated string starting at"}
		}
		switch c := s.b[j]; {
		case c == '"':
			return j + 1, nil
		case c < 0x20:
			return j, &scanError{j, "Invalid control character at"}
		case c != '\\':
			j++
			continue
		}
		if j+1 >= len(s.b) {
			return j, &scanError{i, "Unterminated string starting at"}
		}
		switch s.b[j+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			j += 2
		case 'u':
			if !s.hex4(j + 2) {
				return j, &scanError{j + 1, "Invalid \\uXXXX escape"}
			}
			j += 6
		default:
			return j, &scanError{j, "Invalid \\escape"}
		}
	}
}

func (s *pyScanner) hex4(j int) bool {
	if len(s.b)-j < 4 {
		return false
	}
	for _, c := range s.b[j : j+4] {
		if !isDigit(c) && (c|0x20 < 'a' || c|0x20 > 'f') {
			return false
		}
	}
	return true
}

func (s *pyScanner) object(i int) (int, *scanError) {
	j := s.space(i + 1)
	if j < len(s.b) && s.b[j] == '}' {
		return j + 1, nil
	}
	for {
		if j >= len(s.b) || s.b[j] != '"' {
			return j, &scanError{j, "Expecting property name enclosed in double quotes"}
		}
		end, err := s.str(j)
		if err != nil {
			return end, err
		}
		if j = s.space(end); j >= len(s.b) || s.b[j] != ':' {
			return j, &scanError{j, "Expecting ':' delimiter"}
		}
		if end, err = s.value(s.space(j + 1)); err != nil {
			return end, err
		}
		j = s.space(end)
		if j < len(s.b) && s.b[j] == '}' {
			return j + 1, nil
		}
		if j >= len(s.b) || s.b[j] != ',' {
			return j, &scanError{j, "Expecting ',' delimiter"}
		}
		comma := j
		if j = s.space(j + 1); j < len(s.b) && s.b[j] == '}' {
			return j, &scanError{comma, "Illegal trailing comma before end of object"}
		}
	}
}

func (s *pyScanner) array(i int) (int, *scanError) {
	j := s.space(i + 1)
	if j < len(s.b) && s.b[j] == ']' {
		return j + 1, nil
	}
	for {
		end, err := s.value(j)
		if err != nil {
			return end, err
		}
		j = s.space(end)
		if j < len(s.b) && s.b[j] == ']' {
			return j + 1, nil
		}
		if j >= len(s.b) || s.b[j] != ',' {
			return j, &scanError{j, "Expecting ',' delimiter"}
		}
		comma := j
		if j = s.space(j + 1); j < len(s.b) && s.b[j] == ']' {
			return j, &scanError{comma, "Illegal trailing comma before end of array"}
		}
	}
}
