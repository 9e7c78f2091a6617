package configrules

import (
	"fmt"

	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/manifest"
)

// Invalid is a config that fails a validation: which rule, which config key
// (or value), and why. It never holds the value itself.
type Invalid struct {
	Rule   string // manifest path of the validation
	Key    string // the config key validated (DpathValidator), or ""
	Value  string // the value template (PredicateValidator), or ""
	Reason string
}

func (e *Invalid) Error() string {
	what := "config key " + e.Key
	if e.Key == "" {
		what = "value " + e.Value
	}
	return fmt.Sprintf("Config validation error: %s does not pass %s: %s", what, e.Rule, e.Reason)
}

// Validate checks the config against each validation in order and returns
// the first failure: an *Invalid, or the error of a template. A field path
// that names nothing in the config skips its validation, as Airbyte does
// (the field is optional); skipped tells about it.
func Validate(rules *manifest.ConfigRules, config map[string]any, skipped func(rule, key string)) error {
	if rules == nil {
		return nil
	}
	vars := interp.Vars{"config": config}
	for _, val := range rules.Validations {
		schema, err := val.Schema.Schema(vars)
		if err != nil {
			return err
		}
		if val.Value != nil {
			v, err := val.Value.Eval(vars)
			if err != nil {
				return err
			}
			if reason := adheres(schema, v); reason != "" {
				return &Invalid{Rule: val.Path, Value: val.Value.Source, Reason: reason}
			}
			continue
		}
		g, segs, err := glob(val.FieldPath, vars)
		if err != nil {
			return err
		}
		matches := find(config, g)
		if len(matches) == 0 && skipped != nil {
			skipped(val.Path, keyOf(segs))
		}
		for _, m := range matches {
			if reason := adheres(schema, m.value); reason != "" {
				return &Invalid{Rule: val.Path, Key: keyOf(m.path), Reason: reason}
			}
		}
	}
	return nil
}

// adheres validates a value against the schema (a string is read as the
// JSON it holds, as Airbyte's ValidateAdheresToSchema does) and says what
// is wrong, without the value.
func adheres(s *manifest.JSONSchema, v any) string {
	if text, ok := v.(string); ok {
		parsed, err := manifest.FromJSON([]byte(text))
		if err != nil {
			return "the value is not valid JSON"
		}
		v = parsed
	}
	err := s.Validate(v)
	if err == nil {
		return ""
	}
	return "JSON schema validation error: " + err.Error()
}
