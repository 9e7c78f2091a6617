package request

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/runtime/failure"
)

// fakeClock is the budget's time: Sleep records the wait and, when
// advancing, moves the time on.
type fakeClock struct {
	mu        sync.Mutex
	now       time.Time
	advancing bool
	waits     []time.Duration
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.waits = append(c.waits, d)
	if c.advancing {
		c.now = c.now.Add(d)
	}
	return ctx.Err()
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func (c *fakeClock) takeWaits() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := c.waits
	c.waits = nil
	return w
}

var t0 = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// newBudget decodes an api_budget through a whole manifest and gives it a
// fake clock.
func newBudget(t testing.TB, budgetYAML string, config map[string]any) (*Budget, *fakeClock, *[]string) {
	t.Helper()
	raw, err := manifest.Parse([]byte(`version: 6.0.0
check: {stream_names: [s]}
streams: [{type: DeclarativeStream, name: s, retriever: {type: SimpleRetriever, requester: {type: HttpRequester, url_base: "https://api.example.com"}, record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}}}]
api_budget:
` + budgetYAML))
	if err != nil {
		t.Fatal(err)
	}
	src, err := manifest.Load(raw)
	if err != nil {
		t.Fatal(err)
	}
	var logs []string
	var mu sync.Mutex
	b := NewBudget(src.APIBudget, interp.Vars{"config": config}, func(level, msg string) {
		mu.Lock()
		logs = append(logs, level+" "+msg)
		mu.Unlock()
	})
	clk := &fakeClock{now: t0, advancing: true}
	b.Now, b.Sleep, b.HeartbeatEvery = clk.Now, clk.Sleep, 0
	return b, clk, &logs
}

func request(t testing.TB, method, url string, header ...string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Add(header[i], header[i+1])
	}
	return req
}

func acquire(t *testing.T, b *Budget, req *http.Request) {
	t.Helper()
	if err := b.Acquire(context.Background(), req); err != nil {
		t.Fatal(err)
	}
}

// Workers asking at the same moment get successive slots: a shared budget,
// not one per caller.
func TestMovingWindowSpreadsConcurrentCallers(t *testing.T) {
	b, clk, _ := newBudget(t, `  type: HTTPAPIBudget
  policies: [{type: MovingWindowCallRatePolicy, rates: [{limit: 2, interval: PT10S}], matchers: []}]`, nil)
	clk.advancing = false
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			if err := b.Acquire(context.Background(), request(t, "GET", "https://api.example.com/s")); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	waits := clk.takeWaits()
	slices.Sort(waits)
	if fmt.Sprint(waits) != "[10s 10s 20s 20s]" {
		t.Errorf("waits %v: two calls now, two in 10s, two in 20s", waits)
	}
}

func TestMovingWindowWithSeveralRates(t *testing.T) {
	b, clk, logs := newBudget(t, `  type: HTTPAPIBudget
  policies: [{type: MovingWindowCallRatePolicy, rates: [{limit: 3, interval: PT1S}, {limit: "{{ config.per_minute }}", interval: PT1M}], matchers: []}]`,
		map[string]any{"per_minute": int64(5)})
	var at []time.Duration
	for range 7 {
		acquire(t, b, request(t, "GET", "https://api.example.com/s"))
		at = append(at, clk.Now().Sub(t0))
	}
	if fmt.Sprint(at) != "[0s 0s 0s 1s 1s 1m0s 1m0s]" {
		t.Errorf("calls at %v: three per second, five per minute", at)
	}
	want := []string{
		"INFO Waiting 1s for the API budget: api_budget.policies[0] (3 calls per 1s, {{ config.per_minute }} calls per 1m0s)",
		"INFO Waiting 59s for the API budget: api_budget.policies[0] (3 calls per 1s, {{ config.per_minute }} calls per 1m0s)",
	}
	if !slices.Equal(*logs, want) {
		t.Errorf("logs %q", *logs)
	}
}

// The first call opens the fixed window; each later window starts when the
// previous one ends.
func TestFixedWindow(t *testing.T) {
	b, clk, _ := newBudget(t, `  type: HTTPAPIBudget
  policies: [{type: FixedWindowCallRatePolicy, period: PT1M, call_limit: 2, matchers: []}]`, nil)
	clk.advance(5 * time.Minute)
	var at []time.Duration
	for i := range 5 {
		if i == 3 {
			clk.advance(10 * time.Second)
		}
		acquire(t, b, request(t, "GET", "https://api.example.com/s"))
		at = append(at, clk.Now().Sub(t0))
	}
	if fmt.Sprint(at) != "[5m0s 5m0s 6m0s 6m10s 7m0s]" {
		t.Errorf("calls at %v", at)
	}
	clk.advance(10 * time.Minute)
	acquire(t, b, request(t, "GET", "https://api.example.com/s"))
	if w := clk.takeWaits(); fmt.Sprint(w) != "[1m0s 50s]" {
		t.Errorf("waits %v: a window long past is no more", w)
	}
}

// The first policy whose matchers match applies; a policy without matchers
// matches every request; a matcher's weight is what a call costs.
func TestPolicyMatching(t *testing.T) {
	b, _, _ := newBudget(t, `  type: HTTPAPIBudget
  policies:
    - type: UnlimitedCallRatePolicy
      matchers: [{url_path_pattern: "^/v1/sandbox"}, {headers: {x-sandbox: "true"}}]
    - type: FixedWindowCallRatePolicy
      period: PT1H
      call_limit: 100
      matchers:
        - {method: get, url_base: "https://api.example.com/v1/", url_path_pattern: "/users$", params: {active: true}}
        - {method: POST, url_base: "https://api.example.com", weight: 10}
    - type: MovingWindowCallRatePolicy
      rates: [{limit: 10, interval: PT1S}]
      matchers: []`, nil)
	cases := []struct {
		req    *http.Request
		policy string
		weight int
	}{
		{request(t, "GET", "https://api.example.com/v1/sandbox/x"), "api_budget.policies[0]", 1},
		{request(t, "GET", "https://api.example.com/v1/users", "X-Sandbox", "true"), "api_budget.policies[0]", 1},
		{request(t, "GET", "https://api.example.com/v1/users?active=true"), "api_budget.policies[1]", 1},
		{request(t, "GET", "https://api.example.com/v1/users/?page=2&active=false&active=true"), "api_budget.policies[1]", 1},
		{request(t, "GET", "https://api.example.com/v1/users?active=True"), "api_budget.policies[2]", 1},
		{request(t, "GET", "https://api.example.com/v2/users?active=true"), "api_budget.policies[2]", 1},
		{request(t, "GET", "https://api.example.com/v1x/users?active=true"), "api_budget.policies[2]", 1},
		{request(t, "DELETE", "https://api.example.com/v1/users?active=true"), "api_budget.policies[2]", 1},
		{request(t, "POST", "https://api.example.com/anything"), "api_budget.policies[1]", 10},
		{request(t, "POST", "https://api.example.com:8443/anything"), "api_budget.policies[2]", 1},
		{request(t, "POST", "http://api.example.com/anything"), "api_budget.policies[2]", 1},
	}
	for _, tc := range cases {
		p, weight := b.match(tc.req)
		if p == nil || p.spec.Path != tc.policy || weight != tc.weight {
			t.Errorf("%s %s %v: got %v weight %d, want %s weight %d", tc.req.Method, tc.req.URL, tc.req.Header, p, weight, tc.policy, tc.weight)
		}
	}
	b, _, _ = newBudget(t, `  type: HTTPAPIBudget
  policies: [{type: FixedWindowCallRatePolicy, period: PT1H, call_limit: 1, matchers: [{method: GET}]}]`, nil)
	if p, _ := b.match(request(t, "POST", "https://api.example.com/s")); p != nil {
		t.Errorf("a request no policy matches is not limited, got %s", p.spec.Path)
	}
	for range 3 {
		acquire(t, b, request(t, "POST", "https://api.example.com/s"))
	}
}

// A rate-limit status or the remaining-calls header slows every caller of
// the policy; the reset header says until when.
func TestRateLimitResponsesSlowTheSharedBudget(t *testing.T) {
	const moving = `  type: HTTPAPIBudget
  ratelimit_remaining_header: X-Left
  ratelimit_reset_header: X-Reset
  status_codes_for_ratelimit_hit: [429, 420]
  policies: [{type: MovingWindowCallRatePolicy, rates: [{limit: 5, interval: PT10S}, {limit: 100, interval: PT1H}], matchers: []}]`
	req := request(t, "GET", "https://api.example.com/s")
	cases := []struct {
		name   string
		status int
		header http.Header
		waits  string
	}{
		{"a 429 empties the first rate's window", 429, nil, "[10s 10s 10s]"},
		{"so does any listed status", 420, nil, "[10s 10s 10s]"},
		{"a status not listed does nothing", 500, nil, "[]"},
		{"no calls left, reset in 30 s", 200, http.Header{"X-Left": {"0"}, "X-Reset": {"30"}}, "[30s 30s 30s]"},
		{"no calls left, reset at a Unix time", 200, http.Header{"X-Left": {"0"}, "X-Reset": {fmt.Sprint(t0.Add(45 * time.Second).Unix())}}, "[45s 45s 45s]"},
		{"no calls left, reset at a Unix time in ms", 200, http.Header{"X-Left": {"0"}, "X-Reset": {fmt.Sprint(t0.Add(5 * time.Second).UnixMilli())}}, "[5s 5s 5s]"},
		{"two calls left", 200, http.Header{"X-Left": {"2"}}, "[10s]"},
		{"more calls left than we count", 200, http.Header{"X-Left": {"99"}}, "[]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, clk, _ := newBudget(t, moving, nil)
			acquire(t, b, req)
			b.Observe(req, tc.status, tc.header)
			clk.advancing = false
			for range 3 {
				acquire(t, b, request(t, "GET", "https://api.example.com/other"))
			}
			if w := clk.takeWaits(); fmt.Sprint(w) != tc.waits {
				t.Errorf("waits of the next three callers %v, want %s", w, tc.waits)
			}
		})
	}
}

func TestFixedWindowFollowsTheAPI(t *testing.T) {
	b, clk, _ := newBudget(t, `  type: HTTPAPIBudget
  policies: [{type: FixedWindowCallRatePolicy, period: PT1H, call_limit: 100, matchers: []}]`, nil)
	req := request(t, "GET", "https://api.example.com/s")
	acquire(t, b, req)
	b.Observe(req, 200, http.Header{"Ratelimit-Remaining": {"1"}, "Ratelimit-Reset": {"120"}})
	var at []time.Duration
	for range 3 {
		acquire(t, b, req)
		at = append(at, clk.Now().Sub(t0))
	}
	if fmt.Sprint(at) != "[0s 2m0s 2m0s]" {
		t.Errorf("calls at %v: one call left, then a new window when the API says", at)
	}
	clk.advance(time.Minute)
	b.Observe(req, 429, nil)
	acquire(t, b, req)
	if now := clk.Now().Sub(t0); now != 62*time.Minute {
		t.Errorf("after a 429 the next call is at %v, want the window's end (62m)", now)
	}
}

func TestBudgetWaitsAreLoggedAndCancellable(t *testing.T) {
	b, clk, logs := newBudget(t, `  type: HTTPAPIBudget
  policies: [{type: FixedWindowCallRatePolicy, period: PT75S, call_limit: 1, matchers: []}]`, nil)
	b.HeartbeatEvery = 30 * time.Second
	req := request(t, "GET", "https://api.example.com/s")
	acquire(t, b, req)
	acquire(t, b, req)
	if w := clk.takeWaits(); fmt.Sprint(w) != "[30s 30s 15s]" {
		t.Errorf("waits %v", w)
	}
	want := []string{
		"INFO Waiting 1m15s for the API budget: api_budget.policies[0] (1 calls per 1m15s)",
		"INFO Still waiting 45s for the API budget",
		"INFO Still waiting 15s for the API budget",
	}
	if !slices.Equal(*logs, want) {
		t.Errorf("logs %q", *logs)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := b.Acquire(ctx, req)
	if e, ok := err.(*failure.Error); !ok || e.Failure != "transient_error" || e.Message != "waiting for the API budget: context canceled" {
		t.Errorf("cancelled wait: %v", err)
	}
}

func TestBudgetLimitThatDoesNotRender(t *testing.T) {
	b, _, _ := newBudget(t, `  type: HTTPAPIBudget
  policies: [{type: MovingWindowCallRatePolicy, rates: [{limit: "{{ config.limit }}", interval: PT1S}], matchers: []}]`, map[string]any{"limit": "many"})
	err := b.Acquire(context.Background(), request(t, "GET", "https://api.example.com/s"))
	if e, ok := err.(*failure.Error); !ok || e.Failure != "config_error" || e.Message != `api_budget.policies[0].rates[0].limit: must be a positive integer, got "many"` {
		t.Errorf("got %v", err)
	}
	var none *Budget
	if err := none.Acquire(context.Background(), request(t, "GET", "https://api.example.com/s")); err != nil {
		t.Errorf("no budget: %v", err)
	}
	none.Observe(request(t, "GET", "https://api.example.com/s"), 429, nil)
}
