package transform

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/manifest"
)

// Transformation changes one record in place. vars are the template
// variables of the current request; Apply sets record, parameters and its
// own names in them.
type Transformation interface {
	Apply(rec *Object, vars interp.Vars) error
}

// New builds the runtime form of a manifest transformation.
func New(t *manifest.Transformation) (Transformation, error) {
	params := t.Parameters
	if params == nil {
		params = map[string]any{}
	}
	switch t.Type {
	case manifest.AddFieldsType:
		return newAddFields(t, params), nil
	case manifest.RemoveFieldsType:
		return newRemoveFields(t, params)
	case manifest.KeysToLowerType:
		return keysToLower{}, nil
	case manifest.KeysToSnakeCaseType:
		return keysToSnakeCase{}, nil
	case manifest.KeysReplaceType:
		return newKeysReplace(t, params), nil
	case manifest.FlattenFieldsType:
		return flattenFields{lists: t.FlattenFields.FlattenLists}, nil
	case manifest.DpathFlattenFieldsType:
		return newDpathFlatten(t, params), nil
	}
	return nil, fmt.Errorf("%s: %s is not supported", t.Path, t.Type)
}

// NewList builds transformations in manifest order.
func NewList(ts []*manifest.Transformation) ([]Transformation, error) {
	out := make([]Transformation, 0, len(ts))
	for _, t := range ts {
		tr, err := New(t)
		if err != nil {
			return nil, err
		}
		out = append(out, tr)
	}
	return out, nil
}

// template is a compiled template with what it reads of the record.
type template struct {
	t      *interp.Template
	record interp.Usage
}

func compile(t *interp.Template) template {
	return template{t: t, record: t.UsageOf("record")}
}

// eval evaluates the template with the record (as the template reads it).
func (t template) eval(rec *Object, vars interp.Vars) (any, error) {
	if t.t.IsStatic() {
		return t.t.Eval(vars)
	}
	if t.record.Used {
		vars["record"] = recordVar(rec, t.record)
	}
	return t.t.Eval(vars)
}

func (t template) truth(rec *Object, vars interp.Vars) (bool, error) {
	return t.t.Bool(t.withRecord(rec, vars))
}

// holds is truth as a condition that holds on a TypeError, warn told once
// (interp.Template.Holds).
func (t template) holds(rec *Object, vars interp.Vars, warn func(string)) (bool, error) {
	return t.t.Holds(t.withRecord(rec, vars), warn)
}

// withRecord adds the record to vars when the template reads it.
func (t template) withRecord(rec *Object, vars interp.Vars) interp.Vars {
	if t.record.Used {
		vars["record"] = recordVar(rec, t.record)
	}
	return vars
}

// addFields is AddFields: each field's value is evaluated on the record as
// the earlier fields left it, and written at its path (created as needed).
type addFields struct {
	params    map[string]any
	fields    []addedField
	condition *template
}

type addedField struct {
	path      []string
	pathVar   interp.List
	value     template
	valueType string
}

func newAddFields(t *manifest.Transformation, params map[string]any) *addFields {
	a := &addFields{params: params}
	if c := t.AddFields.Condition; c != nil {
		ct := compile(c)
		a.condition = &ct
	}
	for _, f := range t.AddFields.Fields {
		af := addedField{path: f.Path, value: compile(f.Value), valueType: f.ValueType}
		for _, p := range f.Path {
			af.pathVar = append(af.pathVar, p)
		}
		a.fields = append(a.fields, af)
	}
	return a
}

func (a *addFields) Apply(rec *Object, vars interp.Vars) error {
	vars["parameters"] = a.params
	for _, f := range a.fields {
		v, err := f.value.eval(rec, vars)
		if err != nil {
			return err
		}
		v = Typed(v, f.valueType)
		if a.condition != nil {
			// The value is offered as value (the reference's name) and
			// property (the name its schema documents).
			vars["value"], vars["property"], vars["path"] = v, v, f.pathVar
			ok, err := a.condition.truth(rec, vars)
			delete(vars, "value")
			delete(vars, "property")
			delete(vars, "path")
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
		}
		Create(rec, f.path, FromPlain(v))
	}
	return nil
}

// Typed applies an AddedFieldDefinition's value_type: the value becomes
// that type when its text says so ("42" as integer, "9.5" as number,
// "true" as boolean, anything as string); otherwise it stays as evaluated.
// A null stays null.
func Typed(v any, valueType string) any {
	if v == nil || valueType == "" {
		return v
	}
	s, isText := v.(string)
	switch valueType {
	case "string":
		if !isText {
			return interp.String(v)
		}
	case "integer":
		switch x := v.(type) {
		case float64:
			if x == math.Trunc(x) && math.Abs(x) < 1<<63 {
				return int64(x)
			}
			return interp.String(x) // not an integer: its text, as the reference keeps it
		case string:
			if n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil {
				return n
			}
		}
	case "number":
		if isText {
			t := strings.TrimSpace(s)
			if n, err := strconv.ParseInt(t, 10, 64); err == nil {
				return n
			}
			if f, err := strconv.ParseFloat(t, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
				return f
			}
		}
	case "boolean":
		if isText {
			switch strings.ToLower(strings.TrimSpace(s)) {
			case "true":
				return true
			case "false":
				return false
			}
		}
	}
	return v
}

// removeFields is RemoveFields. Without a condition every value a pointer
// matches is removed. With one, the scalar values a pointer matches are
// removed when the condition holds for them; objects and lists are never
// tested. The condition sees config, parameters and property (the value),
// and nothing else, as the CDK renders it: a record or slice variable there
// is undeclared.
type removeFields struct {
	params    map[string]any
	globs     []Glob
	condition *interp.Template
}

func newRemoveFields(t *manifest.Transformation, params map[string]any) (*removeFields, error) {
	r := &removeFields{params: params, condition: t.RemoveFields.Condition}
	for i, p := range t.RemoveFields.FieldPointers {
		g, err := CompileGlob(p)
		if err != nil {
			return nil, fmt.Errorf("%s.field_pointers[%d]: %v", t.Path, i, err)
		}
		r.globs = append(r.globs, g)
	}
	return r, nil
}

func (r *removeFields) Apply(rec *Object, vars interp.Vars) error {
	var keep func(v any) (bool, error)
	if r.condition != nil {
		own := interp.Vars{"config": vars["config"], "parameters": r.params}
		keep = func(v any) (bool, error) {
			own["property"] = TemplateValue(v)
			return r.condition.Bool(own)
		}
	}
	for _, g := range r.globs {
		if _, err := g.Delete(rec, keep); err != nil {
			return err
		}
	}
	Compact(rec)
	return nil
}

// keysToLower lower-cases the record's top-level keys.
type keysToLower struct{}

func (keysToLower) Apply(rec *Object, _ interp.Vars) error {
	renameKeys(rec, strings.ToLower, false)
	return nil
}

// keysToSnakeCase renames keys to snake case, in nested objects too.
type keysToSnakeCase struct{}

func (keysToSnakeCase) Apply(rec *Object, _ interp.Vars) error {
	renameKeys(rec, snakeCase, true)
	return nil
}

// renameKeys renames the keys of o in place, keeping their order; a key
// renamed onto an earlier one replaces its value there.
func renameKeys(o *Object, rename func(string) string, nested bool) {
	out := &Object{Fields: make([]Field, 0, len(o.Fields))}
	for _, f := range o.Fields {
		if child, ok := f.Value.(*Object); ok && nested {
			renameKeys(child, rename, true)
		}
		out.Set(rename(f.Key), f.Value)
	}
	o.Fields = out.Fields
}

// keysReplace replaces old by new in every key at every object depth
// (lists are not entered); both are rendered once per record.
type keysReplace struct {
	params   map[string]any
	old, new template
}

func newKeysReplace(t *manifest.Transformation, params map[string]any) *keysReplace {
	return &keysReplace{params: params, old: compile(t.KeysReplace.Old), new: compile(t.KeysReplace.New)}
}

func (k *keysReplace) Apply(rec *Object, vars interp.Vars) error {
	vars["parameters"] = k.params
	oldV, err := k.old.eval(rec, vars)
	if err != nil {
		return err
	}
	newV, err := k.new.eval(rec, vars)
	if err != nil {
		return err
	}
	old, repl := interp.String(oldV), interp.String(newV)
	if old == "" {
		return nil
	}
	renameKeys(rec, func(key string) string { return strings.ReplaceAll(key, old, repl) }, true)
	return nil
}
