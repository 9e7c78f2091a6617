package runtime

import (
	"fmt"
	"net/url"
	"sort"
	"strings"
	"sync"
	"unicode/utf16"

	"github.com/dlclark/regexp2"
)

// Masker replaces every known secret in a text by ****. Secrets are the
// config values the spec marks airbyte_secret and every token obtained at run
// time; their URL-encoded forms are masked too.
type Masker struct {
	mu         sync.RWMutex
	secrets    map[string]bool // every form of every secret
	registered map[string]bool // the values given to Add
	replacer   *strings.Replacer
	list       []string // every form of every secret, longest first
}

// NewMasker returns an empty masker.
func NewMasker() *Masker { return &Masker{secrets: map[string]bool{}, registered: map[string]bool{}} }

// Add registers a secret value. A value given again (an authenticator's
// credentials, on each request) costs a lookup.
func (m *Masker) Add(s string) {
	if len(s) < 3 {
		return // too short to mask without destroying every message
	}
	m.mu.RLock()
	known := m.registered[s]
	m.mu.RUnlock()
	if known {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.registered[s] = true
	added := false
	forms := append([]string{s, url.QueryEscape(s), url.PathEscape(s)}, jsonForms(s)...)
	for _, v := range forms {
		if !m.secrets[v] {
			m.secrets[v] = true
			added = true
		}
	}
	if added {
		m.replacer = nil
	}
}

// jsonForms are the ways a JSON string can spell s, as an API echoing it in
// an error body writes it: with non-ASCII characters as they are or as
// \uXXXX escapes (Python's json.dumps), with "/" as it is or as "\/" (PHP).
func jsonForms(s string) []string {
	var out []string
	for _, ascii := range []bool{false, true} {
		for _, slash := range []bool{false, true} {
			out = append(out, jsonEscape(s, ascii, slash))
		}
	}
	return out
}

func jsonEscape(s string, ascii, slash bool) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '/' && slash:
			b.WriteString(`\/`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || (ascii && r > 0x7e):
			for _, u := range utf16.Encode([]rune{r}) {
				fmt.Fprintf(&b, `\u%04x`, u)
			}
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Mask hides every secret in s, and the start of a secret that a text
// shortened with "..." cut off (an error message showing the first 200
// characters of a body that echoes a long token).
func (m *Masker) Mask(s string) string {
	r, list := m.current()
	if r == nil {
		return s
	}
	s = r.Replace(s)
	if strings.Contains(s, "...") {
		s = maskCut(s, list)
	}
	return s
}

// Holds tells whether s holds a secret, in any of its forms.
func (m *Masker) Holds(s string) bool {
	r, _ := m.current()
	return r != nil && r.Replace(s) != s
}

// current is the replacer of every form of every secret and their list,
// longest first; nil when there is no secret.
func (m *Masker) current() (*strings.Replacer, []string) {
	m.mu.RLock()
	r, list := m.replacer, m.list
	n := len(m.secrets)
	m.mu.RUnlock()
	if n == 0 || r != nil {
		return r, list
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.replacer == nil {
		list = make([]string, 0, len(m.secrets))
		for v := range m.secrets {
			list = append(list, v)
		}
		sort.Slice(list, func(i, j int) bool { return len(list[i]) > len(list[j]) })
		pairs := make([]string, 0, 2*len(list))
		for _, v := range list {
			pairs = append(pairs, v, "****")
		}
		m.replacer, m.list = strings.NewReplacer(pairs...), list
	}
	return m.replacer, m.list
}

// maskCut replaces by **** the start of a secret that ends the text before
// each "..." of s.
func maskCut(s string, list []string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "...")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		head := s[:i]
		if n := cutSecret(head, list); n > 0 {
			head = head[:len(head)-n] + "****"
		}
		b.WriteString(head)
		b.WriteString("...")
		s = s[i+3:]
	}
}

// cutSecret is the length of the longest start of a secret, 3 bytes or
// more, that text ends with; 0 if none.
func cutSecret(text string, list []string) int {
	best := 0
	for _, v := range list {
		for n := min(len(v)-1, len(text)); n > best && n >= 3; n-- {
			if strings.HasSuffix(text, v[:n]) {
				best = n
				break
			}
		}
	}
	return best
}

// AddSpecSecrets registers the config values that a connection
// specification marks airbyte_secret: under properties, patternProperties
// (the keys their pattern matches) and additionalProperties (the other
// keys), in oneOf, anyOf and allOf variants and in array items, at any
// depth.
func (m *Masker) AddSpecSecrets(spec map[string]any, config map[string]any) {
	addSecrets(spec, config, m.Add)
}

// addSecrets walks a schema and the value it describes together, giving add
// every text of a value whose schema is marked airbyte_secret.
func addSecrets(schema map[string]any, v any, add func(string)) {
	if b, _ := schema["airbyte_secret"].(bool); b {
		collect(v, add)
		return
	}
	for _, key := range []string{"oneOf", "anyOf", "allOf"} {
		variants, _ := schema[key].([]any)
		for _, variant := range variants {
			if sub, ok := variant.(map[string]any); ok {
				addSecrets(sub, v, add)
			}
		}
	}
	switch x := v.(type) {
	case map[string]any:
		props, _ := schema["properties"].(map[string]any)
		patterns, _ := schema["patternProperties"].(map[string]any)
		additional, _ := schema["additionalProperties"].(map[string]any)
		for k, e := range x {
			matched := false
			if sub, ok := props[k].(map[string]any); ok {
				addSecrets(sub, e, add)
				matched = true
			}
			for pattern, sub := range patterns {
				if s, ok := sub.(map[string]any); ok && patternMatches(pattern, k) {
					addSecrets(s, e, add)
					matched = true
				}
			}
			if _, named := props[k]; !named && !matched && additional != nil {
				addSecrets(additional, e, add)
			}
		}
	case []any:
		items, _ := schema["items"].(map[string]any)
		for _, e := range x {
			if items != nil {
				addSecrets(items, e, add)
			}
		}
	}
}

// patternMatches tells whether a patternProperties pattern (an ECMA 262
// regular expression, as JSON Schema says) matches a key; a pattern that
// does not compile matches every key, so that no secret is missed.
func patternMatches(pattern, key string) bool {
	re, err := regexp2.Compile(pattern, regexp2.ECMAScript)
	if err != nil {
		return true
	}
	ok, err := re.MatchString(key)
	return ok || err != nil
}

// collect gives add every text of a secret value: a list's items and an
// object's values (a template that renders the object shows them all),
// numbers and booleans as JSON writes them.
func collect(v any, add func(string)) {
	leaves(v, func(x any) {
		switch y := x.(type) {
		case string:
			add(y)
		case nil:
		default:
			add(strings.TrimSpace(strings.Trim(jsonText(y), `"`)))
		}
	})
}

// collectTexts gives add every string in v (not a number's text).
func collectTexts(v any, add func(string)) {
	leaves(v, func(x any) {
		if s, ok := x.(string); ok {
			add(s)
		}
	})
}

// leaves gives f each value in v that is no list or object.
func leaves(v any, f func(any)) {
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			leaves(e, f)
		}
	case map[string]any:
		for _, e := range x {
			leaves(e, f)
		}
	default:
		f(x)
	}
}
