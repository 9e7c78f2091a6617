package manifest

import (
	"encoding/json"
	"fmt"

	"github.com/airbyte-go/source-declarative/lang/interp"
)

// Config normalization component types.
const (
	ConfigRemapFieldType   = "ConfigRemapField"
	ConfigAddFieldsType    = "ConfigAddFields"
	ConfigRemoveFieldsType = "ConfigRemoveFields"
	DpathValidatorType     = "DpathValidator"
	PredicateValidatorType = "PredicateValidator"
)

// ConfigRules is the spec's config_normalization_rules: what is done to the
// user's config before anything reads it. Migrations change the config for
// good (it is written back), transformations only in memory, and validations
// check the result.
type ConfigRules struct {
	Migrations      []*ConfigMigration
	Transformations []*ConfigTransformation
	Validations     []*ConfigValidation
}

// ConfigMigration is one migration: transformations applied in order.
type ConfigMigration struct {
	Path            string
	Description     string
	Transformations []*ConfigTransformation
}

// ConfigTransformation is one change to the config: exactly one of the typed
// fields is set, as Type says.
type ConfigTransformation struct {
	Type string
	Path string // manifest path, e.g. spec.config_normalization_rules.transformations[0]

	RemapField   *ConfigRemapField
	AddFields    *AddFields    // values and condition see config (and value, property, path)
	RemoveFields *RemoveFields // the condition sees config only
}

// ConfigRemapField replaces the value at a path by the one a map gives for it.
type ConfigRemapField struct {
	FieldPath []*interp.Template // a dpath glob once rendered
	Map       *Mapping           // values are templates over the config
}

// ConfigValidation checks a value of the config: the value at FieldPath
// (DpathValidator) or Value (PredicateValidator) must pass Schema.
type ConfigValidation struct {
	Type      string
	Path      string
	FieldPath []*interp.Template // DpathValidator: a dpath glob once rendered
	Value     *interp.Template   // PredicateValidator
	Schema    *AdheresToSchema
}

// AdheresToSchema is a ValidateAdheresToSchema strategy: its base_schema is
// a schema known at load (Static) or a template giving one at run time.
type AdheresToSchema struct {
	Path     string // manifest path of base_schema
	Static   *JSONSchema
	Template *interp.Template
}

// Schema is the strategy's compiled schema for a config.
func (a *AdheresToSchema) Schema(vars interp.Vars) (*JSONSchema, error) {
	if a.Static != nil {
		return a.Static, nil
	}
	v, err := a.Template.Eval(vars)
	if err != nil {
		return nil, err
	}
	s, err := compileBaseSchema(v)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", a.Path, err)
	}
	return s, nil
}

// compileBaseSchema compiles a base_schema given as an object or as its JSON
// text.
func compileBaseSchema(v any) (*JSONSchema, error) {
	if s, ok := v.(string); ok {
		var parsed any
		if err := json.Unmarshal([]byte(s), &parsed); err != nil {
			return nil, fmt.Errorf("is not a JSON schema: its text is not JSON (%v)", err)
		}
		v = parsed
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, fmt.Errorf("is not a JSON schema: it must be an object, got %s", describe(v))
	}
	s, err := CompileJSONSchema(v)
	if err != nil {
		return nil, fmt.Errorf("is not a valid JSON schema: %v", err)
	}
	return s, nil
}

// configRules decodes config_normalization_rules.
func (d *decoder) configRules(v any, path string) *ConfigRules {
	m, _, ok := d.component(v, path, "ConfigNormalizationRules")
	if !ok {
		return nil
	}
	rules := &ConfigRules{}
	for i, e := range list(m["config_migrations"]) {
		p := index(path+".config_migrations", i)
		mm, _, ok := d.component(e, p, "ConfigMigration")
		if !ok {
			continue
		}
		rules.Migrations = append(rules.Migrations, &ConfigMigration{Path: p, Description: str(mm, "description", ""),
			Transformations: d.configTransformations(mm["transformations"], p+".transformations")})
	}
	rules.Transformations = d.configTransformations(m["transformations"], path+".transformations")
	for i, e := range list(m["validations"]) {
		if val := d.configValidation(e, index(path+".validations", i)); val != nil {
			rules.Validations = append(rules.Validations, val)
		}
	}
	return rules
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

func (d *decoder) configTransformations(v any, path string) []*ConfigTransformation {
	var out []*ConfigTransformation
	for i, e := range list(v) {
		p := index(path, i)
		m, typ, ok := d.component(e, p, ConfigRemapFieldType, ConfigAddFieldsType, ConfigRemoveFieldsType)
		if !ok {
			continue
		}
		t := &ConfigTransformation{Type: typ, Path: p}
		switch typ {
		case ConfigRemapFieldType:
			t.RemapField = &ConfigRemapField{FieldPath: d.templateList(m["field_path"], p+".field_path"), Map: d.mapping(m, "map", p)}
		case ConfigAddFieldsType:
			t.AddFields = &AddFields{Condition: d.condition(m, p)}
			for j, f := range list(m["fields"]) {
				fp := fmt.Sprintf("%s.fields[%d]", p, j)
				fm, _, ok := d.component(f, fp, "AddedFieldDefinition")
				if !ok {
					continue
				}
				t.AddFields.Fields = append(t.AddFields.Fields, AddedField{Path: strList(fm["path"]),
					Value: d.tpl(fm, "value", fp), ValueType: str(fm, "value_type", "")})
			}
		case ConfigRemoveFieldsType:
			t.RemoveFields = &RemoveFields{Condition: d.condition(m, p)}
			for j, ptr := range list(m["field_pointers"]) {
				pointer := strList(ptr)
				if n := countOf(pointer, "**"); n > 1 {
					d.fail(fmt.Sprintf("%s.field_pointers[%d]", p, j), "has %d ** segments; a path may have only one", n)
				}
				t.RemoveFields.FieldPointers = append(t.RemoveFields.FieldPointers, pointer)
			}
		}
		out = append(out, t)
	}
	return out
}

func (d *decoder) configValidation(v any, path string) *ConfigValidation {
	m, typ, ok := d.component(v, path, DpathValidatorType, PredicateValidatorType)
	if !ok {
		return nil
	}
	val := &ConfigValidation{Type: typ, Path: path}
	if typ == DpathValidatorType {
		val.FieldPath = d.templateList(m["field_path"], path+".field_path")
	} else {
		val.Value = d.value(m["value"], path+".value")
	}
	sp := path + ".validation_strategy"
	sm, _, ok := d.component(m["validation_strategy"], sp, "ValidateAdheresToSchema")
	if !ok {
		return nil
	}
	val.Schema = &AdheresToSchema{Path: sp + ".base_schema"}
	base := sm["base_schema"]
	if text, isText := base.(string); isText {
		t := d.value(text, val.Schema.Path)
		if t == nil {
			return nil
		}
		if !t.IsStatic() {
			val.Schema.Template = t
			return val
		}
		base, _ = t.Eval(interp.Vars{}) // a Python literal ('{...}') is read as the reference reads it
	}
	s, err := compileBaseSchema(base)
	if err != nil {
		d.fail(val.Schema.Path, "%v", err)
		return nil
	}
	val.Schema.Static = s
	return val
}

// templateList compiles a list of path segments.
func (d *decoder) templateList(v any, path string) []*interp.Template {
	var out []*interp.Template
	for i, e := range list(v) {
		out = append(out, d.value(interp.String(e), index(path, i)))
	}
	return out
}
