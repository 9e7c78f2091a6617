package genapi

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"
)

// Plan is what the API serves for one manifest: its endpoints, and what the
// manifest asks that the API cannot serve.
type Plan struct {
	endpoints []*endpoint
	roots     []route // the url_base of each endpoint
	Problems  []string
}

// endpoint is one route of the API and how it answers.
type endpoint struct {
	name   string // the stream, or "oauth token", "session login"
	method string // "" for any
	route  route
	params map[string]string // static query parameters, to tell endpoints on one path apart
	body   map[string]string // static top-level fields of a JSON body (a GraphQL query), likewise
	answer answerer
}

// answerer makes the page for one request.
type answerer interface {
	answer(req *request) served
}

// served is a page and the records it holds.
type served struct {
	status  int
	body    []byte
	ctype   string
	header  http.Header
	records []any
	page    int
}

// NewPlan reads a resolved manifest (references and $parameters resolved,
// URLs pointing at the API) run with config: every stream, the parents its
// partition routers read included, becomes an endpoint serving pages of
// records made from its schema, paginated as its paginator expects; every
// OAuth token endpoint and session login answers a token. The manifest's
// templates that only need config and parameters are rendered by Jinja2
// (testdata/genapi.py), as Airbyte renders them.
func NewPlan(resolved, config map[string]any, now time.Time) (*Plan, error) {
	b := &builder{config: config, parentKeys: map[string][][]string{}}
	streams := AllStreams(resolved)
	for _, s := range streams {
		for _, pc := range parentConfigs(s) {
			name := fmt.Sprint(asMap(pc["stream"])["name"])
			b.parentKeys[name] = append(b.parentKeys[name], nil)[:len(b.parentKeys[name])]
			if k, ok := pc["parent_key"].(string); ok {
				b.parentKeys[name] = append(b.parentKeys[name], strings.Split(k, "/"))
			}
		}
	}
	for _, a := range components(resolved["streams"], "OAuthAuthenticator") {
		b.token(a)
	}
	for _, a := range components(resolved["streams"], "SessionTokenAuthenticator") {
		b.login(a)
	}
	for _, s := range streams {
		b.stream(s)
	}
	if err := b.jinja.run(config, now); err != nil {
		return nil, err
	}
	for _, r := range b.roots {
		b.plan.roots = append(b.plan.roots, r.route)
	}
	return &b.plan, nil
}

// builder collects the endpoints of a plan; what needs Jinja2 is asked in
// one batch, then finish completes the endpoints from the answers.
type builder struct {
	config     map[string]any
	parentKeys map[string][][]string // stream -> fields its children read from its records
	jinja      jinjaBatch
	roots      []*endpoint // routed to the API's roots
	plan       Plan
}

func (b *builder) problem(format string, args ...any) {
	b.plan.Problems = append(b.plan.Problems, fmt.Sprintf(format, args...))
}

// AllStreams lists the streams of a resolved manifest (those of
// ConditionalStreams too) with the parent streams their partition routers
// read, once per name.
func AllStreams(resolved map[string]any) []map[string]any {
	var out []map[string]any
	seen := map[string]bool{}
	var add func(v any)
	add = func(v any) {
		for _, e := range list(v) {
			s := asMap(e)
			if s == nil {
				continue
			}
			if s["type"] == "ConditionalStreams" {
				add(s["streams"])
				continue
			}
			name := fmt.Sprint(s["name"])
			if seen[name] {
				continue
			}
			seen[name] = true
			out = append(out, s)
			for _, pc := range parentConfigs(s) {
				add([]any{pc["stream"]})
			}
		}
	}
	add(resolved["streams"])
	return out
}

// parentConfigs are the parent stream configs of a stream's partition
// routers, nested routers included.
func parentConfigs(stream map[string]any) []map[string]any {
	var out []map[string]any
	for _, router := range components(asMap(stream["retriever"])["partition_router"], "SubstreamPartitionRouter") {
		for _, pc := range list(router["parent_stream_configs"]) {
			if m := asMap(pc); m != nil {
				out = append(out, m)
			}
		}
	}
	return out
}

// params is a component's $parameters.
func params(component map[string]any) map[string]any {
	if p := asMap(component["$parameters"]); p != nil {
		return p
	}
	return map[string]any{}
}

// token answers an OAuth token endpoint with an access token under the
// manifest's names, its lifetime, and a new refresh token when the manifest
// rotates them.
func (b *builder) token(a map[string]any) {
	body := map[string]any{str(a, "access_token_name", "access_token"): "mock-access-token"}
	expires := str(a, "expires_in_name", "expires_in")
	if f := str(a, "token_expiry_date_format", ""); f != "" {
		body[expires] = strftime(time.Now().UTC().Add(24*time.Hour), f)
	} else {
		body[expires] = int64(3600)
	}
	if u := asMap(a["refresh_token_updater"]); u != nil {
		body[str(u, "refresh_token_name", "refresh_token")] = "mock-refresh-token-2"
	}
	b.fixed("oauth token", "POST", str(a, "token_refresh_endpoint", ""), a, body)
}

// login answers a session token login with a token at session_token_path.
func (b *builder) login(a map[string]any) {
	req := asMap(a["login_requester"])
	path := []string{"token"}
	if p := list(a["session_token_path"]); len(p) > 0 {
		path = nil
		for _, k := range p {
			path = append(path, fmt.Sprint(k))
		}
	}
	body := map[string]any{}
	setPath(body, path, "mock-session-token")
	b.fixed("session login", str(req, "http_method", "GET"), joinTemplate(req), req, body)
}

func (b *builder) fixed(name, method, url string, component map[string]any, body map[string]any) {
	e := &endpoint{name: name, method: method, answer: fixedAnswer{body: body}}
	b.routeOf(e, url, component)
	b.plan.endpoints = append(b.plan.endpoints, e)
}

// joinTemplate is a requester's URL template: url, or url_base and path.
func joinTemplate(req map[string]any) string {
	base, path := str(req, "url_base", ""), str(req, "path", "")
	if base == "" {
		base = str(req, "url", "")
	}
	switch {
	case path == "":
		return base
	case strings.HasPrefix(path, "http://") || strings.HasPrefix(path, "https://"):
		return path
	}
	return strings.TrimRight(base, "/") + "/" + strings.TrimLeft(path, "/")
}

// requestTime are the variables only known when a request is made: the
// parts of a URL reading them match anything.
var requestTime = regexp.MustCompile(`\b(stream_partition|stream_slice|next_page_token|stream_interval|stream_state)\b`)

// templateChunk is one {{ }}, {% %} or {# #} part of a template.
var templateChunk = regexp.MustCompile(`(?s)\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}`)

// wild stands in a URL template for what only a request knows.
const wild = "\x00"

// routeOf sets the endpoint's route once the URL template is rendered: the
// parts that read request-time variables (and all after a statement) match
// anything.
func (b *builder) routeOf(e *endpoint, url string, component map[string]any) {
	tpl, cut := "", false
	last := 0
	for _, loc := range templateChunk.FindAllStringIndex(url, -1) {
		chunk := url[loc[0]:loc[1]]
		tpl += url[last:loc[0]]
		last = loc[1]
		if strings.HasPrefix(chunk, "{%") {
			tpl, cut = tpl+wild, true
			break
		}
		if requestTime.MatchString(chunk) {
			tpl += wild
			continue
		}
		tpl += chunk
	}
	if !cut {
		tpl += url[last:]
	}
	b.jinja.render(tpl, params(component), func(s *string) {
		if s == nil {
			b.problem("%s: URL %q does not render", e.name, url)
			return
		}
		r, err := newRoute(*s)
		if err != nil {
			b.problem("%s: %v", e.name, err)
			return
		}
		e.route = r
	})
}

// staticParams renders the request parameters, and the top-level texts of
// the JSON body, that need nothing from the request, to tell apart
// endpoints sharing a path (GraphQL APIs: one POST / per stream, each with
// its query).
func (b *builder) staticParams(e *endpoint, req map[string]any) {
	e.params = b.staticTexts(asMap(req["request_parameters"]), req)
	e.body = b.staticTexts(asMap(req["request_body_json"]), req)
}

// staticTexts renders the texts of a mapping that need nothing from the
// request.
func (b *builder) staticTexts(m map[string]any, req map[string]any) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		s, ok := v.(string)
		if !ok || requestTime.MatchString(s) {
			continue
		}
		b.jinja.render(s, params(req), func(text *string) {
			if text != nil {
				out[k] = *text
			}
		})
	}
	return out
}

// route is a URL template turned into a pattern over request paths.
type route struct {
	pattern *regexp.Regexp
	literal int // characters the pattern fixes: the more, the better a match
}

var slashes = regexp.MustCompile(`/{2,}`)

// newRoute makes the route of a rendered URL: its scheme and host dropped
// (every host is the API), its query left out, wild parts matching anything.
func newRoute(url string) (route, error) {
	if i := strings.Index(url, "://"); i >= 0 {
		rest := url[i+3:]
		if j := strings.IndexAny(rest, "/"+wild); j >= 0 {
			url = rest[j:]
		} else {
			url = "/"
		}
	}
	if i := strings.Index(url, "?"); i >= 0 {
		url = url[:i]
	}
	url = "/" + strings.TrimLeft(slashes.ReplaceAllString(url, "/"), "/")
	url = strings.TrimSuffix(url, "/")
	var p strings.Builder
	literal := 0
	for i, part := range strings.Split(url, wild) {
		if i > 0 {
			p.WriteString(".*?")
		}
		p.WriteString(regexp.QuoteMeta(part))
		literal += len(part)
	}
	re, err := regexp.Compile("^" + p.String() + "/?$")
	if err != nil {
		return route{}, err
	}
	return route{pattern: re, literal: literal}, nil
}

func (r route) match(path string) bool {
	return r.pattern != nil && r.pattern.MatchString(slashes.ReplaceAllString(path, "/"))
}
