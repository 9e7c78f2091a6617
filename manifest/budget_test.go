package manifest

import (
	"strings"
	"testing"
)

func describeBudget(b *APIBudget) any {
	if b == nil {
		return nil
	}
	var policies []any
	for _, p := range b.Policies {
		var matchers, rates []any
		for _, m := range p.Matchers {
			pattern := ""
			if m.PathPattern != nil {
				pattern = m.PathPattern.String()
			}
			matchers = append(matchers, map[string]any{"path": m.Path, "method": m.Method, "url_base": m.URLBase,
				"pattern": pattern, "params": m.Params, "headers": m.Headers, "weight": m.Weight})
		}
		for _, r := range p.Rates {
			rates = append(rates, map[string]any{"path": r.Path, "limit": src(r.Limit), "interval": r.Interval.String()})
		}
		policies = append(policies, map[string]any{"type": p.Type, "path": p.Path, "period": p.Period.String(),
			"call_limit": p.CallLimit, "rates": rates, "matchers": matchers, "name": p.String()})
	}
	return map[string]any{"path": b.Path, "reset": b.ResetHeader, "remaining": b.RemainingHeader,
		"statuses": b.RateLimitStatus, "policies": policies}
}

func TestDecodeAPIBudget(t *testing.T) {
	cases := []struct{ name, yaml, want string }{
		{"every policy and matcher field", `
api_budget:
  type: HTTPAPIBudget
  ratelimit_reset_header: X-RateLimit-Reset
  ratelimit_remaining_header: X-RateLimit-Remaining
  status_codes_for_ratelimit_hit: [429, 420]
  policies:
    - type: UnlimitedCallRatePolicy
      matchers: [{method: get, url_base: "https://api.example.com/", url_path_pattern: "^/sandbox"}]
    - type: FixedWindowCallRatePolicy
      period: PT1H
      call_limit: 1000
      matchers:
        - {type: HttpRequestRegexMatcher, method: POST, params: {active: true, page: 2}, headers: {X-Tenant: a}, weight: 5}
    - type: MovingWindowCallRatePolicy
      rates: [{limit: 10, interval: PT1S}, {limit: "{{ config.per_minute }}", interval: PT1M}]
      matchers: []
`, `{"path":"api_budget","policies":[{"call_limit":0,"matchers":[{"headers":{},"method":"GET","params":{},"path":"api_budget.policies[0].matchers[0]","pattern":"^/sandbox","url_base":"https://api.example.com","weight":1}],"name":"api_budget.policies[0]","path":"api_budget.policies[0]","period":"0s","rates":null,"type":"UnlimitedCallRatePolicy"},{"call_limit":1000,"matchers":[{"headers":{"x-tenant":"a"},"method":"POST","params":{"active":"true","page":"2"},"path":"api_budget.policies[1].matchers[0]","pattern":"","url_base":"","weight":5}],"name":"api_budget.policies[1] (1000 calls per 1h0m0s)","path":"api_budget.policies[1]","period":"1h0m0s","rates":null,"type":"FixedWindowCallRatePolicy"},{"call_limit":0,"matchers":null,"name":"api_budget.policies[2] (10 calls per 1s, {{ config.per_minute }} calls per 1m0s)","path":"api_budget.policies[2]","period":"0s","rates":[{"interval":"1s","limit":"10","path":"api_budget.policies[2].rates[0]"},{"interval":"1m0s","limit":"{{ config.per_minute }}","path":"api_budget.policies[2].rates[1]"}],"type":"MovingWindowCallRatePolicy"}],"remaining":"X-RateLimit-Remaining","reset":"X-RateLimit-Reset","statuses":[429,420]}`},
		{"defaults", `
api_budget: {type: HTTPAPIBudget, policies: [{type: FixedWindowCallRatePolicy, period: P1D, call_limit: 5, matchers: []}]}
`, `{"path":"api_budget","policies":[{"call_limit":5,"matchers":null,"name":"api_budget.policies[0] (5 calls per 24h0m0s)","path":"api_budget.policies[0]","period":"24h0m0s","rates":null,"type":"FixedWindowCallRatePolicy"}],"remaining":"ratelimit-remaining","reset":"ratelimit-reset","statuses":[429]}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			decodesTo(t, tc.yaml, "api_budget", (*decoder).apiBudget, describeBudget, tc.want)
		})
	}
}

func TestAPIBudgetErrors(t *testing.T) {
	cases := []struct{ policy, want string }{
		{`{type: FixedWindowCallRatePolicy, period: an hour, call_limit: 5, matchers: []}`,
			`api_budget.policies[0].period: "an hour" is not an ISO 8601 duration (such as PT1H or P1D)`},
		{`{type: FixedWindowCallRatePolicy, period: P1M, call_limit: 5, matchers: []}`,
			`api_budget.policies[0].period: "P1M": years and months have no fixed length; use days (P30D)`},
		{`{type: FixedWindowCallRatePolicy, period: PT0S, call_limit: 5, matchers: []}`,
			`api_budget.policies[0].period: "PT0S": must be longer than zero`},
		{`{type: FixedWindowCallRatePolicy, period: PT1H, call_limit: 0, matchers: []}`,
			`api_budget.policies[0].call_limit: must be at least 1, got 0`},
		{`{type: FixedWindowCallRatePolicy, period: PT1H, matchers: []}`,
			`api_budget.policies[0].call_limit: is required`},
		{`{type: FixedWindowCallRatePolicy, period: PT1H, call_limit: 3, matchers: [{url_path_pattern: "(?<=v1)/users"}]}`,
			"api_budget.policies[0].matchers[0].url_path_pattern: is not a regular expression (RE2 syntax, no look-arounds): error parsing regexp: invalid named capture: `(?<=v1)/users`"},
		{`{type: FixedWindowCallRatePolicy, period: PT1H, call_limit: 3, matchers: [{weight: 4}]}`,
			`api_budget.policies[0].matchers[0].weight: 4 is more than the policy's lowest limit (3): no request could ever be made`},
		{`{type: MovingWindowCallRatePolicy, rates: [{limit: 5, interval: PT1M}, {limit: 2, interval: PT1S}], matchers: [{weight: 3}]}`,
			`api_budget.policies[0].matchers[0].weight: 3 is more than the policy's lowest limit (2): no request could ever be made`},
		{`{type: MovingWindowCallRatePolicy, rates: [], matchers: []}`,
			`api_budget.policies[0].rates: minimum 1 items required, but found 0 items`},
		{`{type: MovingWindowCallRatePolicy, rates: [{limit: 5}], matchers: []}`,
			`api_budget.policies[0].rates[0].interval: is required`},
		{`{type: TokenBucketPolicy, matchers: []}`,
			`api_budget.policies[0].type: unknown component type "TokenBucketPolicy" (supported: MovingWindowCallRatePolicy, FixedWindowCallRatePolicy, UnlimitedCallRatePolicy)`},
		{`{type: UnlimitedCallRatePolicy, matchers: [{method: 5}]}`,
			`api_budget.policies[0].matchers[0].method: expected string, but got number`},
	}
	for _, tc := range cases {
		_, errs := decodeField(t, "api_budget: {type: HTTPAPIBudget, policies: ["+tc.policy+"]}", "api_budget", (*decoder).apiBudget)
		if got := strings.Join(errs, "; "); got != tc.want {
			t.Errorf("%s\n got: %s\nwant: %s", tc.policy, got, tc.want)
		}
	}
	src := strings.Replace(good, "check:", "api_budget: {type: HTTPAPIBudget, policies: [{type: UnlimitedCallRatePolicy, matchers: []}]}\ncheck:", 1)
	loaded, err := Load(parse(t, src))
	if err != nil || loaded.APIBudget == nil || len(loaded.APIBudget.Policies) != 1 {
		t.Errorf("a source's api_budget: %v %+v", err, loaded)
	}
}
