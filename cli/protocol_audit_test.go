package cli

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// threeStreams is a manifest of a stream with records (a), an empty one (e)
// and one its API refuses (f).
func threeStreams(url string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `version: 6.0.0
check: {stream_names: [a]}
definitions:
  req: {type: HttpRequester, url_base: "%s", authenticator: {type: BearerAuthenticator, api_token: "{{ config['api_key'] }}"}}
streams:
`, url)
	for _, name := range []string{"a", "e", "f"} {
		fmt.Fprintf(&b, `  - type: DeclarativeStream
    name: %[1]s
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/req", path: /%[1]s}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
`, name)
	}
	b.WriteString(`spec:
  type: Spec
  documentation_url: https://example.com/docs
  connection_specification:
    $schema: http://json-schema.org/draft-07/schema#
    type: object
    additionalProperties: true
    required: [api_key]
    properties:
      api_key: {type: string, airbyte_secret: true}
`)
	return b.String()
}

func threeStreamsAPI(t *testing.T) *api {
	return newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		switch r.URL.Path {
		case "/a":
			fmt.Fprint(w, `{"data":[{"id":1},{"id":2}]}`)
		case "/e":
			fmt.Fprint(w, `{"data":[]}`)
		default:
			w.WriteHeader(404)
			fmt.Fprint(w, `{"error":"gone"}`)
		}
	})
}

// lineStream finds the stream a message line is about: a record's
// stream, a stream descriptor's name, or the stream a LOG counts records of.
var lineStream = regexp.MustCompile(`"stream":"([^"]*)"|"stream_descriptor":\{"name":"([^"]*)"|records from stream ([^"]*)"`)

func status(stream, s string) string {
	return `{"type":"TRACE","trace":{"type":"STREAM_STATUS","emitted_at":0,"stream_status":{"stream_descriptor":{"name":"` + stream + `"},"status":"` + s + `"}}}`
}

func fullRefreshState(stream string, count int) string {
	return fmt.Sprintf(`{"type":"STATE","state":{"type":"STREAM","stream":{"stream_descriptor":{"name":%q},"stream_state":{"__ab_no_cursor_state_message":true}},"sourceStats":{"recordCount":%d.0}}}`, stream, count)
}

// TestReadMessageOrderPerStream: each stream's messages come in the order
// the protocol and acceptance tests check: STARTED, RUNNING, its records,
// its STATE (recordCount with a decimal point, no namespace), COMPLETE; an
// empty stream too has RUNNING before its STATE. A failing stream is
// STARTED, RUNNING, its STATE (as the reference writes a failed stream's),
// its TRACE ERROR (with its stream_descriptor), INCOMPLETE, and the
// other streams still run; the streams start in catalog order (they are read
// at the same time, so their messages interleave); the read ends with one
// TRACE ERROR without stream naming the failed streams, and exit code 1.
// Every emitted_at is the current time in epoch milliseconds.
func TestReadMessageOrderPerStream(t *testing.T) {
	a := threeStreamsAPI(t)
	c := newConnector(t, threeStreams(a.URL), map[string]any{"api_key": "k-123"}, "f", "a", "e")
	before := time.Now().UnixMilli()
	res := c.read(t)
	after := time.Now().UnixMilli()
	want := map[string][]string{
		"f": {
			status("f", "STARTED"),
			status("f", "RUNNING"),
			fullRefreshState("f", 0),
			`{"type":"TRACE","trace":{"type":"ERROR","emitted_at":0,"error":{"message":"stream f: HTTP 404 Not Found from GET ` + a.URL + `/f: {\"error\":\"gone\"}","failure_type":"system_error","stream_descriptor":{"name":"f"}}}}`,
			status("f", "INCOMPLETE"),
		},
		"a": {
			status("a", "STARTED"),
			status("a", "RUNNING"),
			`{"type":"RECORD","record":{"stream":"a","data":{"id":1},"emitted_at":0}}`,
			`{"type":"RECORD","record":{"stream":"a","data":{"id":2},"emitted_at":0}}`,
			fullRefreshState("a", 2),
			`{"type":"LOG","log":{"level":"INFO","message":"Read 2 records from stream a"}}`,
			status("a", "COMPLETE"),
		},
		"e": {
			status("e", "STARTED"),
			status("e", "RUNNING"),
			fullRefreshState("e", 0),
			`{"type":"LOG","log":{"level":"INFO","message":"Read 0 records from stream e"}}`,
			status("e", "COMPLETE"),
		},
	}
	if res.code != 1 {
		t.Errorf("exit %d, want 1", res.code)
	}
	lines := strings.Split(strings.TrimSuffix(emittedAt.ReplaceAllString(res.stdout, `"emitted_at":0`), "\n"), "\n")
	byStream := map[string][]string{}
	var started []string
	for _, l := range lines[:len(lines)-1] {
		m := lineStream.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("a line about no stream before the last: %s", l)
		}
		name := m[1] + m[2] + m[3]
		byStream[name] = append(byStream[name], l)
		if strings.Contains(l, `"status":"STARTED"`) {
			started = append(started, name)
		}
	}
	for _, s := range []string{"f", "a", "e"} {
		equalLists(t, "messages of "+s, byStream[s], want[s])
	}
	equalLists(t, "streams started", started, []string{"f", "a", "e"})
	equalLists(t, "last line", lines[len(lines)-1:], []string{`{"type":"TRACE","trace":{"type":"ERROR","emitted_at":0,"error":{"message":"During the sync, the following streams did not sync successfully: f","failure_type":"config_error"}}}`})
	for _, m := range res.msgs {
		var at any
		switch m["type"] {
		case "RECORD":
			at = m["record"].(map[string]any)["emitted_at"]
		case "TRACE":
			at = m["trace"].(map[string]any)["emitted_at"]
		default:
			continue
		}
		if ms, ok := at.(float64); !ok || int64(ms) < before || int64(ms) > after {
			t.Errorf("emitted_at %v is not the time of the run in epoch milliseconds (%d..%d)", at, before, after)
		}
	}
}

// TestReadEmptyCatalog: a catalog without streams reads nothing, prints
// nothing and exits 0, as Airbyte's CDK does.
func TestReadEmptyCatalog(t *testing.T) {
	a := threeStreamsAPI(t)
	c := newConnector(t, threeStreams(a.URL), map[string]any{"api_key": "k-123"})
	res := c.read(t)
	if res.code != 0 || res.stdout != "" || len(a.requests()) != 0 {
		t.Errorf("exit %d, stdout %q, requests %v", res.code, res.stdout, a.lines())
	}
}

// TestLogLevelDebugEnvironment: the platform turns debug logs on with the
// environment variable LOG_LEVEL=debug (any case), as Airbyte's entrypoint
// reads it: DEBUG LOG lines, one per request and response, secrets masked.
func TestLogLevelDebugEnvironment(t *testing.T) {
	a := threeStreamsAPI(t)
	c := newConnector(t, threeStreams(a.URL), map[string]any{"api_key": "k-123"})
	res := c.check(t)
	if want := `{"type":"CONNECTION_STATUS","connectionStatus":{"status":"SUCCEEDED"}}` + "\n"; res.stdout != want {
		t.Fatalf("without LOG_LEVEL:\n got: %s\nwant: %s", res.stdout, want)
	}
	t.Setenv("LOG_LEVEL", "DEBUG")
	res = c.check(t)
	var debug []string
	for _, m := range res.ofType("LOG") {
		if l := m["log"].(map[string]any); l["level"] == "DEBUG" {
			debug = append(debug, l["message"].(string))
		}
	}
	if len(debug) != 2 || !strings.HasPrefix(debug[0], "Request GET "+a.URL+"/a headers ") || !strings.Contains(debug[0], `"Authorization":"Bearer ****"`) ||
		!strings.HasPrefix(debug[1], "Response HTTP 200 to GET "+a.URL+"/a: ") {
		t.Errorf("debug logs: %q", debug)
	}
	if strings.Contains(res.stdout, "k-123") || len(res.ofType("CONNECTION_STATUS")) != 1 {
		t.Errorf("stdout: %s", res.stdout)
	}
}

// TestSpecTakesConfig: spec accepts --config, as Airbyte's
// source-declarative-manifest tolerates it: the manifest of --manifest
// wins, else the config's __injected_declarative_manifest; a config file
// that cannot be read is one TRACE system_error and exit 1.
func TestSpecTakesConfig(t *testing.T) {
	c := newConnector(t, threeStreams("http://127.0.0.1:1"), map[string]any{"api_key": "k-123"})
	wantSpec := `{"type":"SPEC","spec":{"connectionSpecification":{"$schema":"http://json-schema.org/draft-07/schema#","additionalProperties":true,"properties":{"api_key":{"airbyte_secret":true,"type":"string"}},"required":["api_key"],"type":"object"},"documentationUrl":"https://example.com/docs","supportsDBT":false,"supportsNormalization":false}}` + "\n"
	m, err := yamlToMap(threeStreams("http://127.0.0.1:1"))
	if err != nil {
		t.Fatal(err)
	}
	injected := newConnector(t, "", map[string]any{"__injected_declarative_manifest": m})
	missing := c.dir + "/none.json"
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"spec", "--manifest", c.manifest, "--config", c.config}, 0, wantSpec},
		{[]string{"spec", "--config", injected.config}, 0, wantSpec},
		{[]string{"spec", "--config", missing}, 1, `{"type":"TRACE","trace":{"type":"ERROR","emitted_at":0,"error":{"message":"cannot read the config file: open ` + missing + `: no such file or directory","failure_type":"system_error"}}}` + "\n"},
	} {
		res := runCLI(t, tc.args...)
		if got := emittedAt.ReplaceAllString(res.stdout, `"emitted_at":0`); res.code != tc.code || got != tc.want {
			t.Errorf("%v: exit %d\n got: %s\nwant: %s", tc.args, res.code, got, tc.want)
		}
	}
}

// TestDefaultSchemaFileIsInSchemasFolder: a stream without schema_loader
// takes schemas/<name>.json next to the manifest, as the reference's
// default ./<package>/schemas/<name>.json; never <name>.json beside the
// manifest: a stream named config got the config file, secrets included,
// as its schema in the catalog.
func TestDefaultSchemaFileIsInSchemasFolder(t *testing.T) {
	manifest := `version: 6.0.0
check: {stream_names: [config]}
streams:
`
	for _, name := range []string{"config", "users"} {
		manifest += `  - type: DeclarativeStream
    name: ` + name + `
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: "http://127.0.0.1:1", path: /x}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}
`
	}
	c := newConnector(t, manifest, map[string]any{"api_key": "k-123"})
	writeFile(t, c.dir, "users.json", `{"type":"object","properties":{"wrong":{"type":"string"}}}`)
	if err := os.Mkdir(filepath.Join(c.dir, "schemas"), 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, c.dir, "schemas/users.json", `{"type":"object","properties":{"id":{"type":"integer"}}}`)
	res := runCLI(t, "discover", "--manifest", c.manifest, "--config", c.config)
	want := `{"type":"CATALOG","catalog":{"streams":[` +
		`{"name":"config","json_schema":{},"supported_sync_modes":["full_refresh"],"is_resumable":false,"is_file_based":false},` +
		`{"name":"users","json_schema":{"properties":{"id":{"type":"integer"}},"type":"object"},"supported_sync_modes":["full_refresh"],"is_resumable":false,"is_file_based":false}]}}` + "\n"
	if res.code != 0 || res.stdout != want {
		t.Errorf("exit %d\n got: %s\nwant: %s", res.code, res.stdout, want)
	}
}
