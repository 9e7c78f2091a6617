// Package interp renders the Jinja templates of a manifest as Airbyte's
// declarative CDK does (Jinja2's sandbox with the CDK's macros and filters,
// and its typing of results), with its own lexer, parser and evaluator: no
// file access, and bounded work, output and nesting without a goroutine.
package interp

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strings"
	"sync/atomic"
)

// Vars are the variables a template sees (config, parameters, response...).
type Vars map[string]any

// With is a copy of v (which may be nil) with key set to value; v is left
// as it is.
func (v Vars) With(key string, value any) Vars {
	out := make(Vars, len(v)+1)
	for k, e := range v {
		out[k] = e
	}
	out[key] = value
	return out
}

// SliceNone sets stream_slice and its aliases, stream_partition and
// stream_interval, to None: what a template sees that Airbyte renders with no
// slice at all (not an empty one).
func (v Vars) SliceNone() {
	v["stream_slice"], v["stream_partition"], v["stream_interval"] = nil, nil, nil
}

// Template is a compiled manifest template. Its zero value renders nothing.
type Template struct {
	Source string
	Path   string // manifest path, for errors

	isConst bool
	value   any // the value of a constant

	static bool
	text   string // the text of a static template, as Jinja renders it

	body       []stmt
	whole      expr   // the template is this one {{ expression }} ...
	pre, post  string // ... between these white spaces
	withSets   bool   // ... and {% set %} statements
	topString  bool   // ... whose last filter is string
	undeclared []string
	// failed is why every evaluation fails: it mentions stream_state (a
	// *RefusedError), or does not compile (Broken).
	failed error

	heldWarned atomic.Bool // a TypeError held a condition (Holds), said once
}

// Constant is a template that always yields v (a number, list or bool written
// in the manifest where a template could stand).
func Constant(v any, path string) *Template {
	return &Template{Source: String(v), Path: path, isConst: true, static: true, value: v}
}

// Compile parses src once. path names its place in the manifest for errors.
// Refused at load: include, import, extends, from, macro and call, unknown
// filters and tests, and literal regular expressions that do not compile. A
// template holding the text stream_state compiles, and each evaluation of it
// fails with a RefusedError, as Airbyte's runtime fails it (when it is
// evaluated, so a stream that never evaluates it reads).
func Compile(src, path string) (*Template, error) {
	t := &Template{Source: src, Path: path}
	norm := normalizeSource(src)
	if strings.Contains(src, "stream_state") {
		t.failed = &RefusedError{Path: path, Msg: "`stream_state` is no longer supported for interpolation. We recommend using `stream_interval` instead. Please reference the CDK Migration Guide for more information."}
	}
	if t.failed == nil && !strings.Contains(src, "{{") && !strings.Contains(src, "{%") && !strings.Contains(src, "{#") {
		t.static = true
		t.text = norm
		return t, nil
	}
	body, undeclared, err := parseTemplate(norm)
	if err != nil {
		return nil, fmt.Errorf("%s: invalid template %q: %s", path, src, firstLine(err))
	}
	t.body, t.undeclared = body, undeclared
	t.findWhole()
	return t, nil
}

// Broken is a template that does not compile (err, from Compile): each
// evaluation fails with err, as Airbyte's runtime, which compiles a
// template when it first evaluates it, fails only then; a template never
// evaluated (in an OAuth field used only to refresh a token that is given)
// costs nothing.
func Broken(src, path string, err error) *Template {
	return &Template{Source: src, Path: path, failed: err}
}

// findWhole notes when the template is one expression between white space
// and {% set %} statements.
func (t *Template) findWhole() {
	var out *outputStmt
	var pre, post strings.Builder
	for _, st := range t.body {
		switch x := st.(type) {
		case *dataStmt:
			if strings.TrimSpace(x.text) != "" {
				return
			}
			if out == nil {
				pre.WriteString(x.text)
			} else {
				post.WriteString(x.text)
			}
		case *outputStmt:
			if out != nil {
				return
			}
			out = x
		case *setStmt, *setBlockStmt:
			t.withSets = true
		default:
			return
		}
	}
	if out == nil {
		return
	}
	t.whole, t.pre, t.post = out.x, pre.String(), post.String()
	if f, ok := out.x.(*filterExpr); ok && f.name == "string" {
		t.topString = true
	}
}

func firstLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// MustCompile compiles a template known to be valid (for tests and constants).
func MustCompile(src string) *Template {
	t, err := Compile(src, "template")
	if err != nil {
		panic(err)
	}
	return t
}

// IsStatic tells whether the template holds no Jinja at all.
func (t *Template) IsStatic() bool { return t == nil || t.static }

// result is one evaluation: the value of a whole-expression template, or the
// rendered text of any other.
type result struct {
	value    any
	text     string
	isValue  bool
	jsonText bool
	// literal is the text the reference reads as a Python literal: text,
	// except that the value of an expression between white space is written
	// as Python writes it ("\nNone" is None, as literal_eval reads it).
	literal string
}

// fail names the template in an evaluation failure. A TypeError (an
// operation on the wrong types, such as regex_search of None) is a failure
// like any other (a *TypeError): Airbyte's runtime would take the template's
// own text as its value and send it on (`except TypeError: return s`), which
// we never do; only a condition holds on it (Holds).
func (t *Template) fail(err error) error {
	if err == t.failed {
		return err
	}
	switch kindOf(err) {
	case kindUndefined:
		var e *evalError
		pastEnd := errors.As(err, &e) && e.pastEnd
		return &UndefinedError{Path: t.Path, Source: t.Source, Msg: err.Error(), PastEnd: pastEnd}
	case kindType:
		return &TypeError{Path: t.Path, Source: t.Source, Msg: firstLine(err)}
	}
	return fmt.Errorf("%s: template %q: %s", t.Path, t.Source, firstLine(err))
}

// run evaluates a dynamic template.
func (t *Template) run(vars Vars) (r result, err error) {
	if t.failed != nil {
		return r, t.failed
	}
	var missing []string
	for _, name := range t.undeclared {
		if _, ok := vars[name]; !ok {
			missing = append(missing, name)
		}
	}
	if missing != nil {
		return r, fmt.Errorf("uses undeclared variables: %s", strings.Join(missing, ", "))
	}
	s := &state{vars: vars}
	if t.whole != nil {
		v, err := t.runWhole(s)
		if err == nil {
			err = checkText(v) // its taker writes it as text
		}
		if err != nil {
			return r, err
		}
		v, _ = settled(v, 0)
		r = result{value: v, isValue: true, jsonText: t.topString && s.jsonText}
		if t.pre == "" && t.post == "" {
			return r, nil
		}
		pyText := pyStr(v)
		if r.jsonText {
			pyText = `"""` + pyText + `"""` // the CDK's string filter's quotes
		}
		r.isValue, r.text, r.literal = false, t.pre+String(v)+t.post, t.pre+pyText+t.post
		return r, nil
	}
	var b strings.Builder
	s.out = &b
	if err := s.run(t.body); err != nil {
		return r, err
	}
	return result{text: b.String(), literal: b.String()}, nil
}

// runWhole runs the {% set %} statements of a whole-expression template and
// gives its expression's value.
func (t *Template) runWhole(s *state) (v any, err error) {
	if !t.withSets {
		return t.whole.eval(s)
	}
	for _, st := range t.body {
		switch x := st.(type) {
		case *dataStmt:
		case *outputStmt:
			v, err = x.x.eval(s)
		default:
			if s.out == nil {
				s.out = &strings.Builder{} // a block {% set %} renders its body
			}
			err = st.exec(s)
		}
		if err != nil {
			return nil, err
		}
	}
	return v, nil
}

// Eval gives the template's typed value as the reference types results
// (InterpolatedString): a template that is one expression gives that
// expression's value; the text of any other template (and a string value)
// becomes the Python literal it spells when it spells one ('5' becomes 5,
// "[1, 2]" a list, "True" true), and stays text otherwise. A template that
// renders nothing gives "". The result is nil, bool, int64, float64,
// string, json.Number, []any or map[string]any. An undefined value used
// further than rendering gives an UndefinedError; a TypeError, an error
// naming the template (never the template's own text, as the reference's).
func (t *Template) Eval(vars Vars) (any, error) {
	v, empty, err := t.eval(vars)
	if empty {
		return "", err
	}
	return v, err
}

// EvalOrNil is Eval for a field of a JSON body or of a token request body,
// as the reference's mappings evaluate them: nil when the template renders
// nothing or uses an undefined value further than rendering it (the field
// is then left out).
func (t *Template) EvalOrNil(vars Vars) (any, error) {
	v, _, err := t.eval(vars)
	if err != nil && IsUndefined(err) {
		return nil, nil
	}
	return v, err
}

// eval is Eval with nil for an empty rendering, which empty tells.
func (t *Template) eval(vars Vars) (v any, empty bool, err error) {
	switch {
	case t == nil:
		return nil, false, nil
	case t.isConst:
		return t.value, false, nil
	case t.static:
		return typedText(t.text), t.text == "", nil
	}
	r, err := t.run(vars)
	if err != nil {
		return nil, false, t.fail(err)
	}
	if !r.isValue {
		return typedText(r.literal), r.literal == "", nil
	}
	if r.jsonText {
		return r.value, false, nil
	}
	switch x := r.value.(type) {
	case *undefined:
		return nil, true, nil
	case string:
		if x == "" {
			return nil, true, nil
		}
	}
	return typedValue(r.value), false, nil
}

// typedText is the reference's literal_eval of a rendered text.
func typedText(text string) any {
	if text == "" {
		return nil
	}
	if v, ok := literalEval(text); ok {
		return plain(v)
	}
	return text
}

// typedValue is typedText of a value's Python text, without writing it when
// the value is already a literal.
func typedValue(v any) any {
	switch x := v.(type) {
	case nil, *undefined:
		return nil
	case bool, int64:
		return x
	case *big.Int:
		return json.Number(x.String())
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return FormatFloat(x)
		}
		return x
	case string:
		return typedText(x)
	}
	if lit, ok := literalCopy(v, 0); ok {
		return plain(lit)
	}
	return typedText(pyStr(v))
}

// literalCopy copies a list or dict whose items are all literals, at a
// depth of nesting: past 4 × maxNesting (a dict holding itself) it is not
// one, as Python's text of it ({...}) is not a literal.
func literalCopy(v any, depth int) (any, bool) {
	if depth > 4*maxNesting {
		return nil, false
	}
	switch x := canon(v).(type) {
	case nil, bool, int64, string:
		return x, true
	case *big.Int:
		return json.Number(x.String()), true
	case float64:
		return x, !math.IsNaN(x) && !math.IsInf(x, 0)
	case []any, tuple:
		src := items(x)
		out := make([]any, len(src))
		for i, e := range src {
			c, ok := literalCopy(e, depth+1)
			if !ok {
				return nil, false
			}
			out[i] = c
		}
		return out, true
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			c, ok := literalCopy(e, depth+1)
			if !ok {
				return nil, false
			}
			out[k] = c
		}
		return out, true
	case *pyDict:
		out := make(map[string]any, len(x.keys))
		for i, k := range x.keys {
			c, ok := literalCopy(x.vals[i], depth+1)
			if _, isTuple := k.(tuple); !ok || isTuple {
				return nil, false
			}
			out[jsonKey(k)] = c // as json.dumps writes the key
		}
		return out, true
	}
	return nil, false
}

// plain turns tuples and a template's lists into lists, for JSON.
func plain(v any) any {
	switch x := v.(type) {
	case *pyList:
		return plain(x.items)
	case tuple:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = plain(e)
		}
		return out
	case []any:
		for i, e := range x {
			x[i] = plain(e)
		}
	case map[string]any:
		for k, e := range x {
			x[k] = plain(e)
		}
	}
	return v
}

// RenderEach renders the templates of a path, one segment each, in order.
func RenderEach(segs []*Template, vars Vars) ([]string, error) {
	out := make([]string, len(segs))
	for i, t := range segs {
		s, err := t.Render(vars)
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

// Render renders the template as text, as Jinja writes it, except that a
// None written by {{ }} is empty and booleans are true and false.
func (t *Template) Render(vars Vars) (string, error) {
	switch {
	case t == nil:
		return "", nil
	case t.isConst:
		return String(t.value), nil
	case t.static:
		return t.text, nil
	}
	r, err := t.run(vars)
	if err != nil {
		return "", t.fail(err)
	}
	if r.isValue {
		return String(r.value), nil
	}
	return r.text, nil
}

// Param evaluates the template as a request parameter, header or form field,
// as the reference's request mappings do (their valid types are str and
// list): nil when it renders nothing, null or an undefined value; a list
// when its value is one or its text spells one, as the values requests
// sends for it (sentItems); otherwise its text.
func (t *Template) Param(vars Vars) (any, error) {
	switch {
	case t == nil:
		return nil, nil
	case t.isConst:
		return t.value, nil
	case t.static:
		return paramText(t.text), nil
	}
	r, err := t.run(vars)
	if err != nil {
		if kindOf(err) == kindUndefined {
			return nil, nil
		}
		return nil, t.fail(err)
	}
	if !r.isValue {
		return paramText(r.text), nil
	}
	switch x := r.value.(type) {
	case nil, *undefined:
		return nil, nil
	case string:
		if r.jsonText {
			return x, nil
		}
		return paramText(x), nil
	case []any:
		if _, ok := literalCopy(x, 0); ok {
			return sentItems(x), nil
		}
	}
	return String(r.value), nil
}

func paramText(text string) any {
	if text == "" {
		return nil
	}
	v, ok := literalEval(text)
	if !ok {
		return text
	}
	switch x := v.(type) {
	case string:
		return x
	case []any:
		return sentItems(x)
	}
	return text
}

// sentItems are the values a list parameter sends, one each, as the
// reference's requests encodes a list: its items, the items of a nested list
// (or tuple, or a dict's keys) each on its own, anything nested deeper as its
// Python text ([[1, 2], [[3]]] sends 1, 2 and [3]). A None is left out where
// requests would send "None" for a nested one.
func sentItems(list []any) []any {
	out := make([]any, 0, len(list))
	for _, e := range list {
		switch x := canon(e).(type) {
		case []any, tuple:
			for _, n := range items(x) {
				out = appendSent(out, n)
			}
		case map[string]any:
			for _, k := range SortedKeys(x) {
				out = append(out, k)
			}
		default:
			out = appendSent(out, e)
		}
	}
	return out
}

func appendSent(out []any, v any) []any {
	switch x := canon(v).(type) {
	case nil:
		return out
	case []any, tuple, map[string]any:
		return append(out, pyStr(x))
	default:
		return append(out, x)
	}
}

// Holds is Bool for a condition (a stop condition, a record filter, an
// error handler's predicate): one that fails with a TypeError holds, as in
// the reference, whose InterpolatedBoolean reads the template's own text
// (`except TypeError: return s`), a non-empty string, as true. Nothing is
// sent of a condition, so nothing of the template's text leaves; warn (nil:
// none) is told so the first time the template holds that way.
func (t *Template) Holds(vars Vars, warn func(string)) (bool, error) {
	ok, err := t.Bool(vars)
	var te *TypeError
	if err == nil || !errors.As(err, &te) {
		return ok, err
	}
	if warn != nil && t.heldWarned.CompareAndSwap(false, true) {
		warn(te.Error() + ": the condition holds, as in Airbyte, which reads a template failing with a TypeError as its own text")
	}
	return true, nil
}

// Bool evaluates the template as a condition, with the reference's rule
// (InterpolatedBoolean): false when the typed value is False, 0, 0.0, an
// empty string, list or dict, or the text "False", "false", "0", "0.0",
// "[]", "{}" or "()"; when it renders nothing or uses an undefined value
// further than rendering it; true otherwise, None and "FALSE" included.
func (t *Template) Bool(vars Vars) (bool, error) {
	switch {
	case t == nil:
		return false, nil
	case t.isConst:
		if b, ok := t.value.(bool); ok {
			return b, nil
		}
		return !cdkFalse(t.value), nil
	case t.static:
		return t.text != "" && !cdkFalse(typedText(t.text)), nil
	}
	r, err := t.run(vars)
	if err != nil {
		if kindOf(err) == kindUndefined {
			return false, nil
		}
		return false, t.fail(err)
	}
	if r.isValue {
		switch x := r.value.(type) {
		case bool:
			return x, nil
		case *undefined:
			return false, nil
		case string:
			if x == "" {
				return false, nil
			}
			if r.jsonText {
				return !cdkFalse(x), nil
			}
		}
		return !cdkFalse(typedValue(r.value)), nil
	}
	if r.literal == "" {
		return false, nil
	}
	return !cdkFalse(typedText(r.literal)), nil
}

// cdkFalse tells whether v is one of the reference's false values.
func cdkFalse(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return !x
	case string:
		switch x {
		case "False", "false", "{}", "[]", "()", "", "0", "0.0":
			return true
		}
		return false
	case int64:
		return x == 0
	case float64:
		return x == 0
	case json.Number:
		return false
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}
