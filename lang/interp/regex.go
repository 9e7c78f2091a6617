package interp

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dlclark/regexp2"
)

// Regular expressions with Python's syntax and group numbering, on
// regexp2's backtracking engine (lookbehind, \d on Unicode), bounded in time.

// regexTimeout bounds one match: backtracking patterns can take forever.
const regexTimeout = time.Second

// pyRegex is a compiled Python pattern: named groups are numbered in order,
// as Python numbers them, and names map to their numbers.
type pyRegex struct {
	re    *regexp2.Regexp
	names map[string]int
	count int
}

var regexCache sync.Map // pattern -> *pyRegex

const regexCacheMax = 512

var regexCacheLen int64
var regexCacheMu sync.Mutex

func compileRegex(pattern string) (*pyRegex, error) {
	if r, ok := regexCache.Load(pattern); ok {
		return r.(*pyRegex), nil
	}
	translated, names, count, err := translateRegex(pattern)
	if err != nil {
		return nil, err
	}
	re, err := regexp2.Compile(translated, regexp2.None)
	if err != nil {
		return nil, fmt.Errorf("invalid regular expression %q: %v", pattern, err)
	}
	re.MatchTimeout = regexTimeout
	r := &pyRegex{re: re, names: names, count: count}
	regexCacheMu.Lock()
	if regexCacheLen < regexCacheMax {
		regexCache.Store(pattern, r)
		regexCacheLen++
	}
	regexCacheMu.Unlock()
	return r, nil
}

// translateRegex rewrites Python-only syntax into regexp2's: (?P<name>...)
// becomes a numbered group, (?P=name) a numbered back reference, \Z is \z and
// {,n} is {0,n}.
func translateRegex(p string) (string, map[string]int, int, error) {
	var b strings.Builder
	names := map[string]int{}
	count := 0
	bad := func(msg string) (string, map[string]int, int, error) {
		return "", nil, 0, fmt.Errorf("invalid regular expression %q: %s", p, msg)
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\':
			if i+1 >= len(p) {
				return bad("bad escape (end of pattern)")
			}
			switch p[i+1] {
			case 'Z':
				b.WriteString(`\z`)
			default:
				b.WriteString(p[i : i+2])
			}
			i++
		case c == '[':
			j := i + 1
			if j < len(p) && p[j] == '^' {
				j++
			}
			if j < len(p) && p[j] == ']' {
				j++
			}
			for j < len(p) && p[j] != ']' {
				if p[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(p) {
				return bad("unterminated character set")
			}
			b.WriteByte('[')
			for k := i + 1; k < j; k++ {
				switch p[k] {
				case '\\':
					b.WriteString(p[k : k+2])
					k++
				case '[':
					b.WriteString(`\[`)
				default:
					b.WriteByte(p[k])
				}
			}
			b.WriteByte(']')
			i = j
		case c == '(' && strings.HasPrefix(p[i:], "(?P<"):
			end := strings.IndexByte(p[i:], '>')
			if end < 0 {
				return bad("missing >, unterminated name")
			}
			name := p[i+4 : i+end]
			if !validGroupName(name) {
				return bad("bad character in group name")
			}
			if _, dup := names[name]; dup {
				return bad("redefinition of group name")
			}
			count++
			names[name] = count
			b.WriteByte('(')
			i += end
		case c == '(' && strings.HasPrefix(p[i:], "(?P="):
			end := strings.IndexByte(p[i:], ')')
			if end < 0 {
				return bad("missing ), unterminated name")
			}
			n, ok := names[p[i+4:i+end]]
			if !ok {
				return bad("unknown group name")
			}
			b.WriteString(`\` + strconv.Itoa(n))
			i += end
		case c == '(' && strings.HasPrefix(p[i:], "(?<") && i+3 < len(p) && p[i+3] != '=' && p[i+3] != '!':
			return bad("unknown extension ?<")
		case c == '(' && strings.HasPrefix(p[i:], "(?"):
			j := i + 2
			for j < len(p) && strings.IndexByte("aiLmsux-", p[j]) >= 0 {
				if strings.IndexByte("aLu", p[j]) >= 0 {
					return bad("the flags a, L and u are not supported")
				}
				j++
			}
			if j < len(p) && p[j] == ')' && i != 0 {
				return bad("global flags not at the start of the expression")
			}
			b.WriteString("(?")
			i++
		case c == '(':
			count++
			b.WriteByte('(')
		case c == '{' && strings.HasPrefix(p[i:], "{,"):
			end := strings.IndexByte(p[i:], '}')
			if end > 2 && isDigits(p[i+2:i+end]) {
				b.WriteString("{0," + p[i+2:i+end] + "}")
				i += end
			} else {
				b.WriteByte(c)
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), names, count, nil
}

func isDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

func validGroupName(n string) bool {
	if n == "" || (n[0] >= '0' && n[0] <= '9') {
		return false
	}
	for _, c := range n {
		if c != '_' && !(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z') && !(c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func regexErr(err error) error {
	if strings.Contains(err.Error(), "timeout") {
		return valueErr("regular expression took longer than %s", regexTimeout)
	}
	return valueErr("%s", err.Error())
}

// search is re.search(pattern, text); the time it takes counts as work (a
// microsecond a step), so that loops of slow matches stay bounded.
func (r *pyRegex) search(text string, st *state) (*regexp2.Match, error) {
	start := time.Now()
	m, err := r.re.FindStringMatch(text)
	if err != nil {
		return nil, regexErr(err)
	}
	return m, st.step(int(time.Since(start) / time.Microsecond))
}

func groupText(m *regexp2.Match, n int) any {
	g := m.GroupByNumber(n)
	if g == nil || len(g.Captures) == 0 {
		return nil
	}
	return g.String()
}

// sub is re.sub(pattern, repl, s) with Python's replacement syntax.
func (r *pyRegex) sub(s, repl string, st *state) (string, error) {
	parts, err := parseRepl(repl, r)
	if err != nil {
		return "", err
	}
	runes := []rune(s)
	var b strings.Builder
	last := 0
	start := time.Now()
	m, err := r.re.FindStringMatch(s)
	for m != nil && err == nil {
		if err := st.step(1 + int(time.Since(start)/time.Microsecond)); err != nil {
			return "", err
		}
		start = time.Now()
		b.WriteString(string(runes[last:m.Index]))
		for _, p := range parts {
			if p.group < 0 {
				b.WriteString(p.text)
			} else if t, ok := groupText(m, p.group).(string); ok {
				b.WriteString(t)
			}
		}
		if err := checkLen(b.Len()); err != nil {
			return "", err
		}
		last = m.Index + m.Length
		m, err = r.re.FindNextMatch(m)
	}
	if err != nil {
		return "", regexErr(err)
	}
	b.WriteString(string(runes[last:]))
	return b.String(), checkLen(b.Len())
}

type replPart struct {
	text  string
	group int // -1 for text
}

// parseRepl reads a Python replacement template: \1, \g<1>, \g<name>, the
// usual escapes; an unknown letter escape is an error.
func parseRepl(repl string, r *pyRegex) ([]replPart, error) {
	var parts []replPart
	var text strings.Builder
	flush := func() {
		if text.Len() > 0 {
			parts = append(parts, replPart{text: text.String(), group: -1})
			text.Reset()
		}
	}
	group := func(n int) error {
		if n > r.count {
			return valueErr("invalid group reference %d", n)
		}
		flush()
		parts = append(parts, replPart{group: n})
		return nil
	}
	for i := 0; i < len(repl); i++ {
		c := repl[i]
		if c != '\\' || i+1 >= len(repl) {
			text.WriteByte(c)
			continue
		}
		i++
		e := repl[i]
		switch {
		case e >= '0' && e <= '9':
			j := i
			for j < len(repl) && j < i+2 && repl[j] >= '0' && repl[j] <= '9' {
				j++
			}
			n, _ := strconv.Atoi(repl[i:j])
			if err := group(n); err != nil {
				return nil, err
			}
			i = j - 1
		case e == 'g':
			end := strings.IndexByte(repl[i:], '>')
			if i+1 >= len(repl) || repl[i+1] != '<' || end < 0 {
				return nil, valueErr("missing group name in replacement")
			}
			name := repl[i+2 : i+end]
			n, err := strconv.Atoi(name)
			if err != nil {
				var ok bool
				if n, ok = r.names[name]; !ok {
					return nil, valueErr("unknown group name %q in replacement", name)
				}
			}
			if err := group(n); err != nil {
				return nil, err
			}
			i += end
		case e == 'n':
			text.WriteByte('\n')
		case e == 't':
			text.WriteByte('\t')
		case e == 'r':
			text.WriteByte('\r')
		case e == 'f':
			text.WriteByte('\f')
		case e == 'v':
			text.WriteByte('\v')
		case e == 'a':
			text.WriteByte('\a')
		case e == 'b':
			text.WriteByte('\b')
		case e == '\\':
			text.WriteByte('\\')
		case (e >= 'a' && e <= 'z') || (e >= 'A' && e <= 'Z'):
			return nil, valueErr("bad escape \\%c in replacement", e)
		default:
			text.WriteByte('\\')
			text.WriteByte(e)
		}
	}
	flush()
	return parts, nil
}
