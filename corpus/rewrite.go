package corpus

import (
	"fmt"
	"github.com/airbyte-go/source-declarative/genapi"
	"regexp"
	"strings"

	"github.com/airbyte-go/source-declarative/manifest"
)

// urlKeys are the manifest fields holding URLs the runtime requests
// (requesters, and with them login requesters; OAuth token endpoints).
var urlKeys = map[string]bool{"url_base": true, "url": true, "token_refresh_endpoint": true}

// RewriteURLs returns a copy of a raw manifest whose URL fields point at the
// mock: each literal `https://` or `http://` becomes `<mock>/`, so that
// `https://api.x.com/v1` is `<mock>/api.x.com/v1` and the mock tells APIs
// and streams apart by path. Templates around or inside the URL are kept.
func RewriteURLs(raw map[string]any, mock string) map[string]any {
	out := manifest.DeepCopy(raw).(map[string]any)
	eachURL(out, func(s string) string {
		s = strings.ReplaceAll(s, "https://", "\x00")
		s = strings.ReplaceAll(s, "http://", "\x00")
		return strings.ReplaceAll(s, "\x00", mock+"/")
	})
	return out
}

// PointConfig points the config keys that URLs begin with
// (`{{ config['api_url'] }}/v1`) at the mock: a sampled
// `https://host/path` becomes `<mock>/host/path`. A key the spec pins
// (const, enum) cannot change: that URL's expression is wrapped in the
// manifest instead, to map its value onto the mock. It reports the wrapped
// URLs.
func PointConfig(raw, config map[string]any, pinned map[string]bool, mock string) []string {
	var wrapped []string
	eachURL(raw, func(s string) string {
		loc := templateChunk.FindStringIndex(s)
		if loc == nil || strings.TrimSpace(s[:loc[0]]) != "" || !strings.HasPrefix(s[loc[0]:], "{{") {
			return s
		}
		chunk := s[loc[0]:loc[1]]
		wrap := false
		for _, chain := range genapi.Accesses(chunk, "config") {
			v, ok := getPath(config, chain).(string)
			if !ok || strings.HasPrefix(v, mock+"/") {
				continue
			}
			if pinned[strings.Join(chain, ".")] {
				wrap = true
				continue
			}
			setPath(config, chain, mock+"/"+stripScheme(v))
		}
		if !wrap {
			return s
		}
		wrapped = append(wrapped, s)
		expr := strings.Trim(chunk[2:len(chunk)-2], "- \t\n")
		return s[:loc[0]] + fmt.Sprintf("{{ (%s) | replace('http://', '%s/') | replace('https://', '%s/') }}", expr, mock, mock) + s[loc[1]:]
	})
	return wrapped
}

// eachURL replaces every string under a URL key of the tree, in place.
func eachURL(v any, f func(string) string) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && urlKeys[k] {
				x[k] = f(s)
				continue
			}
			eachURL(e, f)
		}
	case []any:
		for _, e := range x {
			eachURL(e, f)
		}
	}
}

func stripScheme(s string) string {
	if _, rest, ok := strings.Cut(s, "://"); ok {
		return rest
	}
	return s
}

func getPath(m map[string]any, path []string) any {
	var cur any = m
	for _, k := range path {
		cur = asMap(cur)[k]
	}
	return cur
}

// templateChunk is one {{ }}, {% %} or {# #} part of a template.
var templateChunk = regexp.MustCompile(`(?s)\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}`)

// setPath sets v at path in m, making the objects on the way.
func setPath(m map[string]any, path []string, v any) {
	cur := m
	for _, k := range path[:len(path)-1] {
		next, ok := cur[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			cur[k] = next
		}
		cur = next
	}
	cur[path[len(path)-1]] = v
}
