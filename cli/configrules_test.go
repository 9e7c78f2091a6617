package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
)

// rulesManifest is a stream sending config region and page_size as query
// parameters and api_key as a header, under a spec whose
// config_normalization_rules are rules.
func rulesManifest(url, rules string) string {
	return fmt.Sprintf(`version: 6.0.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [items]}
spec:
  type: Spec
  connection_specification:
    type: object
    properties:
      api_key: {type: string, airbyte_secret: true}
      region: {type: string}
  config_normalization_rules:
%s
streams:
  - type: DeclarativeStream
    name: items
    primary_key: [id]
    schema_loader: {type: InlineSchemaLoader, schema: {type: object}}
    retriever:
      type: SimpleRetriever
      requester:
        type: HttpRequester
        url_base: %s
        path: /items
        request_headers: {X-Key: "{{ config['api_key'] }}"}
        request_parameters:
          region: "{{ config['region'] }}"
          page_size: "{{ config.get('page_size', 'none') }}"
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
`, indent(rules, 4), url)
}

func itemsAPI(t *testing.T) *api {
	return newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		fmt.Fprint(w, `{"data":[{"id":1}]}`)
	})
}

// migrations remaps old region codes and drops a retired key; the
// transformation adds page_size in memory only.
const migrations = `type: ConfigNormalizationRules
config_migrations:
  - type: ConfigMigration
    description: region codes became names
    transformations:
      - type: ConfigRemapField
        field_path: [region]
        map: {eu: europe, us: america}
      - type: ConfigRemoveFields
        field_pointers: [[legacy_flag]]
transformations:
  - type: ConfigAddFields
    fields:
      - type: AddedFieldDefinition
        path: [page_size]
        value: "{{ 50 if config['region'] == 'europe' else 100 }}"
        value_type: integer`

// A migration that changes the config rewrites the --config file and prints
// the whole migrated config once as a CONTROL message; the transformations
// then apply in memory only: the API sees both, the file and the CONTROL
// message only the migration.
func TestConfigMigrationRewritesConfigAndPrintsControl(t *testing.T) {
	a := itemsAPI(t)
	c := newConnector(t, rulesManifest(a.URL, migrations), map[string]any{"api_key": "sekret-key", "region": "eu", "legacy_flag": true}, "items")
	res := c.read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{"GET /items?page_size=50&region=europe"})
	if got := a.requests()[0].Header.Get("X-Key"); got != "sekret-key" {
		t.Errorf("X-Key header %q", got)
	}
	controls := res.ofType("CONTROL")
	if len(controls) != 1 {
		t.Fatalf("%d CONTROL messages, want 1: %s", len(controls), res.stdout)
	}
	ctl := controls[0]["control"].(map[string]any)
	delete(ctl, "emitted_at")
	if b, _ := json.Marshal(ctl); string(b) != `{"connectorConfig":{"config":{"api_key":"sekret-key","region":"europe"}},"type":"CONNECTOR_CONFIG"}` {
		t.Errorf("CONTROL: %s", b)
	}
	if !strings.HasPrefix(res.stdout, `{"type":"CONTROL"`) {
		t.Errorf("the CONTROL message must come first:\n%s", res.stdout)
	}
	file, _ := os.ReadFile(c.config)
	if string(file) != "{\n  \"api_key\": \"sekret-key\",\n  \"region\": \"europe\"\n}" {
		t.Errorf("config file:\n%s", file)
	}
	equalLists(t, "records", res.records("items"), []string{`{"id":1}`})

	// Run again on the migrated file: nothing changes, nothing is printed.
	res = c.read(t)
	if res.code != 0 || len(res.ofType("CONTROL")) != 0 {
		t.Fatalf("exit %d, %d CONTROL messages on an already migrated config:\n%s", res.code, len(res.ofType("CONTROL")), res.stdout)
	}
	if again, _ := os.ReadFile(c.config); string(again) != string(file) {
		t.Errorf("the config file changed:\n%s", again)
	}
	equalLists(t, "requests", a.lines(), []string{"GET /items?page_size=50&region=europe", "GET /items?page_size=50&region=europe"})
}

// check and discover migrate too (Airbyte migrates whenever it reads a
// config); a config the migrations leave as it is gives no CONTROL message
// and is not rewritten.
func TestConfigMigrationOnCheckAndDiscover(t *testing.T) {
	a := itemsAPI(t)
	c := newConnector(t, rulesManifest(a.URL, migrations), map[string]any{"api_key": "sekret-key", "region": "us"}, "items")
	res := c.check(t)
	if res.code != 0 || len(res.ofType("CONTROL")) != 1 || len(res.ofType("CONNECTION_STATUS")) != 1 {
		t.Fatalf("check: exit %d:\n%s", res.code, res.stdout)
	}
	if status := res.ofType("CONNECTION_STATUS")[0]["connectionStatus"].(map[string]any)["status"]; status != "SUCCEEDED" {
		t.Errorf("check: %v", status)
	}
	equalLists(t, "requests", a.lines(), []string{"GET /items?page_size=100&region=america"})
	written, _ := os.ReadFile(c.config)

	res = runCLI(t, "discover", "--manifest", c.manifest, "--config", c.config)
	if res.code != 0 || len(res.ofType("CATALOG")) != 1 || len(res.ofType("CONTROL")) != 0 {
		t.Fatalf("discover: exit %d:\n%s", res.code, res.stdout)
	}
	if again, _ := os.ReadFile(c.config); string(again) != string(written) {
		t.Errorf("discover rewrote the config file:\n%s", again)
	}

	// A region the map does not name stays as it is: no change, no CONTROL.
	c = newConnector(t, rulesManifest(a.URL, migrations), map[string]any{"api_key": "sekret-key", "region": "asia"}, "items")
	before, _ := os.ReadFile(c.config)
	res = c.read(t)
	if res.code != 0 || len(res.ofType("CONTROL")) != 0 {
		t.Fatalf("exit %d:\n%s", res.code, res.stdout)
	}
	if after, _ := os.ReadFile(c.config); string(after) != string(before) {
		t.Errorf("the config file was rewritten: %s", after)
	}
	equalLists(t, "last request", a.lines()[len(a.lines())-1:], []string{"GET /items?page_size=100&region=asia"})
}

// Conditions: ConfigAddFields adds a field when its condition holds for the
// config and the value; ConfigRemoveFields removes when its condition holds
// for the config.
func TestConfigTransformationConditions(t *testing.T) {
	a := itemsAPI(t)
	rules := `type: ConfigNormalizationRules
transformations:
  - type: ConfigAddFields
    condition: "{{ config['region'] == 'eu' and value > 10 }}"
    fields:
      - type: AddedFieldDefinition
        path: [page_size]
        value: "{{ 25 }}"
  - type: ConfigRemoveFields
    condition: "{{ config.get('sandbox', False) }}"
    field_pointers: [[region]]`
	for _, tc := range []struct {
		config map[string]any
		want   string
	}{
		{map[string]any{"region": "eu"}, "GET /items?page_size=25&region=eu"},
		{map[string]any{"region": "us"}, "GET /items?page_size=none&region=us"},
		{map[string]any{"region": "eu", "sandbox": true}, "GET /items?page_size=25"},
		{map[string]any{"region": "eu", "sandbox": false}, "GET /items?page_size=25&region=eu"},
	} {
		before := len(a.lines())
		c := newConnector(t, rulesManifest(a.URL, rules), tc.config, "items")
		res := c.read(t)
		if res.code != 0 || len(res.ofType("CONTROL")) != 0 {
			t.Fatalf("%v: exit %d:\n%s", tc.config, res.code, res.stdout)
		}
		equalLists(t, fmt.Sprint(tc.config), a.lines()[before:], []string{tc.want})
	}
}

// validations names a config key holding a JSON report definition, which
// must be an object with a name.
const validations = `type: ConfigNormalizationRules
validations:
  - type: DpathValidator
    field_path: [report, definition]
    validation_strategy:
      type: ValidateAdheresToSchema
      base_schema: {type: object, required: [name]}
  - type: PredicateValidator
    value: "{{ config['api_key'] }}"
    validation_strategy:
      type: ValidateAdheresToSchema
      base_schema: '{"type": "object"}'`

// A config failing a validation is a config_error naming the rule and the
// key, before any request: check answers FAILED after the TRACE and exits
// 0, discover and read exit 1. The secret validated is not shown.
func TestConfigValidationFails(t *testing.T) {
	a := itemsAPI(t)
	config := map[string]any{"api_key": "sekret-key", "region": "eu", "report": map[string]any{"definition": `{"title": "sales"}`}}
	c := newConnector(t, rulesManifest(a.URL, validations), config, "items")
	want := `Config validation error: config key report.definition does not pass spec.config_normalization_rules.validations[0]: JSON schema validation error: /name: is required`

	res := c.check(t)
	if res.code != 0 {
		t.Fatalf("check exit %d", res.code)
	}
	if len(res.msgs) != 2 || res.msgs[0]["type"] != "TRACE" || res.msgs[1]["type"] != "CONNECTION_STATUS" {
		t.Fatalf("check printed:\n%s", res.stdout)
	}
	if e := res.errors()[0]; e["message"] != want || e["failure_type"] != "config_error" {
		t.Errorf("check TRACE: %v", e)
	}
	if cs := res.msgs[1]["connectionStatus"].(map[string]any); cs["status"] != "FAILED" || cs["message"] != want {
		t.Errorf("check status: %v", cs)
	}
	for _, cmd := range []string{"discover", "read"} {
		args := []string{cmd, "--manifest", c.manifest, "--config", c.config}
		if cmd == "read" {
			args = append(args, "--catalog", c.catalog)
		}
		res := runCLI(t, args...)
		if res.code != 1 || len(res.msgs) != 1 {
			t.Fatalf("%s: exit %d:\n%s", cmd, res.code, res.stdout)
		}
		if e := res.errors()[0]; e["message"] != want || e["failure_type"] != "config_error" {
			t.Errorf("%s TRACE: %v", cmd, e)
		}
	}
	if n := len(a.lines()); n != 0 {
		t.Errorf("%d requests sent for an invalid config", n)
	}

	// The report passes; the secret, which is no JSON object, fails the
	// second rule, and is not shown.
	config["report"] = map[string]any{"definition": `{"name": "sales"}`}
	c = newConnector(t, rulesManifest(a.URL, validations), config, "items")
	res = c.read(t)
	want = `Config validation error: value {{ config['api_key'] }} does not pass spec.config_normalization_rules.validations[1]: the value is not valid JSON`
	if res.code != 1 || len(res.errors()) != 1 || res.errors()[0]["message"] != want {
		t.Fatalf("exit %d:\n%s", res.code, res.stdout)
	}
	if strings.Contains(res.stdout, "sekret") {
		t.Errorf("the secret is printed:\n%s", res.stdout)
	}
}

// A validation whose key is not in the config is skipped (the key is
// optional), with an INFO log; a config passing every rule reads.
func TestConfigValidationPassesOrSkips(t *testing.T) {
	a := itemsAPI(t)
	rules := `type: ConfigNormalizationRules
validations:
  - type: DpathValidator
    field_path: [report, definition]
    validation_strategy:
      type: ValidateAdheresToSchema
      base_schema: "{{ config['report_schema'] }}"`
	schema := map[string]any{"type": "object", "required": []any{"name"}}
	c := newConnector(t, rulesManifest(a.URL, rules), map[string]any{"region": "eu", "report_schema": schema}, "items")
	res := c.read(t)
	if res.code != 0 {
		t.Fatalf("exit %d:\n%s", res.code, res.stdout)
	}
	equalLists(t, "logs", ruleLogs(res), []string{"spec.config_normalization_rules.validations[0]: config key report.definition is not set; validation skipped"})

	c = newConnector(t, rulesManifest(a.URL, rules), map[string]any{"region": "eu", "report_schema": schema, "report": map[string]any{"definition": map[string]any{"name": "x"}}}, "items")
	if res := c.read(t); res.code != 0 || len(ruleLogs(res)) != 0 {
		t.Fatalf("exit %d:\n%s", res.code, res.stdout)
	}
	c = newConnector(t, rulesManifest(a.URL, rules), map[string]any{"region": "eu", "report_schema": schema, "report": map[string]any{"definition": map[string]any{"title": "x"}}}, "items")
	if res := c.read(t); res.code != 1 || !strings.Contains(res.errors()[0]["message"].(string), `does not pass spec.config_normalization_rules.validations[0]: JSON schema validation error: /name: is required`) {
		t.Fatalf("exit %d:\n%s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{"GET /items?page_size=none&region=eu", "GET /items?page_size=none&region=eu"})
}

// What cannot run is refused at load with its path.
func TestConfigRulesRefusedAtLoad(t *testing.T) {
	for _, tc := range []struct{ rules, want string }{
		{"type: ConfigNormalizationRules\ntransformations:\n  - type: CustomConfigTransformation\n    class_name: source_x.components.Fix",
			"spec.config_normalization_rules.transformations[0]: " + notPermittedText},
		{"type: ConfigNormalizationRules\nvalidations:\n  - type: DpathValidator\n    field_path: [a]\n    validation_strategy: {type: CustomValidationStrategy, class_name: source_x.components.Check}",
			"spec.config_normalization_rules.validations[0].validation_strategy: " + notPermittedText},
		{"type: ConfigNormalizationRules\nconfig_migrations:\n  - type: ConfigMigration\n    transformations: [{type: ConfigRenameField, field_path: [a]}]",
			`spec.config_normalization_rules.config_migrations[0].transformations[0].type: unknown component type "ConfigRenameField" (supported: ConfigRemapField, ConfigAddFields, ConfigRemoveFields)`},
		{"type: ConfigNormalizationRules\nvalidations:\n  - type: PredicateValidator\n    value: 1\n    validation_strategy: {type: ValidateAdheresToSchema, base_schema: '{\"type\": 5}'}",
			"spec.config_normalization_rules.validations[0].validation_strategy.base_schema: is not a valid JSON schema"},
		{"type: ConfigNormalizationRules\nmigrations: []",
			`spec.config_normalization_rules.migrations: ConfigNormalizationRules has no field "migrations"`},
	} {
		c := newConnector(t, rulesManifest("http://127.0.0.1:1", tc.rules), nil, "items")
		res := c.read(t)
		if res.code != 1 || len(res.errors()) != 1 {
			t.Fatalf("exit %d:\n%s", res.code, res.stdout)
		}
		if msg := res.errors()[0]["message"].(string); !strings.Contains(msg, tc.want) {
			t.Errorf("got  %s\nwant %s", msg, tc.want)
		}
	}
}

// ruleLogs lists the messages of the LOG messages about config rules.
func ruleLogs(res result) []string {
	var out []string
	for _, m := range res.ofType("LOG") {
		if msg := m["log"].(map[string]any)["message"].(string); strings.HasPrefix(msg, "spec.config_normalization_rules") {
			out = append(out, msg)
		}
	}
	return out
}

// A test read applies the migrations and transformations to the builder's
// testing values in memory: no CONTROL message, the file stays.
func TestConfigMigrationInTestReadStaysInMemory(t *testing.T) {
	a := itemsAPI(t)
	c := newConnector(t, rulesManifest(a.URL, migrations), map[string]any{"api_key": "sekret-key", "region": "eu"}, "items")
	before, _ := os.ReadFile(c.config)
	res := runCLI(t, "test-read", "--manifest", c.manifest, "--config", c.config, "--stream", "items")
	if res.code != 0 || len(res.ofType("CONTROL")) != 0 || len(res.ofType("RECORD")) != 1 {
		t.Fatalf("exit %d:\n%s", res.code, res.stdout)
	}
	if after, _ := os.ReadFile(c.config); string(after) != string(before) {
		t.Errorf("the config file was rewritten: %s", after)
	}
	equalLists(t, "requests", a.lines(), []string{"GET /items?page_size=50&region=europe"})
}

// A rule that fails to run (its map template gives no mapping) is a
// config_error naming it; check answers FAILED and exits 0.
func TestConfigRuleThatCannotRun(t *testing.T) {
	rules := "type: ConfigNormalizationRules\nconfig_migrations:\n  - type: ConfigMigration\n    transformations: [{type: ConfigRemapField, field_path: [region], map: \"{{ config.region }}\"}]"
	c := newConnector(t, rulesManifest("http://127.0.0.1:1", rules), map[string]any{"region": "eu"}, "items")
	res := c.check(t)
	want := "spec.config_normalization_rules.config_migrations[0].transformations[0].map: the map must give a mapping, got a string"
	if res.code != 0 || len(res.msgs) != 2 || res.errors()[0]["message"] != want || res.errors()[0]["failure_type"] != "config_error" {
		t.Fatalf("exit %d:\n%s", res.code, res.stdout)
	}
	if cs := res.ofType("CONNECTION_STATUS")[0]["connectionStatus"].(map[string]any); cs["status"] != "FAILED" || cs["message"] != want {
		t.Errorf("status %v", cs)
	}
}
