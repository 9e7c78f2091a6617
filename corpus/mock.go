package corpus

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
)

// Mock is the generic API one manifest reads: a real HTTP server answering
// from a plan. It is started before the plan exists, since the plan needs
// its URL.
type Mock struct {
	*httptest.Server
	mu     sync.Mutex
	plan   *Plan
	misses []string
}

// NewMock starts a mock with an empty plan; Close it when done.
func NewMock() *Mock {
	m := &Mock{plan: &Plan{}}
	m.Server = httptest.NewServer(m)
	return m
}

// SetPlan sets what the mock answers.
func (m *Mock) SetPlan(p *Plan) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.plan = p
}

// Misses lists the requests no route answered ("GET /path").
func (m *Mock) Misses() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.misses...)
}

// ServeHTTP answers with the best route for the path: the one fixing the
// most characters, then the one whose static query parameters the request
// carries. A request for the page after the first gets the empty page; one
// no route matches gets its End, else 404.
func (m *Mock) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	m.mu.Lock()
	plan := m.plan
	m.mu.Unlock()
	var best *Answer
	bestScore := 0
	for _, a := range plan.Answers {
		if !a.Route.Match(r.URL.Path) {
			continue
		}
		score := a.Route.Literal*100 + paramScore(a.Params, r)
		if best == nil || score > bestScore {
			best, bestScore = a, score
		}
	}
	if best == nil {
		if e := endFor(plan.Ends, r.URL.Path); e != nil {
			e.serve(w)
			return
		}
		m.mu.Lock()
		m.misses = append(m.misses, r.Method+" "+r.URL.Path)
		m.mu.Unlock()
		http.Error(w, `{"error":"the mock has no route for this path"}`, http.StatusNotFound)
		return
	}
	page := best.First
	if best.IsNext != nil && best.IsNext(r, body) {
		page = best.Next
	}
	for k, v := range page.Header {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Type", page.ContentType)
	w.Write(page.Body)
}

// paramScore counts the static parameters the request carries with their
// value, less those it carries with another.
func paramScore(params map[string]string, r *http.Request) int {
	q := r.URL.Query()
	score := 0
	for k, v := range params {
		if got, ok := q[k]; ok {
			if len(got) == 1 && got[0] == v {
				score++
			} else {
				score--
			}
		}
	}
	return score
}
