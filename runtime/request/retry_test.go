package request

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/dlclark/regexp2"

	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/lang/pyregex"
	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/runtime/failure"
)

// script answers the statuses in order, then 200.
func script(t *testing.T, statuses []int, header map[string]string) (*httptest.Server, *int) {
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n++
		if n <= len(statuses) {
			for k, v := range header {
				w.Header().Set(k, v)
			}
			w.WriteHeader(statuses[n-1])
			fmt.Fprintf(w, `{"error":"status %d"}`, statuses[n-1])
			return
		}
		fmt.Fprint(w, `{"ok":true}`)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func testClient() (*Client, *[]time.Duration, *[]string) {
	var waits []time.Duration
	var logs []string
	c := NewClient(func(level, msg string) { logs = append(logs, level+" "+msg) })
	c.Sleep = func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }
	c.Now = func() time.Time { return time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC) }
	return c, &waits, &logs
}

func get(url string) func() (*http.Request, error) {
	return func() (*http.Request, error) { return http.NewRequest("GET", url, nil) }
}

func TestRetryAfterSecondsAndDateAndHeartbeat(t *testing.T) {
	c, waits, logs := testClient()
	c.HeartbeatEvery = 30 * time.Second
	srv, n := script(t, []int{429}, map[string]string{"Retry-After": "75"})
	if _, err := c.Send(context.Background(), get(srv.URL), nil); err != nil || *n != 2 {
		t.Fatalf("err %v after %d requests", err, *n)
	}
	if fmt.Sprint(*waits) != "[30s 30s 15s]" {
		t.Errorf("waits %v, want 75s in heartbeat steps", *waits)
	}
	if len(*logs) != 3 || !strings.Contains((*logs)[0], "HTTP 429") || !strings.Contains((*logs)[1], "Still waiting") {
		t.Errorf("logs %v", *logs)
	}
	c, waits, _ = testClient()
	srv, _ = script(t, []int{503}, map[string]string{"Retry-After": "Mon, 01 Jan 2024 00:00:05 GMT"})
	if _, err := c.Send(context.Background(), get(srv.URL), nil); err != nil || fmt.Sprint(*waits) != "[5s]" {
		t.Errorf("HTTP-date Retry-After: err %v waits %v", err, *waits)
	}
}

func TestGivesUpAfterMaxRetriesAsTransient(t *testing.T) {
	c, waits, _ := testClient()
	c.MaxRetries = 3
	srv, n := script(t, []int{500, 502, 503, 500, 500}, nil)
	_, err := c.Send(context.Background(), get(srv.URL), nil)
	e, ok := err.(*failure.Error)
	if !ok || e.Failure != "transient_error" || *n != 4 || !strings.Contains(e.Message, "gave up after 4 attempts") || len(*waits) != 3 {
		t.Fatalf("err %v, %d requests, waits %v", err, *n, *waits)
	}
	c, _, _ = testClient()
	c.MaxRetries = 0
	srv, n = script(t, []int{500}, nil)
	if _, err = c.Send(context.Background(), get(srv.URL), nil); err == nil || *n != 1 || !strings.HasSuffix(err.Error(), "(gave up after 1 attempt)") {
		t.Errorf("no retries: err %v, %d requests", err, *n)
	}
	if fmt.Sprint(*waits) != "[1s 2s 4s]" {
		t.Errorf("waits %v, want 1, 2, 4 s as the reference's default backoff", *waits)
	}
}

func TestManifestErrorHandler(t *testing.T) {
	tpl := func(s string) *interp.Template { return interp.MustCompile(s) }
	two := 2
	handler := &manifest.ErrorHandler{Handlers: []*manifest.ErrorHandler{
		{Filters: []manifest.ResponseFilter{
			{Action: "IGNORE", HTTPCodes: []int{404}},
			{Action: "FAIL", MessageContains: "quota", ErrorMessage: tpl("Quota exhausted: {{ response.error }}"), FailureType: "config_error"},
			{Action: "RETRY", Predicate: tpl("{{ response.error == 'busy' }}")},
		}},
		{MaxRetries: interp.Constant(int64(two), ""), Backoff: []manifest.Backoff{{Type: "WaitTimeFromHeader", Header: interp.Constant("X-Wait", ""), Regex: mustRegex(t, "([0-9.]+)s")}}},
	}}
	h, err := NewPolicy(handler, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, _, _ := testClient()
	srv, n := script(t, []int{404}, nil)
	resp, err := c.Send(context.Background(), get(srv.URL), h)
	if err != nil || resp.Status != 404 || !resp.Ignored || *n != 1 {
		t.Errorf("IGNORE: %v %v %d", resp, err, *n)
	}
	quota := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(400)
		fmt.Fprint(w, `{"error":"daily quota reached"}`)
	}))
	defer quota.Close()
	_, err = c.Send(context.Background(), get(quota.URL), h)
	if e, ok := err.(*failure.Error); !ok || e.Message != "Quota exhausted: daily quota reached" || e.Failure != "config_error" {
		t.Errorf("FAIL with message: %v", err)
	}
	c, waits, _ := testClient()
	busy := 0
	srvBusy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		busy++
		w.Header().Set("X-Wait", "wait 1.5s")
		if busy < 3 {
			w.WriteHeader(200)
			fmt.Fprint(w, `{"error":"busy"}`)
			return
		}
		fmt.Fprint(w, `{"ok":1}`)
	}))
	defer srvBusy.Close()
	if _, err := c.Send(context.Background(), get(srvBusy.URL), h); err != nil || busy != 3 || fmt.Sprint(*waits) != "[1.5s 1.5s]" {
		t.Errorf("predicate RETRY with WaitTimeFromHeader: err %v, %d requests, waits %v", err, busy, *waits)
	}
}

func TestOversizedBodyFailsWithoutRetry(t *testing.T) {
	c, _, _ := testClient()
	c.MaxBody = 1000
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n++
		w.Write([]byte(strings.Repeat("x", 5000)))
	}))
	defer srv.Close()
	_, err := c.Send(context.Background(), get(srv.URL+"/big"), nil)
	if err == nil || !strings.Contains(err.Error(), "larger than 1000 bytes") || n != 1 {
		t.Fatalf("err %v after %d requests", err, n)
	}
}

func mustRegex(t *testing.T, pattern string) *regexp2.Regexp {
	t.Helper()
	re, err := pyregex.Compile(pattern)
	if err != nil {
		t.Fatal(err)
	}
	return re
}
