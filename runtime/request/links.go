package request

import (
	"net/http"
	"strings"

	"github.com/airbyte-go/source-declarative/lang/interp"
)

// ParseLinks parses Link headers (RFC 8288) into rel -> {url, rel}; a link
// without rel is keyed by its URL.
func ParseLinks(values []string) map[string]any {
	out := map[string]any{}
	for _, header := range values {
		for _, part := range splitLinks(header) {
			part = strings.TrimSpace(part)
			if !strings.HasPrefix(part, "<") {
				continue
			}
			end := strings.Index(part, ">")
			if end < 0 {
				continue
			}
			link := map[string]any{"url": strings.TrimSpace(part[1:end])}
			for _, param := range strings.Split(part[end+1:], ";") {
				k, v, ok := strings.Cut(param, "=")
				if !ok {
					continue
				}
				k = strings.ToLower(strings.TrimSpace(k))
				v = strings.Trim(strings.TrimSpace(v), `"'`)
				if k != "" {
					link[k] = v
				}
			}
			key, _ := link["rel"].(string)
			if key == "" {
				key = link["url"].(string)
			}
			out[key] = link
		}
	}
	return out
}

// splitLinks splits a header on the commas between links, not those inside URLs.
func splitLinks(h string) []string {
	var parts []string
	depth, start := 0, 0
	inQuote := false
	for i := 0; i < len(h); i++ {
		switch h[i] {
		case '<':
			depth++
		case '>':
			if depth > 0 {
				depth--
			}
		case '"':
			if depth == 0 {
				inQuote = !inQuote
			}
		case ',':
			if depth == 0 && !inQuote {
				parts = append(parts, h[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, h[start:])
}

// HeaderVars is the headers variable of templates, one for cursor pagination
// and error-handler predicates and messages: every response header under its
// canonical name (Content-Type) and its lower-case name (content-type), so
// that the lookups the reference answers (as received by its paginator, any
// case by its error handler) find it, and link as the parsed Link header
// ({rel: {url, rel}}), as the reference's paginator gives it.
func HeaderVars(h http.Header) map[string]any {
	out := make(map[string]any, len(h)*2+1)
	for k, v := range h {
		s := strings.Join(v, ", ")
		out[k] = s
		out[strings.ToLower(k)] = s
	}
	out["link"] = ParseLinks(h.Values("Link"))
	return out
}

// HeaderVarsReading is HeaderVars where each header a template reads by name
// (reads.Keys: X-Pagination-Next-URL) is also found under that name as
// written: HTTP header names are case-insensitive, and the client keeps them
// only in their canonical case.
func HeaderVarsReading(h http.Header, reads interp.Usage) map[string]any {
	vars := HeaderVars(h)
	for name := range reads.Keys {
		if _, ok := vars[name]; !ok && len(h.Values(name)) > 0 {
			vars[name] = strings.Join(h.Values(name), ", ")
		}
	}
	return vars
}
