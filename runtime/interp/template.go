// Package interp renders the Jinja templates of a manifest in a sandbox:
// no file access, bounded output and evaluation time, and typed results.
package interp

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/nikolalohinski/gonja/v2/builtins"
	"github.com/nikolalohinski/gonja/v2/config"
	"github.com/nikolalohinski/gonja/v2/exec"
	"github.com/nikolalohinski/gonja/v2/loaders"
	"github.com/nikolalohinski/gonja/v2/nodes"
	"github.com/nikolalohinski/gonja/v2/parser"
	"github.com/nikolalohinski/gonja/v2/tokens"
)

// Limits of one evaluation; a template that passes them fails.
const (
	MaxOutput   = 1 << 20
	MaxDuration = 2 * time.Second
)

// Vars are the variables a template sees (config, parameters, response...).
type Vars map[string]any

// Template is a compiled manifest template. Its zero value renders nothing.
type Template struct {
	Source string
	Path   string // manifest path, for errors
	static bool
	whole  *nodes.Output   // set when the template is exactly one {{ expression }}
	parts  []nodes.Node    // Data and Output nodes, when the template has no control structure
	full   *exec.Template  // used when the template has control structures
	value  any             // the value of a constant
	root   *nodes.Template // the parsed template, to see which variables it reads
}

// Constant is a template that always yields v (a number, list or bool written
// in the manifest where a template could stand).
func Constant(v any, path string) *Template {
	return &Template{Source: String(v), Path: path, static: true, value: v}
}

// Compile parses src once. path names its place in the manifest for errors.
func Compile(src, path string) (*Template, error) {
	t := &Template{Source: src, Path: path}
	if !strings.Contains(src, "{{") && !strings.Contains(src, "{%") && !strings.Contains(src, "{#") {
		t.static = true
		return t, nil
	}
	root, err := parse(src)
	if err != nil {
		return nil, fmt.Errorf("%s: invalid template %q: %s", path, src, firstLine(err))
	}
	t.root = root
	var kept []nodes.Node
	simple := true
	for _, n := range root.Nodes {
		switch n := n.(type) {
		case *nodes.Data:
			kept = append(kept, n)
		case *nodes.Output:
			kept = append(kept, n)
		case *nodes.Comment:
		default:
			simple = false
		}
	}
	if !simple {
		full, err := exec.NewTemplate("template", cfg, &refusingLoader{src: src}, environment)
		if err != nil {
			return nil, fmt.Errorf("%s: invalid template %q: %s", path, src, firstLine(err))
		}
		t.full = full
		return t, nil
	}
	t.parts = kept
	var outputs []*nodes.Output
	blank := true
	for _, n := range kept {
		switch n := n.(type) {
		case *nodes.Output:
			outputs = append(outputs, n)
		case *nodes.Data:
			if strings.TrimSpace(n.Data.Val) != "" {
				blank = false
			}
		}
	}
	if blank && len(outputs) == 1 {
		t.whole = outputs[0]
	}
	return t, nil
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

// Eval renders the template to a native value: a template that is exactly one
// expression gives that expression's value (number, bool, list, object, nil);
// anything else gives a string.
func (t *Template) Eval(vars Vars) (any, error) {
	if t == nil {
		return nil, nil
	}
	if t.static {
		if t.value != nil {
			return t.value, nil
		}
		return t.Source, nil
	}
	return t.bounded(func() (any, error) {
		if t.whole != nil {
			return t.evalOutput(t.whole, vars)
		}
		return t.render(vars)
	})
}

// Render renders the template as text: nil renders empty, booleans as
// true/false, lists and objects as JSON.
func (t *Template) Render(vars Vars) (string, error) {
	v, err := t.Eval(vars)
	if err != nil {
		return "", err
	}
	return String(v), nil
}

// Bool evaluates the template as a condition: empty, false, 0, none, empty
// lists and objects are false.
func (t *Template) Bool(vars Vars) (bool, error) {
	v, err := t.Eval(vars)
	if err != nil {
		return false, err
	}
	return Truthy(v), nil
}

func (t *Template) bounded(f func() (any, error)) (any, error) {
	type result struct {
		v   any
		err error
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- result{nil, fmt.Errorf("template failed: %v", r)}
			}
		}()
		v, err := f()
		done <- result{v, err}
	}()
	timer := time.NewTimer(MaxDuration)
	defer timer.Stop()
	select {
	case r := <-done:
		if r.err != nil {
			return nil, fmt.Errorf("%s: template %q: %s", t.Path, t.Source, firstLine(r.err))
		}
		if s, ok := r.v.(string); ok && len(s) > MaxOutput {
			return nil, fmt.Errorf("%s: template %q: output larger than %d bytes", t.Path, t.Source, MaxOutput)
		}
		return r.v, nil
	case <-timer.C:
		return nil, fmt.Errorf("%s: template %q: evaluation took longer than %s", t.Path, t.Source, MaxDuration)
	}
}

func (t *Template) render(vars Vars) (any, error) {
	if t.full != nil {
		var b strings.Builder
		lw := &limitedWriter{w: &b, left: MaxOutput}
		if err := t.full.Execute(lw, exec.NewContext(vars)); err != nil {
			return nil, err
		}
		return b.String(), nil
	}
	var b strings.Builder
	for _, n := range t.parts {
		switch n := n.(type) {
		case *nodes.Data:
			b.WriteString(n.Data.Val)
		case *nodes.Output:
			v, err := t.evalOutput(n, vars)
			if err != nil {
				return nil, err
			}
			b.WriteString(String(v))
		}
		if b.Len() > MaxOutput {
			return nil, fmt.Errorf("output larger than %d bytes", MaxOutput)
		}
	}
	return b.String(), nil
}

// evalOutput evaluates {{ expr }} or {{ expr if cond else other }}.
func (t *Template) evalOutput(n *nodes.Output, vars Vars) (any, error) {
	expr := n.Expression
	if n.Condition != nil {
		c, err := t.evalExpr(n.Condition, vars)
		if err != nil {
			return nil, err
		}
		if !Truthy(c) {
			expr = n.Alternative
		}
	}
	if expr == nil {
		return nil, nil
	}
	return t.evalExpr(expr, vars)
}

func (t *Template) evalExpr(e nodes.Expression, vars Vars) (any, error) {
	ev := &exec.Evaluator{
		Config: cfg,
		Environment: &exec.Environment{
			Context:           environment.Context.Inherit().Update(exec.NewContext(vars)),
			Filters:           environment.Filters,
			Tests:             environment.Tests,
			ControlStructures: environment.ControlStructures,
			Methods:           environment.Methods,
		},
		Loader: &refusingLoader{},
	}
	v := ev.Eval(e)
	if v.IsError() {
		msg := v.Error()
		// A chain through a missing key (config.a.b with a missing) is undefined, not an error.
		if strings.Contains(msg, "on None") {
			return nil, nil
		}
		return nil, errors.New(msg)
	}
	return native(v), nil
}

// parse parses a template; the parser's own panics on malformed input
// become errors.
func parse(src string) (root *nodes.Template, err error) {
	defer func() {
		if r := recover(); r != nil {
			root, err = nil, fmt.Errorf("malformed template (%v)", r)
		}
	}()
	stream := tokens.LexAll(src, cfg)
	p := parser.NewParser("template", stream, cfg, &refusingLoader{src: src}, environment.ControlStructures)
	return p.Parse()
}

func firstLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

var cfg = config.New()

// environment is gonja's default environment minus everything that reaches
// outside the template: include, import, from and extends are refused, and
// range and lipsum are gone.
var environment = newEnvironment()

func newEnvironment() *exec.Environment {
	allowed := map[string]bool{"if": true, "for": true, "set": true, "with": true, "filter": true, "raw": true, "macro": true, "call": true, "autoescape": true}
	structures := map[string]parser.ControlStructureParser{}
	for name := range allowed {
		if p, ok := builtins.ControlStructures.Get(name); ok {
			structures[name] = p
		}
	}
	globals := exec.NewContext(map[string]any{})
	for _, name := range []string{"dict", "namespace", "cycler", "joiner"} {
		if v, ok := builtins.GlobalFunctions.Get(name); ok {
			globals.Set(name, v)
		}
	}
	globals.Update(builtins.GlobalVariables)
	globals.Update(macros())
	filters := exec.NewFilterSet(map[string]exec.FilterFunction{})
	filters.Update(builtins.Filters)
	for name, f := range airbyteFilters() {
		if filters.Exists(name) {
			filters.Replace(name, f)
		} else {
			filters.Register(name, f)
		}
	}
	return &exec.Environment{
		Context:           globals,
		Filters:           filters,
		Tests:             builtins.Tests,
		ControlStructures: exec.NewControlStructureSet(structures),
		Methods:           builtins.Methods,
	}
}

// refusingLoader gives the template its own source and refuses any other file.
type refusingLoader struct{ src string }

func (l *refusingLoader) Read(path string) (io.Reader, error) {
	if path == "template" {
		return strings.NewReader(l.src), nil
	}
	return nil, fmt.Errorf("templates may not load files (%q)", path)
}
func (l *refusingLoader) Resolve(path string) (string, error) {
	if path == "template" {
		return path, nil
	}
	return "", fmt.Errorf("templates may not load files (%q)", path)
}
func (l *refusingLoader) Inherit(string) (loaders.Loader, error) {
	return nil, errors.New("templates may not load files")
}

type limitedWriter struct {
	w    *strings.Builder
	left int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if len(p) > l.left {
		return 0, fmt.Errorf("output larger than %d bytes", MaxOutput)
	}
	l.left -= len(p)
	return l.w.Write(p)
}
