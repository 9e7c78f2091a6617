package genapi

import (
	"regexp"
	"strings"
)

// Accesses lists the key chains a template reads from the variable root:
// `config['a']['b']`, `config.a.b` and `config.get('a', {}).get('b')` all
// give ["a", "b"]. A chain ends at an index (`[-1]`), a method call
// (`.split(...)`) or anything else that is not a key.
func Accesses(template, root string) [][]string {
	var out [][]string
	for i := 0; i < len(template); {
		j := strings.Index(template[i:], root)
		if j < 0 {
			break
		}
		start := i + j
		i = start + len(root)
		if start > 0 && isIdent(template[start-1]) || start > 0 && template[start-1] == '.' || i < len(template) && isIdent(template[i]) {
			continue
		}
		var chain []string
		for {
			key, next, ok := accessor(template, i)
			if !ok {
				break
			}
			chain, i = append(chain, key), next
		}
		if len(chain) > 0 {
			out = append(out, chain)
		}
	}
	return out
}

var (
	getCall    = regexp.MustCompile(`^\s*\.\s*get\s*\(\s*(?:'([^']*)'|"([^"]*)")`)
	subscript  = regexp.MustCompile(`^\s*\[\s*(?:'([^']*)'|"([^"]*)")\s*\]`)
	attribute  = regexp.MustCompile(`^\s*\.\s*([A-Za-z_][A-Za-z0-9_]*)`)
	callFollow = regexp.MustCompile(`^\s*\(`)
)

// accessor reads one key access at s[i:]: the key and where the next one
// starts.
func accessor(s string, i int) (string, int, bool) {
	rest := s[i:]
	if m := getCall.FindStringSubmatchIndex(rest); m != nil {
		key := group(rest, m)
		return key, i + closeParen(rest, m[1]), true
	}
	if m := subscript.FindStringSubmatchIndex(rest); m != nil {
		return group(rest, m), i + m[1], true
	}
	if m := attribute.FindStringSubmatchIndex(rest); m != nil {
		if callFollow.MatchString(rest[m[1]:]) {
			return "", 0, false
		}
		return rest[m[2]:m[3]], i + m[1], true
	}
	return "", 0, false
}

// group is the first of the two alternative quoted groups that matched.
func group(s string, m []int) string {
	if m[2] >= 0 {
		return s[m[2]:m[3]]
	}
	return s[m[4]:m[5]]
}

// closeParen finds the end of the call whose first argument ends at from:
// the index after its closing parenthesis, skipping nested brackets.
func closeParen(s string, from int) int {
	depth := 1
	var quote byte
	for k := from; k < len(s); k++ {
		c := s[k]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '(' || c == '[' || c == '{':
			depth++
		case c == ')' || c == ']' || c == '}':
			depth--
			if depth == 0 {
				return k + 1
			}
		}
	}
	return len(s)
}

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// literals are the quoted strings of a template ("false" in
// `headers['link']['next']['results'] == "false"`), candidate values when
// the mock looks for a response that ends pagination.
func literals(template string) []string {
	var out []string
	for _, m := range quoted.FindAllStringSubmatch(template, -1) {
		out = append(out, m[1]+m[2])
	}
	return out
}

var quoted = regexp.MustCompile(`'([^']*)'|"([^"]*)"`)

// PatternRead is a key chain a template passes to regex_search, and the
// regular expression.
type PatternRead struct {
	Path    []string
	Pattern string
}

var regexSearch = regexp.MustCompile(`\b(record(?:\s*\[\s*(?:'[^']*'|"[^"]*")\s*\]|\s*\.\s*[A-Za-z_]\w*)+)\s*\|\s*regex_search\(\s*(?:'([^']*)'|"([^"]*)")`)

// PatternReads lists the record keys a template filters with regex_search
// (`record['uri'] | regex_search("/([a-z0-9-]*)$")`) with their regular
// expressions (a Jinja string literal's escaped backslash made one).
func PatternReads(template string) []PatternRead {
	var out []PatternRead
	for _, m := range regexSearch.FindAllStringSubmatch(template, -1) {
		chains := Accesses(m[1], "record")
		if len(chains) != 1 {
			continue
		}
		out = append(out, PatternRead{Path: chains[0], Pattern: strings.ReplaceAll(m[2]+m[3], `\\`, `\`)})
	}
	return out
}
