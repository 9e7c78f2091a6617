// Package runtime executes a decoded manifest: check, discover and read,
// with Airbyte protocol messages on the writer.
package runtime

import (
	"encoding/json"
	"strings"

	"github.com/airbyte-go/source-declarative/runtime/failure"
)

// Error is the connector's one failure type, named here for the read loop.
type Error = failure.Error

// ConfigErr is a user mistake in the config, catalog or manifest.
func ConfigErr(format string, args ...any) error {
	return failure.Config(format, args...)
}

// FailureType classifies an error: config_error, transient_error or system_error.
func FailureType(err error) string {
	return failure.Type(err)
}

// OneLine flattens an error to one line.
func OneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

// internalMessage is the technical detail behind err's message, on one
// line, or "" when its message says it all.
func internalMessage(err error) string {
	if f := failure.As(err); f != nil && f.Internal != "" {
		return strings.Join(strings.Fields(f.Internal), " ")
	}
	return ""
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
