package corpus

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/runtime/datetime"
	"github.com/airbyte-go/source-declarative/runtime/interp"
)

// RecordsPerPage is how many records a first page holds.
const RecordsPerPage = 3

// Answer is what the mock serves on one route.
type Answer struct {
	Name   string // the stream, or "token" / "login"
	Route  Route
	Params map[string]string // the static request parameters, to tell streams on one path apart
	First  Page
	// Next is served to a request for the page after the first; IsNext
	// tells such requests (nil: every request gets First).
	Next   Page
	IsNext func(r *http.Request, body []byte) bool
}

// Plan is every answer of the mock for one manifest, and what it could not
// shape.
type Plan struct {
	Answers  []*Answer
	Ends     []End
	Problems []string
}

// planner builds a plan from a resolved manifest and the config it runs with.
type planner struct {
	config     map[string]any
	mock       string
	at         time.Time             // the first record's cursor time
	parentKeys map[string][][]string // stream name -> fields its children read
	plan       Plan
}

// NewPlan builds the mock's answers for a resolved manifest (URLs already
// pointing at mock): a token for every OAuth endpoint, a session token for
// every login requester, and for every stream (parents inside partition
// routers included) a first page of records generated from its schema and
// an empty next page.
func NewPlan(resolved, config map[string]any, mock string, now time.Time) *Plan {
	p := &planner{config: config, mock: mock, parentKeys: map[string][][]string{},
		at: now.UTC().Truncate(24*time.Hour).AddDate(0, 0, -1).Add(12 * time.Hour)}
	streams := Streams(resolved)
	for _, s := range streams {
		for _, router := range components(s["retriever"], "SubstreamPartitionRouter") {
			for _, pc := range list(router["parent_stream_configs"]) {
				pcm := asMap(pc)
				parent := fmt.Sprint(asMap(pcm["stream"])["name"])
				if k, ok := pcm["parent_key"].(string); ok {
					p.parentKeys[parent] = append(p.parentKeys[parent], []string{k})
				}
			}
		}
	}
	for _, a := range components(resolved["streams"], "OAuthAuthenticator") {
		p.token(a)
	}
	for _, a := range components(resolved["streams"], "SessionTokenAuthenticator") {
		p.login(a)
	}
	for _, s := range streams {
		p.stream(s)
	}
	return &p.plan
}

// Streams lists the streams of a resolved manifest, with the parent streams
// partition routers hold, once per name.
func Streams(resolved map[string]any) []map[string]any {
	var out []map[string]any
	seen := map[string]bool{}
	var add func(v any)
	add = func(v any) {
		for _, s := range list(v) {
			sm := asMap(s)
			name := fmt.Sprint(sm["name"])
			if sm == nil || seen[name] {
				continue
			}
			seen[name] = true
			out = append(out, sm)
			for _, router := range components(sm["retriever"], "SubstreamPartitionRouter") {
				for _, pc := range list(router["parent_stream_configs"]) {
					add([]any{asMap(pc)["stream"]})
				}
			}
		}
	}
	add(resolved["streams"])
	return out
}

// components finds every component of type typ under v (not inside
// schemas).
func components(v any, typ string) []map[string]any {
	var out []map[string]any
	visit(v, "", func(key string, v any) bool {
		if key == "schema" || key == "$parameters" {
			return false
		}
		if m, ok := v.(map[string]any); ok && m["type"] == typ {
			out = append(out, m)
		}
		return true
	})
	return out
}

func (p *planner) vars(component map[string]any) interp.Vars {
	params := asMap(component["$parameters"])
	if params == nil {
		params = map[string]any{}
	}
	return interp.Vars{"config": p.config, "parameters": params}
}

func (p *planner) problem(format string, args ...any) {
	p.plan.Problems = append(p.plan.Problems, fmt.Sprintf(format, args...))
}

// route makes the route of a URL template, or notes why it cannot.
func (p *planner) route(what, template string, vars interp.Vars) (Route, bool) {
	r, err := NewRoute(template, p.mock, vars)
	if err != nil {
		p.problem("%s: %v", what, err)
		return Route{}, false
	}
	return r, true
}

// token answers an OAuth token endpoint with an access token under the
// manifest's names, its expiry in seconds (or as a date in the manifest's
// format), and a new refresh token when the manifest updates it.
func (p *planner) token(a map[string]any) {
	endpoint, _ := a["token_refresh_endpoint"].(string)
	r, ok := p.route("OAuth token_refresh_endpoint", endpoint, p.vars(a))
	if !ok {
		return
	}
	body := map[string]any{str(a, "access_token_name", "access_token"): "mock-access-token"}
	expires := str(a, "expires_in_name", "expires_in")
	if f := str(a, "token_expiry_date_format", ""); f != "" {
		body[expires] = datetime.Strftime(time.Now().UTC().Add(24*time.Hour), f)
	} else {
		body[expires] = int64(3600)
	}
	if u := asMap(a["refresh_token_updater"]); u != nil {
		body[str(u, "refresh_token_name", "refresh_token")] = "mock-refresh-token-2"
	}
	p.plan.Answers = append(p.plan.Answers, &Answer{Name: "token", Route: r, First: jsonPage(body)})
}

// login answers a session login requester with a token at session_token_path.
func (p *planner) login(a map[string]any) {
	req := asMap(a["login_requester"])
	tpl, _ := req["url"].(string)
	if tpl == "" {
		tpl = JoinURL(str(req, "url_base", ""), str(req, "path", ""))
	}
	r, ok := p.route("session login_requester", tpl, p.vars(req))
	if !ok {
		return
	}
	var path []string
	for _, k := range list(a["session_token_path"]) {
		path = append(path, fmt.Sprint(k))
	}
	if len(path) == 0 {
		path = []string{"token"}
	}
	body := map[string]any{}
	setPath(body, path, "mock-session-token")
	p.plan.Answers = append(p.plan.Answers, &Answer{Name: "login", Route: r, First: jsonPage(body)})
}

func jsonPage(body any) Page {
	b, _ := json.Marshal(body)
	return Page{Body: b, ContentType: "application/json"}
}

// stream answers a stream's requests.
func (p *planner) stream(s map[string]any) {
	name := fmt.Sprint(s["name"])
	retriever := asMap(s["retriever"])
	req := asMap(retriever["requester"])
	vars := p.vars(req)
	tpl, _ := req["url"].(string)
	if tpl == "" {
		tpl = JoinURL(str(req, "url_base", ""), str(req, "path", ""))
	}
	r, ok := p.route("stream "+name, tpl, vars)
	if !ok {
		return
	}
	a := &Answer{Name: name, Route: r, Params: staticParams(asMap(req["request_parameters"]), vars)}
	p.end(req, vars)
	dec, ok := DecoderOf(asMap(retriever["decoder"]))
	if !ok {
		p.problem("stream %s: the mock cannot encode for decoder %v", name, asMap(retriever["decoder"])["type"])
	}
	extractor := asMap(asMap(retriever["record_selector"])["extractor"])
	var fieldPath []string
	for _, seg := range list(extractor["field_path"]) {
		fieldPath = append(fieldPath, render(fmt.Sprint(seg), p.vars(extractor)))
	}
	records := p.recordSpec(s).Records(RecordsPerPage)
	paginator := asMap(retriever["paginator"])
	strategy := asMap(paginator["pagination_strategy"])
	var pages pager
	switch strategy["type"] {
	case "CursorPagination":
		pages = p.cursorPages(name, strategy, fieldPath, records)
	case "OffsetIncrement", "PageIncrement":
		pages = incrementPages(strategy, fieldPath, records)
	default:
		pages = pager{first: Shape(fieldPath, records), empty: Shape(fieldPath, nil)}
	}
	a.First = encodePage(dec, fieldPath, pages.records(records), pages.first, pages.firstHeader)
	a.Next = encodePage(dec, fieldPath, nil, pages.empty, pages.emptyHeader)
	option := asMap(paginator["page_token_option"])
	p.plan.Answers = append(p.plan.Answers, a)
	if option["type"] == "RequestPath" {
		// The next page's URL is the cursor itself: it gets its own route.
		if pages.token != "" {
			next := pages.token
			if !strings.Contains(next, "://") {
				next = JoinURL(render(str(req, "url_base", ""), vars), next)
			}
			if r, ok := p.route("stream "+name+" next page", next, vars); ok {
				p.plan.Answers = append(p.plan.Answers, &Answer{Name: name, Route: r, First: a.Next})
			}
		}
		return
	}
	a.IsNext = either(pages.isNext(option, p.vars(paginator)), p.pathPages(tpl, vars))
}

// recordSpec says how to make a stream's records: from its inline schema,
// with its primary key, its cursor in the cursor's format (the first of
// cursor_datetime_formats, else datetime_format; a count cursor has none),
// the fields its children's partitions read and those its templates read
// from a record.
func (p *planner) recordSpec(s map[string]any) RecordSpec {
	name := fmt.Sprint(s["name"])
	reads, patterns := RecordReads(s)
	spec := RecordSpec{Schema: asMap(asMap(s["schema_loader"])["schema"]), PrimaryKey: primaryKey(s["primary_key"]),
		Paths: append(append([][]string{}, p.parentKeys[name]...), reads...), Patterns: patterns, At: p.at}
	if inc := asMap(s["incremental_sync"]); inc != nil {
		if f, ok := inc["cursor_field"].(string); ok {
			spec.Cursor = []string{render(f, p.vars(inc))}
		}
		spec.CursorFormat = str(inc, "datetime_format", "")
		if formats := list(inc["cursor_datetime_formats"]); len(formats) > 0 {
			spec.CursorFormat = fmt.Sprint(formats[0])
		}
	}
	return spec
}

// RecordReads lists the key chains a stream's templates (transformations,
// record filters, ...) read from a record, and those they search with a
// regular expression; the parent streams inside its partition routers and
// its schema are not the stream's templates.
func RecordReads(stream map[string]any) (paths [][]string, patterns []PatternRead) {
	visit(stream, "", func(key string, v any) bool {
		if key == "schema" || key == "parent_stream_configs" {
			return false
		}
		if s, ok := v.(string); ok && strings.Contains(s, "{") {
			paths = append(paths, Accesses(s, "record")...)
			patterns = append(patterns, PatternReads(s)...)
		}
		return true
	})
	return paths, patterns
}

// pathPages: a URL that reads next_page_token (and nothing else known only
// at request time) names its pages, as when a page number indexes a list in
// the path; any other path on the route asks for a later page.
func (p *planner) pathPages(template string, vars interp.Vars) func(*http.Request, []byte) bool {
	if !strings.Contains(template, "next_page_token") || requestTime.MatchString(strings.ReplaceAll(template, "next_page_token", "")) {
		return nil
	}
	// No token yet: Jinja reads next_page_token['x'] of it as undefined.
	first := interp.Vars{"next_page_token": map[string]any{}}
	for k, v := range vars {
		first[k] = v
	}
	full := render(template, first)
	if full == template || !strings.HasPrefix(full, p.mock+"/") {
		return nil
	}
	path := strings.TrimSuffix(CleanPath(strings.TrimPrefix(full, p.mock)), "/")
	return func(r *http.Request, _ []byte) bool {
		return strings.TrimSuffix(CleanPath(r.URL.Path), "/") != path
	}
}

// either is a test true when f or g is; nil when both are.
func either(f, g func(*http.Request, []byte) bool) func(*http.Request, []byte) bool {
	switch {
	case f == nil:
		return g
	case g == nil:
		return f
	}
	return func(r *http.Request, b []byte) bool { return f(r, b) || g(r, b) }
}

// pager is the first and the empty page of a stream and how to tell a
// request for the page after the first.
type pager struct {
	first, empty             any
	firstHeader, emptyHeader http.Header
	single                   bool   // the body is the one record itself (empty field_path, templates read the body)
	token                    string // the cursor a request for the next page carries
	initial                  string // increments: the token of the first page
	increment                bool
}

func (pg pager) records(records []any) []any {
	if pg.single {
		return records[:1]
	}
	return records
}

func encodePage(dec Decoder, fieldPath []string, records []any, body any, h http.Header) Page {
	b, ctype := dec.Encode(fieldPath, records, body)
	if h == nil {
		h = http.Header{}
	}
	return Page{Body: b, ContentType: ctype, Header: h}
}

// cursorPages makes a cursor stream's pages end pagination: the first page
// with the additions that make the stop condition hold or the cursor empty;
// if none does, the next page is told by the cursor the first yields.
func (p *planner) cursorPages(name string, strategy map[string]any, fieldPath []string, records []any) pager {
	pg := pager{first: Shape(fieldPath, records), empty: Shape(fieldPath, nil)}
	st := stopper{vars: p.vars(strategy)}
	var err error
	if st.cursor, err = interp.Compile(str(strategy, "cursor_value", ""), "cursor_value"); err != nil {
		p.problem("stream %s: %v", name, err)
		return pg
	}
	if s, ok := strategy["stop_condition"].(string); ok {
		if st.stop, err = interp.Compile(s, "stop_condition"); err != nil {
			p.problem("stream %s: %v", name, err)
			return pg
		}
	}
	// An empty field_path with templates reading the body: the body is one record.
	pg.single = len(fieldPath) == 0 && len(Accesses(st.cursor.Source+" "+str(strategy, "stop_condition", ""), "response")) > 0
	first, empty := pg.first, pg.empty
	if pg.single {
		first, empty = manifest.DeepCopy(records[0]), map[string]any{}
	}
	pg.empty, pg.emptyHeader, _ = st.findEnd(empty, nil)
	var ok bool
	if pg.first, pg.firstHeader, ok = st.findEnd(first, pg.records(records)); !ok {
		pg.token = st.next(first, http.Header{}, pg.records(records))
	}
	return pg
}

// incrementPages: offset and page increments stop on a short page; a first
// page as long as the page size is followed by an empty one.
func incrementPages(strategy map[string]any, fieldPath []string, records []any) pager {
	pg := pager{first: Shape(fieldPath, records), empty: Shape(fieldPath, nil), increment: true, initial: "0"}
	if strategy["type"] == "PageIncrement" {
		pg.initial = fmt.Sprint(int64(num(strategy["start_from_page"], 0)))
	}
	return pg
}

// isNext tells requests for the page after the first by the page token
// (page_token_option): for increments any token but the first page's; for a
// cursor the one the first page yields.
func (pg pager) isNext(option map[string]any, vars interp.Vars) func(*http.Request, []byte) bool {
	if option == nil || !pg.increment && pg.token == "" {
		return nil
	}
	field := render(str(option, "field_name", ""), vars)
	var fieldPath []string
	for _, seg := range list(option["field_path"]) {
		fieldPath = append(fieldPath, render(fmt.Sprint(seg), vars))
	}
	if len(fieldPath) == 0 {
		fieldPath = []string{field}
	}
	return func(r *http.Request, body []byte) bool {
		v, ok := injected(r, body, fmt.Sprint(option["inject_into"]), fieldPath)
		if pg.increment {
			return ok && v != pg.initial
		}
		return ok && v == pg.token
	}
}

// injected reads the value a request option put in the request.
func injected(r *http.Request, body []byte, into string, path []string) (string, bool) {
	switch into {
	case "request_parameter":
		v, ok := r.URL.Query()[path[0]]
		return strings.Join(v, ","), ok
	case "header":
		v := r.Header.Get(path[0])
		return v, v != ""
	case "body_data":
		q, err := url.ParseQuery(string(body))
		v, ok := q[path[0]]
		return strings.Join(v, ","), err == nil && ok
	case "body_json":
		var m any
		if json.Unmarshal(body, &m) != nil {
			return "", false
		}
		for _, k := range path {
			m = asMap(m)[k]
		}
		return interp.String(m), m != nil
	}
	return "", false
}

// staticParams renders the request parameters that need nothing from the
// request, to tell apart streams sharing a path.
func staticParams(m map[string]any, vars interp.Vars) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		s, ok := v.(string)
		if !ok || requestTime.MatchString(s) {
			continue
		}
		out[k] = render(s, vars)
	}
	return out
}

// render renders a template with config and parameters; the source itself
// when it does not render.
func render(s string, vars interp.Vars) string {
	t, err := interp.Compile(s, "corpus")
	if err != nil {
		return s
	}
	out, err := t.Render(vars)
	if err != nil {
		return s
	}
	return out
}

// primaryKey reads a primary_key: a name, a list of names, or a list of
// paths.
func primaryKey(v any) [][]string {
	switch x := v.(type) {
	case string:
		if x == "" {
			return nil
		}
		return [][]string{{x}}
	case []any:
		var out [][]string
		for _, e := range x {
			switch k := e.(type) {
			case string:
				out = append(out, []string{k})
			case []any:
				var path []string
				for _, s := range k {
					path = append(path, fmt.Sprint(s))
				}
				out = append(out, path)
			}
		}
		return out
	}
	return nil
}

func str(m map[string]any, key, def string) string {
	if s, ok := m[key].(string); ok && s != "" {
		return s
	}
	return def
}
