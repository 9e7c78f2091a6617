package configrules

import (
	"encoding/json"
	"testing"

	"github.com/airbyte-go/source-declarative/manifest"
)

// load decodes rules as a manifest's spec.config_normalization_rules.
func load(t *testing.T, rules string) *manifest.ConfigRules {
	t.Helper()
	raw, err := manifest.Parse([]byte(`version: 6.0.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [s]}
spec:
  type: Spec
  connection_specification: {}
  config_normalization_rules: ` + rules + `
streams:
  - type: DeclarativeStream
    name: s
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: "http://x", path: /}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}
`))
	if err != nil {
		t.Fatal(err)
	}
	src, err := manifest.Load(raw)
	if err != nil {
		t.Fatal(err)
	}
	return src.ConfigRules
}

func config(t *testing.T, s string) map[string]any {
	t.Helper()
	v, err := manifest.FromJSON([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v.(map[string]any)
}

func text(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// Transformations on nested values, lists and globs; the input is never
// changed.
func TestTransform(t *testing.T) {
	for _, tc := range []struct{ rules, in, want string }{
		{`{type: ConfigNormalizationRules, transformations: [{type: ConfigRemapField, field_path: [accounts, "*", kind], map: {p: personal, b: business}}]}`,
			`{"accounts":[{"kind":"p"},{"kind":"b"},{"kind":"x"},{"kind":["p"]}]}`,
			`{"accounts":[{"kind":"personal"},{"kind":"business"},{"kind":"x"},{"kind":["p"]}]}`},
		{`{type: ConfigNormalizationRules, transformations: [{type: ConfigRemapField, field_path: ["{{ config.which }}"], map: "{{ config.table }}"}]}`,
			`{"which":"n","n":1,"table":{"1":"one"}}`,
			`{"n":"one","table":{"1":"one"},"which":"n"}`},
		{`{type: ConfigNormalizationRules, transformations: [{type: ConfigRemoveFields, field_pointers: [[tags, "1"], [tags, "3"], [nested, "*", secret]]}]}`,
			`{"tags":["a","b","c","d"],"nested":{"x":{"secret":1,"keep":2},"y":{"secret":3}}}`,
			`{"nested":{"x":{"keep":2},"y":{}},"tags":["a","c"]}`},
		{`{type: ConfigNormalizationRules, transformations: [{type: ConfigAddFields, fields: [{type: AddedFieldDefinition, path: [a, b], value: "{{ config.n * 2 }}"}, {type: AddedFieldDefinition, path: [c], value: "{{ config.a.b }}", value_type: string}, {type: AddedFieldDefinition, path: [n, x], value: "y"}]}]}`,
			`{"n":4}`,
			`{"a":{"b":8},"c":"8","n":{"x":"y"}}`},
	} {
		in := config(t, tc.in)
		out, err := Transform(load(t, tc.rules), in)
		if err != nil {
			t.Fatalf("%s: %v", tc.rules, err)
		}
		if got := text(out); got != tc.want {
			t.Errorf("%s\n got: %s\nwant: %s", tc.rules, got, tc.want)
		}
		if got := text(in); got != text(config(t, tc.in)) {
			t.Errorf("the input changed: %s", got)
		}
	}
}

// Migrate tells whether anything changed, nested values included.
func TestMigrateChanged(t *testing.T) {
	rules := load(t, `{type: ConfigNormalizationRules, config_migrations: [{type: ConfigMigration, transformations: [{type: ConfigRemapField, field_path: [auth, type], map: {old: new}}]}]}`)
	for _, tc := range []struct {
		in      string
		changed bool
	}{{`{"auth":{"type":"old"}}`, true}, {`{"auth":{"type":"new"}}`, false}, {`{}`, false}} {
		in := config(t, tc.in)
		out, changed, err := Migrate(rules, in)
		if err != nil || changed != tc.changed {
			t.Errorf("%s: changed %v, %v", tc.in, changed, err)
		}
		if tc.changed && (text(out) != `{"auth":{"type":"new"}}` || text(in) != tc.in) {
			t.Errorf("%s: migrated to %s, input now %s", tc.in, text(out), text(in))
		}
	}
}

// A map template that gives no mapping is an error naming its place.
func TestRemapMapMustBeMapping(t *testing.T) {
	rules := load(t, `{type: ConfigNormalizationRules, transformations: [{type: ConfigRemapField, field_path: [a], map: "{{ config.a }}"}]}`)
	_, err := Transform(rules, config(t, `{"a":"x"}`))
	if err == nil || err.Error() != "spec.config_normalization_rules.transformations[0].map: the map must give a mapping, got a string" {
		t.Errorf("got %v", err)
	}
}
