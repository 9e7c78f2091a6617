package request

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// maxKeysShown bounds the keys DescribeBody names.
const maxKeysShown = 10

// keyLike is a name a body's keys are made of; longer or stranger text is
// not shown as a key.
var keyLike = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.\-]{0,63}$`)

// jsonKey and xmlTag find the keys of a body that is not valid JSON but
// looks like it (cut, or with a stray character), and the tags of XML.
var (
	jsonKey = regexp.MustCompile(`"([A-Za-z_][A-Za-z0-9_.\-]{0,63})"\s*:`)
	xmlTag  = regexp.MustCompile(`<([A-Za-z_][A-Za-z0-9_.\-]{0,63})[\s/>]`)
)

// DescribeBody says what a response body is without quoting any of it, for
// the answer of an endpoint that hands out credentials (an OAuth token
// endpoint, a session login) that could not be read: a token may be in it.
// It gives the content type, the length, and the keys the body seems to
// have: a JSON object's, a form's, or those of text that looks like JSON or
// XML.
func DescribeBody(h http.Header, b []byte) string {
	ctype := "no Content-Type"
	if v := h.Get("Content-Type"); v != "" {
		ctype = fmt.Sprintf("Content-Type %q", v)
	}
	out := fmt.Sprintf("a body of %d bytes (%s)", len(b), ctype)
	if what := bodyShape(b); what != "" {
		out += ", " + what
	}
	return out + "; not shown, as it may hold a credential"
}

// bodyShape is what a body seems to be, and its keys.
func bodyShape(b []byte) string {
	trimmed := bytes.TrimSpace(b)
	if len(trimmed) == 0 {
		return "empty"
	}
	var v any
	if json.Unmarshal(trimmed, &v) == nil {
		switch x := v.(type) {
		case map[string]any:
			var keys []string
			for k := range x {
				keys = append(keys, k)
			}
			return "a JSON object" + withKeys(sortedKeys(keys))
		case []any:
			return fmt.Sprintf("a JSON array of %d items", len(x))
		case string:
			return "a JSON string"
		case float64:
			return "a JSON number"
		case bool:
			return "a JSON boolean"
		}
		return "JSON null"
	}
	if keys, ok := formKeys(string(trimmed)); ok {
		return "which looks like a form" + withKeys(keys)
	}
	for _, re := range []*regexp.Regexp{jsonKey, xmlTag} {
		var keys []string
		seen := map[string]bool{}
		for _, m := range re.FindAllSubmatch(trimmed, 4*maxKeysShown) {
			if k := string(m[1]); !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
		if len(keys) > 0 {
			kind := "JSON"
			if re == xmlTag {
				kind = "XML"
			}
			return "which is not valid JSON and looks like " + kind + withKeys(keys)
		}
	}
	return "which is not JSON"
}

// formKeys are the keys of a URL-encoded form, in order; ok is false for
// text that is not one.
func formKeys(s string) ([]string, bool) {
	if !strings.Contains(s, "=") || strings.ContainsAny(s, " \t\r\n{}<>\"") {
		return nil, false
	}
	var keys []string
	for _, pair := range strings.Split(s, "&") {
		k, _, _ := strings.Cut(pair, "=")
		k, err := url.QueryUnescape(k)
		if err != nil || !keyLike.MatchString(k) {
			return nil, false
		}
		keys = append(keys, k)
	}
	return keys, true
}

func sortedKeys(keys []string) []string {
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		if keyLike.MatchString(k) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// withKeys names up to maxKeysShown keys.
func withKeys(keys []string) string {
	if len(keys) == 0 {
		return ""
	}
	more := ""
	if len(keys) > maxKeysShown {
		more = fmt.Sprintf(" and %d more", len(keys)-maxKeysShown)
		keys = keys[:maxKeysShown]
	}
	return " with the keys " + strings.Join(keys, ", ") + more
}
