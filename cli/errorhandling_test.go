package cli

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airbyte-go/source-declarative/runtime"
)

// fakeClock makes the runs of a test wait on a clock that starts at
// 2023-11-14T22:13:20Z (epoch 1700000000) and that each wait moves on, and
// records the waits between retries.
func fakeClock(t *testing.T) *[]time.Duration {
	t.Helper()
	var waits []time.Duration
	prepareRunner = func(r *runtime.Runner) {
		now := time.Unix(1700000000, 0)
		r.Client.Now = func() time.Time { return now }
		r.Client.HeartbeatEvery = 0
		r.Client.Sleep = func(_ context.Context, d time.Duration) error {
			waits = append(waits, d)
			now = now.Add(d)
			return nil
		}
	}
	t.Cleanup(func() { prepareRunner = nil })
	return &waits
}

// repeat is n times the same request line.
func repeat(line string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = line
	}
	return out
}

// streamError checks that a read failed on stream s alone with one TRACE
// error of that failure type, message and internal message (none when not
// given), then the sync's summary.
func streamError(t *testing.T, res result, failureType, message string, internal ...string) {
	t.Helper()
	errs := res.errors()
	if res.code != 1 || len(errs) != 2 {
		t.Fatalf("exit %d, errors %v\n%s", res.code, errs, res.stdout)
	}
	want := map[string]any{"failure_type": failureType, "message": message, "stream_descriptor": map[string]any{"name": "s"}}
	if len(internal) > 0 {
		want["internal_message"] = internal[0]
	}
	if fmt.Sprint(errs[0]) != fmt.Sprint(want) {
		t.Errorf("error:\n got %v\nwant %v", errs[0], want)
	}
	if fmt.Sprint(errs[1]) != fmt.Sprint(map[string]any{"failure_type": "config_error", "message": "During the sync, the following streams did not sync successfully: s"}) {
		t.Errorf("summary %v", errs[1])
	}
	var statuses []string
	for _, st := range res.statuses("s") {
		if st != "RUNNING (RATE_LIMITED)" {
			statuses = append(statuses, st)
		}
	}
	equalLists(t, "statuses", statuses, []string{"STARTED", "RUNNING", "INCOMPLETE"})
	for _, line := range strings.Split(strings.TrimSpace(res.stdout), "\n") {
		if strings.Contains(line, "\n") {
			t.Errorf("a message on two lines: %q", line)
		}
	}
}

// rateLimitedLine is the stream status the reference prints for each
// rate-limited answer.
const rateLimitedLine = `"stream_status":{"stream_descriptor":{"name":"s"},"status":"RUNNING","reasons":[{"type":"RATE_LIMITED"}]}}}`

// Without an error handler a status is what the reference's default error
// mapping says: 400, 404 and 405 fail as system errors, 401 and 403 as
// config errors, at once; 408, 429 and 500, 502, 503, 504 are retried as
// transient errors, and any other status of 400 or more is retried and ends
// as a system error. max_retries is 5 (6 requests), the waits 1, 2, 4, 8, 16 s.
func TestDefaultErrorMappingPerStatus(t *testing.T) {
	for _, tc := range []struct {
		status   int
		requests int
		failure  string
	}{
		{400, 1, "system_error"}, {401, 1, "config_error"}, {403, 1, "config_error"}, {404, 1, "system_error"},
		{405, 1, "system_error"}, {408, 6, "transient_error"}, {418, 6, "system_error"}, {422, 6, "system_error"},
		{429, 6, "transient_error"}, {500, 6, "transient_error"}, {501, 6, "system_error"}, {503, 6, "transient_error"},
	} {
		t.Run(fmt.Sprint(tc.status), func(t *testing.T) {
			waits := fakeClock(t)
			a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
				w.WriteHeader(tc.status)
				fmt.Fprint(w, `{"error":"nope"}`)
			})
			res := newConnector(t, stream("s", "url_base: "+a.URL+"\npath: /s", "[data]", ""), nil, "s").read(t)
			equalLists(t, "requests", a.lines(), repeat("GET /s", tc.requests))
			cause := fmt.Sprintf(`HTTP %d %s from GET %s/s: {"error":"nope"}`, tc.status, http.StatusText(tc.status), a.URL)
			if tc.requests == 1 {
				streamError(t, res, tc.failure, "stream s: "+cause)
				if len(*waits) != 0 || len(res.logs("WARN")) != 0 {
					t.Errorf("waits %v, warnings %q", *waits, res.logs("WARN"))
				}
				return
			}
			streamError(t, res, tc.failure, "stream s: "+cause+" (gave up after 6 attempts)")
			if fmt.Sprint(*waits) != "[1s 2s 4s 8s 16s]" {
				t.Errorf("waits %v", *waits)
			}
			var want []string
			for i, w := range []string{"1s", "2s", "4s", "8s", "16s"} {
				want = append(want, fmt.Sprintf("%s; retrying in %s (attempt %d of 6)", cause, w, i+2))
			}
			equalLists(t, "retry warnings", res.logs("WARN"), want)
			if n := strings.Count(res.stdout, rateLimitedLine); (tc.status == 429) != (n == 6) || (tc.status != 429 && n != 0) {
				t.Errorf("%d rate-limited statuses", n)
			}
		})
	}
}

// A connection refused is retried as a transient error.
func TestNetworkErrorIsRetriedAsTransient(t *testing.T) {
	waits := fakeClock(t)
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {})
	url := a.URL
	a.Close()
	res := newConnector(t, stream("s", "url_base: "+url+"\npath: /s", "[data]", ""), nil, "s").read(t)
	errs := res.errors()
	if len(errs) != 2 || errs[0]["failure_type"] != "transient_error" || !strings.HasPrefix(errs[0]["message"].(string), "stream s: GET "+url+"/s failed: ") ||
		!strings.HasSuffix(errs[0]["message"].(string), "connection refused (gave up after 6 attempts)") || res.code != 1 {
		t.Fatalf("exit %d, errors %v", res.code, errs)
	}
	if fmt.Sprint(*waits) != "[1s 2s 4s 8s 16s]" {
		t.Errorf("waits %v", *waits)
	}
}

// pagedFilters is a stream of pages 1, 2... (one record a page) whose
// requester has the error handler given.
func pagedFilters(url, handler string) string {
	return stream("s", "url_base: "+url+"\npath: /s\nerror_handler:\n"+indent(handler, 2), "[data]", `paginator:
  type: DefaultPaginator
  pagination_strategy: {type: PageIncrement, page_size: 1, start_from_page: 1}
  page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}`)
}

// A filter's failure type, when it sets none, is the default mapping's for
// the status (a FAIL of a 200 or a RETRY of a 404 end as system errors, a
// FAIL of a 401 as a config error); its error_message is the message.
func TestResponseFilterFailureTypes(t *testing.T) {
	for _, tc := range []struct {
		name, handler string
		status        int
		requests      int
		failure, msg  string
		internal      string // with URL for the API's
	}{
		{"FAIL of a 200", `{type: DefaultErrorHandler, response_filters: [{type: HttpResponseFilter, action: FAIL, predicate: "{{ response.error }}", error_message: "API said {{ response.error }} ({{ headers['X-Code'] }})"}]}`,
			200, 1, "system_error", "stream s: API said quota (Q1)", "HTTP 200 OK from GET URL/s?page=1: {\"error\":\"quota\",\"data\":[{\"id\":1}]}"},
		{"FAIL of a 401", `{type: DefaultErrorHandler, response_filters: [{type: HttpResponseFilter, action: FAIL, http_codes: [401], error_message: "wrong key for {{ config['account'] }}"}]}`,
			401, 1, "config_error", "stream s: wrong key for acme", "HTTP 401 Unauthorized from GET URL/s?page=1: {\"error\":\"quota\",\"data\":[{\"id\":1}]}"},
		{"FAIL with its failure type", `{type: DefaultErrorHandler, response_filters: [{type: HttpResponseFilter, action: FAIL, http_codes: [404], failure_type: transient_error, error_message: "not yet"}]}`,
			404, 1, "transient_error", "stream s: not yet", "HTTP 404 Not Found from GET URL/s?page=1: {\"error\":\"quota\",\"data\":[{\"id\":1}]}"},
		{"RETRY of a 404", `{type: DefaultErrorHandler, max_retries: 2, backoff_strategies: [{type: ConstantBackoffStrategy, backoff_time_in_seconds: 0.5}], response_filters: [{type: HttpResponseFilter, action: RETRY, http_codes: [404]}]}`,
			404, 3, "system_error", "stream s: HTTP 404 Not Found from GET URL/s?page=1: {\"error\":\"quota\",\"data\":[{\"id\":1}]} (gave up after 3 attempts)", ""},
		{"RETRY of a 200 by a header", `{type: DefaultErrorHandler, max_retries: 1, response_filters: [{type: HttpResponseFilter, action: RETRY, predicate: "{{ headers['X-Code'] == 'Q1' }}"}]}`,
			200, 2, "system_error", "stream s: HTTP 200 OK from GET URL/s?page=1: {\"error\":\"quota\",\"data\":[{\"id\":1}]} (gave up after 2 attempts)", ""},
		{"RATE_LIMITED of a 500", `{type: DefaultErrorHandler, max_retries: 1, response_filters: [{type: HttpResponseFilter, action: RATE_LIMITED, http_codes: [500], error_message: "slow down"}]}`,
			500, 2, "transient_error", "stream s: slow down (gave up after 2 attempts)", "HTTP 500 Internal Server Error from GET URL/s?page=1: {\"error\":\"quota\",\"data\":[{\"id\":1}]}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fakeClock(t)
			a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
				w.Header().Set("X-Code", "Q1")
				w.WriteHeader(tc.status)
				fmt.Fprint(w, `{"error":"quota","data":[{"id":1}]}`)
			})
			res := newConnector(t, pagedFilters(a.URL, tc.handler), map[string]any{"account": "acme"}, "s").read(t)
			equalLists(t, "requests", a.lines(), repeat("GET /s?page=1", tc.requests))
			var internal []string
			if tc.internal != "" {
				internal = append(internal, strings.ReplaceAll(tc.internal, "URL", a.URL))
			}
			streamError(t, res, tc.failure, strings.ReplaceAll(tc.msg, "URL", a.URL), internal...)
			if len(res.records("s")) != 0 {
				t.Errorf("records %v", res.records("s"))
			}
		})
	}
}

// error_message_contains matches the response's error message (its
// "message", "error", "errors"... as the reference reads it), not any text
// of the body: a page whose records hold the text is read as usual.
func TestErrorMessageContainsReadsTheErrorMessage(t *testing.T) {
	fakeClock(t)
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		switch r.URL.Query().Get("page") {
		case "1":
			fmt.Fprint(w, `{"data":[{"id":1,"note":"daily limit reached"}]}`)
		case "2":
			w.WriteHeader(400)
			fmt.Fprint(w, `{"errors":[{"code":7,"message":"daily limit reached"}],"data":[{"id":2}]}`)
		default:
			fmt.Fprint(w, `{"data":[{"id":3}]}`)
		}
	})
	h := `{type: DefaultErrorHandler, response_filters: [{type: HttpResponseFilter, action: IGNORE, error_message_contains: "limit reached", error_message: "over the limit"}]}`
	res := newConnector(t, pagedFilters(a.URL, h), nil, "s").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{"GET /s?page=1", "GET /s?page=2"})
	equalLists(t, "records", res.records("s"), []string{`{"id":1,"note":"daily limit reached"}`})
	equalLists(t, "warnings", res.logs("WARN"), []string{"Ignoring HTTP 400 from GET " + a.URL + "/s?page=2: over the limit"})
	equalLists(t, "statuses", res.statuses("s"), []string{"STARTED", "RUNNING", "COMPLETE"})
}

// A predicate sees the response, its headers, the filter's parameters and a
// config that is None, as Airbyte's HttpResponseFilter evaluates it
// (checked with refcdk7), and its error_message the parameters and the
// config; config and parameters were undeclared in a predicate here, and the
// stream failed where Airbyte's runs.
func TestResponseFilterPredicateVariables(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		switch r.URL.Query().Get("page") {
		case "1":
			fmt.Fprint(w, `{"data":[{"id":1}]}`)
		default:
			w.WriteHeader(404)
			fmt.Fprint(w, `{"data":[{"id":2}],"warning":"partial"}`)
		}
	})
	h := `{type: DefaultErrorHandler, response_filters: [{type: HttpResponseFilter, action: IGNORE, $parameters: {flag: partial},
  predicate: "{{ response.warning == parameters.flag and config is none }}", error_message: "{{ parameters.flag }} answer, {{ config.flag }}"}]}`
	res := newConnector(t, pagedFilters(a.URL, h), map[string]any{"flag": "x"}, "s").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{"GET /s?page=1", "GET /s?page=2"})
	equalLists(t, "records", res.records("s"), []string{`{"id":1}`})
	equalLists(t, "warnings", res.logs("WARN"), []string{"Ignoring HTTP 404 from GET " + a.URL + "/s?page=2: partial answer, x"})
	equalLists(t, "statuses", res.statuses("s"), []string{"STARTED", "RUNNING", "COMPLETE"})
}

// Filters are tried in order, the first match wins; a response no filter
// matches falls back to the default mapping (a 401 fails at once).
func TestFiltersInOrderThenDefaultMapping(t *testing.T) {
	fakeClock(t)
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		switch r.URL.Query().Get("page") {
		case "1":
			w.WriteHeader(404)
			fmt.Fprint(w, `{"message":"gone"}`)
		default:
			w.WriteHeader(401)
			fmt.Fprint(w, `{"message":"who are you"}`)
		}
	})
	h := `{type: DefaultErrorHandler, response_filters: [
  {type: HttpResponseFilter, action: SUCCESS, http_codes: [404]},
  {type: HttpResponseFilter, action: FAIL, http_codes: [404], error_message: "never"},
  {type: HttpResponseFilter, action: RETRY, http_codes: [409]}]}`
	res := newConnector(t, pagedFilters(a.URL, h), nil, "s").read(t)
	// A SUCCESS of a 404 gives no records and ends the pages, as the reference's retriever.
	equalLists(t, "requests", a.lines(), []string{"GET /s?page=1"})
	if res.code != 0 || len(res.records("s")) != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}

	h = `{type: DefaultErrorHandler, response_filters: [{type: HttpResponseFilter, action: IGNORE, http_codes: [404]}]}`
	b := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		w.WriteHeader(401)
		fmt.Fprint(w, `{"message":"who are you"}`)
	})
	res = newConnector(t, pagedFilters(b.URL, h), nil, "s").read(t)
	equalLists(t, "requests", b.lines(), []string{"GET /s?page=1"})
	streamError(t, res, "config_error", "stream s: HTTP 401 Unauthorized from GET "+b.URL+`/s?page=1: {"message":"who are you"}`)
}

// A CompositeErrorHandler retries as many times as its first handler says
// (5 when it says nothing), and waits by the first strategy of any of its
// handlers that gives a wait, as the reference.
func TestCompositeErrorHandlerRetriesAndBackoff(t *testing.T) {
	waits := fakeClock(t)
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		w.WriteHeader(503)
		fmt.Fprint(w, `{}`)
	})
	h := `type: CompositeErrorHandler
error_handlers:
  - type: DefaultErrorHandler
    backoff_strategies: [{type: WaitTimeFromHeader, header: X-Wait}]
    response_filters: [{type: HttpResponseFilter, action: RATE_LIMITED, http_codes: [429]}]
  - type: DefaultErrorHandler
    max_retries: 1
    backoff_strategies: [{type: ConstantBackoffStrategy, backoff_time_in_seconds: 3}]
    response_filters: [{type: HttpResponseFilter, action: FAIL, http_codes: [400]}]`
	res := newConnector(t, pagedFilters(a.URL, h), nil, "s").read(t)
	equalLists(t, "requests", a.lines(), repeat("GET /s?page=1", 6))
	streamError(t, res, "transient_error", "stream s: HTTP 503 Service Unavailable from GET "+a.URL+"/s?page=1: {} (gave up after 6 attempts)")
	if fmt.Sprint(*waits) != "[3s 3s 3s 3s 3s]" {
		t.Errorf("waits %v", *waits)
	}
}

// ExponentialBackoffStrategy waits factor×2, ×4, ×8...: the reference
// counts attempts from 1.
func TestExponentialBackoffCountsAttemptsFromOne(t *testing.T) {
	waits := fakeClock(t)
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		if len(*waits) < 3 {
			w.WriteHeader(502)
			fmt.Fprint(w, `{}`)
			return
		}
		fmt.Fprint(w, `{"data":[]}`)
	})
	h := `{type: DefaultErrorHandler, backoff_strategies: [{type: ExponentialBackoffStrategy, factor: 1.5}]}`
	res := newConnector(t, pagedFilters(a.URL, h), nil, "s").read(t)
	if res.code != 0 || fmt.Sprint(*waits) != "[3s 6s 12s]" {
		t.Fatalf("exit %d, waits %v: %s", res.code, *waits, res.stdout)
	}
	equalLists(t, "requests", a.lines(), repeat("GET /s?page=1", 4))
}

// No retry starts once ten minutes have passed since a request's first
// attempt (the reference's max_time); a manifest's wait is waited whole.
func TestRetriesStopAfterTenMinutes(t *testing.T) {
	waits := fakeClock(t)
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		w.Header().Set("X-Wait", "420")
		w.WriteHeader(429)
		fmt.Fprint(w, `{}`)
	})
	h := `{type: DefaultErrorHandler, max_retries: 10, backoff_strategies: [{type: WaitTimeFromHeader, header: X-Wait}]}`
	res := newConnector(t, pagedFilters(a.URL, h), nil, "s").read(t)
	equalLists(t, "requests", a.lines(), repeat("GET /s?page=1", 3))
	streamError(t, res, "transient_error", "stream s: HTTP 429 Too Many Requests from GET "+a.URL+"/s?page=1: {} (gave up after 3 attempts in 14m0s)")
	if fmt.Sprint(*waits) != "[7m0s 7m0s]" {
		t.Errorf("waits %v", *waits)
	}
}

// An OAuth token request has no error handler: as the reference's refresh,
// a 5xx is retried and any other error fails at once.
func TestOAuthTokenEndpointRetriesOnlyServerErrors(t *testing.T) {
	waits := fakeClock(t)
	tokenStatus := []int{503, 200}
	handle := func(w http.ResponseWriter, r *http.Request, _ string) {
		if r.URL.Path == "/oauth/token" {
			st := tokenStatus[0]
			tokenStatus = tokenStatus[1:]
			w.WriteHeader(st)
			if st == 200 {
				fmt.Fprint(w, `{"access_token":"tok-1","expires_in":3600}`)
				return
			}
			fmt.Fprint(w, `{"error":"busy"}`)
			return
		}
		fmt.Fprint(w, `{"data":[{"id":1}]}`)
	}
	a := newAPI(t, handle)
	config := map[string]any{"client_id": "cid", "client_secret": "csecret", "client_refresh_token": "rt0"}
	res := newConnector(t, oauthManifest(a.URL, refreshLine, ""), config, "s").read(t)
	if res.code != 0 || fmt.Sprint(*waits) != "[1s]" {
		t.Fatalf("exit %d, waits %v: %s", res.code, *waits, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{"POST /oauth/token", "POST /oauth/token", "GET /s"})

	tokenStatus = []int{418}
	b := newAPI(t, handle)
	res = newConnector(t, oauthManifest(b.URL, refreshLine, ""), config, "s").read(t)
	equalLists(t, "requests", b.lines(), []string{"POST /oauth/token"})
	if res.code != 1 || len(res.errors()) != 2 || strings.Contains(res.stdout, "csecret") || strings.Contains(res.stdout, "rt0") {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
}

// The login request of a SessionTokenAuthenticator runs its own error
// handler (the seed's section 7): here a 503 is retried after 2 s and a
// "locked" answer fails as a config error with the filter's message.
func TestSessionLoginErrorHandler(t *testing.T) {
	waits := fakeClock(t)
	var logins []string
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, body string) {
		if r.URL.Path == "/login" {
			logins = append(logins, body)
			switch len(logins) {
			case 1:
				w.WriteHeader(503)
				fmt.Fprint(w, `{"message":"warming up"}`)
			case 2:
				fmt.Fprint(w, `{"token":"sess-1"}`)
			default:
				w.WriteHeader(423)
				fmt.Fprint(w, `{"message":"account locked"}`)
			}
			return
		}
		fmt.Fprint(w, `{"data":[{"id":1}]}`)
	})
	m := strings.Replace(sessionManifest(a.URL), "authenticator: {type: NoAuth}", `authenticator: {type: NoAuth}
            error_handler:
              type: DefaultErrorHandler
              max_retries: 2
              backoff_strategies: [{type: ConstantBackoffStrategy, backoff_time_in_seconds: 2}]
              response_filters:
                - {type: HttpResponseFilter, action: FAIL, http_codes: [423], failure_type: config_error, error_message: "Login refused: {{ response.message }}"}`, 1)
	config := map[string]any{"username": "me", "password": "pw-secret"}
	c := newConnector(t, m, config, "s")
	res := c.read(t)
	if res.code != 0 || fmt.Sprint(*waits) != "[2s]" {
		t.Fatalf("exit %d, waits %v: %s", res.code, *waits, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{"POST /login", "POST /login", "GET /s"})
	equalLists(t, "login bodies", logins, repeat(`{"password":"pw-secret","username":"me"}`, 2))
	if got := a.requests()[2].Header.Get("Authorization"); got != "Bearer sess-1" {
		t.Errorf("Authorization %q", got)
	}

	res = c.read(t)
	streamError(t, res, "config_error", "stream s: session token login failed: Login refused: account locked",
		"HTTP 423 Locked from POST "+a.URL+`/login: {"message":"account locked"}`)
	chk := c.check(t)
	st := chk.ofType("CONNECTION_STATUS")
	if chk.code != 0 || len(st) != 1 || fmt.Sprint(st[0]["connectionStatus"]) != "map[message:stream s: session token login failed: Login refused: account locked status:FAILED]" {
		t.Fatalf("check: exit %d: %s", chk.code, chk.stdout)
	}
	if strings.Contains(res.stdout+chk.stdout, "pw-secret") {
		t.Errorf("the password leaked")
	}
}

// check runs the stream's error handler too: a 429 is retried (without a
// stream status: there is no stream read), then the check fails (exit 0)
// naming the cause.
func TestCheckRetriesThenFails(t *testing.T) {
	waits := fakeClock(t)
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		w.WriteHeader(429)
		fmt.Fprint(w, `{"message":"down"}`)
	})
	c := newConnector(t, stream("s", "url_base: "+a.URL+"\npath: /s", "[data]", ""), nil, "s")
	chk := c.check(t)
	equalLists(t, "requests", a.lines(), repeat("GET /s", 6))
	st := chk.ofType("CONNECTION_STATUS")
	want := `map[message:stream s: HTTP 429 Too Many Requests from GET ` + a.URL + `/s: {"message":"down"} (gave up after 6 attempts) status:FAILED]`
	if chk.code != 0 || len(st) != 1 || fmt.Sprint(st[0]["connectionStatus"]) != want || fmt.Sprint(*waits) != "[1s 2s 4s 8s 16s]" {
		t.Fatalf("check: exit %d, waits %v: %s", chk.code, *waits, chk.stdout)
	}
	if len(chk.ofType("TRACE")) != 0 || len(chk.logs("WARN")) != 5 {
		t.Errorf("check prints no TRACE, and one WARN a retry: %s", chk.stdout)
	}
}

// A Connector Builder test read sends each request once, as the builder
// does, even when the manifest sets max_retries.
func TestBuilderTestReadDoesNotRetry(t *testing.T) {
	waits := fakeClock(t)
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		w.WriteHeader(503)
		fmt.Fprint(w, `{"message":"down"}`)
	})
	m, _ := yamlToMap(pagedFilters(a.URL, `{type: DefaultErrorHandler, max_retries: 3, backoff_strategies: [{type: ConstantBackoffStrategy, backoff_time_in_seconds: 1}]}`))
	c := newConnector(t, "", map[string]any{"__command": "test_read", "__injected_declarative_manifest": m}, "s")
	res := runCLI(t, "read", "--config", c.config, "--catalog", c.catalog)
	equalLists(t, "requests", a.lines(), []string{"GET /s?page=1"})
	if len(*waits) != 0 || res.code != 0 || len(res.ofType("RECORD")) != 1 {
		t.Fatalf("exit %d, waits %v: %s", res.code, *waits, res.stdout)
	}
	data := res.ofType("RECORD")[0]["record"].(map[string]any)["data"].(map[string]any)
	msg := fmt.Sprintf(`stream s: HTTP 503 Service Unavailable from GET %s/s?page=1: {"message":"down"} (gave up after 1 attempt)`, a.URL)
	want := fmt.Sprintf(`[map[internal_message:%s level:ERROR message:%s stacktrace:<nil>]]`, msg, msg)
	if fmt.Sprint(data["logs"]) != want {
		t.Errorf("logs\n got %v\nwant %s", data["logs"], want)
	}
}

// Each rate-limited answer (a 429, or a RATE_LIMITED filter) prints a stream
// status RUNNING with the reason RATE_LIMITED before the wait, as the
// reference does; a RETRY does not.
func TestRateLimitedStreamStatus(t *testing.T) {
	waits := fakeClock(t)
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		switch len(*waits) {
		case 0:
			w.WriteHeader(429)
			fmt.Fprint(w, `{}`)
		case 1:
			w.WriteHeader(200)
			fmt.Fprint(w, `{"status":"throttled"}`)
		case 2:
			w.WriteHeader(500)
			fmt.Fprint(w, `{}`)
		default:
			if r.URL.Query().Get("page") == "1" {
				fmt.Fprint(w, `{"data":[{"id":1}]}`)
				return
			}
			fmt.Fprint(w, `{"data":[]}`)
		}
	})
	h := `{type: DefaultErrorHandler, response_filters: [{type: HttpResponseFilter, action: RATE_LIMITED, predicate: "{{ response.status == 'throttled' }}"}]}`
	res := newConnector(t, pagedFilters(a.URL, h), nil, "s").read(t)
	if res.code != 0 || fmt.Sprint(*waits) != "[1s 2s 4s]" {
		t.Fatalf("exit %d, waits %v: %s", res.code, *waits, res.stdout)
	}
	equalLists(t, "requests", a.lines(), append(repeat("GET /s?page=1", 4), "GET /s?page=2"))
	equalLists(t, "statuses", res.statuses("s"), []string{"STARTED", "RUNNING (RATE_LIMITED)", "RUNNING (RATE_LIMITED)", "RUNNING", "COMPLETE"})
	if strings.Count(res.stdout, rateLimitedLine) != 2 {
		t.Errorf("stdout %s", res.stdout)
	}
}

// A login answer that the login requester's error handler ignores gives no
// token: the stream fails saying so, without a data request.
func TestSessionLoginIgnoredFails(t *testing.T) {
	fakeClock(t)
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		if r.URL.Path == "/login" {
			w.WriteHeader(500)
			fmt.Fprint(w, `{"message":"down"}`)
			return
		}
		fmt.Fprint(w, `{"data":[{"id":1}]}`)
	})
	m := strings.Replace(sessionManifest(a.URL), "authenticator: {type: NoAuth}", `authenticator: {type: NoAuth}
            error_handler: {type: DefaultErrorHandler, response_filters: [{type: HttpResponseFilter, action: IGNORE, http_codes: [500]}]}`, 1)
	res := newConnector(t, m, map[string]any{"username": "me", "password": "pw"}, "s").read(t)
	equalLists(t, "requests", a.lines(), []string{"POST /login"})
	streamError(t, res, "system_error", "stream s: session token login failed: the login requester's error handler ignored the answer HTTP 500 from "+a.URL+"/login")
	equalLists(t, "warnings", res.logs("WARN"), []string{"Ignoring HTTP 500 from POST " + a.URL + "/login"})
}

// An API key sent in the query is masked in the retry warnings and in the
// TRACE, in the form it has in the URL too.
func TestRetryMessagesHideTheSecret(t *testing.T) {
	fakeClock(t)
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		w.WriteHeader(502)
		fmt.Fprintf(w, `{"message":"bad gateway for key %s"}`, r.URL.Query().Get("key"))
	})
	m := stream("s", "url_base: "+a.URL+"\npath: /s\nauthenticator: {type: ApiKeyAuthenticator, api_token: \"{{ config['api_key'] }}\", inject_into: {type: RequestOption, inject_into: request_parameter, field_name: key}}\nerror_handler: {type: DefaultErrorHandler, max_retries: 1}", "[data]", "") + `spec:
  type: Spec
  connection_specification:
    type: object
    properties:
      api_key: {type: string, airbyte_secret: true}
`
	res := newConnector(t, m, map[string]any{"api_key": "k+y/s3cret"}, "s").read(t)
	equalLists(t, "requests", a.lines(), repeat("GET /s?key=k%2By%2Fs3cret", 2))
	cause := "HTTP 502 Bad Gateway from GET " + a.URL + `/s?key=****: {"message":"bad gateway for key ****"}`
	streamError(t, res, "transient_error", "stream s: "+cause+" (gave up after 2 attempts)")
	equalLists(t, "warnings", res.logs("WARN"), []string{cause + "; retrying in 1s (attempt 2 of 2)"})
	if strings.Contains(res.stdout, "s3cret") {
		t.Errorf("the key leaked: %s", res.stdout)
	}
}

// max_retries may be a template over the config, as the reference reads it;
// a value that is no number of retries is a config error naming the field.
func TestMaxRetriesFromTheConfig(t *testing.T) {
	waits := fakeClock(t)
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		w.WriteHeader(500)
		fmt.Fprint(w, `{}`)
	})
	m := pagedFilters(a.URL, `{type: DefaultErrorHandler, max_retries: "{{ config['retries'] }}"}`)
	res := newConnector(t, m, map[string]any{"retries": 2}, "s").read(t)
	equalLists(t, "requests", a.lines(), repeat("GET /s?page=1", 3))
	streamError(t, res, "transient_error", "stream s: HTTP 500 Internal Server Error from GET "+a.URL+"/s?page=1: {} (gave up after 3 attempts)")
	if fmt.Sprint(*waits) != "[1s 2s]" {
		t.Errorf("waits %v", *waits)
	}

	b := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {})
	res = newConnector(t, pagedFilters(b.URL, `{type: DefaultErrorHandler, max_retries: "{{ config['retries'] }}"}`), map[string]any{"retries": "many"}, "s").read(t)
	equalLists(t, "requests", b.lines(), nil)
	streamError(t, res, "config_error", `streams[0].retriever.requester.error_handler.max_retries: "many" is not a number of retries`)
}

// Without a backoff strategy a 429's Retry-After is waited (seconds or an
// HTTP date); WaitUntilTimeFromHeader waits until the epoch time its header
// gives, at least min_wait.
func TestRetryAfterAndWaitUntil(t *testing.T) {
	for _, tc := range []struct {
		name, handler, header, value, waits string
	}{
		{"Retry-After seconds", "{type: DefaultErrorHandler}", "Retry-After", "7", "[7s]"},
		{"Retry-After date", "{type: DefaultErrorHandler}", "Retry-After", "Tue, 14 Nov 2023 22:14:00 GMT", "[40s]"},
		{"WaitUntil", "{type: DefaultErrorHandler, backoff_strategies: [{type: WaitUntilTimeFromHeader, header: X-Reset, min_wait: 5}]}", "X-Reset", "1700000030", "[30s]"},
		{"WaitUntil below min_wait", "{type: DefaultErrorHandler, backoff_strategies: [{type: WaitUntilTimeFromHeader, header: X-Reset, min_wait: 5}]}", "X-Reset", "1700000002", "[5s]"},
		{"WaitTimeFromHeader regex", `{type: DefaultErrorHandler, backoff_strategies: [{type: WaitTimeFromHeader, header: X-Wait, regex: "[0-9.]+"}]}`, "X-Wait", "2.5 seconds", "[2.5s]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			waits := fakeClock(t)
			a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
				if len(*waits) == 0 {
					w.Header().Set(tc.header, tc.value)
					w.WriteHeader(429)
					fmt.Fprint(w, `{}`)
					return
				}
				fmt.Fprint(w, `{"data":[]}`)
			})
			res := newConnector(t, pagedFilters(a.URL, tc.handler), nil, "s").read(t)
			equalLists(t, "requests", a.lines(), repeat("GET /s?page=1", 2))
			if res.code != 0 || fmt.Sprint(*waits) != tc.waits {
				t.Fatalf("exit %d, waits %v: %s", res.code, *waits, res.stdout)
			}
		})
	}
}

// A response slower than the client's timeout is retried as a transient
// error (here the timeout is cut to 100 ms).
func TestTimeoutIsRetried(t *testing.T) {
	waits := fakeClock(t)
	fake := prepareRunner
	prepareRunner = func(r *runtime.Runner) {
		fake(r)
		r.Client.HTTP.Timeout = 100 * time.Millisecond
	}
	var n atomic.Int32
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		if n.Add(1) == 1 {
			time.Sleep(300 * time.Millisecond)
		}
		fmt.Fprint(w, `{"data":[{"id":1}]}`)
	})
	res := newConnector(t, stream("s", "url_base: "+a.URL+"\npath: /s", "[data]", ""), nil, "s").read(t)
	equalLists(t, "requests", a.lines(), repeat("GET /s", 2))
	equalLists(t, "records", res.records("s"), []string{`{"id":1}`})
	warn := res.logs("WARN")
	if res.code != 0 || fmt.Sprint(*waits) != "[1s]" || len(warn) != 1 || !strings.HasPrefix(warn[0], "GET "+a.URL+"/s failed: ") ||
		!strings.HasSuffix(warn[0], "(Client.Timeout exceeded while awaiting headers); retrying in 1s (attempt 2 of 6)") {
		t.Fatalf("exit %d, waits %v, warnings %q", res.code, *waits, warn)
	}
}

// A filter without an action never matches, as in Airbyte (the 500 is
// retried by the default mapping), and a WARN names it.
func TestFilterWithoutActionIsWarnedAndInert(t *testing.T) {
	waits := fakeClock(t)
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		if len(*waits) < 2 {
			w.WriteHeader(500)
			fmt.Fprint(w, `{}`)
			return
		}
		fmt.Fprint(w, `{"data":[]}`)
	})
	h := `{type: DefaultErrorHandler, response_filters: [{type: HttpResponseFilter, http_codes: [500], error_message: "server down"}]}`
	res := newConnector(t, pagedFilters(a.URL, h), nil, "s").read(t)
	equalLists(t, "requests", a.lines(), repeat("GET /s?page=1", 3))
	cause := "HTTP 500 Internal Server Error from GET " + a.URL + "/s?page=1: {}"
	equalLists(t, "warnings", res.logs("WARN"), []string{
		"streams[0].retriever.requester.error_handler.response_filters[0].action: is not set: the filter never matches, as in Airbyte; set FAIL, RETRY, IGNORE...",
		cause + "; retrying in 1s (attempt 2 of 6)", cause + "; retrying in 2s (attempt 3 of 6)"})
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
}

// An IGNOREd answer ends its partition's pages with no records; the other
// partitions are read and the stream completes.
func TestIgnoredPartitionDoesNotStopTheStream(t *testing.T) {
	fakeClock(t)
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		if r.URL.Path == "/items/b" {
			w.WriteHeader(404)
			fmt.Fprint(w, `{"message":"no region b"}`)
			return
		}
		fmt.Fprintf(w, `{"data":[{"id":%q}]}`, r.URL.Path)
	})
	m := routed(a.URL, "/items/{{ stream_partition.region }}", "type: ListPartitionRouter\ncursor_field: region\nvalues: [a, b, c]",
		"error_handler: {type: DefaultErrorHandler, response_filters: [{type: HttpResponseFilter, action: IGNORE, http_codes: [404], error_message: \"{{ response.message }}\"}]}", "", 1)
	res := newConnector(t, m, nil, "items").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{"GET /items/a", "GET /items/b", "GET /items/c"})
	equalLists(t, "records", res.records("items"), []string{`{"id":"/items/a"}`, `{"id":"/items/c"}`})
	equalLists(t, "warnings", res.logs("WARN"), []string{"Ignoring HTTP 404 from GET " + a.URL + "/items/b: no region b"})
	equalLists(t, "statuses", res.statuses("items"), []string{"STARTED", "RUNNING", "COMPLETE"})
}

// A legacy session token's login, which no error handler covers, fails at
// once on a 4xx (a 422 is not retried, as the reference's plain request).
func TestLegacySessionLoginClientErrorIsNotRetried(t *testing.T) {
	waits := fakeClock(t)
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		w.WriteHeader(422)
		fmt.Fprint(w, `{"message":"password expired"}`)
	})
	res := newConnector(t, legacySessionManifest(a.URL+"/api/", "session"), map[string]any{"username": "u", "password": "p"}, "s").read(t)
	equalLists(t, "requests", a.lines(), []string{"POST /api/session"})
	if res.code != 1 || len(*waits) != 0 || len(res.errors()) != 2 || res.errors()[0]["failure_type"] != "config_error" {
		t.Fatalf("exit %d, waits %v: %s", res.code, *waits, res.stdout)
	}
}
