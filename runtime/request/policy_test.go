package request

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/runtime/failure"
)

// handlerOf loads a manifest whose requester has the given error handler.
func handlerOf(t *testing.T, errorHandler string) *manifest.ErrorHandler {
	t.Helper()
	raw, err := manifest.Parse([]byte(`version: 6.0.0
check: {stream_names: [s]}
streams:
  - name: s
    retriever:
      requester:
        url_base: https://a
        error_handler: ` + errorHandler + `
      record_selector: {extractor: {field_path: []}}
`))
	if err != nil {
		t.Fatal(err)
	}
	src, err := manifest.Load(raw)
	if err != nil {
		t.Fatal(err)
	}
	return src.Streams[0].Retriever.Requester.ErrorHandler
}

// rateLimited answers 429 with the header, then 200.
func rateLimited(t *testing.T, header, value string) *httptest.Server {
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n++
		if n == 1 {
			w.Header().Set(header, value)
			w.WriteHeader(429)
			return
		}
		fmt.Fprint(w, `{}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestWaitTimeFromHeaderWithPythonRegex(t *testing.T) {
	h := handlerOf(t, `{type: DefaultErrorHandler, backoff_strategies: [{type: WaitTimeFromHeader, header: X-Retry, regex: '(?<=retry=)(?P<secs>[\d.]+)'}]}`)
	p, err := NewPolicy(h, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, waits, _ := testClient()
	if _, err := c.Send(context.Background(), get(rateLimited(t, "X-Retry", "after retry=2.5 s").URL), p); err != nil || fmt.Sprint(*waits) != "[2.5s]" {
		t.Fatalf("err %v, waits %v", err, *waits)
	}
}

func TestMaxWaitingTimeStopsTheStream(t *testing.T) {
	h := handlerOf(t, `{type: DefaultErrorHandler, backoff_strategies: [{type: WaitTimeFromHeader, header: Retry-After, max_waiting_time_in_seconds: 600}]}`)
	p, _ := NewPolicy(h, nil, nil)
	c, waits, _ := testClient()
	_, err := c.Send(context.Background(), get(rateLimited(t, "Retry-After", "3600").URL), p)
	want := "the API asks to wait 3600 s before retrying, more than streams[0].retriever.requester.error_handler.backoff_strategies[0].max_waiting_time_in_seconds (600 s); stopping the stream"
	if f := failure.As(err); f == nil || f.Message != want || f.Failure != "transient_error" || len(*waits) != 0 {
		t.Fatalf("err %v, waits %v", err, *waits)
	}

	h = handlerOf(t, `{type: DefaultErrorHandler, backoff_strategies: [{type: WaitUntilTimeFromHeader, header: X-Reset, min_wait: 2, max_waiting_time_in_seconds: "{{ config['max_wait'] }}"}]}`)
	p, err = NewPolicy(h, map[string]any{"max_wait": 60}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, waits, _ = testClient() // now is 2024-01-01T00:00:00Z
	reset := time.Date(2024, 1, 1, 0, 0, 30, 0, time.UTC).Unix()
	if _, err := c.Send(context.Background(), get(rateLimited(t, "X-Reset", fmt.Sprint(reset)).URL), p); err != nil || fmt.Sprint(*waits) != "[30s]" {
		t.Fatalf("wait until: err %v, waits %v", err, *waits)
	}
	c, waits, _ = testClient()
	_, err = c.Send(context.Background(), get(rateLimited(t, "X-Reset", fmt.Sprint(reset+3600)).URL), p)
	if err == nil || !strings.HasPrefix(err.Error(), "the API asks to wait 3630 s before retrying") || len(*waits) != 0 {
		t.Fatalf("wait until past the max: err %v, waits %v", err, *waits)
	}
}

func TestRegexFromTheConfigIsCompiledWhenTheStreamStarts(t *testing.T) {
	h := handlerOf(t, `{type: DefaultErrorHandler, backoff_strategies: [{type: WaitTimeFromHeader, header: X-Retry, regex: "{{ config['pattern'] }}"}]}`)
	if _, err := NewPolicy(h, map[string]any{"pattern": `(\d+`}, nil); err == nil ||
		!strings.HasPrefix(err.Error(), `streams[0].retriever.requester.error_handler.backoff_strategies[0].regex: "(\\d+" is not a regular expression`) || failure.Type(err) != "config_error" {
		t.Fatalf("err %v", err)
	}
	p, err := NewPolicy(h, map[string]any{"pattern": `wait=(\d+)`}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, waits, _ := testClient()
	if _, err := c.Send(context.Background(), get(rateLimited(t, "X-Retry", "wait=7").URL), p); err != nil || fmt.Sprint(*waits) != "[7s]" {
		t.Fatalf("err %v, waits %v", err, *waits)
	}
}
