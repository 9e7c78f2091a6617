package request

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/airbyte-go/source-declarative/components"
	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/protocol"
	"github.com/airbyte-go/source-declarative/runtime/failure"
)

// custom is a custom Python error handler or backoff strategy, run by the
// components host and asked what the CDK's HttpClient asks of it. The host
// calls have their own time limit; a response being decided has no context
// of its own.
type custom struct {
	host *components.Host
	c    *manifest.Custom
}

// start asks a custom error handler for its max_retries: -1 when it has
// none (the client's default).
func (h *custom) start() (int, error) {
	var out struct {
		MaxRetries *int `json:"max_retries"`
	}
	if err := h.host.Call(context.Background(), h.c, "error_handler_start", nil, nil, &out); err != nil {
		return 0, err
	}
	if out.MaxRetries == nil || *out.MaxRetries < 0 {
		return -1, nil
	}
	return *out.MaxRetries, nil
}

// interpret is what the handler's interpret_response makes of a response:
// its action, failure type (the default mapping's for the status when it
// gives none) and error message.
func (h *custom) interpret(r *Response) action {
	params, body := askedAbout(r, nil)
	return h.resolution(params, body, defaultFailure(r.Status), "")
}

// interpretException is what the handler's interpret_response makes of a
// request that got no response, handed requests' exception of the kind
// (exceptionOf); retry, Go's own answer, carries the default message.
func (h *custom) interpretException(netErr error, message string) action {
	params, _ := askedAbout(nil, netErr)
	return h.resolution(params, nil, protocol.TransientError, message)
}

// resolution asks the handler's interpret_response about a response or an
// exception (askedAbout): its action, failure type and error message, with
// failureType and message where it gives none.
func (h *custom) resolution(params map[string]any, body []byte, failureType, message string) action {
	var out struct {
		Action       string `json:"action"`
		FailureType  string `json:"failure_type"`
		ErrorMessage string `json:"error_message"`
	}
	if err := h.host.Call(context.Background(), h.c, "interpret_response", params, body, &out); err != nil {
		return action{kind: manifest.ActionFail, failure: failure.Type(err), message: err.Error()}
	}
	a := action{kind: out.Action, failure: out.FailureType, message: out.ErrorMessage}
	if a.kind == manifest.ActionRateLimited {
		a.kind, a.rateLimited = manifest.ActionRetry, true
	}
	if a.failure == "" {
		a.failure = failureType
	}
	if a.message == "" {
		a.message = message
	}
	return a
}

// askedAbout is what the host is handed of a response (status, headers, URL
// and body) or, for a request that got none, of requests' exception.
func askedAbout(r *Response, netErr error) (map[string]any, []byte) {
	if r != nil {
		return components.ResponseParams(r.Status, r.Header, r.URL), r.Body
	}
	return map[string]any{"exception": exceptionOf(netErr), "message": netErr.Error()}, nil
}

// exceptionOf names the exception requests raises for a request that got no
// response: a timeout while connecting or reading, or a connection error.
func exceptionOf(err error) string {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		var op *net.OpError
		if errors.As(err, &op) && op.Op == "dial" {
			return "ConnectTimeout"
		}
		return "ReadTimeout"
	}
	return "ConnectionError"
}

// wait is the first wait the strategy gives (of a handler: its
// backoff_strategies') before the retry after attempt (counted from 0; the
// CDK counts from 1), given the response or, without one, the exception;
// ok is false when it gives none.
func (h *custom) wait(r *Response, netErr error, attempt int, handler bool) (time.Duration, bool, error) {
	if r == nil && netErr == nil {
		return 0, false, nil
	}
	params, body := askedAbout(r, netErr)
	var out struct {
		Seconds *float64 `json:"seconds"`
	}
	params["attempt_count"], params["handler"] = attempt+1, handler
	if err := h.host.Call(context.Background(), h.c, "backoff_time", params, body, &out); err != nil {
		return 0, false, err
	}
	if out.Seconds == nil || *out.Seconds == 0 {
		return 0, false, nil
	}
	return seconds(*out.Seconds), true, nil
}
