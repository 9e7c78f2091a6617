package request

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/dlclark/regexp2"

	"github.com/airbyte-go/source-declarative/components"
	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/lang/pyregex"
	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/runtime/failure"
)

// Policy is a requester's error handler ready to run: its numbers, header
// names and regexes are evaluated against the config when a stream starts,
// never while a request waits. A nil Policy is the default policy.
type Policy struct {
	handler    *manifest.ErrorHandler
	config     map[string]any // for the filters' error_message
	maxRetries int            // -1: the client's default
	backoffs   []backoff
	// Refresh, when set, throws the credentials the refused request carried
	// (its headers) away before the retry that a REFRESH_TOKEN_THEN_RETRY
	// filter asks for.
	Refresh func(refused http.Header)
	// Warn, when set, takes a warning about the manifest's filters (a
	// predicate held by a TypeError).
	Warn func(msg string)
	// authRequest: an authentication request that no manifest error
	// handler covers; only 429 and 5xx are retried (see AuthPolicy).
	authRequest bool
	// custom is a custom Python error handler (custom.go), asked instead of
	// the filters.
	custom *custom
}

// AuthPolicy is the policy of the authentication requests that have no
// error handler in a manifest (OAuth token requests, a legacy session
// token's login and validation): 429 and 5xx are retried, as the
// reference's token refresh does, and any other status of 400 or more
// fails at once.
func AuthPolicy() *Policy {
	return &Policy{handler: &manifest.ErrorHandler{}, maxRetries: -1, authRequest: true}
}

// backoff is one evaluated backoff strategy.
type backoff struct {
	typ     string
	path    string
	seconds float64 // constant wait
	factor  float64 // exponential factor
	header  string
	regex   *regexp2.Regexp
	maxWait *float64 // waiting longer stops the stream
	minWait float64
	custom  *custom // a custom Python strategy
}

// NewPolicy evaluates an error handler with the config; nil gives nil. A
// custom handler or backoff strategy is run by host.
func NewPolicy(h *manifest.ErrorHandler, config map[string]any, host *components.Host) (*Policy, error) {
	if h == nil {
		return nil, nil
	}
	if h.Custom != nil {
		if host == nil {
			return nil, fmt.Errorf("%s: no components host runs the custom error handler", h.Path)
		}
		p := &Policy{handler: h, config: config, custom: &custom{host: host, c: h.Custom}}
		var err error
		p.maxRetries, err = p.custom.start()
		return p, err
	}
	retries, err := handlerRetries(h, config)
	if err != nil {
		return nil, err
	}
	p := &Policy{handler: h, config: config, maxRetries: retries}
	for _, b := range allBackoffs(h) {
		if b.Custom != nil {
			if host == nil {
				return nil, fmt.Errorf("%s: no components host runs the custom backoff strategy", b.Path)
			}
			p.backoffs = append(p.backoffs, backoff{typ: b.Type, path: b.Path, custom: &custom{host: host, c: b.Custom}})
			continue
		}
		eb, err := evalBackoff(b, config)
		if err != nil {
			return nil, err
		}
		p.backoffs = append(p.backoffs, eb)
	}
	return p, nil
}

func evalBackoff(b manifest.Backoff, config map[string]any) (backoff, error) {
	params := b.Parameters
	if params == nil {
		params = map[string]any{}
	}
	vars := interp.Vars{"config": config, "parameters": params}
	out := backoff{typ: b.Type, path: b.Path, regex: b.Regex}
	num := func(t *interp.Template, field string) (float64, bool, error) {
		if t == nil {
			return 0, false, nil
		}
		v, err := t.Eval(vars)
		if err != nil {
			return 0, false, failure.Config("%v", err) // the template error names the field
		}
		s := strings.TrimSpace(interp.String(v))
		if s == "" {
			return 0, false, nil
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return 0, false, failure.Config("%s.%s: %q is not a number", b.Path, field, s)
		}
		return f, true, nil
	}
	var err error
	if out.seconds, _, err = num(b.Seconds, "backoff_time_in_seconds"); err != nil {
		return out, err
	}
	if out.factor, _, err = num(b.Factor, "factor"); err != nil {
		return out, err
	}
	if out.minWait, _, err = num(b.MinWait, "min_wait"); err != nil {
		return out, err
	}
	maxWait, hasMax, err := num(b.MaxWait, "max_waiting_time_in_seconds")
	if err != nil {
		return out, err
	}
	// WaitTimeFromHeader reads a max of 0 as no max; WaitUntilTimeFromHeader as "never wait".
	if hasMax && (maxWait > 0 || b.Type == manifest.WaitUntilHeader) {
		out.maxWait = &maxWait
	}
	if b.Header != nil {
		if out.header, err = b.Header.Render(vars); err != nil {
			return out, failure.Config("%v", err)
		}
	}
	if b.RegexTemplate != nil {
		src, err := b.RegexTemplate.Render(vars)
		if err != nil {
			return out, failure.Config("%v", err)
		}
		if out.regex, err = pyregex.Compile(src); err != nil {
			return out, failure.Config("%s.regex: %q is not a regular expression: %v", b.Path, src, err)
		}
	}
	return out, nil
}

// allBackoffs are the strategies of every handler, in order: as the
// reference, the first that gives a wait is used, whichever handler's
// filter matched.
func allBackoffs(h *manifest.ErrorHandler) []manifest.Backoff {
	out := append([]manifest.Backoff(nil), h.Backoff...)
	for _, sub := range h.Handlers {
		out = append(out, allBackoffs(sub)...)
	}
	return out
}

// handlerRetries is the manifest's max_retries, evaluated with the config,
// or -1 when it sets none. A CompositeErrorHandler takes its first
// handler's, as the reference does.
func handlerRetries(h *manifest.ErrorHandler, config map[string]any) (int, error) {
	if len(h.Handlers) > 0 {
		return handlerRetries(h.Handlers[0], config)
	}
	if h.MaxRetries == nil {
		return -1, nil
	}
	v, err := h.MaxRetries.Eval(interp.Vars{"config": config, "parameters": map[string]any{}})
	if err != nil {
		return 0, failure.Config("%v", err) // the template error names max_retries
	}
	s := strings.TrimSpace(interp.String(v))
	if s == "" {
		return -1, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, failure.Config("%s.max_retries: %q is not a number of retries", h.Path, s)
	}
	return n, nil
}

// secondsText writes a number of seconds as a user wrote it: 3600, 2.5.
func secondsText(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// tooLong is the failure of a wait longer than max_waiting_time_in_seconds.
func (b backoff) tooLong(wait float64) error {
	return failure.Transient("the API asks to wait %s s before retrying, more than %s.max_waiting_time_in_seconds (%s s); stopping the stream",
		secondsText(wait), b.path, secondsText(*b.maxWait))
}
