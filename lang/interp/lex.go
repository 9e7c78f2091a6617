package interp

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// tokKind is the kind of a lexed token.
type tokKind uint8

const (
	tEOF tokKind = iota
	tData
	tVarBegin
	tVarEnd
	tBlockBegin
	tBlockEnd
	tName
	tString
	tInt
	tFloat
	tOp
)

type token struct {
	kind tokKind
	val  string // data, name, string value or operator
	num  any    // int64 or float64 for numbers
	pos  int
}

// normalizeSource does what Jinja does to a template before lexing: every
// line break becomes \n and one trailing line break is dropped.
func normalizeSource(src string) string {
	if strings.IndexByte(src, '\r') >= 0 {
		src = strings.ReplaceAll(src, "\r\n", "\n")
		src = strings.ReplaceAll(src, "\r", "\n")
	}
	return strings.TrimSuffix(src, "\n")
}

// lexer splits a template into data and the tokens of its tags, as Jinja's
// lexer does with the default delimiters.
type lexer struct {
	src    string
	pos    int
	toks   []token
	lstrip bool // the previous tag ended with '-'
}

func lex(src string) ([]token, error) {
	l := &lexer{src: src}
	if err := l.run(); err != nil {
		return nil, err
	}
	l.toks = append(l.toks, token{kind: tEOF, pos: len(src)})
	return l.toks, nil
}

func (l *lexer) syntax(pos int, format string, args ...any) error {
	line := 1 + strings.Count(l.src[:min(pos, len(l.src))], "\n")
	return fmt.Errorf("line %d: %s", line, fmt.Sprintf(format, args...))
}

func (l *lexer) run() error {
	for l.pos < len(l.src) {
		i := l.nextTag(l.pos)
		data := l.src[l.pos:i]
		if l.lstrip {
			data = strings.TrimLeftFunc(data, unicode.IsSpace)
			l.lstrip = false
		}
		if i < len(l.src) && i+2 < len(l.src) && l.src[i+2] == '-' {
			data = strings.TrimRightFunc(data, unicode.IsSpace)
		}
		if data != "" {
			l.toks = append(l.toks, token{kind: tData, val: data, pos: l.pos})
		}
		if i >= len(l.src) {
			l.pos = i
			break
		}
		var err error
		switch l.src[i+1] {
		case '#':
			err = l.comment(i)
		case '{':
			err = l.tag(i, tVarBegin, tVarEnd, "}}")
		case '%':
			if end, body, ok := l.rawBlock(i); ok {
				if body != "" {
					l.toks = append(l.toks, token{kind: tData, val: body, pos: i})
				}
				l.pos = end
				continue
			}
			err = l.tag(i, tBlockBegin, tBlockEnd, "%}")
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// nextTag finds the next {{, {% or {#, or the end of the source.
func (l *lexer) nextTag(from int) int {
	for i := from; i+1 < len(l.src); i++ {
		if l.src[i] == '{' {
			switch l.src[i+1] {
			case '{', '%', '#':
				return i
			}
		}
	}
	return len(l.src)
}

func (l *lexer) comment(start int) error {
	end := strings.Index(l.src[start+2:], "#}")
	if end < 0 {
		return l.syntax(start, "missing end of comment tag")
	}
	end += start + 2
	l.lstrip = end > start+2 && l.src[end-1] == '-'
	l.pos = end + 2
	return nil
}

// rawBlock reads {% raw %}...{% endraw %} when the tag at start is one.
func (l *lexer) rawBlock(start int) (end int, body string, ok bool) {
	p := start + 2
	if p < len(l.src) && (l.src[p] == '-' || l.src[p] == '+') {
		p++
	}
	p = skipSpace(l.src, p)
	if !strings.HasPrefix(l.src[p:], "raw") {
		return 0, "", false
	}
	p = skipSpace(l.src, p+3)
	strip := false
	if p < len(l.src) && (l.src[p] == '-' || l.src[p] == '+') {
		strip = l.src[p] == '-'
		p++
	}
	if !strings.HasPrefix(l.src[p:], "%}") {
		return 0, "", false
	}
	bodyStart := p + 2
	for q := bodyStart; q < len(l.src); q++ {
		if !strings.HasPrefix(l.src[q:], "{%") {
			continue
		}
		r := q + 2
		stripBefore := r < len(l.src) && l.src[r] == '-'
		if r < len(l.src) && (l.src[r] == '-' || l.src[r] == '+') {
			r++
		}
		r = skipSpace(l.src, r)
		if !strings.HasPrefix(l.src[r:], "endraw") {
			continue
		}
		r = skipSpace(l.src, r+6)
		stripAfter := false
		if r < len(l.src) && (l.src[r] == '-' || l.src[r] == '+') {
			stripAfter = l.src[r] == '-'
			r++
		}
		if !strings.HasPrefix(l.src[r:], "%}") {
			continue
		}
		body = l.src[bodyStart:q]
		if strip {
			body = strings.TrimLeftFunc(body, unicode.IsSpace)
		}
		if stripBefore {
			body = strings.TrimRightFunc(body, unicode.IsSpace)
		}
		l.lstrip = stripAfter
		return r + 2, body, true
	}
	return 0, "", false
}

func skipSpace(s string, p int) int {
	for p < len(s) {
		r, n := utf8.DecodeRuneInString(s[p:])
		if !unicode.IsSpace(r) {
			break
		}
		p += n
	}
	return p
}

// tag lexes the tokens of one {{ }} or {% %} tag.
func (l *lexer) tag(start int, begin, end tokKind, closer string) error {
	l.toks = append(l.toks, token{kind: begin, pos: start})
	p := start + 2
	if p < len(l.src) && (l.src[p] == '-' || l.src[p] == '+') {
		p++
	}
	var balance []byte
	for {
		p = skipSpace(l.src, p)
		if p >= len(l.src) {
			return l.syntax(start, "unexpected end of template, expected %q", closer)
		}
		if len(balance) == 0 {
			rest := l.src[p:]
			switch {
			case strings.HasPrefix(rest, "-"+closer):
				l.toks = append(l.toks, token{kind: end, pos: p})
				l.pos = p + 3
				l.lstrip = true
				return nil
			case closer == "%}" && strings.HasPrefix(rest, "+%}"):
				l.toks = append(l.toks, token{kind: end, pos: p})
				l.pos = p + 3
				return nil
			case strings.HasPrefix(rest, closer):
				l.toks = append(l.toks, token{kind: end, pos: p})
				l.pos = p + 2
				return nil
			}
		}
		tok, next, err := l.exprToken(p)
		if err != nil {
			return err
		}
		if tok.kind == tOp {
			switch tok.val {
			case "(", "[", "{":
				balance = append(balance, tok.val[0])
			case ")", "]", "}":
				open := map[string]byte{")": '(', "]": '[', "}": '{'}[tok.val]
				if len(balance) == 0 || balance[len(balance)-1] != open {
					return l.syntax(p, "unexpected %q", tok.val)
				}
				balance = balance[:len(balance)-1]
			}
		}
		l.toks = append(l.toks, tok)
		p = next
	}
}

var operators = []string{"//", "**", "==", "!=", ">=", "<=", "+", "-", "/", "*", "%", "~", "[", "]", "(", ")", "{", "}", "<", ">", "=", ".", ":", "|", ",", ";"}

func (l *lexer) exprToken(p int) (token, int, error) {
	s := l.src
	c := s[p]
	switch {
	case c >= '0' && c <= '9':
		if end, ok := scanFloat(s, p); ok {
			f, err := strconv.ParseFloat(strings.ReplaceAll(s[p:end], "_", ""), 64)
			if err != nil {
				return token{}, 0, l.syntax(p, "invalid number")
			}
			return token{kind: tFloat, num: f, pos: p, val: s[p:end]}, end, nil
		}
		end := scanInt(s, p)
		digits := strings.ReplaceAll(s[p:end], "_", "")
		if n, err := strconv.ParseInt(digits, 0, 64); err == nil {
			return token{kind: tInt, num: n, pos: p, val: s[p:end]}, end, nil
		}
		b, ok := new(big.Int).SetString(digits, 0)
		if !ok {
			return token{}, 0, l.syntax(p, "invalid number %s", s[p:end])
		}
		n, err := normInt(b)
		if err != nil {
			return token{}, 0, l.syntax(p, "%s", err.Error())
		}
		return token{kind: tInt, num: n, pos: p, val: s[p:end]}, end, nil
	case c == '\'' || c == '"':
		return l.stringToken(p)
	}
	r, n := utf8.DecodeRuneInString(s[p:])
	if r == '_' || unicode.IsLetter(r) {
		end := p + n
		for end < len(s) {
			r, n := utf8.DecodeRuneInString(s[end:])
			if r != '_' && !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.Is(unicode.Mn, r) && !unicode.Is(unicode.Mc, r) {
				break
			}
			end += n
		}
		return token{kind: tName, val: s[p:end], pos: p}, end, nil
	}
	for _, op := range operators {
		if strings.HasPrefix(s[p:], op) {
			return token{kind: tOp, val: op, pos: p}, p + len(op), nil
		}
	}
	return token{}, 0, l.syntax(p, "unexpected char %q", r)
}

// scanInt reads Jinja's integer: 0b.., 0o.., 0x.., decimal without leading
// zeros, or zeros; digits may be separated by single underscores.
func scanInt(s string, p int) int {
	isDigit := func(c byte, base int) bool {
		switch base {
		case 2:
			return c == '0' || c == '1'
		case 8:
			return c >= '0' && c <= '7'
		case 16:
			return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
		}
		return c >= '0' && c <= '9'
	}
	digits := func(q, base int, underscoreFirst bool) int {
		for q < len(s) {
			if s[q] == '_' && q+1 < len(s) && isDigit(s[q+1], base) {
				q += 2
				continue
			}
			if !isDigit(s[q], base) {
				break
			}
			q++
		}
		return q
	}
	if s[p] == '0' && p+1 < len(s) {
		base := map[byte]int{'b': 2, 'B': 2, 'o': 8, 'O': 8, 'x': 16, 'X': 16}[s[p+1]]
		if base != 0 {
			q := p + 2
			if q < len(s) && s[q] == '_' {
				q++
			}
			if q < len(s) && isDigit(s[q], base) {
				return digits(q, base, true)
			}
		}
	}
	if s[p] == '0' {
		q := p + 1
		for q < len(s) {
			if s[q] == '0' {
				q++
			} else if s[q] == '_' && q+1 < len(s) && s[q+1] == '0' {
				q += 2
			} else {
				break
			}
		}
		return q
	}
	return digits(p+1, 10, false)
}

// scanFloat reads Jinja's float: digits with a fraction, an exponent or both.
func scanFloat(s string, p int) (int, bool) {
	if p > 0 && s[p-1] == '.' {
		return 0, false
	}
	digits := func(q int) int {
		start := q
		for q < len(s) {
			if s[q] >= '0' && s[q] <= '9' {
				q++
			} else if s[q] == '_' && q > start && q+1 < len(s) && s[q+1] >= '0' && s[q+1] <= '9' {
				q++
			} else {
				break
			}
		}
		return q
	}
	q := digits(p)
	frac := false
	if q+1 < len(s) && s[q] == '.' && s[q+1] >= '0' && s[q+1] <= '9' {
		q = digits(q + 1)
		frac = true
	}
	if q < len(s) && (s[q] == 'e' || s[q] == 'E') {
		r := q + 1
		if r < len(s) && (s[r] == '+' || s[r] == '-') {
			r++
		}
		if r < len(s) && s[r] >= '0' && s[r] <= '9' {
			return digits(r), true
		}
	}
	return q, frac
}

func (l *lexer) stringToken(p int) (token, int, error) {
	s := l.src
	q := s[p]
	i := p + 1
	for i < len(s) && s[i] != q {
		if s[i] == '\\' {
			i++
		}
		i++
	}
	if i >= len(s) {
		return token{}, 0, l.syntax(p, "unexpected char %q", string(q))
	}
	v, err := unescapePy(s[p+1 : i])
	if err != nil {
		return token{}, 0, l.syntax(p, "%s", err.Error())
	}
	return token{kind: tString, val: v, pos: p}, i + 1, nil
}

// unescapePy decodes the backslash escapes of a Python string literal as
// Python's unicode-escape codec does; an unknown escape (\d, \$) is kept.
func unescapePy(s string) (string, error) {
	if strings.IndexByte(s, '\\') < 0 {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		if i+1 >= len(s) {
			return "", fmt.Errorf(`\ at end of string`)
		}
		i++
		switch e := s[i]; e {
		case '\n':
		case '\\', '\'', '"':
			b.WriteByte(e)
		case 'a':
			b.WriteByte(7)
		case 'b':
			b.WriteByte(8)
		case 'f':
			b.WriteByte(12)
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte(11)
		case '0', '1', '2', '3', '4', '5', '6', '7':
			n, j := 0, i
			for j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7' {
				n = n*8 + int(s[j]-'0')
				j++
			}
			b.WriteRune(rune(n))
			i = j - 1
		case 'x', 'u', 'U':
			width := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			if i+width >= len(s) {
				return "", fmt.Errorf(`truncated \%c escape`, e)
			}
			n, err := strconv.ParseUint(s[i+1:i+1+width], 16, 32)
			if err != nil || strings.ContainsAny(s[i+1:i+1+width], "+-_") {
				return "", fmt.Errorf(`truncated \%c escape`, e)
			}
			if n > unicode.MaxRune {
				return "", fmt.Errorf(`illegal Unicode character`)
			}
			b.WriteRune(rune(n))
			i += width
		case 'N':
			end := strings.IndexByte(s[i:], '}')
			if i+1 >= len(s) || s[i+1] != '{' || end < 0 {
				return "", fmt.Errorf(`malformed \N character escape`)
			}
			r, ok := runeNamed(s[i+2 : i+end])
			if !ok {
				return "", fmt.Errorf(`unknown Unicode character name`)
			}
			b.WriteRune(r)
			i += end
		default:
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	return b.String(), nil
}
