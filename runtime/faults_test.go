package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airbyte-go/source-declarative/protocol"
)

// flaky wraps a correct paging API and breaks every other request in one of
// the ways real APIs fail.
type flaky struct {
	mu       sync.Mutex
	n        int
	injected map[string]int
	kinds    []string
	total    int
	tokenN   int
}

func (f *flaky) next() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	if f.n%2 == 1 {
		kind := f.kinds[(f.n/2)%len(f.kinds)]
		f.injected[kind]++
		return kind
	}
	return ""
}

func (f *flaky) page(r *http.Request) (string, bool) {
	q := r.URL.Query()
	size := 5
	from := 0
	switch r.URL.Path {
	case "/users":
		from, _ = strconv.Atoi(q.Get("offset"))
	case "/orders":
		p, _ := strconv.Atoi(q.Get("page"))
		from = (p - 1) * size
	case "/events":
		from, _ = strconv.Atoi(q.Get("cursor"))
	default:
		return "", false
	}
	to := from + size
	if to > f.total {
		to = f.total
	}
	var recs []string
	for i := from; i < to; i++ {
		recs = append(recs, fmt.Sprintf(`{"id":%d,"note":"record %d"}`, i, i))
	}
	next := "null"
	if to < f.total {
		next = strconv.Itoa(to)
	}
	return fmt.Sprintf(`{"data":[%s],"next":%s}`, strings.Join(recs, ","), next), true
}

func (f *flaky) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/token" {
		f.mu.Lock()
		f.tokenN++
		n := f.tokenN
		f.mu.Unlock()
		if n <= 2 {
			f.mu.Lock()
			f.injected["token endpoint 503"]++
			f.mu.Unlock()
			w.WriteHeader(503)
			return
		}
		fmt.Fprint(w, `{"access_token":"tok-abcdef","expires_in":3600}`)
		return
	}
	if r.Header.Get("Authorization") != "Bearer tok-abcdef" {
		w.WriteHeader(401)
		return
	}
	body, ok := f.page(r)
	if !ok {
		w.WriteHeader(404)
		return
	}
	switch f.next() {
	case "429 Retry-After":
		w.Header().Set("Retry-After", "2")
		w.WriteHeader(429)
	case "500":
		w.WriteHeader(500)
	case "502":
		w.WriteHeader(502)
	case "503":
		w.WriteHeader(503)
	case "reset mid-body":
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(200)
		w.Write([]byte(body[:len(body)/2]))
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	case "slow past the timeout":
		time.Sleep(400 * time.Millisecond)
		w.Write([]byte(body))
	case "truncated JSON":
		w.Write([]byte(body[:len(body)-7]))
	default:
		w.Write([]byte(body))
	}
}

// faultManifest reads its streams one request at a time (concurrency_level
// 1): the API breaks every other request it gets, so that each stream's
// retries alternate with answers.
const faultManifest = `version: 6.0.0
check: {stream_names: [users]}
concurrency_level: {type: ConcurrencyLevel, default_concurrency: 1}
definitions:
  req:
    type: HttpRequester
    url_base: "{{ config['url'] }}"
    authenticator:
      type: OAuthAuthenticator
      token_refresh_endpoint: "{{ config['url'] }}/token"
      client_id: "{{ config['client_id'] }}"
      client_secret: "{{ config['client_secret'] }}"
      grant_type: client_credentials
  selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
streams:
  - type: DeclarativeStream
    name: users
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/req", path: /users}
      record_selector: {$ref: "#/definitions/selector"}
      paginator:
        type: DefaultPaginator
        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: offset}
        pagination_strategy: {type: OffsetIncrement, page_size: 5}
  - type: DeclarativeStream
    name: orders
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/req", path: /orders}
      record_selector: {$ref: "#/definitions/selector"}
      paginator:
        type: DefaultPaginator
        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}
        pagination_strategy: {type: PageIncrement, page_size: 5, start_from_page: 1}
  - type: DeclarativeStream
    name: events
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/req", path: /events}
      record_selector: {$ref: "#/definitions/selector"}
      paginator:
        type: DefaultPaginator
        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: cursor}
        pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next }}"}
`

// TestFaultInjection reads three streams (offset, page, cursor) from an API
// that fails every other request, and checks every record arrives exactly
// once, in order, with no secret in the output.
func TestFaultInjection(t *testing.T) {
	f := &flaky{total: 48, injected: map[string]int{},
		kinds: []string{"429 Retry-After", "500", "502", "503", "reset mid-body", "slow past the timeout", "truncated JSON"}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	r, out := loadRunner(t, faultManifest, map[string]any{"url": srv.URL, "client_id": "cid", "client_secret": "client-secret-value"})
	r.Masker.Add("client-secret-value")
	w := r.Out
	var waits []time.Duration
	var mu sync.Mutex
	r.Client.Sleep = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		waits = append(waits, d)
		mu.Unlock()
		return nil
	}
	r.Client.HTTP.Timeout = 200 * time.Millisecond
	cat := &protocol.ConfiguredCatalog{}
	for _, n := range []string{"users", "orders", "events"} {
		cat.Streams = append(cat.Streams, protocol.ConfiguredStream{Stream: protocol.Stream{Name: n}, SyncMode: "full_refresh"})
	}
	if err := r.Read(context.Background(), cat, nil); err != nil {
		t.Fatalf("read failed: %v\n%s", err, out.String())
	}
	w.Flush()
	got := map[string][]int{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m struct {
			Type   string
			Record struct {
				Stream string
				Data   struct{ ID int }
			}
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("bad line %q", line)
		}
		if m.Type == "RECORD" {
			got[m.Record.Stream] = append(got[m.Record.Stream], m.Record.Data.ID)
		}
	}
	lost := 0
	for _, s := range []string{"users", "orders", "events"} {
		if len(got[s]) != f.total {
			t.Errorf("%s: %d records, want %d", s, len(got[s]), f.total)
		}
		for i, id := range got[s] {
			if id != i {
				t.Errorf("%s: record %d has id %d: lost, duplicated or out of order", s, i, id)
				break
			}
		}
		lost += f.total - len(got[s])
	}
	if strings.Contains(out.String(), "client-secret-value") || strings.Contains(out.String(), "tok-abcdef") {
		t.Errorf("a secret reached the output")
	}
	var kinds []string
	total := 0
	for k, n := range f.injected {
		kinds = append(kinds, fmt.Sprintf("%s: %d", k, n))
		total += n
	}
	sort.Strings(kinds)
	retryAfter := 0
	for _, d := range waits {
		if d == 2*time.Second {
			retryAfter++
		}
	}
	if retryAfter == 0 {
		t.Errorf("Retry-After: 2 was never honoured: waits %v", waits)
	}
	t.Logf("faults injected and survived: %d (%s); records lost: %d; secrets in output: 0", total, strings.Join(kinds, ", "), lost)
}
