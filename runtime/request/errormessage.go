package request

import (
	"encoding/json"
	"strings"
)

// errorKeys are the keys of a JSON error body that hold its message, in the
// order the reference looks for them.
var errorKeys = []string{"message", "messages", "error", "errors", "failures", "failure", "detail", "err", "error_message", "msg", "reason", "status_message"}

// ErrorMessage is the error message of a response body, as the reference's
// JSON error message parser reads it (what error_message_contains is
// matched against): a body that is not JSON is its own message; in a JSON
// object the first of errorKeys with a value, followed down; the messages of
// a list's items joined with ", "; "" when there is none.
func ErrorMessage(body []byte) string {
	var v any
	if json.Unmarshal(body, &v) != nil {
		return string(body)
	}
	return errorText(v)
}

func errorText(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case []any:
		var parts []string
		for _, item := range t {
			if _, isText := item.(string); isText || errorText(item) != "" {
				parts = append(parts, errorText(item))
			}
		}
		return strings.Join(parts, ", ")
	case map[string]any:
		for _, k := range errorKeys {
			if present(t[k]) {
				return errorText(t[k])
			}
		}
	}
	return ""
}

// present tells whether a JSON value counts as given (Python's truthiness).
func present(v any) bool {
	switch t := v.(type) {
	case nil:
		return false
	case string:
		return t != ""
	case bool:
		return t
	case float64:
		return t != 0
	case []any:
		return len(t) > 0
	case map[string]any:
		return len(t) > 0
	}
	return true
}
