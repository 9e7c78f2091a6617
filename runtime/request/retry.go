package request

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/lang/pyregex"
	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/protocol"
	"github.com/airbyte-go/source-declarative/runtime/failure"
)

// Send sends the request build makes, retrying as the policy (or the default
// policy) says. build is called again for each attempt.
func (c *Client) Send(ctx context.Context, build func() (*http.Request, error), p *Policy) (*Response, error) {
	return c.SendChecked(ctx, build, p, nil)
}

// SendChecked is Send where a successful response that check refuses (a
// truncated or garbled body) is retried like a server error.
func (c *Client) SendChecked(ctx context.Context, build func() (*http.Request, error), p *Policy, check func(*Response) error) (*Response, error) {
	start := c.Now()
	maxRetries := c.MaxRetries
	if p != nil && p.maxRetries >= 0 {
		maxRetries = p.maxRetries
	}
	if c.NoRetries {
		maxRetries = 0
	}
	heldOff := false // whether this request just waited for a rate limit
	for attempt := 0; ; attempt++ {
		req, err := build()
		if err != nil {
			return nil, buildError(err)
		}
		if !heldOff {
			if err := c.holdOffWait(ctx, req.URL.Host); err != nil {
				return nil, failure.Transient("%s %s stopped: %v", req.Method, req.URL.Redacted(), err)
			}
		}
		heldOff = false
		c.debugRequest(req)
		resp, netErr := c.do(req)
		if final := failure.As(netErr); final != nil {
			return nil, final
		}
		c.debugResponse(req, resp)
		if netErr != nil && ctx.Err() != nil {
			// The read was stopped (another partition failed): no retry.
			return nil, failure.Transient("%s %s stopped: %v", req.Method, req.URL.Redacted(), ctx.Err())
		}
		var act action
		internal := "" // the response's detail when act.message is a filter's error_message
		if netErr != nil {
			act = action{kind: manifest.ActionRetry, failure: protocol.TransientError, message: fmt.Sprintf("%s %s failed: %v", req.Method, req.URL.Redacted(), netErr)}
			if p != nil && p.custom != nil {
				// A custom handler is handed the exception, as the CDK hands it
				// requests' own. What it ignores (or calls a success) ends the
				// pages without records, as the CDK's retriever then has no response.
				failed := act.message
				act = p.custom.interpretException(netErr, failed)
				if act.kind == manifest.ActionSuccess || act.kind == manifest.ActionIgnore {
					c.log(protocol.LevelWarn, fmt.Sprintf("Ignoring %s", act.message))
					return &Response{URL: req.URL.String(), Header: http.Header{}, Ignored: true}, nil
				}
				if act.message != failed {
					internal = failed
				}
			}
		} else {
			act = decide(p, resp)
			if act.kind == manifest.ActionSuccess && resp.Status >= 400 {
				// As the reference's retriever reads it: a response that is not
				// OK gives no records and ends the pages, even when the error
				// handler calls it a success.
				resp.Ignored = true
				return resp, nil
			}
			if act.kind == manifest.ActionSuccess && check != nil {
				if err := check(resp); err != nil {
					act = action{kind: manifest.ActionRetry, failure: protocol.SystemError, message: fmt.Sprintf("%v (HTTP %d from %s %s): %s", err, resp.Status, req.Method, resp.URL, BodyStart(resp.Body))}
				}
			}
			if act.kind == manifest.ActionSuccess || act.kind == manifest.ActionIgnore {
				if act.kind == manifest.ActionIgnore {
					msg := fmt.Sprintf("Ignoring HTTP %d from %s %s", resp.Status, req.Method, resp.URL)
					if act.message != "" {
						msg += ": " + act.message
					}
					c.log(protocol.LevelWarn, msg)
					resp.Ignored = true
				}
				return resp, nil
			}
			detail := fmt.Sprintf("HTTP %s from %s %s: %s", statusText(resp.Status), req.Method, resp.URL, BodyStart(resp.Body))
			if act.message == "" {
				act.message = detail
			} else if act.message != detail {
				internal = detail
			}
			act.message += withheldNote(req, resp.Status)
		}
		status := 0
		if resp != nil {
			status = resp.Status
		}
		if act.kind == manifest.ActionFail {
			return resp, &failure.Error{Failure: act.failure, Message: act.message, Status: status, Internal: internal}
		}
		if act.kind == manifest.ActionResetPagination {
			return resp, &PaginationReset{Matched: act.message, Err: &failure.Error{Failure: protocol.SystemError, Status: status,
				Message: act.message + " (the error handler's RESET_PAGINATION restarts a stream's pages; this request has none)"}}
		}
		if act.rateLimited && c.RateLimited != nil && !c.NoRetries {
			if stream, ok := ctx.Value(streamKey{}).(string); ok {
				c.RateLimited(stream)
			}
		}
		if attempt >= maxRetries {
			tries := "1 attempt"
			if attempt > 0 {
				tries = fmt.Sprintf("%d attempts", attempt+1)
			}
			return resp, &failure.Error{Failure: act.failure, Status: status, Internal: internal,
				Message: fmt.Sprintf("%s (gave up after %s)", act.message, tries)}
		}
		elapsed := c.Now().Sub(start)
		if elapsed >= c.MaxElapsed {
			return resp, &failure.Error{Failure: act.failure, Status: status, Internal: internal,
				Message: fmt.Sprintf("%s (gave up after %d attempts in %s)", act.message, attempt+1, elapsed.Round(time.Second))}
		}
		wait, err := c.backoff(p, resp, netErr, attempt, c.MaxElapsed-elapsed)
		if err != nil {
			return resp, err
		}
		c.log(protocol.LevelWarn, fmt.Sprintf("%s; retrying in %s (attempt %d of %d)", act.message, wait.Round(time.Millisecond), attempt+2, maxRetries+1))
		if act.rateLimited {
			c.holdOff.set(req.URL.Host, c.Now().Add(wait))
			heldOff = true
		}
		if err := c.wait(ctx, wait); err != nil {
			return nil, failure.Transient("%s", err.Error())
		}
		if act.kind == manifest.ActionRefreshThenRetry && p.Refresh != nil && !withheld(req) {
			p.Refresh(req.Header)
		}
	}
}

// buildError is the error of a request that could not be made: a token or
// login request that failed keeps its failure type, anything else is the
// config's.
func buildError(err error) error {
	if own := failure.As(err); own != nil {
		return own
	}
	return failure.Config("%s", err.Error())
}

type streamKey struct{}

// ForStream marks the requests sent with ctx as a stream's: a rate-limited
// answer is reported with the stream's name (see Client.RateLimited).
func ForStream(ctx context.Context, stream string) context.Context {
	return context.WithValue(ctx, streamKey{}, stream)
}

// statusText is a status with its name, when it has one: "404 Not Found", "420".
func statusText(status int) string {
	if name := http.StatusText(status); name != "" {
		return fmt.Sprintf("%d %s", status, name)
	}
	return strconv.Itoa(status)
}

type action struct {
	kind        string // a manifest.Action*; RATE_LIMITED counts as RETRY
	rateLimited bool   // RATE_LIMITED: a filter's, or a 429 no filter matched
	failure     string
	message     string
}

// decide applies the manifest's filters, then the default mapping.
func decide(p *Policy, r *Response) action {
	if p != nil && p.custom != nil {
		return p.custom.interpret(r)
	}
	if p != nil {
		if a, ok := matchHandler(p.handler, r, p.config, p.Warn); ok {
			return a
		}
		if p.authRequest && r.Status >= 400 && r.Status != 429 && r.Status < 500 {
			return action{kind: manifest.ActionFail, failure: protocol.ConfigError}
		}
	}
	return defaultAction(r.Status)
}

// defaultAction is what the reference's default error mapping does with a
// response no filter matched: below 400 it succeeds; 400, 404 and 405 fail
// as system errors, 401 and 403 as config errors; 408, 429, 500, 502, 503
// and 504 are retried as transient; any other status is retried and ends as
// a system error.
func defaultAction(status int) action {
	switch status {
	case 400, 404, 405:
		return action{kind: manifest.ActionFail, failure: protocol.SystemError}
	case 401, 403:
		return action{kind: manifest.ActionFail, failure: protocol.ConfigError}
	case 429:
		return action{kind: manifest.ActionRetry, rateLimited: true, failure: protocol.TransientError}
	case 408, 500, 502, 503, 504:
		return action{kind: manifest.ActionRetry, failure: protocol.TransientError}
	}
	if status < 400 {
		return action{kind: manifest.ActionSuccess}
	}
	return action{kind: manifest.ActionRetry, failure: protocol.SystemError}
}

// defaultFailure is the failure type of a status that a handler gives no
// failure type for, as the reference: the default mapping's (401:
// config_error, 500: transient_error), else system_error.
func defaultFailure(status int) string {
	if f := defaultAction(status).failure; f != "" {
		return f
	}
	return protocol.SystemError
}

// matchHandler is the action of the first filter that matches, the
// handlers of a CompositeErrorHandler taken in order.
func matchHandler(h *manifest.ErrorHandler, r *Response, config map[string]any, warn func(string)) (action, bool) {
	for _, sub := range h.Handlers {
		if a, ok := matchHandler(sub, r, config, warn); ok {
			return a, true
		}
	}
	for _, f := range h.Filters {
		matches, err := filterMatches(f, r, warn)
		if err != nil {
			return templateFailed(err), true
		}
		if !matches {
			continue
		}
		a := action{kind: f.Action, failure: f.FailureType}
		if a.kind == manifest.ActionRateLimited {
			a.kind, a.rateLimited = manifest.ActionRetry, true
		}
		if a.failure == "" {
			a.failure = defaultFailure(r.Status)
		}
		if f.ErrorMessage != nil {
			vars := responseVars(r, f.ErrorMessage.UsageOf("headers"), f.Parameters)
			vars["config"] = config // as the reference, the message may name config values (masked when secret)
			msg, err := f.ErrorMessage.Render(vars)
			if err != nil {
				return templateFailed(err), true
			}
			if msg != "" {
				a.message = msg
			}
		}
		return a, true
	}
	return action{}, false
}

// templateFailed fails the request when a filter's predicate or
// error_message fails on the response (a predicate's TypeError aside: the
// predicate then holds, as in the reference).
func templateFailed(err error) action {
	return action{kind: manifest.ActionFail, failure: protocol.SystemError, message: err.Error()}
}

func filterMatches(f manifest.ResponseFilter, r *Response, warn func(string)) (bool, error) {
	if len(f.HTTPCodes) == 0 && f.MessageContains == "" && f.Predicate == nil {
		return false, nil
	}
	for _, c := range f.HTTPCodes {
		if c == r.Status {
			return true, nil
		}
	}
	if f.MessageContains != "" && strings.Contains(ErrorMessage(r.Body), f.MessageContains) {
		return true, nil
	}
	if f.Predicate != nil {
		vars := responseVars(r, f.Predicate.UsageOf("headers"), f.Parameters)
		vars["config"] = nil // the reference evaluates a predicate with None for its config
		return f.Predicate.Holds(vars, warn)
	}
	return false, nil
}

// responseVars are the variables of a filter's templates: the response's
// body decoded (an empty object when it is not JSON), its headers and the
// filter's parameters.
func responseVars(r *Response, headers interp.Usage, params map[string]any) interp.Vars {
	var body any
	d := json.NewDecoder(bytes.NewReader(r.Body))
	d.UseNumber()
	if d.Decode(&body) != nil {
		body = map[string]any{}
	}
	if params == nil {
		params = map[string]any{}
	}
	return interp.Vars{"response": interp.Native(body), "headers": HeaderVarsReading(r.Header, headers), "parameters": params}
}

// backoff is the wait before the next attempt: the manifest's first
// strategy that gives one; else Retry-After; else 1, 2, 4... seconds, as the
// reference. Only a manifest's strategy may wait longer than left, the time
// left for retrying.
func (c *Client) backoff(p *Policy, r *Response, netErr error, attempt int, left time.Duration) (time.Duration, error) {
	if p != nil && p.custom != nil {
		d, ok, err := p.custom.wait(r, netErr, attempt, true)
		if err != nil || ok {
			return max(d, 0), err
		}
	}
	if p != nil {
		for _, b := range p.backoffs {
			d, ok, err := c.strategyWait(b, r, netErr, attempt)
			if err != nil {
				return 0, err
			}
			if ok {
				return max(d, 0), nil
			}
		}
	}
	d := c.BaseDelay << uint(attempt)
	if r != nil {
		if after, ok := retryAfter(r.Header.Get("Retry-After"), c.Now()); ok {
			d = max(after, 0)
		}
	}
	return min(d, left), nil
}

// seconds is a number of seconds as a duration; beyond what a duration
// holds (an API's Retry-After of 10^12), the longest one, not an overflow
// that would retry at once.
func seconds(f float64) time.Duration {
	if f*float64(time.Second) >= math.MaxInt64 {
		return math.MaxInt64
	}
	return time.Duration(f * float64(time.Second))
}

func (c *Client) strategyWait(b backoff, r *Response, netErr error, attempt int) (time.Duration, bool, error) {
	switch b.typ {
	case manifest.CustomBackoff:
		return b.custom.wait(r, netErr, attempt, false)
	case manifest.ConstantBackoff:
		return seconds(b.seconds), true, nil
	case manifest.ExponentialBackoff:
		// The reference counts attempts from 1: factor×2 after the first.
		return seconds(b.factor * float64(int64(1)<<uint(attempt+1))), true, nil
	}
	v := ""
	if r != nil {
		v = r.Header.Get(b.header)
	}
	if b.regex != nil && v != "" {
		if found, ok := pyregex.Find(b.regex, v); ok {
			v = found
		}
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	hasValue := err == nil && v != ""
	if b.typ == manifest.WaitTimeFromHeader {
		if !hasValue {
			return 0, false, nil
		}
		if b.maxWait != nil && f >= *b.maxWait {
			return 0, false, b.tooLong(f)
		}
		return seconds(f), true, nil
	}
	// WaitUntilTimeFromHeader: the header is an epoch time; min_wait is a floor.
	if !hasValue || f == 0 {
		if b.minWait == 0 {
			return 0, false, nil
		}
		return b.capWait(b.minWait)
	}
	wait := f - float64(c.Now().UnixNano())/float64(time.Second)
	if b.minWait != 0 {
		return b.capWait(max(wait, b.minWait))
	}
	if wait < 0 {
		return 0, false, nil
	}
	return b.capWait(wait)
}

func (b backoff) capWait(wait float64) (time.Duration, bool, error) {
	if b.maxWait != nil && wait > *b.maxWait {
		return 0, false, b.tooLong(wait)
	}
	return seconds(wait), true, nil
}

// retryAfter reads a Retry-After header: seconds or an HTTP date.
func retryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if n, err := strconv.ParseFloat(v, 64); err == nil && n >= 0 {
		return seconds(n), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return t.Sub(now), true
	}
	return 0, false
}

// PaginationReset is the error of a response that an HttpResponseFilter with
// action RESET_PAGINATION matched: it is not retried, and a retriever reads
// the slice's pages again from the first. Any other request fails with Err.
type PaginationReset struct {
	Matched string // the response matched: its status, request and body start, or the filter's error_message
	Err     *failure.Error
}

func (e *PaginationReset) Error() string { return e.Err.Message }

// Unwrap gives the failure reported where no pages can be restarted.
func (e *PaginationReset) Unwrap() error { return e.Err }

// IsStatus tells whether err is a request failure with that HTTP status.
func IsStatus(err error, status int) bool {
	var e *failure.Error
	return errors.As(err, &e) && e.Status == status
}

// debugRequest logs the request about to be sent, with --debug.
func (c *Client) debugRequest(req *http.Request) {
	if c.Debug == nil || !c.Debug() {
		return
	}
	msg := fmt.Sprintf("Request %s %s headers %s", req.Method, req.URL.Redacted(), debugHeaders(req.Header))
	if req.GetBody != nil {
		if rc, err := req.GetBody(); err == nil {
			body, _ := io.ReadAll(io.LimitReader(rc, 4096))
			rc.Close()
			if len(body) > 0 {
				msg += " body " + BodyStart(body)
			}
		}
	}
	c.log(protocol.LevelDebug, msg)
}

// debugResponse logs a response summary, with --debug.
func (c *Client) debugResponse(req *http.Request, resp *Response) {
	if c.Debug == nil || !c.Debug() || resp == nil {
		return
	}
	body := BodyStart(resp.Body)
	if req.Context().Value(credentialsKey{}) != nil {
		body = "not shown (it holds credentials)"
	}
	c.log(protocol.LevelDebug, fmt.Sprintf("Response HTTP %d to %s %s: %d bytes, headers %s, body %s",
		resp.Status, req.Method, resp.URL, len(resp.Body), debugHeaders(resp.Header), body))
}

type credentialsKey struct{}

// GetsCredentials marks the requests sent with ctx as requests for
// credentials (OAuth token requests, session logins and validations): they
// are never redirected to another host or scheme (see checkRedirect), and
// --debug does not print the bodies of their answers, which come before the
// token they hold is known to be masked.
func GetsCredentials(ctx context.Context) context.Context {
	return context.WithValue(ctx, credentialsKey{}, true)
}

// debugHeaders prints headers as a JSON object, credentials hidden (the
// writer's masker hides every other known secret).
func debugHeaders(h http.Header) string {
	out := make(map[string]string, len(h))
	for k, v := range h {
		val := strings.Join(v, ", ")
		switch http.CanonicalHeaderKey(k) {
		case "Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie":
			if scheme, _, found := strings.Cut(val, " "); found && !strings.Contains(scheme, "=") {
				val = scheme + " ****"
			} else {
				val = "****"
			}
		}
		out[k] = val
	}
	b, _ := json.Marshal(out)
	return string(b)
}
