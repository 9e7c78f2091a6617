// Package configrules applies a manifest's config_normalization_rules to the
// user's config, in Airbyte's order: the migrations (whose result the caller
// writes back to the config file and announces in a CONTROL message when it
// differs), then the transformations (in memory only), then the validations
// of the result.
package configrules

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/runtime/transform"
)

// Migrate applies the migrations to a copy of config and tells whether the
// copy differs from config.
func Migrate(rules *manifest.ConfigRules, config map[string]any) (map[string]any, bool, error) {
	if rules == nil || len(rules.Migrations) == 0 {
		return config, false, nil
	}
	out, _ := manifest.DeepCopy(config).(map[string]any)
	for _, m := range rules.Migrations {
		if err := apply(m.Transformations, out); err != nil {
			return nil, false, err
		}
	}
	return out, !reflect.DeepEqual(out, config), nil
}

// Transform applies the transformations to a copy of config.
func Transform(rules *manifest.ConfigRules, config map[string]any) (map[string]any, error) {
	if rules == nil || len(rules.Transformations) == 0 {
		return config, nil
	}
	out, _ := manifest.DeepCopy(config).(map[string]any)
	if err := apply(rules.Transformations, out); err != nil {
		return nil, err
	}
	return out, nil
}

func apply(ts []*manifest.ConfigTransformation, config map[string]any) error {
	for _, t := range ts {
		var err error
		switch {
		case t.RemapField != nil:
			err = remap(t.RemapField, config)
		case t.AddFields != nil:
			err = addFields(t.AddFields, config)
		case t.RemoveFields != nil:
			err = removeFields(t.RemoveFields, config)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// glob renders the segments of a field path over the config; it returns
// them too, for messages.
func glob(path []*interp.Template, vars interp.Vars) (transform.Glob, []string, error) {
	segs, err := interp.RenderEach(path, vars)
	if err != nil {
		return transform.Glob{}, nil, err
	}
	g, err := transform.CompileGlob(segs)
	return g, segs, err
}

// remap replaces each scalar value the field path matches by the map's value
// for it; a value the map does not name stays. A value matches a key when
// its text is the key (1 matches "1").
func remap(r *manifest.ConfigRemapField, config map[string]any) error {
	vars := interp.Vars{"config": config}
	g, _, err := glob(r.FieldPath, vars)
	if err != nil {
		return err
	}
	var table map[string]any
	if r.Map.Whole != nil {
		v, err := r.Map.Whole.Eval(vars)
		if err != nil {
			return err
		}
		if table, _ = v.(map[string]any); table == nil {
			return fmt.Errorf("%s: the map must give a mapping, got %s", r.Map.Whole.Path, kind(v))
		}
	}
	for _, m := range find(config, g) {
		key, ok := scalarText(m.value)
		if !ok {
			continue
		}
		if table != nil {
			if v, ok := table[key]; ok {
				m.set(v)
			}
			continue
		}
		t, ok := r.Map.Values[key]
		if !ok {
			continue
		}
		v, err := t.Eval(vars)
		if err != nil {
			return err
		}
		m.set(v)
	}
	return nil
}

// scalarText is the text a map key would have for a scalar value.
func scalarText(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case map[string]any, []any, nil:
		return "", false
	default:
		return interp.String(x), true
	}
}

// addFields writes each field at its path, in order (a field sees those
// added before it), when the condition holds for its value.
func addFields(a *manifest.AddFields, config map[string]any) error {
	for _, f := range a.Fields {
		vars := interp.Vars{"config": config}
		v, err := f.Value.Eval(vars)
		if err != nil {
			return err
		}
		v = transform.Typed(v, f.ValueType)
		if a.Condition != nil {
			path := make(interp.List, len(f.Path))
			for i, p := range f.Path {
				path[i] = p
			}
			vars["value"], vars["property"], vars["path"] = v, v, path
			ok, err := a.Condition.Bool(vars)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
		}
		create(config, f.Path, plain(v))
	}
	return nil
}

// removeFields removes what each pointer matches, when the condition (over
// the config alone) holds. Every pointer names a place in the config as it
// was before any of them: removing tags[1] does not make tags[3] tags[2].
func removeFields(r *manifest.RemoveFields, config map[string]any) error {
	if r.Condition != nil {
		ok, err := r.Condition.Bool(interp.Vars{"config": config})
		if err != nil || !ok {
			return err
		}
	}
	for _, p := range r.FieldPointers {
		g, err := transform.CompileGlob(p)
		if err != nil {
			return err
		}
		remove(config, g)
	}
	compact(config)
	return nil
}

// plain turns a template's value into a config value: lists as []any,
// numbers as int64 or float64.
func plain(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return interp.String(v)
	}
	out, err := manifest.FromJSON(b)
	if err != nil {
		return interp.String(v)
	}
	return out
}

// kind names the JSON kind of a value, for messages that must not show it.
func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case map[string]any:
		return "an object"
	case []any, interp.List:
		return "a list"
	}
	return "a number"
}

// keyOf names a config key for messages.
func keyOf(path []string) string { return strings.Join(path, ".") }
