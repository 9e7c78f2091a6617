package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// testReadData runs the subcommand and returns the StreamRead as a map,
// without the response headers that change between runs.
func testReadData(t *testing.T, c *connector, stream string, extra ...string) map[string]any {
	t.Helper()
	res := runCLI(t, append([]string{"test-read", "--manifest", c.manifest, "--config", c.config, "--stream", stream}, extra...)...)
	recs := res.ofType("RECORD")
	if res.code != 0 || len(recs) != 1 {
		t.Fatalf("exit %d: %s %s", res.code, res.stdout, res.stderr)
	}
	return stripVolatile(recs[0]["record"].(map[string]any)["data"]).(map[string]any)
}

func compactJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// A page the API refuses is shown with its request and response, as the
// builder does: Airbyte logs each exchange before its error handler runs.
func TestTestReadShowsTheFailedPage(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		if r.URL.Query().Get("page") == "2" {
			w.WriteHeader(403)
			fmt.Fprint(w, `{"error":"forbidden for key k-secret"}`)
			return
		}
		fmt.Fprint(w, `{"data":[{"id":1}],"next":2}`)
	})
	m := stream("s", "url_base: "+a.URL+"\npath: /s\nauthenticator: {type: ApiKeyAuthenticator, api_token: \"{{ config['api_key'] }}\", inject_into: {type: RequestOption, inject_into: header, field_name: X-Key}}", "[data]",
		"paginator:\n  type: DefaultPaginator\n  page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}\n  pagination_strategy: {type: CursorPagination, cursor_value: \"{{ response.next }}\"}") +
		"spec:\n  type: Spec\n  connection_specification:\n    type: object\n    properties:\n      api_key: {type: string, airbyte_secret: true}\n"
	c := newConnector(t, m, map[string]any{"api_key": "k-secret"})
	data := testReadData(t, c, "s")
	want := `[{"auxiliary_requests":[],"pages":[` +
		`{"records":[{"id":1}],"request":{"body":null,"headers":{"X-Key":"****"},"http_method":"GET","url":"` + a.URL + `/s"},"response":{"body":"{\"data\":[{\"id\":1}],\"next\":2}","headers":{"Content-Type":"application/json"},"status":200}},` +
		`{"records":[],"request":{"body":null,"headers":{"X-Key":"****"},"http_method":"GET","url":"` + a.URL + `/s?page=2"},"response":{"body":"{\"error\":\"forbidden for key ****\"}","headers":{"Content-Type":"application/json"},"status":403}}` +
		`],"slice_descriptor":"{}","state":[{"data":null,"destinationStats":null,"global_":null,"sourceStats":{"recordCount":1},"stream":{"stream_descriptor":{"name":"s","namespace":null},"stream_state":{"__ab_no_cursor_state_message":true}},"type":"STREAM"}]}]`
	if got := compactJSON(data["slices"]); got != want {
		t.Errorf("slices\n got: %s\nwant: %s", got, want)
	}
	msg := `"stream s: HTTP 403 Forbidden from GET ` + a.URL + `/s?page=2: {\"error\":\"forbidden for key ****\"}"`
	wantLogs := `[{"internal_message":` + msg + `,"level":"ERROR","message":` + msg + `,"stacktrace":null}]`
	if got := compactJSON(data["logs"]); got != wantLogs {
		t.Errorf("logs\n got: %s\nwant: %s", got, wantLogs)
	}
	equalLists(t, "requests", a.lines(), []string{"GET /s", "GET /s?page=2"})
}

// A page whose body is no JSON is shown too, with the body the API sent.
func TestTestReadShowsAPageThatCannotBeDecoded(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<html>maintenance</html>`)
	})
	c := newConnector(t, stream("s", "url_base: "+a.URL+"\npath: /s", "[data]", ""), nil)
	data := testReadData(t, c, "s")
	want := `[{"auxiliary_requests":[],"pages":[{"records":[],"request":{"body":null,"headers":{},"http_method":"GET","url":"` + a.URL + `/s"},"response":{"body":"\u003chtml\u003emaintenance\u003c/html\u003e","headers":{"Content-Type":"text/html"},"status":200}}],"slice_descriptor":"{}","state":[{"data":null,"destinationStats":null,"global_":null,"sourceStats":{"recordCount":0},"stream":{"stream_descriptor":{"name":"s","namespace":null},"stream_state":{"__ab_no_cursor_state_message":true}},"type":"STREAM"}]}]`
	if got := compactJSON(data["slices"]); got != want {
		t.Errorf("slices\n got: %s\nwant: %s", got, want)
	}
	if logs := compactJSON(data["logs"]); !strings.Contains(logs, `"level":"ERROR"`) || !strings.Contains(logs, "not valid JSON") {
		t.Errorf("logs: %s", logs)
	}
}

// The request a test read shows carries the Content-Type the API received:
// JSON for the token request (seed 4) and for a JSON body, form for a form body.
func TestTestReadShowsTheContentTypeSent(t *testing.T) {
	a := builderAPI(t)
	m := strings.ReplaceAll(builderManifest(a.URL), "field_name: page", "field_name: cursor")
	m = strings.Replace(m, "path: /s\n", "path: /s\n        http_method: POST\n        request_body_data: {q: x}\n", 1)
	c := newConnector(t, m, map[string]any{"client_id": "cid", "client_secret": "cs", "client_refresh_token": "r"})
	data := testReadData(t, c, "s", "--max-pages", "1")
	aux := data["auxiliary_requests"].([]any)[0].(map[string]any)["request"].(map[string]any)
	if got := compactJSON(aux["headers"]); got != `{"Accept":"application/json","Content-Type":"application/json"}` {
		t.Errorf("token request headers: %s", got)
	}
	page := data["slices"].([]any)[0].(map[string]any)["pages"].([]any)[0].(map[string]any)["request"].(map[string]any)
	if got := compactJSON(page); got != `{"body":"q=x","headers":{"Authorization":"Bearer ****","Content-Type":"application/x-www-form-urlencoded"},"http_method":"POST","url":"`+a.URL+`/s"}` {
		t.Errorf("page request: %s", got)
	}
	for _, r := range a.requests() {
		if r.Method == "POST" && r.Path == "/s" && r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
			t.Errorf("the API received Content-Type %q", r.Header.Get("Content-Type"))
		}
	}
}

// The manifest's version is read as Airbyte's declarative source reads it: a
// version that is no version, or one older than the 0.29 language, is refused
// at load with its reason, by every command.
func TestManifestVersionIsValidated(t *testing.T) {
	a := dataAPI(t)
	good := stream("s", "url_base: "+a.URL+"\npath: /s", "[data]", "")
	cases := []struct{ version, want string }{
		{"abc", `invalid manifest: manifest.version: "abc" is not a valid version (such as 6.1.0)`},
		{"'6.0'", ""},
		{"6.44.0", ""},
		{"v6.1.0", ""},
		{"7.0.0rc1", ""},
		{"0.29.0", ""},
		{"0.28.9", `invalid manifest: manifest.version: 0.28.9 is older than 0.29.0, when the low-code language changed incompatibly: it cannot run here`},
		{"0.1.0", `invalid manifest: manifest.version: 0.1.0 is older than 0.29.0, when the low-code language changed incompatibly: it cannot run here`},
		{"6.0.0.0.x", `invalid manifest: manifest.version: "6.0.0.0.x" is not a valid version (such as 6.1.0)`},
	}
	for _, tc := range cases {
		c := newConnector(t, strings.Replace(good, "version: 6.0.0", "version: "+tc.version, 1), nil)
		res := c.check(t)
		var got string
		if errs := res.errors(); len(errs) > 0 {
			got = errs[0]["message"].(string)
			if errs[0]["failure_type"] != "config_error" {
				t.Errorf("%s: failure_type %v", tc.version, errs[0]["failure_type"])
			}
		}
		if got != tc.want {
			t.Errorf("version %s:\n got: %q\nwant: %q", tc.version, got, tc.want)
		}
	}
}

// The inferred schema is Airbyte's (SchemaInferrer): every type nullable with
// null last, integers as number, arrays with their items, fields only ever
// null left out, the primary key and cursor field required and not nullable,
// and no schema when no record was read.
func TestTestReadInferredSchemaAsAirbyte(t *testing.T) {
	body := `{"data":[{"id":1,"org":{"id":"o1","tags":["a"]},"n":null,"mixed":1,"updated":"2024-01-02"},` +
		`{"id":2,"org":{"id":"o2","tags":[]},"n":null,"mixed":"x","updated":"2024-01-03","flags":[true,null]}]}`
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		if r.URL.Path == "/empty" {
			fmt.Fprint(w, `{"data":[]}`)
			return
		}
		fmt.Fprint(w, body)
	})
	m := stream("s", "url_base: "+a.URL+"\npath: /s", "[data]", "")
	m = strings.Replace(m, "primary_key: [id]", "primary_key: [[id], [org, id]]", 1)
	c := newConnector(t, m, nil)
	data := testReadData(t, c, "s")
	want := `{"$schema":"http://json-schema.org/schema#","properties":{` +
		`"flags":{"items":{"type":["boolean","null"]},"type":["array","null"]},` +
		`"id":{"type":"number"},` +
		`"mixed":{"type":["number","string","null"]},` +
		`"org":{"properties":{"id":{"type":"string"},"tags":{"items":{"type":["string","null"]},"type":["array","null"]}},"required":["id"],"type":"object"},` +
		`"updated":{"type":["string","null"]}},` +
		`"required":["id","org"],"type":"object"}`
	if got := compactJSON(data["inferred_schema"]); got != want {
		t.Errorf("inferred_schema\n got: %s\nwant: %s", got, want)
	}
	if got := compactJSON(data["logs"]); got != `[]` {
		t.Errorf("logs: %s", got)
	}

	empty := newConnector(t, strings.Replace(stream("s", "url_base: "+a.URL+"\npath: /empty", "[data]", ""), "primary_key: [id]", "primary_key: [id]", 1), nil)
	if got := compactJSON(testReadData(t, empty, "s")["inferred_schema"]); got != `null` {
		t.Errorf("no records: inferred_schema %s", got)
	}

	missing := newConnector(t, strings.Replace(stream("s", "url_base: "+a.URL+"\npath: /s", "[data]", ""), "primary_key: [id]", "primary_key: [uuid]", 1), nil)
	d := testReadData(t, missing, "s")
	if got := compactJSON(d["logs"]); got != "[{\"internal_message\":null,\"level\":\"ERROR\",\"message\":\"Path [] does not have field `uuid` in the schema and hence can't be marked as required.\",\"stacktrace\":null}]" {
		t.Errorf("missing primary key: logs %s", got)
	}
	if got := compactJSON(d["inferred_schema"].(map[string]any)["required"]); got != `null` {
		t.Errorf("missing primary key: required %s", got)
	}
}
