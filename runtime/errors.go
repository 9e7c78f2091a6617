// Package runtime executes a decoded manifest: check, discover and read,
// with Airbyte protocol messages on the writer.
package runtime

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/airbyte-go/source-declarative/protocol"
	"github.com/airbyte-go/source-declarative/runtime/request"
)

// Error is a failure with its Airbyte failure type.
type Error struct {
	Failure string
	Message string
}

func (e *Error) Error() string { return e.Message }

// ConfigErr is a user mistake in the config, catalog or manifest.
func ConfigErr(format string, args ...any) error {
	return &Error{Failure: protocol.ConfigError, Message: fmt.Sprintf(format, args...)}
}

// FailureType classifies an error: config_error, transient_error or system_error.
func FailureType(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Failure
	}
	var re *request.Error
	if errors.As(err, &re) && re.Failure != "" {
		return re.Failure
	}
	return protocol.SystemError
}

// OneLine flattens an error to one line.
func OneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
