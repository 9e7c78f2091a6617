package request

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/protocol"
	"github.com/airbyte-go/source-declarative/runtime/failure"
	"github.com/airbyte-go/source-declarative/runtime/interp"
)

// Send sends the request build makes, retrying as the handler (or the
// default policy) says. build is called again for each attempt.
func (c *Client) Send(ctx context.Context, build func() (*http.Request, error), h *manifest.ErrorHandler) (*Response, error) {
	return c.SendChecked(ctx, build, h, nil)
}

// SendChecked is Send where a successful response that check refuses (a
// truncated or garbled body) is retried like a server error.
func (c *Client) SendChecked(ctx context.Context, build func() (*http.Request, error), h *manifest.ErrorHandler, check func(*Response) error) (*Response, error) {
	start := c.Now()
	maxRetries := c.MaxRetries
	if n := handlerRetries(h); n >= 0 {
		maxRetries = n
	}
	for attempt := 0; ; attempt++ {
		req, err := build()
		if err != nil {
			var own *failure.Error
			if errors.As(err, &own) {
				return nil, own // a token or login request that failed keeps its failure type
			}
			return nil, &failure.Error{Failure: protocol.ConfigError, Message: err.Error()}
		}
		resp, netErr := c.do(req)
		var final *failure.Error
		if errors.As(netErr, &final) {
			return nil, final
		}
		var act action
		if netErr != nil {
			act = action{kind: "RETRY", failure: protocol.TransientError, message: fmt.Sprintf("%s %s failed: %v", req.Method, req.URL.Redacted(), netErr)}
		} else {
			act = decide(h, resp)
			if act.kind == "SUCCESS" && check != nil {
				if err := check(resp); err != nil {
					act = action{kind: "RETRY", failure: protocol.SystemError, message: fmt.Sprintf("%v (HTTP %d from %s %s): %s", err, resp.Status, req.Method, resp.URL, BodyStart(resp.Body))}
				}
			}
			if act.kind == "SUCCESS" || act.kind == "IGNORE" {
				if act.kind == "IGNORE" {
					c.log("WARN", fmt.Sprintf("Ignoring HTTP %d from %s %s", resp.Status, req.Method, resp.URL))
					resp.Ignored = true
				}
				return resp, nil
			}
			if act.message == "" {
				act.message = fmt.Sprintf("HTTP %d %s from %s %s: %s", resp.Status, http.StatusText(resp.Status), req.Method, resp.URL, BodyStart(resp.Body))
			}
		}
		if act.kind == "FAIL" {
			status := 0
			if resp != nil {
				status = resp.Status
			}
			return resp, &failure.Error{Failure: act.failure, Message: act.message, Status: status}
		}
		if attempt >= maxRetries {
			status := 0
			if resp != nil {
				status = resp.Status
			}
			return resp, &failure.Error{Failure: act.failure, Status: status,
				Message: fmt.Sprintf("%s (gave up after %d attempts)", act.message, attempt+1)}
		}
		wait := c.backoff(h, resp, attempt)
		if act.waitErr != "" {
			return resp, &failure.Error{Failure: protocol.TransientError, Message: act.waitErr}
		}
		if c.Now().Add(wait).Sub(start) > c.MaxElapsed {
			return resp, &failure.Error{Failure: protocol.TransientError, Message: fmt.Sprintf("%s (gave up: retrying would exceed %s)", act.message, c.MaxElapsed)}
		}
		c.log("WARN", fmt.Sprintf("%s; retrying in %s (attempt %d of %d)", act.message, wait.Round(time.Millisecond), attempt+2, maxRetries+1))
		if err := c.wait(ctx, wait); err != nil {
			return nil, &failure.Error{Failure: protocol.TransientError, Message: err.Error()}
		}
	}
}

type action struct {
	kind    string
	failure string
	message string
	waitErr string
}

// decide applies the manifest's filters, then the default policy: 2xx
// succeed, 429 and 5xx are retried, other statuses fail.
func decide(h *manifest.ErrorHandler, r *Response) action {
	if h != nil {
		if a, ok := matchHandler(h, r); ok {
			return a
		}
	}
	switch {
	case r.Status >= 200 && r.Status < 300:
		return action{kind: "SUCCESS"}
	case r.Status == 429:
		return action{kind: "RETRY", failure: protocol.TransientError}
	case r.Status >= 500:
		return action{kind: "RETRY", failure: protocol.TransientError}
	}
	return action{kind: "FAIL", failure: protocol.ConfigError}
}

func matchHandler(h *manifest.ErrorHandler, r *Response) (action, bool) {
	for _, sub := range h.Handlers {
		if a, ok := matchHandler(sub, r); ok {
			return a, true
		}
	}
	for _, f := range h.Filters {
		if !filterMatches(f, r) {
			continue
		}
		a := action{kind: f.Action, failure: f.FailureType}
		switch a.kind {
		case "", "FAIL":
			a.kind = "FAIL"
			if a.failure == "" {
				a.failure = protocol.ConfigError
			}
		case "RATE_LIMITED", "RETRY", "REFRESH_TOKEN_THEN_RETRY":
			a.kind = "RETRY"
			if a.failure == "" {
				a.failure = protocol.TransientError
			}
		}
		if f.ErrorMessage != nil {
			if msg, err := f.ErrorMessage.Render(responseVars(r)); err == nil && msg != "" {
				a.message = msg
			}
		}
		return a, true
	}
	return action{}, false
}

func filterMatches(f manifest.ResponseFilter, r *Response) bool {
	if len(f.HTTPCodes) == 0 && f.MessageContains == "" && f.Predicate == nil {
		return false
	}
	for _, c := range f.HTTPCodes {
		if c == r.Status {
			return true
		}
	}
	if f.MessageContains != "" && strings.Contains(string(r.Body), f.MessageContains) {
		return true
	}
	if f.Predicate != nil {
		ok, err := f.Predicate.Bool(responseVars(r))
		return err == nil && ok
	}
	return false
}

func responseVars(r *Response) interp.Vars {
	var body any
	d := json.NewDecoder(strings.NewReader(string(r.Body)))
	d.UseNumber()
	if d.Decode(&body) != nil {
		body = map[string]any{}
	}
	headers := map[string]any{}
	for k, v := range r.Header {
		headers[strings.ToLower(k)] = strings.Join(v, ", ")
	}
	return interp.Vars{"response": interp.Native(body), "headers": headers}
}

// backoff is the wait before the next attempt.
func (c *Client) backoff(h *manifest.ErrorHandler, r *Response, attempt int) time.Duration {
	if h != nil {
		for _, b := range firstBackoffs(h) {
			if d, ok := c.strategyWait(b, r, attempt); ok {
				return c.capped(d)
			}
		}
	}
	if r != nil {
		if d, ok := retryAfter(r.Header.Get("Retry-After"), c.Now()); ok {
			return c.capped(d)
		}
	}
	d := c.BaseDelay << uint(attempt)
	jitter := time.Duration(rand.Int63n(int64(d)/2 + 1))
	return c.capped(d/2 + jitter)
}

func (c *Client) capped(d time.Duration) time.Duration {
	if d < 0 {
		return 0
	}
	if c.MaxDelay > 0 && d > c.MaxDelay {
		return c.MaxDelay
	}
	return d
}

func firstBackoffs(h *manifest.ErrorHandler) []manifest.Backoff {
	if len(h.Backoff) > 0 {
		return h.Backoff
	}
	for _, sub := range h.Handlers {
		if b := firstBackoffs(sub); len(b) > 0 {
			return b
		}
	}
	return nil
}

func (c *Client) strategyWait(b manifest.Backoff, r *Response, attempt int) (time.Duration, bool) {
	secs := func(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }
	switch b.Type {
	case "ConstantBackoffStrategy":
		return secs(b.Seconds), true
	case "ExponentialBackoffStrategy":
		return secs(b.Factor * float64(int64(1)<<uint(attempt))), true
	case "WaitTimeFromHeader", "WaitUntilTimeFromHeader":
		if r == nil {
			return 0, false
		}
		v := r.Header.Get(b.Header)
		if b.Regex != "" {
			if m := regexp.MustCompile(b.Regex).FindStringSubmatch(v); len(m) > 1 {
				v = m[1]
			} else if len(m) == 1 {
				v = m[0]
			}
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return 0, false
		}
		if b.Type == "WaitUntilTimeFromHeader" {
			d := time.Unix(0, int64(f*1e9)).Sub(c.Now())
			if d < secs(b.MinWait) {
				d = secs(b.MinWait)
			}
			return d, true
		}
		if b.MaxWait > 0 && f > b.MaxWait {
			f = b.MaxWait
		}
		return secs(f), true
	}
	return 0, false
}

// retryAfter reads a Retry-After header: seconds or an HTTP date.
func retryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if n, err := strconv.ParseFloat(v, 64); err == nil && n >= 0 {
		return time.Duration(n * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return t.Sub(now), true
	}
	return 0, false
}

// IsStatus tells whether err is a request error with that HTTP status.
func IsStatus(err error, status int) bool {
	var e *failure.Error
	return errors.As(err, &e) && e.Status == status
}

// handlerRetries is the manifest's max_retries, or -1 when it sets none.
func handlerRetries(h *manifest.ErrorHandler) int {
	if h == nil {
		return -1
	}
	if h.MaxRetries != nil {
		return *h.MaxRetries
	}
	for _, sub := range h.Handlers {
		if n := handlerRetries(sub); n >= 0 {
			return n
		}
	}
	return -1
}
