package transform

import "github.com/airbyte-go/source-declarative/lang/interp"

// Filter is a RecordFilter: a record is kept when its condition holds. The
// condition sees record, config, parameters, the slice variables of the
// request and next_page_token (None: extract.filterVars).
type Filter struct {
	cond   template
	params map[string]any
	// Warn, when set, takes a warning about the condition (held by a
	// TypeError).
	Warn func(msg string)
}

// NewFilter compiles a record filter's condition.
func NewFilter(cond *interp.Template, params map[string]any) *Filter {
	if params == nil {
		params = map[string]any{}
	}
	return &Filter{cond: compile(cond), params: params}
}

// Keep tells whether the record passes.
func (f *Filter) Keep(rec *Object, vars interp.Vars) (bool, error) {
	vars["parameters"] = f.params
	return f.cond.holds(rec, vars, f.Warn)
}
