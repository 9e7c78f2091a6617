package interp

import (
	"encoding/json"
	"math/big"
	"strconv"
	"strings"
)

// literalEval reads text as Python's ast.literal_eval does, the way the
// reference types a rendered template: numbers, strings, True, False, None,
// lists, tuples, sets and dicts of them. ok is false when the text is no such
// literal (or a complex number, bytes or Ellipsis): the text then stays text.
// Tuples and sets are tuples, non-string dict keys their text, and an
// integer beyond 64 bits a json.Number.
func literalEval(text string) (v any, ok bool) {
	s := strings.TrimLeft(text, " \t")
	if s == "" || !mayBeLiteral(s[0]) {
		return nil, false
	}
	p := &litParser{s: s}
	v, err := p.top()
	if err != nil {
		return nil, false
	}
	return v, true
}

// mayBeLiteral tells whether a literal can start with c.
func mayBeLiteral(c byte) bool {
	switch {
	case c >= '0' && c <= '9':
		return true
	}
	switch c {
	case '+', '-', '.', '\'', '"', '[', '(', '{', 'T', 'F', 'N', 'r', 'R', 'u', 'U', '\n', '\r', '\f', '\\', '#':
		return true
	}
	return false
}

type litParser struct {
	s     string
	i     int
	depth int
}

type litErr struct{}

func (litErr) Error() string { return "not a literal" }

var errNotLiteral = litErr{}

// skip passes whitespace and comments; inside brackets line breaks too.
func (p *litParser) skip() {
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == ' ' || c == '\t' || c == '\f':
			p.i++
		case c == '\\' && p.i+1 < len(p.s) && p.s[p.i+1] == '\n':
			p.i += 2
		case c == '#':
			for p.i < len(p.s) && p.s[p.i] != '\n' && p.s[p.i] != '\r' {
				p.i++
			}
		case (c == '\n' || c == '\r') && p.depth > 0:
			p.i++
		default:
			return
		}
	}
}

// skipLines passes line breaks, allowed before and after the expression.
func (p *litParser) skipLines() {
	for {
		p.skip()
		if p.i < len(p.s) && (p.s[p.i] == '\n' || p.s[p.i] == '\r') {
			p.i++
			continue
		}
		return
	}
}

func (p *litParser) top() (any, error) {
	p.skipLines()
	if column(p.s[:p.i]) > 0 {
		return nil, errNotLiteral // Python: unexpected indent ("\n  5")
	}
	v, err := p.tuple(0)
	if err != nil {
		return nil, err
	}
	end := p.i
	p.skipLines()
	if p.i != len(p.s) {
		return nil, errNotLiteral
	}
	if rest := p.s[end:]; strings.ContainsAny(rest, "\n\r") && column(rest) > 0 {
		return nil, errNotLiteral // Python: a last line of blanks is an indent ("5\n  ")
	}
	return v, nil
}

// column is the column the end of s is at, as Python's tokenizer counts
// indentation: blanks since the last line break, a form feed starting over.
func column(s string) int {
	n := 0
	for i := len(s) - 1; i >= 0 && (s[i] == ' ' || s[i] == '\t'); i-- {
		n++
	}
	return n
}

// tuple reads one item, or several separated by commas (a tuple) until end.
func (p *litParser) tuple(end byte) (any, error) {
	first, err := p.item()
	if err != nil {
		return nil, err
	}
	p.skip()
	if p.i >= len(p.s) || p.s[p.i] != ',' {
		return first, nil
	}
	out := []any{first}
	for p.i < len(p.s) && p.s[p.i] == ',' {
		p.i++
		p.skip()
		if p.i >= len(p.s) || p.s[p.i] == end || (end == 0 && (p.s[p.i] == '\n' || p.s[p.i] == '\r')) {
			break
		}
		v, err := p.item()
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		p.skip()
	}
	return tuple(out), nil
}

func (p *litParser) item() (any, error) {
	p.skip()
	if p.i >= len(p.s) {
		return nil, errNotLiteral
	}
	c := p.s[p.i]
	switch {
	case c == '+' || c == '-':
		p.i++
		p.skip()
		v, err := p.number()
		if err != nil {
			return nil, err
		}
		if c == '-' {
			switch x := v.(type) {
			case int64:
				return -x, nil
			case float64:
				return -x, nil
			case json.Number:
				return json.Number("-" + string(x)), nil
			}
		}
		return v, nil
	case c >= '0' && c <= '9' || c == '.':
		return p.number()
	case c == '[' || c == '(' || c == '{':
		return p.container(c)
	}
	start := p.i
	for p.i < len(p.s) && (isIdentByte(p.s[p.i])) {
		p.i++
	}
	word := p.s[start:p.i]
	if p.i < len(p.s) && (p.s[p.i] == '\'' || p.s[p.i] == '"') {
		p.i = start
		return p.strings()
	}
	switch word {
	case "True":
		return true, nil
	case "False":
		return false, nil
	case "None":
		return nil, nil
	}
	if start == p.i && (c == '\'' || c == '"') {
		return p.strings()
	}
	return nil, errNotLiteral
}

func isIdentByte(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c >= 0x80
}

func (p *litParser) container(open byte) (any, error) {
	p.depth++
	if p.depth > maxNesting {
		return nil, errNotLiteral
	}
	defer func() { p.depth-- }()
	p.i++
	p.skip()
	closer := map[byte]byte{'[': ']', '(': ')', '{': '}'}[open]
	if p.i < len(p.s) && p.s[p.i] == closer {
		p.i++
		switch open {
		case '{':
			return map[string]any{}, nil
		case '(':
			return tuple{}, nil
		}
		return []any{}, nil
	}
	if open == '(' {
		v, err := p.tuple(')')
		if err != nil {
			return nil, err
		}
		p.skip()
		if p.i >= len(p.s) || p.s[p.i] != ')' {
			return nil, errNotLiteral
		}
		p.i++
		return v, nil
	}
	list := []any{}
	var dict map[string]any
	for first := true; ; first = false {
		k, err := p.item()
		if err != nil {
			return nil, err
		}
		p.skip()
		isPair := p.i < len(p.s) && p.s[p.i] == ':'
		switch {
		case open == '{' && isPair && (first || dict != nil):
			if dict == nil {
				dict = map[string]any{}
			}
			p.i++
			v, err := p.item()
			if err != nil {
				return nil, err
			}
			key, ok := litKey(k)
			if !ok {
				return nil, errNotLiteral
			}
			dict[key] = v
			p.skip()
		case isPair || dict != nil:
			return nil, errNotLiteral
		case open == '{':
			if !hashable(k) {
				return nil, errNotLiteral
			}
			if !containsItem(list, k) {
				list = append(list, k)
			}
		default:
			list = append(list, k)
		}
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
			p.skip()
		} else if p.i >= len(p.s) || p.s[p.i] != closer {
			return nil, errNotLiteral
		}
		if p.i < len(p.s) && p.s[p.i] == closer {
			p.i++
			if dict != nil {
				return dict, nil
			}
			if open == '{' {
				return tuple(list), nil
			}
			return list, nil
		}
	}
}

func hashable(v any) bool {
	switch v.(type) {
	case []any, map[string]any:
		return false
	}
	return true
}

func litKey(k any) (string, bool) {
	switch x := k.(type) {
	case string:
		return x, true
	case []any, map[string]any:
		return "", false
	}
	return pyStr(k), true
}

// number reads a Python number literal; an imaginary one is refused.
func (p *litParser) number() (any, error) {
	s := p.s
	start := p.i
	digits := func(allow func(byte) bool) bool {
		n := 0
		for p.i < len(s) {
			if allow(s[p.i]) {
				p.i++
				n++
			} else if s[p.i] == '_' && n > 0 && p.i+1 < len(s) && allow(s[p.i+1]) {
				p.i++
			} else {
				break
			}
		}
		return n > 0
	}
	dec := func(c byte) bool { return c >= '0' && c <= '9' }
	if p.i+1 < len(s) && s[p.i] == '0' && strings.IndexByte("xXoObB", s[p.i+1]) >= 0 {
		base := map[byte]int{'x': 16, 'X': 16, 'o': 8, 'O': 8, 'b': 2, 'B': 2}[s[p.i+1]]
		p.i += 2
		if p.i < len(s) && s[p.i] == '_' {
			p.i++
		}
		ok := digits(func(c byte) bool {
			d, err := strconv.ParseUint(string(c), base, 8)
			return err == nil && d < uint64(base)
		})
		if !ok || p.identAfter() {
			return nil, errNotLiteral
		}
		return bigInt(strings.ReplaceAll(s[start+2:p.i], "_", ""), base)
	}
	intDigits := digits(dec)
	intEnd := p.i
	isFloat := false
	if p.i < len(s) && s[p.i] == '.' {
		p.i++
		frac := digits(dec)
		if !intDigits && !frac {
			return nil, errNotLiteral
		}
		isFloat = true
	} else if !intDigits {
		return nil, errNotLiteral
	}
	if p.i < len(s) && (s[p.i] == 'e' || s[p.i] == 'E') {
		save := p.i
		p.i++
		if p.i < len(s) && (s[p.i] == '+' || s[p.i] == '-') {
			p.i++
		}
		if !digits(dec) {
			p.i = save
			return nil, errNotLiteral
		}
		isFloat = true
	}
	if p.i < len(s) && (s[p.i] == 'j' || s[p.i] == 'J') {
		return nil, errNotLiteral
	}
	if p.identAfter() {
		return nil, errNotLiteral
	}
	text := strings.ReplaceAll(s[start:p.i], "_", "")
	if isFloat {
		f, err := strconv.ParseFloat(text, 64)
		if err != nil && !strings.Contains(err.Error(), "range") {
			return nil, errNotLiteral
		}
		return f, nil
	}
	intText := strings.ReplaceAll(s[start:intEnd], "_", "")
	if len(intText) > 1 && intText[0] == '0' && strings.Trim(intText, "0") != "" {
		return nil, errNotLiteral
	}
	return bigInt(intText, 10)
}

// identAfter tells whether a name character follows a number (1abc).
func (p *litParser) identAfter() bool {
	return p.i < len(p.s) && isIdentByte(p.s[p.i])
}

// bigInt is an integer literal's value. A decimal one of more than
// maxIntDigits digits is no literal, as Python's parser refuses it (the
// text stays a string, as the CDK's literal_eval leaves it), and reading it
// would cost time quadratic in its length.
func bigInt(digits string, base int) (any, error) {
	if n, err := strconv.ParseInt(digits, base, 64); err == nil {
		return n, nil
	}
	if base == 10 && len(digits) > maxIntDigits {
		return nil, errNotLiteral
	}
	b, ok := new(big.Int).SetString(digits, base)
	if !ok {
		return nil, errNotLiteral
	}
	return json.Number(b.String()), nil
}

// strings reads one or more adjacent string literals, concatenated.
func (p *litParser) strings() (any, error) {
	var b strings.Builder
	n := 0
	for {
		p.skip()
		if p.i >= len(p.s) {
			break
		}
		start := p.i
		for p.i < len(p.s) && isIdentByte(p.s[p.i]) && p.i-start < 2 {
			p.i++
		}
		prefix := strings.ToLower(p.s[start:p.i])
		if p.i >= len(p.s) || (p.s[p.i] != '\'' && p.s[p.i] != '"') {
			p.i = start
			break
		}
		raw := strings.Contains(prefix, "r")
		switch prefix {
		case "", "r", "u":
		default:
			return nil, errNotLiteral // bytes and f-strings
		}
		s, err := p.quoted(raw)
		if err != nil {
			return nil, err
		}
		b.WriteString(s)
		n++
	}
	if n == 0 {
		return nil, errNotLiteral
	}
	return b.String(), nil
}

func (p *litParser) quoted(raw bool) (string, error) {
	q := p.s[p.i]
	triple := strings.HasPrefix(p.s[p.i:], strings.Repeat(string(q), 3))
	delim := string(q)
	if triple {
		delim = strings.Repeat(string(q), 3)
	}
	p.i += len(delim)
	start := p.i
	for p.i < len(p.s) {
		c := p.s[p.i]
		if c == '\\' {
			p.i += 2
			continue
		}
		if (c == '\n' || c == '\r') && !triple {
			return "", errNotLiteral
		}
		if strings.HasPrefix(p.s[p.i:], delim) {
			body := p.s[start:p.i]
			p.i += len(delim)
			if raw {
				return body, nil
			}
			out, err := unescapePy(body)
			if err != nil {
				return "", errNotLiteral
			}
			return out, nil
		}
		p.i++
	}
	return "", errNotLiteral
}
