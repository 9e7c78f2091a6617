// Package failure holds the one error type of the connector that carries an
// Airbyte failure type, for TRACE messages.
package failure

import (
	"errors"
	"fmt"

	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/protocol"
)

// Error is a failure with its Airbyte failure type.
type Error struct {
	Failure string // protocol.ConfigError, TransientError or SystemError
	Message string
	Status  int // the HTTP status of the response that caused it, or 0
	// Internal is the technical detail (request, status, body) behind a
	// Message that is the manifest's own text, for a TRACE's internal_message.
	Internal string
}

func (e *Error) Error() string { return e.Message }

// Config is a mistake the user can fix in the config, catalog or manifest.
func Config(format string, args ...any) *Error {
	return &Error{Failure: protocol.ConfigError, Message: fmt.Sprintf(format, args...)}
}

// Transient is a failure that may go away when tried again later.
func Transient(format string, args ...any) *Error {
	return &Error{Failure: protocol.TransientError, Message: fmt.Sprintf(format, args...)}
}

// System is a failure of the connector or of the API's answers.
func System(format string, args ...any) *Error {
	return &Error{Failure: protocol.SystemError, Message: fmt.Sprintf(format, args...)}
}

// Type is the failure type of err: its own; config_error for a template
// Airbyte's runtime refuses to evaluate (interp.RefusedError); system_error
// for any other error.
func Type(err error) string {
	if e := As(err); e != nil && e.Failure != "" {
		return e.Failure
	}
	var refused *interp.RefusedError
	if errors.As(err, &refused) {
		return protocol.ConfigError
	}
	return protocol.SystemError
}

// Typed is an error of another package that knows its Airbyte failure
// type (a custom component's, components.Error).
type Typed interface {
	error
	FailureType() string
}

// As returns err's failure, or nil when err carries none.
func As(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var typed Typed
	if errors.As(err, &typed) {
		return &Error{Failure: typed.FailureType(), Message: err.Error()}
	}
	return nil
}

// Within is err said at where ("where: message"), of err's failure type
// when it has one; nil stays nil.
func Within(where string, err error) error {
	if err == nil {
		return nil
	}
	if e := As(err); e != nil {
		return &Error{Failure: e.Failure, Status: e.Status, Internal: e.Internal, Message: where + ": " + e.Message}
	}
	return fmt.Errorf("%s: %w", where, err)
}
