// Package paginate implements the offset, page and cursor strategies: the
// token of the first request, where tokens and page sizes are injected, and
// when to stop.
package paginate

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/airbyte-go/source-declarative/components"
	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/runtime/failure"
	"github.com/airbyte-go/source-declarative/runtime/request"
)

// Token is the pagination token of a request; Set is false before the first
// page when nothing is injected.
type Token struct {
	Value any
	Set   bool
}

// Vars is the next_page_token variable of requester templates: absent
// (nil) before a token exists, {next_page_token: value} after.
func (t Token) Vars() any {
	if !t.Set {
		return nil
	}
	return map[string]any{"next_page_token": t.Value}
}

// Page is what a strategy sees of the page just read.
type Page struct {
	Count int // records extracted (before any filter)
	// Response decodes the body; only the top-level keys the templates read
	// need to be decoded (all when the usage says All).
	Response    func(interp.Usage) any
	Header      http.Header
	LastRecords func() []any // the page's records after the filter, decoded on demand
	// HTTP is the response read whole, for a custom strategy.
	HTTP *request.Response
}

// Paginator is a DefaultPaginator ready to run.
type Paginator struct {
	m        *manifest.Paginator
	pageSize int64 // 0: none
	vars     interp.Vars
	response interp.Usage // how the cursor templates read the response
	headers  interp.Usage // which headers they read by name
	records  bool         // whether they read last_records, last_record or last_page_size
	// Warn, when set, takes a warning about the manifest's templates (a
	// stop condition held by a TypeError).
	Warn func(msg string)
	// custom is a custom strategy (custom.go), and first its initial token.
	custom *custom
	first  Token
}

// New evaluates the page size (config and parameters only) and checks it is
// a positive integer; a custom strategy (run by host) is asked for its
// page size and first token.
func New(ctx context.Context, m *manifest.Paginator, vars interp.Vars, host *components.Host) (*Paginator, error) {
	if m == nil {
		return nil, nil
	}
	p := &Paginator{m: m, vars: vars}
	if m.Custom != nil {
		if host == nil {
			return nil, fmt.Errorf("%s: no components host runs the custom pagination strategy", m.Path)
		}
		p.custom = &custom{host: host, c: m.Custom}
		var err error
		p.first, p.pageSize, err = p.custom.start(ctx)
		return p, err
	}
	for _, t := range []*interp.Template{m.CursorValue, m.StopCondition} {
		p.response.Merge(t.UsageOf("response"))
		p.headers.Merge(t.UsageOf("headers"))
		for _, name := range []string{"last_records", "last_record", "last_page_size"} {
			p.records = p.records || t.UsageOf(name).Used
		}
	}
	if m.PageSize != nil {
		v, err := m.PageSize.Eval(vars)
		if err != nil {
			return nil, err
		}
		n, ok := positiveInt(v)
		if !ok {
			return nil, fmt.Errorf("%s: must be a positive integer, got %q", m.PageSizePath, interp.String(v))
		}
		p.pageSize = n
	}
	return p, nil
}

func positiveInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, x > 0
	case float64:
		return int64(x), x > 0 && x == float64(int64(x))
	case string:
		var n int64
		if _, err := fmt.Sscan(strings.TrimSpace(x), &n); err == nil && fmt.Sprint(n) == strings.TrimSpace(x) {
			return n, n > 0
		}
	}
	return 0, false
}

// First is the token of the first request: offset 0 or the start page
// (unless inject_on_first_request is false), nothing for cursors.
func (p *Paginator) First() Token {
	if p != nil && p.custom != nil {
		return p.first
	}
	if p == nil || !p.m.InjectOnFirst {
		return Token{}
	}
	switch p.m.Strategy {
	case manifest.OffsetIncrement:
		return Token{Value: int64(0), Set: true}
	case manifest.PageIncrement:
		return Token{Value: p.m.StartFromPage, Set: true}
	}
	return Token{}
}

// Custom tells whether the strategy is custom Python code, which reads the
// page's response whole.
func (p *Paginator) Custom() bool { return p != nil && p.custom != nil }

// Inject adds the page size (on every request) and the token (when set) to
// the request. A RequestPath token is applied by NextURL instead.
func (p *Paginator) Inject(parts *request.Parts, t Token) error {
	if p == nil {
		return nil
	}
	if p.m.PageSizeOption != nil && p.pageSize > 0 {
		if err := request.Inject(parts, p.m.PageSizeOption, p.pageSize, request.BareOptionVars(p.vars)); err != nil {
			return err
		}
	}
	if t.Set && p.m.PageTokenOption != nil && p.m.PageTokenOption.InjectInto != manifest.InjectPath {
		return request.Inject(parts, p.m.PageTokenOption, t.Value, request.BareOptionVars(p.vars))
	}
	return nil
}

// NextURL is the URL of the request when the token replaces it (RequestPath):
// an absolute URL as is, a relative one joined to base. ok is false otherwise.
// A token that is a dict or a list (a cursor_value giving the answer's whole
// links object) is no URL: the stream fails (a system_error, as the token
// comes from the answer) where Airbyte's runtime requests the Python text of
// the object as a path below url_base.
func (p *Paginator) NextURL(base string, t Token) (string, bool, error) {
	if p == nil || !t.Set || p.m.PageTokenOption == nil || p.m.PageTokenOption.InjectInto != manifest.InjectPath {
		return "", false, nil
	}
	switch kind := interp.TypeName(t.Value); kind {
	case "dict", "list", "tuple":
		return "", false, failure.System("%s: the next page token is a %s, not a URL (page_token_option is a RequestPath): pick the URL out of it in the cursor_value", p.m.Path, kind)
	}
	next := interp.String(t.Value)
	if _, err := url.Parse(next); err != nil {
		return "", false, failure.System("%s: the next page URL %q is invalid: %v", p.m.Path, next, err)
	}
	return request.ResolveURL(base, next), true, nil
}

// Next decides the token of the next request from the page just read; ok is
// false when pagination stops.
func (p *Paginator) Next(ctx context.Context, prev Token, page Page) (Token, bool, error) {
	if p == nil {
		return Token{}, false, nil
	}
	switch p.m.Strategy {
	case manifest.CustomPagination:
		return p.custom.next(ctx, prev, page)
	case manifest.OffsetIncrement:
		if page.Count == 0 || (p.pageSize > 0 && int64(page.Count) < p.pageSize) {
			return Token{}, false, nil
		}
		offset := int64(page.Count)
		if prev.Set {
			n, ok := prev.Value.(int64)
			if !ok {
				return Token{}, false, fmt.Errorf("%s: offset token %v is not an integer", p.m.Path, prev.Value)
			}
			offset += n
		}
		return Token{Value: offset, Set: true}, true, nil
	case manifest.PageIncrement:
		if page.Count == 0 || (p.pageSize > 0 && int64(page.Count) < p.pageSize) {
			return Token{}, false, nil
		}
		next := p.m.StartFromPage + 1
		if prev.Set {
			n, ok := prev.Value.(int64)
			if !ok {
				return Token{}, false, fmt.Errorf("%s: page token %v is not an integer", p.m.Path, prev.Value)
			}
			next = n + 1
		}
		return Token{Value: next, Set: true}, true, nil
	case manifest.CursorPagination:
		return p.nextCursor(page)
	}
	return Token{}, false, nil
}

func (p *Paginator) nextCursor(page Page) (Token, bool, error) {
	var records []any
	if p.records {
		records = page.LastRecords()
	}
	var last any
	if len(records) > 0 {
		last = records[len(records)-1]
		if m, ok := last.(map[string]any); ok {
			last = interp.Record(m) // the reference's Record: last_record.data is m
		}
	}
	var response any
	if p.response.Used {
		response = page.Response(p.response)
	}
	// The reference's variables (CursorPaginationStrategy.next_page_token)
	// and the seed's last_records: another name (page_size, the previous
	// token) is undeclared there, and so here.
	vars := interp.Vars{
		"config":         p.vars["config"],
		"parameters":     p.vars["parameters"],
		"response":       response,
		"headers":        request.HeaderVarsReading(page.Header, p.headers),
		"last_records":   interp.List(records),
		"last_record":    last,
		"last_page_size": int64(len(records)),
	}
	if p.m.StopCondition != nil {
		stop, err := p.m.StopCondition.Holds(vars, p.Warn)
		if err != nil {
			return Token{}, false, err
		}
		if stop {
			return Token{}, false, nil
		}
	}
	v, err := p.m.CursorValue.Eval(vars)
	if err != nil {
		if interp.IsPastEnd(err) && len(page.LastRecords()) == 0 {
			// An empty page has no last record to take a cursor from
			// ({{ last_records[-1]['id'] }}, {{ response['data'][-1]['id'] }},
			// the seed's own cursors): it is the last page. A key the answer
			// does not have ({{ response.data.items.next }}) is an error, as
			// in Airbyte: an answer of another shape is not an empty page.
			return Token{}, false, nil
		}
		return Token{}, false, err
	}
	v = p.asWritten(v, vars)
	if !interp.Truthy(v) {
		// Nothing at the location (null, empty, {} from a .get chain): the last page.
		return Token{}, false, nil
	}
	return Token{Value: v, Set: true}, true, nil
}

// asWritten keeps a cursor the template gives as text spelling a number
// ("1e3", "1.50", a 23-digit id) as that text: the reference's reading of it
// as a Python literal would send 1000.0, 1.5 or a float instead of what the
// API wrote. A cursor whose number writes as its text stays a number.
func (p *Paginator) asWritten(v any, vars interp.Vars) any {
	switch v.(type) {
	case int64, float64, json.Number:
	default:
		return v
	}
	text, err := p.m.CursorValue.Render(vars)
	if text = strings.TrimSpace(text); err != nil || text == interp.String(v) {
		return v
	}
	return text
}
