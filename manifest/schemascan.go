package manifest

import (
	"errors"
	"fmt"
	"strconv"
)

// scanner walks JSON text without decoding it: it finds an object's keys and
// the extent of each value by tracking strings, escapes and nesting. It
// trusts its input to be valid JSON (the embedded schema, checked by a test).
type scanner struct {
	b   []byte
	i   int
	err error
}

func (s *scanner) space() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\n' || s.b[s.i] == '\r' || s.b[s.i] == '\t') {
		s.i++
	}
}

// object calls member with each key of the object at the cursor, the cursor
// on the key's value; member must move the cursor past the value.
func (s *scanner) object(member func(key string) error) error {
	s.space()
	if s.i >= len(s.b) || s.b[s.i] != '{' {
		return fmt.Errorf("offset %d: not an object", s.i)
	}
	s.i++
	for {
		s.space()
		if s.i < len(s.b) && s.b[s.i] == '}' {
			s.i++
			return nil
		}
		if s.i < len(s.b) && s.b[s.i] == ',' {
			s.i++
			s.space()
		}
		start := s.i
		s.skip()
		key, err := strconv.Unquote(string(s.b[start:s.i]))
		if err != nil {
			return fmt.Errorf("offset %d: a key must be a string", start)
		}
		s.space()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return fmt.Errorf("offset %d: no colon after key %q", s.i, key)
		}
		s.i++
		s.space()
		if err := member(key); err != nil {
			return err
		}
		if s.err != nil {
			return s.err
		}
	}
}

// skip moves the cursor past the value at it.
func (s *scanner) skip() {
	s.space()
	depth := 0
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			for s.i < len(s.b) && s.b[s.i] != '"' {
				if s.b[s.i] == '\\' {
					s.i++
				}
				s.i++
			}
			s.i++
		case c == '{' || c == '[':
			depth++
			s.i++
		case c == '}' || c == ']':
			if depth == 0 {
				return // the end of the object or list holding the value
			}
			depth--
			s.i++
		case depth == 0 && (c == ',' || c == ':' || c == ' ' || c == '\n' || c == '\r' || c == '\t'):
			return
		default:
			s.i++
		}
		if depth == 0 && (c == '"' || c == '}' || c == ']') {
			return
		}
	}
	if depth != 0 {
		s.err = errors.New("the text ends inside a value")
	}
}
