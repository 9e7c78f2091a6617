package manifest

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/airbyte-go/source-declarative/lang/datetime"
	"github.com/airbyte-go/source-declarative/lang/interp"
)

// Call rate policy types.
const (
	MovingWindowPolicy = "MovingWindowCallRatePolicy"
	FixedWindowPolicy  = "FixedWindowCallRatePolicy"
	UnlimitedPolicy    = "UnlimitedCallRatePolicy"
)

// APIBudget is the manifest's api_budget (an HTTPAPIBudget): the call rate
// policies every request goes through.
type APIBudget struct {
	Path            string
	Policies        []*CallRatePolicy
	ResetHeader     string // response header with the time the window resets
	RemainingHeader string // response header with the calls left
	RateLimitStatus []int  // statuses that mean "no calls left"
}

// CallRatePolicy is one policy; the first whose matchers match a request
// applies to it.
type CallRatePolicy struct {
	Type      string
	Path      string
	Matchers  []*RequestMatcher // none: every request
	Period    time.Duration     // fixed window
	CallLimit int               // fixed window
	Rates     []*Rate           // moving window
}

// Rate is a moving window's limit of calls per interval.
type Rate struct {
	Path     string
	Limit    *interp.Template // renders, over config, to a positive integer
	Interval time.Duration
}

// RequestMatcher is an HttpRequestRegexMatcher.
type RequestMatcher struct {
	Path        string
	Method      string         // upper case; "" matches any
	URLBase     string         // no trailing slash; "" matches any
	PathPattern *regexp.Regexp // searched in the URL path; nil matches any
	Params      map[string]string
	Headers     map[string]string // lower-case names
	Weight      int               // calls a matching request costs
}

func (d *decoder) apiBudget(v any, path string) *APIBudget {
	m, _, ok := d.component(v, path, "HTTPAPIBudget")
	if !ok {
		return nil
	}
	b := &APIBudget{Path: path,
		ResetHeader:     str(m, "ratelimit_reset_header", "ratelimit-reset"),
		RemainingHeader: str(m, "ratelimit_remaining_header", "ratelimit-remaining"),
		RateLimitStatus: []int{429},
	}
	if codes := listOf(m["status_codes_for_ratelimit_hit"]); len(codes) > 0 {
		b.RateLimitStatus = nil
		for _, c := range codes {
			b.RateLimitStatus = append(b.RateLimitStatus, int(c.(int64)))
		}
	}
	for i, p := range listOf(m["policies"]) {
		if pol := d.callRatePolicy(p, index(path+".policies", i)); pol != nil {
			b.Policies = append(b.Policies, pol)
		}
	}
	return b
}

func (d *decoder) callRatePolicy(v any, path string) *CallRatePolicy {
	m, typ, ok := d.component(v, path, MovingWindowPolicy, FixedWindowPolicy, UnlimitedPolicy)
	if !ok {
		return nil
	}
	p := &CallRatePolicy{Type: typ, Path: path}
	for i, mv := range listOf(m["matchers"]) {
		p.Matchers = append(p.Matchers, d.requestMatcher(mv, index(path+".matchers", i)))
	}
	lowest := 0
	switch typ {
	case FixedWindowPolicy:
		p.Period = d.positiveDuration(m["period"], path+".period")
		p.CallLimit = int(m["call_limit"].(int64))
		if p.CallLimit < 1 {
			d.fail(path+".call_limit", "must be at least 1, got %d", p.CallLimit)
		}
		lowest = p.CallLimit
	case MovingWindowPolicy:
		for i, rv := range listOf(m["rates"]) {
			rp := index(path+".rates", i)
			rm, ok := rv.(map[string]any)
			if !ok {
				d.fail(rp, "must be a mapping with limit and interval")
				continue
			}
			r := &Rate{Path: rp, Limit: d.value(rm["limit"], rp+".limit"), Interval: d.positiveDuration(rm["interval"], rp+".interval")}
			if n, ok := rm["limit"].(int64); ok && (lowest == 0 || int(n) < lowest) {
				lowest = int(n)
			}
			p.Rates = append(p.Rates, r)
		}
	}
	for _, mt := range p.Matchers {
		if lowest > 0 && mt.Weight > lowest {
			d.fail(mt.Path+".weight", "%d is more than the policy's lowest limit (%d): no request could ever be made", mt.Weight, lowest)
		}
	}
	return p
}

func (d *decoder) requestMatcher(v any, path string) *RequestMatcher {
	if m, ok := v.(map[string]any); ok && m["type"] == nil {
		m["type"] = "HttpRequestRegexMatcher"
	}
	m, _, ok := d.component(v, path, "HttpRequestRegexMatcher", "HttpRequestMatcher")
	mt := &RequestMatcher{Path: path, Weight: 1}
	if !ok {
		return mt
	}
	mt.Method = strings.ToUpper(str(m, "method", ""))
	mt.URLBase = strings.TrimRight(str(m, "url_base", ""), "/")
	if pat := str(m, "url_path_pattern", ""); pat != "" {
		re, err := regexp.Compile(pat)
		if err != nil {
			d.fail(path+".url_path_pattern", "is not a regular expression (RE2 syntax, no look-arounds): %v", err)
		}
		mt.PathPattern = re
	}
	mt.Params = stringMap(m["params"])
	mt.Headers = map[string]string{}
	for k, v := range stringMap(m["headers"]) {
		mt.Headers[strings.ToLower(k)] = v
	}
	if w, ok := m["weight"].(int64); ok {
		mt.Weight = int(w)
	}
	return mt
}

func (d *decoder) positiveDuration(v any, path string) time.Duration {
	s, _ := v.(string)
	dur, err := datetime.ParseDuration(s)
	if err != nil {
		d.fail(path, "%v", err)
		return 0
	}
	if dur.Years != 0 || dur.Months != 0 {
		d.fail(path, "%q: years and months have no fixed length; use days (P30D)", s)
		return 0
	}
	if dur.Fixed <= 0 {
		d.fail(path, "%q: must be longer than zero", s)
	}
	return dur.Fixed
}

// stringMap renders a mapping's values as text, as they appear in a URL or
// header (true, not Python's True).
func stringMap(v any) map[string]string {
	m, _ := v.(map[string]any)
	out := make(map[string]string, len(m))
	for k, e := range m {
		out[k] = interp.String(e)
	}
	return out
}

// String names the policy in logs.
func (p *CallRatePolicy) String() string {
	switch p.Type {
	case FixedWindowPolicy:
		return fmt.Sprintf("%s (%d calls per %s)", p.Path, p.CallLimit, p.Period)
	case MovingWindowPolicy:
		var rates []string
		for _, r := range p.Rates {
			rates = append(rates, r.Limit.Source+" calls per "+r.Interval.String())
		}
		return fmt.Sprintf("%s (%s)", p.Path, strings.Join(rates, ", "))
	}
	return p.Path
}
