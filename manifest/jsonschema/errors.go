package jsonschema

import (
	"strconv"
	"strings"
)

// Error is one keyword a value failed.
type Error struct {
	Instance string // JSON pointer to the value that failed ("" is the value validated); for "required", to the missing property
	Keyword  string // the keyword that failed: "type", "required", "enum", ...
	Message  string // what is wrong, in words
	Enum     []any  // for "enum": the values allowed
}

// ValidationError is every keyword a value failed, in a stable order.
type ValidationError struct {
	Errors []Error
}

func (e *ValidationError) Error() string {
	lines := make([]string, len(e.Errors))
	for i, one := range e.Errors {
		lines[i] = one.Message
		if one.Instance != "" {
			lines[i] = one.Instance + ": " + one.Message
		}
	}
	return strings.Join(lines, "; ")
}

// location is where in the validated value a schema applies, as a chain up
// to the root kept on the stack: it becomes a JSON pointer only for an error.
type location struct {
	up      *location // nil at the root
	key     string
	index   int
	isIndex bool // an array item, else an object member
}

// member is the location of an object's member, made only when errors are
// collected: checking a value that turns out valid builds no locations.
func member(at *location, key string, errs *[]Error) *location {
	if errs == nil {
		return nil
	}
	return &location{up: at, key: key}
}

// item is the location of an array's item, made only when errors are
// collected.
func item(at *location, index int, errs *[]Error) *location {
	if errs == nil {
		return nil
	}
	return &location{up: at, index: index, isIndex: true}
}

func (l *location) pointer() string {
	if l == nil {
		return ""
	}
	var segs []string
	for at := l; at != nil; at = at.up {
		if at.isIndex {
			segs = append(segs, strconv.Itoa(at.index))
		} else {
			segs = append(segs, Escape(at.key))
		}
	}
	var b strings.Builder
	for i := len(segs) - 1; i >= 0; i-- {
		b.WriteByte('/')
		b.WriteString(segs[i])
	}
	return b.String()
}
