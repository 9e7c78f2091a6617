package corpus

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/airbyte-go/source-declarative/runtime/interp"
)

// Route is a URL template of the manifest turned into a pattern over the
// mock's request paths.
type Route struct {
	Pattern *regexp.Regexp
	Literal int // characters the pattern fixes: the more, the better a match
}

var (
	templateChunk = regexp.MustCompile(`(?s)\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}`)
	slashes       = regexp.MustCompile(`/{2,}`)
	// requestTime are the variables only known at request time: their
	// expressions match anything.
	requestTime = regexp.MustCompile(`\b(stream_partition|stream_slice|next_page_token|stream_interval|stream_state)\b`)
)

// NewRoute turns a URL template into a route: expressions of config and
// parameters are rendered with vars, those of request-time variables match
// anything, and from the first statement (`{% if %}`) on, anything goes.
// A query written in the template is left out. The URL must start with the
// mock's base URL; slashes are collapsed.
func NewRoute(template, mock string, vars interp.Vars) (Route, error) {
	var pattern strings.Builder
	var rendered strings.Builder // the URL so far, to check it is the mock's
	last := 0
	query := false // the path has ended: the rest is the query
	write := func(text string) {
		if query {
			return
		}
		text, _, query = strings.Cut(text, "?")
		rendered.WriteString(text)
		pattern.WriteString(regexp.QuoteMeta(text))
	}
	wild := func() {
		if !query {
			rendered.WriteString("*")
			pattern.WriteString(".*?")
		}
	}
	for _, loc := range templateChunk.FindAllStringIndex(template, -1) {
		write(template[last:loc[0]])
		chunk := template[loc[0]:loc[1]]
		last = loc[1]
		if strings.HasPrefix(chunk, "{%") {
			wild()
			last = len(template)
			break
		}
		if strings.HasPrefix(chunk, "{#") {
			continue
		}
		if requestTime.MatchString(chunk) {
			wild()
			continue
		}
		t, err := interp.Compile(chunk, "url")
		if err != nil {
			wild()
			continue
		}
		s, err := t.Render(vars)
		if err != nil {
			wild()
			continue
		}
		write(s)
	}
	write(template[last:])
	full := rendered.String()
	if !strings.HasPrefix(full, mock+"/") {
		return Route{}, fmt.Errorf("URL %q does not point at the mock (renders %q)", template, full)
	}
	p := strings.TrimPrefix(pattern.String(), regexp.QuoteMeta(mock))
	p = slashes.ReplaceAllString(p, "/")
	p = strings.TrimSuffix(p, "/")
	re, err := regexp.Compile("^" + p + "/?$")
	if err != nil {
		return Route{}, err
	}
	path := CleanPath(strings.TrimPrefix(full, mock))
	return Route{Pattern: re, Literal: len(path) - strings.Count(path, "*")}, nil
}

// Match tells whether the request path (slashes collapsed) is the route's.
func (r Route) Match(path string) bool {
	return r.Pattern.MatchString(CleanPath(path))
}

// CleanPath collapses repeated slashes, as routes do.
func CleanPath(path string) string {
	return slashes.ReplaceAllString(path, "/")
}

// JoinURL joins url_base and path as the runtime does.
func JoinURL(base, path string) string {
	return strings.TrimRight(base, "/") + "/" + strings.TrimLeft(path, "/")
}
