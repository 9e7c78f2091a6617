package transform

import (
	"encoding/json"
	"errors"
	"unicode/utf8"
	"unsafe"

	"github.com/airbyte-go/source-declarative/runtime/jsontext"
)

var errJSON = errors.New("the record is not valid JSON")

const maxDepth = 1000

// Decode parses one record: a JSON object. Its keys and text values share
// b's memory, which must not change while the record is used; a page's body
// is read into again once the page is emitted, so what outlives the record
// must be copied.
func Decode(b []byte) (*Object, error) {
	p := &parser{b: b}
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	if p.ws() != len(b) {
		return nil, errJSON
	}
	o, ok := v.(*Object)
	if !ok {
		return nil, errors.New("a record must be a JSON object")
	}
	return o, nil
}

// DecodeValue parses any JSON value into the record model.
func DecodeValue(b []byte) (any, error) {
	p := &parser{b: b}
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	if p.ws() != len(b) {
		return nil, errJSON
	}
	return v, nil
}

type parser struct {
	b []byte
	i int
}

func (p *parser) ws() int {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\n', '\r', '\t':
			p.i++
		default:
			return p.i
		}
	}
	return p.i
}

func (p *parser) value(depth int) (any, error) {
	if depth > maxDepth {
		return nil, errors.New("the record nests deeper than 1000 levels")
	}
	if p.ws() >= len(p.b) {
		return nil, errJSON
	}
	switch c := p.b[p.i]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		return p.str()
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	}
	return nil, errJSON
}

func (p *parser) literal(lit string) error {
	if len(p.b)-p.i < len(lit) || string(p.b[p.i:p.i+len(lit)]) != lit {
		return errJSON
	}
	p.i += len(lit)
	return nil
}

func (p *parser) object(depth int) (any, error) {
	p.i++
	o := &Object{}
	if depth == 0 {
		o.Fields = make([]Field, 0, 8) // a record: one allocation for most
	}
	if p.ws() < len(p.b) && p.b[p.i] == '}' {
		p.i++
		return o, nil
	}
	var seen map[string]int // key positions, once the object is large
	for {
		if p.ws() >= len(p.b) || p.b[p.i] != '"' {
			return nil, errJSON
		}
		key, err := p.str()
		if err != nil {
			return nil, err
		}
		if p.ws() >= len(p.b) || p.b[p.i] != ':' {
			return nil, errJSON
		}
		p.i++
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		// A repeated key keeps its first place and its last value.
		if seen == nil && len(o.Fields) >= 16 {
			seen = make(map[string]int, 2*len(o.Fields))
			for i, f := range o.Fields {
				seen[f.Key] = i
			}
		}
		if seen == nil {
			o.Set(key, v)
		} else if at, dup := seen[key]; dup {
			o.Fields[at].Value = v
		} else {
			seen[key] = len(o.Fields)
			o.Fields = append(o.Fields, Field{key, v})
		}
		if done, err := p.next('}'); done || err != nil {
			return o, err
		}
	}
}

func (p *parser) array(depth int) (any, error) {
	p.i++
	out := []any{}
	if p.ws() < len(p.b) && p.b[p.i] == ']' {
		p.i++
		return out, nil
	}
	for {
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		if done, err := p.next(']'); done || err != nil {
			return out, err
		}
	}
}

// next reads the comma before another member, or the closing bracket (done).
func (p *parser) next(closing byte) (done bool, err error) {
	if p.ws() >= len(p.b) {
		return false, errJSON
	}
	switch p.b[p.i] {
	case ',':
		p.i++
		return false, nil
	case closing:
		p.i++
		return true, nil
	}
	return false, errJSON
}

// str reads a string at its opening quote.
func (p *parser) str() (string, error) {
	start := p.i
	p.i++
	escaped := false
	for {
		p.i += jsontext.Special(p.b[p.i:])
		if p.i >= len(p.b) {
			return "", errJSON
		}
		if p.b[p.i] == '"' {
			p.i++
			break
		}
		if p.b[p.i] != '\\' || p.i+1 >= len(p.b) {
			return "", errJSON // a control byte, or a backslash at the end
		}
		escaped = true
		p.i += 2
	}
	raw := p.b[start:p.i]
	if !escaped && utf8.Valid(raw) {
		if len(raw) == 2 {
			return "", nil
		}
		// The text is shared with the page, not copied: a record
		// lives no longer than its page (see Decode).
		return unsafe.String(&raw[1], len(raw)-2), nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", errJSON
	}
	return s, nil
}

func (p *parser) number() (any, error) {
	start := p.i
	if p.b[p.i] == '-' {
		p.i++
	}
	digits := func() int {
		n := 0
		for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.i < len(p.b) && p.b[p.i] == '0' {
		p.i++
	} else if digits() == 0 {
		return nil, errJSON
	}
	if p.i < len(p.b) && p.b[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return nil, errJSON
		}
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		p.i++
		if p.i < len(p.b) && (p.b[p.i] == '+' || p.b[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return nil, errJSON
		}
	}
	return Number(p.b[start:p.i]), nil
}
