package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// catalogSchemas runs discover and returns each stream's JSON schema as
// compact JSON, in catalog order.
func catalogSchemas(t *testing.T, res result) []string {
	t.Helper()
	cats := res.ofType("CATALOG")
	if res.code != 0 || len(cats) != 1 {
		t.Fatalf("exit %d, %d catalogs: %s", res.code, len(cats), res.stdout)
	}
	var out []string
	for _, s := range cats[0]["catalog"].(map[string]any)["streams"].([]any) {
		sm := s.(map[string]any)
		b, _ := json.Marshal(sm["json_schema"])
		out = append(out, sm["name"].(string)+" "+string(b))
	}
	return out
}

func discover(c *connector, t *testing.T) result {
	return runCLI(t, "discover", "--manifest", c.manifest, "--config", c.config)
}

// namedStream is a stream of the given name reading url/path, with YAML
// added at the stream level.
func namedStream(name, url, path, extra string) string {
	return fmt.Sprintf(`  - type: DeclarativeStream
    name: %s
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: %q, path: %s}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}
%s
`, name, url, path, indent(extra, 4))
}

func source(streams ...string) string {
	return "version: 6.0.0\ntype: DeclarativeSource\ncheck: {type: CheckStream, stream_names: [inline]}\nstreams:\n" + strings.Join(streams, "")
}

// The dynamic schema's filter and transformations see no slice (None), and a
// types_mapping condition no parameters, as the CDK renders them.
func TestDiscoverSchemaLoaders(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		fmt.Fprint(w, `{"fields":[{"name":"id","type":"int"},{"name":"when","type":"timestamp"},{"name":"tags","type":"array"},{"name":"skip_me","type":"string"},{"name":"either","type":["string","integer"]},{"name":"plain"}]}`)
	})
	m := source(
		namedStream("inline", a.URL, "/x", "schema_loader: {type: InlineSchemaLoader, schema: {type: object, properties: {id: {type: integer}}}}"),
		namedStream("packaged", a.URL, "/x", `schema_loader: {type: JsonFileSchemaLoader, file_path: "./source_demo/schemas/{{ parameters['file'] }}.json"}
$parameters: {file: users}`),
		namedStream("users", a.URL, "/x", ""),
		namedStream("none", a.URL, "/x", ""),
		namedStream("merged", a.URL, "/x", `schema_loader:
  - {type: InlineSchemaLoader, schema: {properties: {id: {type: integer}, name: {type: string}}}}
  - {type: JsonFileSchemaLoader, file_path: schemas/users.json}`),
		namedStream("dynamic", a.URL, "/x", `schema_loader:
  type: DynamicSchemaLoader
  retriever:
    type: SimpleRetriever
    requester: {type: HttpRequester, url_base: "`+a.URL+`", path: /fields, request_headers: {X-Region: "{{ config['region'] }}"}}
    record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}
  $parameters: {lp: 1}
  schema_filter: {type: RecordFilter, condition: "{{ 'skip_me' not in record and stream_slice is none and next_page_token is none }}"}
  schema_transformations:
    - type: AddFields
      condition: "{{ stream_partition is none and parameters.lp == 1 }}"
      fields: [{path: [added, type], value: string}]
  schema_type_identifier:
    schema_pointer: [fields]
    key_pointer: [name]
    type_pointer: [type]
    types_mapping:
      - {target_type: integer, current_type: int}
      - {target_type: timestamp_with_timezone, current_type: timestamp, condition: "{{ raw_schema['name'] == 'when' and parameters == {} }}"}
      - {target_type: {field_type: array, items: string}, current_type: array}`),
	)
	c := newConnector(t, m, map[string]any{"region": "eu"})
	schemas := filepath.Join(c.dir, "schemas")
	os.MkdirAll(filepath.Join(schemas, "shared"), 0o700)
	writeFile(t, schemas, "users.json", `{"type":"object","properties":{"id":{"type":"integer"},"address":{"$ref":"address.json"}}}`)
	writeFile(t, filepath.Join(schemas, "shared"), "address.json", `{"type":"object","properties":{"city":{"type":"string"}}}`)

	got := catalogSchemas(t, discover(c, t))
	users := `{"properties":{"address":{"properties":{"city":{"type":"string"}},"type":"object"},"id":{"type":"integer"}},"type":"object"}`
	equalLists(t, "schemas", got, []string{
		`inline {"properties":{"id":{"type":"integer"}},"type":"object"}`,
		"packaged " + users,
		"users " + users,
		`none {}`,
		`merged {"$schema":"http://json-schema.org/draft-07/schema#","properties":{"address":{"properties":{"city":{"type":"string"}},"type":"object"},"id":{"type":"integer"},"name":{"type":"string"}},"type":["null","object"]}`,
		`dynamic {"$schema":"https://json-schema.org/draft-07/schema#","additionalProperties":true,"properties":{"added":{"type":"string"},` +
			`"either":{"oneOf":[{"type":["null","string"]},{"type":["null","integer"]}]},"id":{"type":["null","integer"]},"plain":{"type":["null","string"]},` +
			`"tags":{"items":{"type":["null","string"]},"type":["null","array"]},"when":{"format":"date-time","type":["null","string"]}},"type":"object"}`,
	})
	reqs := a.requests()
	if len(reqs) != 1 || reqs[0].Path != "/fields" || reqs[0].Header.Get("X-Region") != "eu" {
		t.Errorf("dynamic schema requests: %+v", reqs)
	}
}

func TestSchemaLoaderErrors(t *testing.T) {
	cases := map[string]string{
		`schema_loader: {type: JsonFileSchemaLoader, file_path: "./schemas/missing.json"}`: `streams[0].schema_loader.file_path: schema file "./schemas/missing.json" not found next to the manifest`,
		`schema_loader: {type: JsonFileSchemaLoader, file_path: "/etc/passwd"}`:            `streams[0].schema_loader.file_path: schema file "/etc/passwd" must be a path inside the manifest's folder`,
		`schema_loader: {type: JsonFileSchemaLoader, file_path: "../outside.json"}`:        `streams[0].schema_loader.file_path: schema file "../outside.json" must be a path inside the manifest's folder`,
		`schema_loader: {type: JsonFileSchemaLoader, file_path: "bad.json"}`:               `streams[0].schema_loader.file_path: schema file`,
	}
	for extra, want := range cases {
		c := newConnector(t, source(namedStream("inline", "http://127.0.0.1:1", "/x", extra)), nil)
		writeFile(t, c.dir, "bad.json", `{"type":`)
		res := discover(c, t)
		errs := res.errors()
		if res.code != 1 || len(errs) != 1 || !strings.HasPrefix(errs[0]["message"].(string), want) || errs[0]["failure_type"] != "config_error" {
			t.Errorf("%s:\n got exit %d %v\nwant a config_error starting %q", extra, res.code, errs, want)
		}
	}
}

// A field type the API answers and the manifest does not map fails discover
// with a system_error naming the schema loader, as the reference's does (no
// config fixes it); so does an answer whose field descriptions are no list.
func TestDynamicSchemaTheManifestCannotReadIsASystemError(t *testing.T) {
	for body, want := range map[string]string{
		`{"fields":[{"name":"odd","type":"weird"}]}`: `streams[0].schema_loader.schema_type_identifier: field "odd": type "weird" is not one of string,`,
		`{"fields":{"name":"odd"}}`:                  `streams[0].schema_loader.schema_type_identifier.schema_pointer: the field descriptions are an object, not a list`,
	} {
		a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) { fmt.Fprint(w, body) })
		m := source(namedStream("inline", a.URL, "/x", `schema_loader:
  type: DynamicSchemaLoader
  retriever:
    type: SimpleRetriever
    requester: {type: HttpRequester, url_base: "`+a.URL+`", path: /fields}
    record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}
  schema_type_identifier:
    schema_pointer: [fields]
    key_pointer: [name]
    type_pointer: [type]`))
		res := discover(newConnector(t, m, nil), t)
		errs := res.errors()
		if res.code != 1 || len(errs) != 1 || !strings.HasPrefix(errs[0]["message"].(string), want) || errs[0]["failure_type"] != "system_error" {
			t.Errorf("answer %s:\n got exit %d %v\nwant a system_error starting %q", body, res.code, errs, want)
		}
		equalLists(t, "requests", a.lines(), []string{"GET /fields"})
	}
}

// A property written without a schema (a YAML key with nothing after it)
// gets the empty schema, with a warning, so that the catalog is valid.
func TestDiscoverFillsNullPropertySchemas(t *testing.T) {
	m := source(namedStream("inline", "http://127.0.0.1:1", "/x", `schema_loader:
  type: InlineSchemaLoader
  schema:
    type: object
    properties:
      site:
      show: {type: object, properties: {network: {type: object, properties: {officialSite: }}}}
      tags: {type: array, items: {type: object, properties: {url: }}}`))
	res := discover(newConnector(t, m, nil), t)
	equalLists(t, "schemas", catalogSchemas(t, res), []string{
		`inline {"properties":{"show":{"properties":{"network":{"properties":{"officialSite":{}},"type":"object"}},"type":"object"},"site":{},"tags":{"items":{"properties":{"url":{}},"type":"object"},"type":"array"}},"type":"object"}`,
	})
	equalLists(t, "warnings", res.logs("WARN"), []string{
		"Stream inline: schema property show.network.officialSite is null, which is not a schema; it is given the empty schema (any value)",
		"Stream inline: schema property site is null, which is not a schema; it is given the empty schema (any value)",
		"Stream inline: schema property tags.url is null, which is not a schema; it is given the empty schema (any value)",
	})
}
