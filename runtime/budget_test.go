package runtime

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The manifest's api_budget holds back the requests of a read: after a 429
// the retry waits for the window the 429 emptied. Time is injected.
func TestAPIBudgetInRead(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.URL.RawQuery)
		if len(got) == 2 {
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		offset, _ := strconv.Atoi(r.URL.Query().Get("offset"))
		if offset < 3 {
			fmt.Fprintf(w, `{"data":[{"id":%d}]}`, offset)
			return
		}
		fmt.Fprint(w, `{"data":[]}`)
	}))
	defer srv.Close()
	manifestYAML := "api_budget:\n  type: HTTPAPIBudget\n  policies:\n    - {type: MovingWindowCallRatePolicy, rates: [{limit: 10, interval: PT1M}], matchers: [{url_base: '" + srv.URL + "', url_path_pattern: '^/s$'}]}\n" +
		oneStream(srv.URL, "          type: NoAuth", "      paginator: {type: DefaultPaginator, pagination_strategy: {type: OffsetIncrement, page_size: 1}, page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: offset}}")
	r, out := loadRunner(t, manifestYAML, map[string]any{})
	clk := &clock{now: time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)}
	var budgetWaits []time.Duration
	b := r.Client.Budget
	b.Now, b.HeartbeatEvery = clk.Now, 0
	b.Sleep = func(_ context.Context, d time.Duration) error {
		budgetWaits = append(budgetWaits, d)
		clk.advance(d)
		return nil
	}
	r.Client.Sleep = func(context.Context, time.Duration) error { return nil }
	readAll(t, r, "s")
	if want := "[offset=0 offset=1 offset=1 offset=2 offset=3]"; fmt.Sprint(got) != want {
		t.Errorf("requests %v, want %s", got, want)
	}
	if fmt.Sprint(budgetWaits) != "[1m0s]" {
		t.Errorf("budget waits %v, want the retry after the 429 to wait out the minute", budgetWaits)
	}
	if !strings.Contains(out.String(), "Waiting 1m0s for the API budget: api_budget.policies[0] (10 calls per 1m0s)") {
		t.Errorf("the wait is not logged:\n%s", out)
	}
}
