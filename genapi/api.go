// Package genapi is a generic HTTP API that stands in for the API of any
// declarative manifest, to run a connector against: from the manifest's
// components it serves pages of records made from each stream's schema,
// paginated as its paginator expects (offsets, page numbers, cursors in the
// body, in headers or in Link, next-page URLs), records placed in the time
// window a request asks for, and tokens for OAuth and session logins.
//
// Every answer depends on the request alone, never on the order of
// requests, so that two connectors reading concurrently get the same pages
// for the same requests; and what the manifest's templates mean is decided
// by Jinja2 (testdata/genapi.py), never by the runtime under test.
package genapi

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// API is a running generic API.
type API struct {
	*httptest.Server
	mu   sync.Mutex
	plan *Plan
	log  []Exchange
}

// Exchange is one request the API answered.
type Exchange struct {
	Endpoint string // the stream, "oauth token", "session login"; "" when no route matched
	Method   string
	Path     string
	RawQuery string
	Header   http.Header
	Body     string
	Status   int
	Page     int   // the page served, from 0
	Records  []any // the records served
}

// Start starts an API serving nothing until SetPlan; Close it when done.
func Start() *API {
	a := &API{plan: &Plan{}}
	a.Server = httptest.NewServer(a)
	return a
}

// SetPlan sets what the API serves.
func (a *API) SetPlan(p *Plan) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.plan = p
}

// Count is the number of requests answered so far.
func (a *API) Count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.log)
}

// Exchanges lists the requests answered so far, in the order they came.
func (a *API) Exchanges() []Exchange {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]Exchange(nil), a.log...)
}

// ServeHTTP answers from the best endpoint for the request: the route
// fixing the most characters, then the one whose static query parameters
// the request carries, of the request's method if one is. No route: 404.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	a.mu.Lock()
	plan := a.plan
	a.mu.Unlock()
	req := newRequest(r, body)
	e := plan.endpointFor(req)
	ex := Exchange{Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery, Header: r.Header.Clone(), Body: string(body)}
	var s served
	if e == nil {
		s = plan.unrouted(req)
	} else {
		ex.Endpoint = e.name
		s = e.answer.answer(req)
	}
	ex.Status, ex.Page, ex.Records = s.status, s.page, s.records
	a.mu.Lock()
	a.log = append(a.log, ex)
	a.mu.Unlock()
	for k, v := range s.header {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Type", s.ctype)
	w.WriteHeader(s.status)
	w.Write(s.body)
}

// unrouted answers a request no endpoint serves: 403 Forbidden for an
// API's root (a url_base itself, asked with no endpoint's path), as APIs
// commonly answer it; 404 for anything else.
func (p *Plan) unrouted(req *request) served {
	status, text := http.StatusNotFound, "no route for this path"
	for _, root := range p.roots {
		if root.match(req.path) {
			status, text = http.StatusForbidden, "this is the API's root, not an endpoint"
			break
		}
	}
	b, _ := json.Marshal(map[string]string{"error": text})
	return served{status: status, body: b, ctype: "application/json"}
}

// Twins lists the endpoints answering the same requests as stream's (the
// same method, route and static parameters: two streams a manifest reads the
// same way), stream included. The API cannot tell which of them asked.
func (p *Plan) Twins(stream string) []string {
	var of []*endpoint
	for _, e := range p.endpoints {
		if e.name == stream {
			of = append(of, e)
		}
	}
	out := []string{stream}
	for _, e := range p.endpoints {
		for _, o := range of {
			if e.name != stream && e.method == o.method && e.route.pattern != nil && o.route.pattern != nil &&
				e.route.pattern.String() == o.route.pattern.String() && fmt.Sprint(e.params) == fmt.Sprint(o.params) &&
				fmt.Sprint(e.body) == fmt.Sprint(o.body) {
				out = append(out, e.name)
				break
			}
		}
	}
	return out
}

func (p *Plan) endpointFor(req *request) *endpoint {
	var best *endpoint
	bestScore := 0
	for pass := 0; pass < 2 && best == nil; pass++ {
		for _, e := range p.endpoints {
			if !e.route.match(req.path) || pass == 0 && e.method != "" && e.method != req.method {
				continue
			}
			score := e.route.literal*100 + staticScore(e.params, req.queryValue) + staticScore(e.body, req.bodyValue)
			if best == nil || score > bestScore {
				best, bestScore = e, score
			}
		}
	}
	return best
}

// staticScore rates how well a request carries an endpoint's static
// values (query parameters or body fields, as lookup reads them): each with
// its value counts, each with another value or missing (unless it renders
// empty, and is then left out) counts against.
func staticScore(static map[string]string, lookup func(key string) (value string, sent bool)) int {
	score := 0
	for k, v := range static {
		v = strings.TrimSpace(v)
		got, ok := lookup(k)
		switch {
		case ok && strings.TrimSpace(got) == v:
			score += 2
		case ok:
			score -= 2
		case v == "":
			score++
		default:
			score--
		}
	}
	return score
}

// fixedAnswer is a JSON body served to every request (tokens, logins).
type fixedAnswer struct {
	body map[string]any
}

func (f fixedAnswer) answer(*request) served {
	b, _ := json.Marshal(f.body)
	return served{status: http.StatusOK, body: b, ctype: "application/json"}
}
