package request

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkBudget sends requests to a local server with and without an
// api_budget whose limit is never reached: the cost of matching and
// booking each call against the baseline round trip.
func BenchmarkBudget(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `{}`) }))
	defer srv.Close()
	budget, _, _ := newBudget(b, `  type: HTTPAPIBudget
  policies:
    - {type: UnlimitedCallRatePolicy, matchers: [{url_path_pattern: "^/sandbox"}]}
    - {type: MovingWindowCallRatePolicy, rates: [{limit: 1000000000, interval: PT1H}], matchers: [{method: GET, url_base: "`+srv.URL+`", url_path_pattern: "^/s"}]}`, nil)
	budget.Now, budget.Sleep = nil, nil
	for _, name := range []string{"baseline", "budget"} {
		b.Run(name, func(b *testing.B) {
			c := NewClient(nil)
			if name == "budget" {
				budget.Now, budget.Sleep = c.Now, c.Sleep
				c.Budget = budget
			}
			for b.Loop() {
				if _, err := c.Send(context.Background(), get(srv.URL+"/s"), nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
