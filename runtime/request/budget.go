package request

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/protocol"
	"github.com/airbyte-go/source-declarative/runtime/failure"
)

// Budget is the manifest's api_budget, shared by every request of a read:
// a request waits until the first policy that matches it allows it, and a
// response saying the API's limit is reached (a status of
// status_codes_for_ratelimit_hit, or the remaining-calls header at 0) holds
// back every request of that policy, not only the one that got it.
//
// Calls are reserved in order: a caller told to wait has its slot, so
// concurrent callers are spread over the windows without retrying. A nil
// Budget lets every request through.
type Budget struct {
	Now            func() time.Time
	Sleep          func(ctx context.Context, d time.Duration) error
	Log            func(level, msg string)
	HeartbeatEvery time.Duration // a long wait logs this often

	spec     *manifest.APIBudget
	policies []*policy
	err      error // a limit that did not render: every request fails with it

	mu sync.Mutex
}

// policy is the state of one call rate policy.
type policy struct {
	spec   *manifest.CallRatePolicy
	limits []limit // moving window
	// Moving window: the times of the calls still in a window, ascending,
	// one per unit of weight (reserved future slots included).
	calls []time.Time
	// Fixed window: the calls counted in the window ending at windowEnd,
	// the latest window with a reservation (zero before the first call).
	count     int
	windowEnd time.Time
	// blockedUntil holds a moving window after the API said no calls are
	// left until then.
	blockedUntil time.Time
}

type limit struct {
	n        int
	interval time.Duration
}

// NewBudget prepares the budget of spec (nil: nil); vars render the rate
// limits written as templates.
func NewBudget(spec *manifest.APIBudget, vars interp.Vars, log func(level, msg string)) *Budget {
	if spec == nil {
		return nil
	}
	b := &Budget{Now: time.Now, Sleep: sleep, Log: log, HeartbeatEvery: 30 * time.Second, spec: spec}
	for _, ps := range spec.Policies {
		p := &policy{spec: ps}
		for _, r := range ps.Rates {
			n, err := renderLimit(r, vars)
			if err != nil && b.err == nil {
				b.err = &failure.Error{Failure: protocol.ConfigError, Message: err.Error()}
			}
			p.limits = append(p.limits, limit{n: n, interval: r.Interval})
		}
		b.policies = append(b.policies, p)
	}
	return b
}

func renderLimit(r *manifest.Rate, vars interp.Vars) (int, error) {
	s, err := r.Limit.Render(vars)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%s.limit: must be a positive integer, got %q", r.Path, s)
	}
	return n, nil
}

// Acquire waits until the request may be sent.
func (b *Budget) Acquire(ctx context.Context, req *http.Request) error {
	if b == nil {
		return nil
	}
	if b.err != nil {
		return b.err
	}
	p, weight := b.match(req)
	if p == nil || p.spec.Type == manifest.UnlimitedPolicy {
		return nil
	}
	b.mu.Lock()
	now := b.Now()
	at, err := p.reserve(now, weight)
	b.mu.Unlock()
	if err != nil {
		return err
	}
	wait := at.Sub(now)
	if wait <= 0 {
		return nil
	}
	if wait >= time.Second {
		b.log("INFO", fmt.Sprintf("Waiting %s for the API budget: %s", wait.Round(time.Second), p.spec))
	}
	for wait > 0 {
		step := wait
		if b.HeartbeatEvery > 0 && step > b.HeartbeatEvery {
			step = b.HeartbeatEvery
		}
		if err := b.Sleep(ctx, step); err != nil {
			return &failure.Error{Failure: protocol.TransientError, Message: "waiting for the API budget: " + err.Error()}
		}
		if wait -= step; wait > 0 {
			b.log("INFO", fmt.Sprintf("Still waiting %s for the API budget", wait.Round(time.Second)))
		}
	}
	return nil
}

// Observe reads what a response says of the API's limit: the calls left
// (remaining-calls header, or none on a rate-limit status) and when the
// limit resets.
func (b *Budget) Observe(req *http.Request, status int, header http.Header) {
	if b == nil || b.err != nil {
		return
	}
	p, _ := b.match(req)
	if p == nil || p.spec.Type == manifest.UnlimitedPolicy {
		return
	}
	left := -1
	if n, err := strconv.Atoi(strings.TrimSpace(header.Get(b.spec.RemainingHeader))); err == nil {
		left = max(n, 0)
	} else if slices.Contains(b.spec.RateLimitStatus, status) {
		left = 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.Now()
	reset, hasReset := resetTime(header.Get(b.spec.ResetHeader), now)
	p.update(now, left, reset, hasReset)
}

// resetTime reads the reset header: seconds from now (the IETF RateLimit
// header), or a Unix time in seconds or milliseconds. The reference always
// reads Unix seconds, so "30" would mean 1970.
func resetTime(v string, now time.Time) (time.Time, bool) {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || f < 0 {
		return time.Time{}, false
	}
	switch {
	case f < 1e9:
		return now.Add(time.Duration(f * float64(time.Second))), true
	case f >= 1e12:
		return time.UnixMilli(int64(f)), true
	}
	return time.Unix(0, int64(f*1e9)), true
}

func (b *Budget) log(level, msg string) {
	if b.Log != nil {
		b.Log(level, msg)
	}
}

// match is the first policy matching the request, and the weight of the
// first of its matchers that matches (a policy without matchers matches
// every request, at weight 1).
func (b *Budget) match(req *http.Request) (*policy, int) {
	for _, p := range b.policies {
		if len(p.spec.Matchers) == 0 {
			return p, 1
		}
		for _, m := range p.spec.Matchers {
			if matches(m, req) {
				return p, m.Weight
			}
		}
	}
	return nil, 0
}

// matches applies a matcher. url_base matches the request's scheme and host
// and, when it has a path, the requests under it; url_path_pattern is
// searched in the path; params and headers must each be among the
// request's values.
func matches(m *manifest.RequestMatcher, req *http.Request) bool {
	if m.Method != "" && !strings.EqualFold(req.Method, m.Method) {
		return false
	}
	path := strings.TrimRight(req.URL.EscapedPath(), "/")
	if m.URLBase != "" {
		full := req.URL.Scheme + "://" + req.URL.Host + path
		if full != m.URLBase && !strings.HasPrefix(full, m.URLBase+"/") {
			return false
		}
	}
	if m.PathPattern != nil && !m.PathPattern.MatchString(path) {
		return false
	}
	return hasAll(req.URL.Query(), m.Params) && hasAll(url.Values(req.Header), canonicalHeaders(m.Headers))
}

func hasAll(values url.Values, want map[string]string) bool {
	for k, v := range want {
		if !slices.Contains(values[k], v) {
			return false
		}
	}
	return true
}

func canonicalHeaders(h map[string]string) map[string]string {
	out := make(map[string]string, len(h))
	for k, v := range h {
		out[http.CanonicalHeaderKey(k)] = v
	}
	return out
}

// reserve books a call of weight at the earliest time the policy allows it,
// no earlier than now nor than the calls booked before it.
func (p *policy) reserve(now time.Time, weight int) (time.Time, error) {
	if p.spec.Type == manifest.FixedWindowPolicy {
		return p.reserveFixed(now, weight), nil
	}
	for _, l := range p.limits {
		if weight > l.n {
			return time.Time{}, &failure.Error{Failure: protocol.ConfigError, Message: fmt.Sprintf("%s: a request of weight %d can never fit a limit of %d calls", p.spec.Path, weight, l.n)}
		}
	}
	p.prune(now)
	at := now
	if n := len(p.calls); n > 0 && p.calls[n-1].After(at) {
		at = p.calls[n-1]
	}
	if p.blockedUntil.After(at) {
		at = p.blockedUntil
	}
	for _, l := range p.limits {
		// At most l.n - weight earlier calls may lie in (at - interval, at].
		if k := len(p.calls) - (l.n - weight) - 1; k >= 0 {
			if free := p.calls[k].Add(l.interval); free.After(at) {
				at = free
			}
		}
	}
	for range weight {
		p.calls = append(p.calls, at)
	}
	return at, nil
}

// prune forgets the calls that no longer count: those out of every window,
// and those before the most recent ones of the largest limit.
func (p *policy) prune(now time.Time) {
	longest, most := time.Duration(0), 0
	for _, l := range p.limits {
		longest, most = max(longest, l.interval), max(most, l.n)
	}
	i := max(len(p.calls)-most, 0)
	for i < len(p.calls) && !p.calls[i].After(now.Add(-longest)) {
		i++
	}
	p.calls = p.calls[i:]
}

// reserveFixed books a call in the first window with room. The first call
// opens the first window (the reference opens it ten days after start-up,
// so a limit per hour never resets unless the API sends a reset header).
func (p *policy) reserveFixed(now time.Time, weight int) time.Time {
	p.roll(now)
	at := now
	if start := p.windowEnd.Add(-p.spec.Period); start.After(at) {
		at = start
	}
	if p.count+weight > p.spec.CallLimit {
		at = p.windowEnd
		p.windowEnd = p.windowEnd.Add(p.spec.Period)
		p.count = 0
	}
	p.count += weight
	return at
}

// roll moves a fixed window whose end has passed to the window holding now.
func (p *policy) roll(now time.Time) {
	if p.windowEnd.IsZero() {
		p.windowEnd = now.Add(p.spec.Period)
		return
	}
	if now.Before(p.windowEnd) {
		return
	}
	periods := now.Sub(p.windowEnd)/p.spec.Period + 1
	p.windowEnd = p.windowEnd.Add(periods * p.spec.Period)
	p.count = 0
}

// update applies what a response said: left calls (-1: unknown) and when
// the API's window resets.
func (p *policy) update(now time.Time, left int, reset time.Time, hasReset bool) {
	if p.spec.Type == manifest.FixedWindowPolicy {
		p.roll(now)
		if left >= 0 && p.spec.CallLimit-p.count > left {
			p.count = p.spec.CallLimit - left
		}
		if hasReset && reset.After(now) {
			p.windowEnd = reset
		}
		return
	}
	if left < 0 {
		return
	}
	if left == 0 && hasReset && reset.After(p.blockedUntil) {
		p.blockedUntil = reset
		return
	}
	// No reset time: count the calls the API says were made, so that only
	// left calls remain in the first rate's window (the reference does so
	// for 0 left only, and then adds one call instead of filling it).
	first := p.limits[0]
	inWindow := 0
	for _, c := range p.calls {
		if c.After(now.Add(-first.interval)) {
			inWindow++
		}
	}
	at := now
	if n := len(p.calls); n > 0 && p.calls[n-1].After(at) {
		at = p.calls[n-1]
	}
	for range first.n - inWindow - left {
		p.calls = append(p.calls, at)
	}
}
