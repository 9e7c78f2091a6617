package interp

import (
	"errors"
	"fmt"
)

// errKind sorts evaluation failures the way the reference treats them.
type errKind int

const (
	// kindUndefined is Jinja's UndefinedError: an undefined value used
	// further than rendering or testing it.
	kindUndefined errKind = iota
	// kindType is Python's TypeError (an operation on the wrong types). The
	// reference then takes the template's own text as its value; here it
	// fails the evaluation, named as a TypeError.
	kindType
	// kindValue covers every other failure (a bad argument, a zero division,
	// an undeclared variable, a limit): the evaluation fails.
	kindValue
)

// evalError is a failure during evaluation. Messages name types, variables and
// keys, never values: a value may be a secret.
type evalError struct {
	kind    errKind
	msg     string
	pastEnd bool // an undefined element past the end of a list (undefined.pastEnd)
}

func (e *evalError) Error() string { return e.msg }

func typeErr(format string, args ...any) error {
	return &evalError{kind: kindType, msg: fmt.Sprintf(format, args...)}
}

func valueErr(format string, args ...any) error {
	return &evalError{kind: kindValue, msg: fmt.Sprintf(format, args...)}
}

func kindOf(err error) errKind {
	var e *evalError
	if errors.As(err, &e) {
		return e.kind
	}
	return kindValue
}

// TypeError is a template's evaluation that fails with Python's TypeError
// (an operation on the wrong types, such as regex_search of None or
// None < 3). A value from it is never its own text, as the reference's
// would be; a condition holds on it (Template.Holds).
type TypeError struct {
	Path, Source, Msg string
}

func (e *TypeError) Error() string {
	return fmt.Sprintf("%s: template %q: TypeError: %s", e.Path, e.Source, e.Msg)
}

// UndefinedError is returned by Eval and Render when a template uses an
// undefined value further than rendering it (config.missing.key), as Jinja's
// UndefinedError. Callers whose reference default is None (request mappings)
// may treat it as nil.
type UndefinedError struct {
	Path, Source, Msg string
	// PastEnd says the undefined value is an element past the end of a
	// list or text ({{ last_records[-1]['id'] }} of an empty page), not a
	// key or attribute the value does not have.
	PastEnd bool
}

func (e *UndefinedError) Error() string {
	return fmt.Sprintf("%s: template %q: %s", e.Path, e.Source, e.Msg)
}

// RefusedError is a template Airbyte's runtime refuses to evaluate (one
// holding the text stream_state): the manifest's to fix, a config_error.
type RefusedError struct {
	Path, Msg string
}

func (e *RefusedError) Error() string { return e.Path + ": " + e.Msg }

// IsUndefined tells whether err is an UndefinedError.
func IsUndefined(err error) bool {
	var u *UndefinedError
	return errors.As(err, &u)
}

// IsPastEnd tells whether err is an UndefinedError of an element past the
// end of a list or text (UndefinedError.PastEnd).
func IsPastEnd(err error) bool {
	var u *UndefinedError
	return errors.As(err, &u) && u.PastEnd
}
