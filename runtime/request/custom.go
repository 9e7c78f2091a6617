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
	var out struct {
		Action       string `json:"action"`
		FailureType  string `json:"failure_type"`
		ErrorMessage string `json:"error_message"`
	}
	params := components.ResponseParams(r.Status, r.Header, r.URL)
	if err := h.host.Call(context.Background(), h.c, "interpret_response", params, r.Body, &out); err != nil {
		return action{kind: manifest.ActionFail, failure: failure.Type(err), message: err.Error()}
	}
	a := action{kind: out.Action, failure: out.FailureType, message: out.ErrorMessage}
	if a.kind == manifest.ActionRateLimited {
		a.kind, a.rateLimited = manifest.ActionRetry, true
	}
	if a.failure == "" {
		if a.failure = defaultAction(r.Status).failure; a.failure == "" {
			a.failure = protocol.SystemError
		}
	}
	return a
}

// interpretException is what the handler's interpret_response makes of a
// request that got no response, handed requests' exception of the kind
// (exceptionOf); retry, Go's own answer, carries the default message.
func (h *custom) interpretException(netErr error, message string) action {
	var out struct {
		Action       string `json:"action"`
		FailureType  string `json:"failure_type"`
		ErrorMessage string `json:"error_message"`
	}
	params := map[string]any{"exception": exceptionOf(netErr), "message": netErr.Error()}
	if err := h.host.Call(context.Background(), h.c, "interpret_response", params, nil, &out); err != nil {
		return action{kind: manifest.ActionFail, failure: failure.Type(err), message: err.Error()}
	}
	a := action{kind: out.Action, failure: out.FailureType, message: out.ErrorMessage}
	if a.kind == manifest.ActionRateLimited {
		a.kind, a.rateLimited = manifest.ActionRetry, true
	}
	if a.failure == "" {
		a.failure = protocol.TransientError
	}
	if a.message == "" {
		a.message = message
	}
	return a
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
	var params map[string]any
	var body []byte
	switch {
	case r != nil:
		params, body = components.ResponseParams(r.Status, r.Header, r.URL), r.Body
	case netErr != nil:
		params = map[string]any{"exception": exceptionOf(netErr), "message": netErr.Error()}
	default:
		return 0, false, nil
	}
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
