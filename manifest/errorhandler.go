package manifest

import (
	"sort"

	"github.com/airbyte-go/source-declarative/runtime/interp"
)

// ErrorHandler is a DefaultErrorHandler, or several for a CompositeErrorHandler.
type ErrorHandler struct {
	MaxRetries *int
	Backoff    []Backoff
	Filters    []ResponseFilter
	Handlers   []*ErrorHandler // CompositeErrorHandler
}

// Backoff is one backoff strategy.
type Backoff struct {
	Type    string // ExponentialBackoffStrategy, ConstantBackoffStrategy, WaitTimeFromHeader, WaitUntilTimeFromHeader
	Seconds float64
	Factor  float64
	Header  string
	Regex   string
	MaxWait float64
	MinWait float64
}

// ResponseFilter is an HttpResponseFilter.
type ResponseFilter struct {
	Action          string
	HTTPCodes       []int
	MessageContains string
	Predicate       *interp.Template
	ErrorMessage    *interp.Template
	FailureType     string
}

func (d *decoder) errorHandler(v any, path string) *ErrorHandler {
	m, typ, ok := d.component(v, path, "DefaultErrorHandler", "CompositeErrorHandler")
	if !ok {
		return nil
	}
	h := &ErrorHandler{}
	if typ == "CompositeErrorHandler" {
		for i, e := range m["error_handlers"].([]any) {
			if sub := d.errorHandler(e, index(path+".error_handlers", i)); sub != nil {
				h.Handlers = append(h.Handlers, sub)
			}
		}
		return h
	}
	if n, ok := m["max_retries"].(int64); ok {
		nn := int(n)
		h.MaxRetries = &nn
	}
	if bs, ok := m["backoff_strategies"].([]any); ok {
		for i, b := range bs {
			bp := index(path+".backoff_strategies", i)
			bm, btyp, ok := d.component(b, bp, "ExponentialBackoffStrategy", "ConstantBackoffStrategy", "WaitTimeFromHeader", "WaitUntilTimeFromHeader")
			if !ok {
				continue
			}
			h.Backoff = append(h.Backoff, Backoff{Type: btyp, Factor: num(bm["factor"], 5), Seconds: num(bm["backoff_time_in_seconds"], 0),
				Header: str(bm, "header", ""), Regex: str(bm, "regex", ""), MaxWait: num(bm["max_waiting_time_in_seconds"], 0), MinWait: num(bm["min_wait"], 0)})
		}
	}
	if fs, ok := m["response_filters"].([]any); ok {
		for i, f := range fs {
			fp := index(path+".response_filters", i)
			fm, _, ok := d.component(f, fp, "HttpResponseFilter")
			if !ok {
				continue
			}
			rf := ResponseFilter{Action: str(fm, "action", ""), MessageContains: str(fm, "error_message_contains", ""),
				Predicate: d.tpl(fm, "predicate", fp), ErrorMessage: d.tpl(fm, "error_message", fp), FailureType: str(fm, "failure_type", "")}
			codes, _ := fm["http_codes"].([]any)
			for _, c := range codes {
				rf.HTTPCodes = append(rf.HTTPCodes, int(c.(int64)))
			}
			sort.Ints(rf.HTTPCodes)
			h.Filters = append(h.Filters, rf)
		}
	}
	return h
}
