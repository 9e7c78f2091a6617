package components

import (
	"fmt"

	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/protocol"
)

// Error is a failure of a custom component, or of the host running it:
// the component's path and class, and the last line of the Python error.
type Error struct {
	Component *manifest.Custom // nil: the host itself
	Message   string           // the Python error's last line, or what went wrong with the host
	Failure   string           // an Airbyte failure type; system_error when Python raised no AirbyteTracedException
}

func (e *Error) Error() string {
	if e.Component == nil {
		return "components host: " + e.Message
	}
	return fmt.Sprintf("custom component %s (%s) at %s: %s", e.Component.Type, e.Component.ClassName, e.Component.Path, e.Message)
}

// FailureType is the Airbyte failure type of a TRACE for the error.
func (e *Error) FailureType() string {
	if e.Failure == "" {
		return protocol.SystemError
	}
	return e.Failure
}

// pythonError is the error of a call, as the host writes it.
type pythonError struct {
	Type     string `json:"type"`
	LastLine string `json:"last_line"`
	Failure  string `json:"failure_type"`
	Message  string `json:"message"`
}

func (p *pythonError) err(c *manifest.Custom) *Error {
	failure := ""
	switch p.Failure {
	case "config_error":
		failure = protocol.ConfigError
	case "transient_error":
		failure = protocol.TransientError
	case "system_error":
		failure = protocol.SystemError
	}
	msg := p.LastLine
	if failure != "" && p.Message != "" {
		msg = p.Message // an AirbyteTracedException's message is written for users
	}
	return &Error{Component: c, Message: msg, Failure: failure}
}
