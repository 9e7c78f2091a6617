// Package pyregex compiles regular expressions written for Python's re
// module, as manifests are, with a backtracking engine of Python's family
// (github.com/dlclark/regexp2): lookbehind, named groups (?P<name>...),
// backreferences (?P=name), and \d, \w, \s on Unicode as in Python 3.
package pyregex

import (
	"strings"
	"time"

	"github.com/dlclark/regexp2"
)

// MatchTimeout bounds one match: patterns come from untrusted manifests.
const MatchTimeout = time.Second

// Compile compiles a Python regular expression.
func Compile(pattern string) (*regexp2.Regexp, error) {
	re, err := regexp2.Compile(translate(pattern), regexp2.None)
	if err != nil {
		return nil, err
	}
	re.MatchTimeout = MatchTimeout
	return re, nil
}

// translate rewrites Python-only syntax into the engine's: (?P<n> to (?<n>,
// (?P=n) to \k<n>, and \Z (end of text in Python) to \z.
func translate(p string) string {
	var b strings.Builder
	inClass := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\' && i+1 < len(p):
			if p[i+1] == 'Z' && !inClass {
				b.WriteString(`\z`)
			} else {
				b.WriteByte(c)
				b.WriteByte(p[i+1])
			}
			i++
			continue
		case inClass:
			if c == ']' {
				inClass = false
			}
		case c == '[':
			inClass = true
			if i+1 < len(p) && p[i+1] == ']' { // a leading ] is a literal
				b.WriteString("[]")
				i++
				continue
			}
		case strings.HasPrefix(p[i:], "(?P<"):
			b.WriteString("(?<")
			i += len("(?P<") - 1
			continue
		case strings.HasPrefix(p[i:], "(?P="):
			end := strings.IndexByte(p[i:], ')')
			if end > 0 {
				b.WriteString(`\k<` + p[i+4:i+end] + ">")
				i += end
				continue
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

// Find returns the text the pattern finds in s: its first capture group when
// it has one, else the whole match; ok is false without a match.
func Find(re *regexp2.Regexp, s string) (string, bool) {
	m, err := re.FindStringMatch(s)
	if err != nil || m == nil {
		return "", false
	}
	if groups := m.Groups(); len(groups) > 1 && len(groups[1].Captures) > 0 {
		return groups[1].String(), true
	}
	return m.String(), true
}
