package manifest

import (
	"strings"
	"testing"
)

// describeRules renders decoded config rules as plain values, templates as
// their source.
func describeRules(r *ConfigRules) any {
	if r == nil {
		return nil
	}
	transformations := func(ts []*ConfigTransformation) []any {
		var out []any
		for _, t := range ts {
			m := map[string]any{"type": t.Type, "path": t.Path}
			switch {
			case t.RemapField != nil:
				m["field_path"] = srcList(t.RemapField.FieldPath)
				values := map[string]any{}
				for k, v := range t.RemapField.Map.Values {
					values[k] = src(v)
				}
				m["map"], m["whole"] = values, src(t.RemapField.Map.Whole)
			case t.AddFields != nil:
				var fields []any
				for _, f := range t.AddFields.Fields {
					fields = append(fields, map[string]any{"path": f.Path, "value": src(f.Value), "value_type": f.ValueType})
				}
				m["fields"], m["condition"] = fields, src(t.AddFields.Condition)
			case t.RemoveFields != nil:
				m["field_pointers"], m["condition"] = t.RemoveFields.FieldPointers, src(t.RemoveFields.Condition)
			}
			out = append(out, m)
		}
		return out
	}
	var migrations, validations []any
	for _, m := range r.Migrations {
		migrations = append(migrations, map[string]any{"path": m.Path, "description": m.Description, "transformations": transformations(m.Transformations)})
	}
	for _, v := range r.Validations {
		validations = append(validations, map[string]any{"type": v.Type, "path": v.Path, "field_path": srcList(v.FieldPath),
			"value": src(v.Value), "schema_path": v.Schema.Path, "static": v.Schema.Static != nil, "template": src(v.Schema.Template)})
	}
	return map[string]any{"migrations": migrations, "transformations": transformations(r.Transformations), "validations": validations}
}

func TestDecodeConfigRules(t *testing.T) {
	decodesTo(t, `
rules:
  type: ConfigNormalizationRules
  config_migrations:
    - type: ConfigMigration
      description: rename
      transformations:
        - {type: ConfigRemapField, field_path: [data, "{{ config.name }}"], map: {a: "{{ config.b }}", "1": 2}}
        - {type: ConfigRemoveFields, field_pointers: [[old], [x, "*"]], condition: "{{ config.flag }}"}
  transformations:
    - type: ConfigAddFields
      condition: "{{ property > 1 }}"
      fields: [{type: AddedFieldDefinition, path: [a, b], value: "{{ 2 }}", value_type: integer}]
    - {type: ConfigRemapField, field_path: [s], map: "{{ config.table }}"}
  validations:
    - type: DpathValidator
      field_path: [report, "*"]
      validation_strategy: {type: ValidateAdheresToSchema, base_schema: {type: object}}
    - type: PredicateValidator
      value: "{{ config.v }}"
      validation_strategy: {type: ValidateAdheresToSchema, base_schema: "{{ config.schema }}"}
    - type: PredicateValidator
      value: [1, 2]
      validation_strategy: {type: ValidateAdheresToSchema, base_schema: "'{\"type\": \"array\"}'"}
`, "rules", (*decoder).configRules, describeRules,
		`{"migrations":[{"description":"rename","path":"rules.config_migrations[0]","transformations":[`+
			`{"field_path":["data","{{ config.name }}"],"map":{"1":"2","a":"{{ config.b }}"},"path":"rules.config_migrations[0].transformations[0]","type":"ConfigRemapField","whole":null},`+
			`{"condition":"{{ config.flag }}","field_pointers":[["old"],["x","*"]],"path":"rules.config_migrations[0].transformations[1]","type":"ConfigRemoveFields"}]}],`+
			`"transformations":[{"condition":"{{ property \u003e 1 }}","fields":[{"path":["a","b"],"value":"{{ 2 }}","value_type":"integer"}],"path":"rules.transformations[0]","type":"ConfigAddFields"},`+
			`{"field_path":["s"],"map":{},"path":"rules.transformations[1]","type":"ConfigRemapField","whole":"{{ config.table }}"}],`+
			`"validations":[{"field_path":["report","*"],"path":"rules.validations[0]","schema_path":"rules.validations[0].validation_strategy.base_schema","static":true,"template":null,"type":"DpathValidator","value":null},`+
			`{"field_path":null,"path":"rules.validations[1]","schema_path":"rules.validations[1].validation_strategy.base_schema","static":false,"template":"{{ config.schema }}","type":"PredicateValidator","value":"{{ config.v }}"},`+
			`{"field_path":null,"path":"rules.validations[2]","schema_path":"rules.validations[2].validation_strategy.base_schema","static":true,"template":null,"type":"PredicateValidator","value":"[1, 2]"}]}`)
}

func TestConfigRulesErrors(t *testing.T) {
	for _, tc := range []struct{ rules, want string }{
		{`{config_migrations: []}`, `rules: component has no type (expected one of ConfigNormalizationRules)`},
		{`{type: ConfigNormalizationRules, config_migrations: [{type: ConfigMigration}]}`, `rules.config_migrations[0].transformations: is required`},
		{`{type: ConfigNormalizationRules, transformations: [{type: ConfigRemapField, field_path: [], map: {}}]}`, `rules.transformations[0].field_path: minimum 1 items required, but found 0 items`},
		{`{type: ConfigNormalizationRules, transformations: [{type: AddFields, fields: []}]}`, `rules.transformations[0]: AddFields is not supported here (supported: ConfigRemapField, ConfigAddFields, ConfigRemoveFields)`},
		{`{type: ConfigNormalizationRules, transformations: [{type: ConfigRemoveFields, field_pointers: [["**", a, "**"]]}]}`, `rules.transformations[0].field_pointers[0]: has 2 ** segments; a path may have only one`},
		{`{type: ConfigNormalizationRules, validations: [{type: DpathValidator, field_path: [a], validation_strategy: {type: ValidateAdheresToSchema, base_schema: "not json"}}]}`,
			`rules.validations[0].validation_strategy.base_schema: is not a JSON schema: its text is not JSON (invalid character 'o' in literal null (expecting 'u'))`},
		{`{type: ConfigNormalizationRules, validations: [{type: DpathValidator, field_path: [a], validation_strategy: {type: ValidateAdheresToSchema, base_schema: "[1]"}}]}`,
			`rules.validations[0].validation_strategy.base_schema: is not a JSON schema: it must be an object, got a list`},
		{`{type: ConfigNormalizationRules, validations: [{type: PredicateValidator, value: 1}]}`, `rules.validations[0].validation_strategy: is required`},
	} {
		_, errs := decodeField(t, "rules: "+tc.rules, "rules", (*decoder).configRules)
		if got := strings.Join(errs, "; "); got != tc.want {
			t.Errorf("%s\n got: %s\nwant: %s", tc.rules, got, tc.want)
		}
	}
	// In a source, the rules are the spec's.
	src := strings.Replace(good, "check:", "spec:\n  type: Spec\n  connection_specification: {}\n  config_normalization_rules: {type: ConfigNormalizationRules, transformations: [{type: ConfigRemoveFields, field_pointers: [[a]]}]}\ncheck:", 1)
	loaded, err := Load(parse(t, src))
	if err != nil || loaded.ConfigRules == nil || loaded.ConfigRules.Transformations[0].Path != "spec.config_normalization_rules.transformations[0]" {
		t.Errorf("a source's config rules: %v %+v", err, loaded)
	}
}
