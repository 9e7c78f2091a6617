package manifest

import (
	"sort"
	"strings"

	"github.com/dlclark/regexp2"

	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/lang/pyregex"
)

// ErrorHandler is a DefaultErrorHandler, or several for a CompositeErrorHandler.
type ErrorHandler struct {
	Path       string
	MaxRetries *interp.Template // an integer, or a template over the config
	Backoff    []Backoff
	Filters    []ResponseFilter
	Handlers   []*ErrorHandler // CompositeErrorHandler
	// Custom is a custom Python error handler, asked by Go what to do with
	// each response and how long to wait before a retry.
	Custom *Custom
}

// Backoff strategies.
const (
	ConstantBackoff    = "ConstantBackoffStrategy"
	ExponentialBackoff = "ExponentialBackoffStrategy"
	WaitTimeFromHeader = "WaitTimeFromHeader"
	WaitUntilHeader    = "WaitUntilTimeFromHeader"
	// CustomBackoff is a custom Python strategy (Backoff.Custom), asked by
	// Go for each wait.
	CustomBackoff = "CustomBackoffStrategy"
)

// Backoff is one backoff strategy. Numbers and header names may be templates
// over config and parameters; they are evaluated when a stream starts.
type Backoff struct {
	Type       string
	Path       string
	Custom     *Custom // a CustomBackoff's Python class
	Parameters map[string]any
	Seconds    *interp.Template // ConstantBackoffStrategy
	Factor     *interp.Template // ExponentialBackoffStrategy, 5 when unset
	Header     *interp.Template
	// Regex is compiled at load; a regex built from the config is
	// RegexTemplate instead, compiled when a stream starts.
	Regex         *regexp2.Regexp
	RegexTemplate *interp.Template
	MaxWait       *interp.Template // max_waiting_time_in_seconds: waiting longer stops the stream
	MinWait       *interp.Template // WaitUntilTimeFromHeader
}

// Response filter actions.
const (
	ActionSuccess          = "SUCCESS"
	ActionFail             = "FAIL"
	ActionRetry            = "RETRY"
	ActionIgnore           = "IGNORE"
	ActionRateLimited      = "RATE_LIMITED"
	ActionRefreshThenRetry = "REFRESH_TOKEN_THEN_RETRY"
	// ActionResetPagination makes the retriever read the slice's pages
	// again from the first (see PaginationReset).
	ActionResetPagination = "RESET_PAGINATION"
)

// ResponseFilter is an HttpResponseFilter.
type ResponseFilter struct {
	Action          string
	HTTPCodes       []int
	MessageContains string
	Predicate       *interp.Template
	ErrorMessage    *interp.Template
	FailureType     string
	Parameters      map[string]any // the templates' parameters
}

func (d *decoder) errorHandler(v any, path string) *ErrorHandler {
	if c := d.custom(v, path); c != nil {
		return &ErrorHandler{Path: path, Custom: c}
	}
	m, typ, ok := d.component(v, path, "DefaultErrorHandler", "CompositeErrorHandler")
	if !ok {
		return nil
	}
	h := &ErrorHandler{Path: path}
	if typ == "CompositeErrorHandler" {
		for i, e := range m["error_handlers"].([]any) {
			if sub := d.errorHandler(e, index(path+".error_handlers", i)); sub != nil {
				h.Handlers = append(h.Handlers, sub)
			}
		}
		return h
	}
	h.MaxRetries = d.tpl(m, "max_retries", path)
	bs, _ := m["backoff_strategies"].([]any)
	for i, b := range bs {
		if bo, ok := d.backoff(b, index(path+".backoff_strategies", i)); ok {
			h.Backoff = append(h.Backoff, bo)
		}
	}
	fs, _ := m["response_filters"].([]any)
	for i, f := range fs {
		if rf, ok := d.responseFilter(f, index(path+".response_filters", i)); ok {
			h.Filters = append(h.Filters, rf)
		}
	}
	return h
}

func (d *decoder) backoff(v any, path string) (Backoff, bool) {
	if c := d.custom(v, path); c != nil {
		return Backoff{Type: CustomBackoff, Path: path, Custom: c}, true
	}
	m, typ, ok := d.component(v, path, ConstantBackoff, ExponentialBackoff, WaitTimeFromHeader, WaitUntilHeader)
	if !ok {
		return Backoff{}, false
	}
	b := Backoff{Type: typ, Path: path, Header: d.tpl(m, "header", path), MaxWait: d.tpl(m, "max_waiting_time_in_seconds", path),
		MinWait: d.tpl(m, "min_wait", path), Seconds: d.tpl(m, "backoff_time_in_seconds", path), Factor: d.tpl(m, "factor", path)}
	b.Parameters, _ = m["$parameters"].(map[string]any)
	if b.Factor == nil {
		b.Factor = interp.Constant(int64(5), path+".factor")
	}
	if re, ok := m["regex"].(string); ok && re != "" {
		if strings.Contains(re, "{{") || strings.Contains(re, "{%") {
			b.RegexTemplate = d.value(re, path+".regex")
		} else if compiled, err := pyregex.Compile(re); err != nil {
			d.fail(path+".regex", "%q is not a regular expression: %v", re, err)
		} else {
			b.Regex = compiled
		}
	}
	return b, true
}

func (d *decoder) responseFilter(v any, path string) (ResponseFilter, bool) {
	m, _, ok := d.component(v, path, "HttpResponseFilter")
	if !ok {
		return ResponseFilter{}, false
	}
	rf := ResponseFilter{Action: str(m, "action", ""), MessageContains: str(m, "error_message_contains", ""),
		Predicate: d.tpl(m, "predicate", path), ErrorMessage: d.tpl(m, "error_message", path), FailureType: str(m, "failure_type", "")}
	rf.Parameters, _ = m["$parameters"].(map[string]any)
	if rf.Action == "" {
		// As the reference: a filter without an action never matches.
		d.warn(path+".action", "is not set: the filter never matches, as in Airbyte; set FAIL, RETRY, IGNORE...")
		return rf, false
	}
	codes, _ := m["http_codes"].([]any)
	for _, c := range codes {
		if n, ok := c.(int64); ok {
			rf.HTTPCodes = append(rf.HTTPCodes, int(n))
		}
	}
	sort.Ints(rf.HTTPCodes)
	return rf, true
}
