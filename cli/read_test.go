package cli

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

func twoStreams(url string) string {
	return `version: 6.0.0
check: {stream_names: [a]}
definitions:
  req: {type: HttpRequester, url_base: "` + url + `", authenticator: {type: BearerAuthenticator, api_token: "{{ config['api_key'] }}"}}
streams:
  - type: DeclarativeStream
    name: a
    primary_key: id
    schema_loader: {type: InlineSchemaLoader, schema: {type: object, properties: {id: {type: integer}}}}
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/req", path: /a}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
  - type: DeclarativeStream
    name: b
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/req", path: /b}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
spec:
  type: Spec
  connection_specification:
    type: object
    required: [api_key]
    properties:
      api_key: {type: string, airbyte_secret: true}
      count: {type: integer}
`
}

func TestReadFailingStreamDoesNotStopOthers(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		if r.URL.Path == "/a" {
			w.WriteHeader(404)
			fmt.Fprint(w, `{"error":"no such thing for key secret-key-1"}`)
			return
		}
		fmt.Fprint(w, `{"data":[{"id":1},{"id":2}]}`)
	})
	c := newConnector(t, twoStreams(a.URL), map[string]any{"api_key": "secret-key-1"}, "a", "missing", "b")
	res := c.read(t)
	if res.code == 0 {
		t.Fatal("a failed stream must give a non-zero exit")
	}
	equalLists(t, "a", res.statuses("a"), []string{"STARTED", "RUNNING", "INCOMPLETE"})
	equalLists(t, "missing", res.statuses("missing"), []string{"INCOMPLETE"})
	equalLists(t, "b", res.statuses("b"), []string{"STARTED", "RUNNING", "COMPLETE"})
	equalLists(t, "b records", res.records("b"), []string{`{"id":1}`, `{"id":2}`})
	errs := res.errors()
	if len(errs) != 3 {
		t.Fatalf("errors: %v", errs)
	}
	// The streams are read at the same time: their errors come in any
	// order, the summary last.
	byStream := map[string]map[string]any{}
	for _, e := range errs[:2] {
		if d, ok := e["stream_descriptor"].(map[string]any); ok {
			byStream[fmt.Sprint(d["name"])] = e
		}
	}
	e0 := byStream["a"]
	// A 404 is a system_error, as the reference's default error mapping says.
	if e0["failure_type"] != "system_error" || !strings.Contains(fmt.Sprint(e0["message"]), "HTTP 404") || !strings.Contains(fmt.Sprint(e0["message"]), "/a") {
		t.Errorf("stream a error: %v", e0)
	}
	if e1 := byStream["missing"]; e1["failure_type"] != "config_error" || !strings.Contains(fmt.Sprint(e1["message"]), `stream "missing" of the catalog is not defined in the manifest`) {
		t.Errorf("missing stream error: %v", e1)
	}
	if strings.Contains(res.stdout, "secret-key-1") {
		t.Errorf("the secret leaked: %s", res.stdout)
	}
	if !strings.Contains(res.stdout, `"error":{"message":"During the sync, the following streams did not sync successfully: a, missing"`) {
		t.Errorf("no summary trace")
	}
}

func TestCheckSucceedsAndValidatesConfig(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) { fmt.Fprint(w, `{"data":[{"id":1},{"id":2}]}`) })
	c := newConnector(t, twoStreams(a.URL), map[string]any{"api_key": "k"}, "a")
	res := c.check(t)
	if res.code != 0 || res.stdout != "{\"type\":\"CONNECTION_STATUS\",\"connectionStatus\":{\"status\":\"SUCCEEDED\"}}\n" {
		t.Fatalf("exit %d: %q", res.code, res.stdout)
	}
	equalLists(t, "check reads one page of the check stream", a.lines(), []string{"GET /a"})

	bad := newConnector(t, twoStreams(a.URL), map[string]any{"count": "three"}, "a")
	res = bad.check(t)
	st := res.ofType("CONNECTION_STATUS")
	if res.code != 0 || len(st) != 1 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	msg := st[0]["connectionStatus"].(map[string]any)["message"].(string)
	if msg != "Config validation error: config key api_key is required; config key count: expected integer, but got string" {
		t.Errorf("message %q", msg)
	}
	res = runCLI(t, "discover", "--manifest", bad.manifest, "--config", bad.config)
	if res.code != 1 || len(res.errors()) != 1 || res.errors()[0]["failure_type"] != "config_error" {
		t.Errorf("discover with a bad config: exit %d %s", res.code, res.stdout)
	}
}

func TestDiscoverCatalog(t *testing.T) {
	c := newConnector(t, twoStreams("https://example.com"), map[string]any{"api_key": "k"})
	res := runCLI(t, "discover", "--manifest", c.manifest, "--config", c.config)
	want := `{"type":"CATALOG","catalog":{"streams":[{"name":"a","json_schema":{"properties":{"id":{"type":"integer"}},"type":"object"},"supported_sync_modes":["full_refresh"],"source_defined_primary_key":[["id"]],"is_resumable":false,"is_file_based":false},{"name":"b","json_schema":{},"supported_sync_modes":["full_refresh"],"is_resumable":false,"is_file_based":false}]}}` + "\n"
	if res.code != 0 || res.stdout != want {
		t.Fatalf("exit %d\n got: %s\nwant: %s", res.code, res.stdout, want)
	}
}

func TestInvalidCatalogAndInjectedManifest(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) { fmt.Fprint(w, `{"data":[{"id":7}]}`) })
	c := newConnector(t, twoStreams(a.URL), map[string]any{"api_key": "k"}, "a")
	bad := writeFile(t, c.dir, "bad.json", `{"streams":[{"stream":{"name":"__AIRBYTE__stream_that_does_not_exist","json_schema":{},"supported_sync_modes":["full_refresh"]},"sync_mode":"INVALID","destination_sync_mode":"INVALID"}]}`)
	res := runCLI(t, "read", "--manifest", c.manifest, "--config", c.config, "--catalog", bad)
	if res.code != 1 || len(res.errors()) != 1 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	// The manifest injected in the config, as the platform does for Builder connectors.
	m, err := yamlToMap(twoStreams(a.URL))
	if err != nil {
		t.Fatal(err)
	}
	injected := newConnector(t, "", map[string]any{"api_key": "k", "__injected_declarative_manifest": m}, "a")
	res = runCLI(t, "read", "--config", injected.config, "--catalog", injected.catalog)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "records", res.records("a"), []string{`{"id":7}`})
}

func TestBadResponsesAreClearErrors(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`<html>oops</html>`, "JsonDecoder: the response body is not valid JSON"},
		{`{"data":[1,2]}`, "a record must be a JSON object"},
	} {
		a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) { fmt.Fprint(w, tc.body) })
		fast := strings.Replace(twoStreams(a.URL), `api_token: "{{ config['api_key'] }}"}`, `api_token: "{{ config['api_key'] }}"}, error_handler: {type: DefaultErrorHandler, max_retries: 1, backoff_strategies: [{type: ConstantBackoffStrategy, backoff_time_in_seconds: 0.01}]}`, 1)
		c := newConnector(t, fast, map[string]any{"api_key": "k"}, "a")
		res := c.read(t)
		errs := res.errors()
		if res.code == 0 || len(errs) == 0 || !strings.Contains(errs[0]["message"].(string), tc.want) ||
			!strings.Contains(errs[0]["message"].(string), "stream a") || !strings.Contains(errs[0]["message"].(string), a.URL+"/a") {
			t.Errorf("%s: exit %d errors %v", tc.body, res.code, errs)
		}
	}
}

func TestUsageMistakesAndMissingFiles(t *testing.T) {
	res := runCLI(t, "read", "--config", "/nonexistent.json", "--catalog", "/nonexistent.json")
	if res.code != 1 || len(res.errors()) != 1 || !strings.Contains(res.errors()[0]["message"].(string), "cannot read the config file") {
		t.Errorf("missing config: exit %d %s", res.code, res.stdout)
	}
	res = runCLI(t, "check")
	if res.code != 2 || res.stdout != "" {
		t.Errorf("missing flag: exit %d stdout %q", res.code, res.stdout)
	}
	dir := t.TempDir()
	cfg := writeFile(t, dir, "c.json", `{}`)
	res = runCLI(t, "check", "--config", cfg)
	if st := res.ofType("CONNECTION_STATUS"); res.code != 0 || len(st) != 1 || len(res.errors()) != 1 || !strings.Contains(res.stdout, "no manifest") {
		t.Errorf("no manifest: exit %d %s", res.code, res.stdout)
	}
	broken := writeFile(t, dir, "m.yaml", "version: 6.0.0\nstreams: []\n")
	res = runCLI(t, "check", "--manifest", broken, "--config", cfg)
	st := res.ofType("CONNECTION_STATUS")
	if res.code != 0 || len(st) != 1 || st[0]["connectionStatus"].(map[string]any)["message"] != "invalid manifest: manifest.check: is required; manifest.streams: minimum 1 items required, but found 0 items" {
		t.Errorf("broken manifest: exit %d %s", res.code, res.stdout)
	}
	res = runCLI(t, "discover", "--manifest", broken, "--config", cfg)
	if res.code != 1 || len(res.errors()) != 1 || res.errors()[0]["failure_type"] != "config_error" {
		t.Errorf("broken manifest on discover: exit %d %s", res.code, res.stdout)
	}
}
