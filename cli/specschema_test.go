package cli

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// A spec's pattern is a Python regular expression, as Airbyte's runtime
// validates the config with Python's jsonschema: google-analytics-data-api's
// custom report names use a lookahead, `^(?!(cohort_|RESERVED_)).*$`, which
// Go's regexp refuses. The spec is accepted, a name the pattern allows is
// checked against the API, and one it refuses fails the check before any
// request, naming the config key.
func TestSpecPatternIsPythonRegex(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) { fmt.Fprint(w, `{"data":[{"id":1}]}`) })
	manifest := `version: 6.0.0
check: {stream_names: [a]}
streams:
  - type: DeclarativeStream
    name: a
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: "` + a.URL + `", path: /a}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
spec:
  type: Spec
  connection_specification:
    $schema: https://json-schema.org/draft-07/schema#
    type: object
    properties:
      reports:
        type: array
        items:
          type: object
          properties:
            name: {type: string, pattern: "^(?!(cohort_|RESERVED_)).*$"}
`
	good := newConnector(t, manifest, map[string]any{"reports": []any{map[string]any{"name": "daily"}}})
	res := good.check(t)
	if res.code != 0 || res.stdout != "{\"type\":\"CONNECTION_STATUS\",\"connectionStatus\":{\"status\":\"SUCCEEDED\"}}\n" {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{"GET /a"})

	bad := newConnector(t, manifest, map[string]any{"reports": []any{map[string]any{"name": "cohort_1"}}})
	res = bad.check(t)
	st := res.ofType("CONNECTION_STATUS")
	if res.code != 0 || len(st) != 1 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	want := "Config validation error: config key reports[0].name: does not match pattern '^(?!(cohort_|RESERVED_)).*$'"
	if msg := st[0]["connectionStatus"].(map[string]any)["message"]; msg != want {
		t.Errorf("message:\n got %v\nwant %s", msg, want)
	}
	equalLists(t, "no request for a refused config", a.lines(), []string{"GET /a"})
}

// A spec that is not a valid JSON schema (hellobaton's required lists
// api_key twice, which the draft-07 meta-schema refuses) is an invalid
// manifest on check, discover and read, before any request: Airbyte's
// runtime refuses it too (jsonschema's check_schema, before it validates
// the config), reported there as "Something went wrong in the connector".
func TestSpecNotAValidSchemaIsAnInvalidManifest(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) { fmt.Fprint(w, `{"data":[{"id":1}]}`) })
	c := newConnector(t, strings.Replace(twoStreams(a.URL), "required: [api_key]", "required: [api_key, api_key]", 1), map[string]any{"api_key": "k"}, "a")
	const want = "invalid manifest: spec.connection_specification: is not a valid JSON schema: /required: items at index 0 and 1 are equal"
	res := c.check(t)
	st := res.ofType("CONNECTION_STATUS")
	if res.code != 0 || len(st) != 1 || st[0]["connectionStatus"].(map[string]any)["message"] != want {
		t.Errorf("check: exit %d: %s", res.code, res.stdout)
	}
	for _, res := range []result{res, runCLI(t, "discover", "--manifest", c.manifest, "--config", c.config), c.read(t)} {
		errs := res.errors()
		if len(errs) != 1 || errs[0]["failure_type"] != "config_error" || errs[0]["message"] != want {
			t.Errorf("errors %v", errs)
		}
	}
	equalLists(t, "requests", a.lines(), nil)
}
