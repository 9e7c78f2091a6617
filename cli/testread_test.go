package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

func builderAPI(t *testing.T) *api {
	return newAPI(t, func(w http.ResponseWriter, r *http.Request, body string) {
		if r.URL.Path == "/oauth/token" {
			fmt.Fprint(w, `{"access_token":"access-xyz","expires_in":3600}`)
			return
		}
		if r.Header.Get("Authorization") != "Bearer access-xyz" {
			w.WriteHeader(401)
			return
		}
		switch r.URL.Query().Get("cursor") {
		case "":
			fmt.Fprint(w, `{"data":[{"id":1,"name":"a"}],"next":"c2"}`)
		case "c2":
			fmt.Fprint(w, `{"data":[{"id":2,"name":null}],"next":"c3"}`)
		default:
			fmt.Fprint(w, `{"data":[{"id":3,"name":"c"}],"next":null}`)
		}
	})
}

func builderManifest(url string) string {
	return oauthManifest(url, refreshLine, "") + `spec:
  type: Spec
  connection_specification:
    type: object
    properties:
      client_id: {type: string}
      client_secret: {type: string, airbyte_secret: true}
      client_refresh_token: {type: string, airbyte_secret: true}
`
}

// stripVolatile removes the response headers that change between runs.
func stripVolatile(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if k == "Date" || k == "Content-Length" {
				delete(x, k)
				continue
			}
			x[k] = stripVolatile(e)
		}
	case []any:
		for i, e := range x {
			x[i] = stripVolatile(e)
		}
	}
	return v
}

func TestBuilderTestReadStreamRead(t *testing.T) {
	a := builderAPI(t)
	m, _ := yamlToMap(strings.ReplaceAll(builderManifest(a.URL), "field_name: page", "field_name: cursor"))
	c := newConnector(t, "", map[string]any{"__command": "test_read", "__injected_declarative_manifest": m,
		"__test_read_config": map[string]any{"max_pages_per_slice": 2}, "client_id": "cid", "client_secret": "csecret", "client_refresh_token": "rtok"}, "s")
	res := runCLI(t, "read", "--config", c.config, "--catalog", c.catalog)
	recs := res.ofType("RECORD")
	if res.code != 0 || len(recs) != 1 || len(res.msgs) != 1 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	got, _ := json.Marshal(stripVolatile(recs[0]["record"].(map[string]any)["data"]))
	url := a.URL
	want := `{"auxiliary_requests":[{"description":"Obtains access token","request":{"body":"{\"client_id\":\"cid\",\"client_secret\":\"****\",\"grant_type\":\"refresh_token\",\"refresh_token\":\"****\"}","headers":{"Accept":"application/json","Content-Type":"application/json"},"http_method":"POST","url":"` + url + `/oauth/token"},"response":{"body":"{\"access_token\":\"****\",\"expires_in\":3600}","headers":{"Content-Type":"application/json"},"status":200},"title":"Refresh token","type":"AUTH"}],` +
		`"inferred_datetime_formats":{},"inferred_schema":{"$schema":"http://json-schema.org/schema#","properties":{"id":{"type":"number"},"name":{"type":["string","null"]}},"required":["id"],"type":"object"},"logs":[],` +
		`"slices":[{"auxiliary_requests":[],"pages":[` +
		`{"records":[{"id":1,"name":"a"}],"request":{"body":null,"headers":{"Authorization":"Bearer ****"},"http_method":"GET","url":"` + url + `/s"},"response":{"body":"{\"data\":[{\"id\":1,\"name\":\"a\"}],\"next\":\"c2\"}","headers":{"Content-Type":"application/json"},"status":200}},` +
		`{"records":[{"id":2,"name":null}],"request":{"body":null,"headers":{"Authorization":"Bearer ****"},"http_method":"GET","url":"` + url + `/s?cursor=c2"},"response":{"body":"{\"data\":[{\"id\":2,\"name\":null}],\"next\":\"c3\"}","headers":{"Content-Type":"application/json"},"status":200}}` +
		`],"slice_descriptor":"{}","state":[{"data":null,"destinationStats":null,"global_":null,"sourceStats":{"recordCount":2},"stream":{"stream_descriptor":{"name":"s","namespace":null},"stream_state":{"__ab_no_cursor_state_message":true}},"type":"STREAM"}]}],"test_read_limit_reached":true}`
	if string(got) != want {
		t.Errorf("StreamRead\n got: %s\nwant: %s", got, want)
	}
	equalLists(t, "requests stop at max_pages_per_slice", a.lines(), []string{"POST /oauth/token", "GET /s", "GET /s?cursor=c2"})
}

func TestBuilderLimitsRecordsAndResolveManifest(t *testing.T) {
	a := builderAPI(t)
	mf := strings.ReplaceAll(builderManifest(a.URL), "field_name: page", "field_name: cursor")
	m, _ := yamlToMap(mf)
	c := newConnector(t, "", map[string]any{"__command": "test_read", "__injected_declarative_manifest": m,
		"__test_read_config": map[string]any{"max_records": 2}, "client_id": "cid", "client_secret": "cs", "client_refresh_token": "r"}, "s")
	res := runCLI(t, "read", "--config", c.config, "--catalog", c.catalog)
	var data struct {
		Slices []struct {
			Pages []struct{ Records []any }
		}
		TestReadLimitReached bool `json:"test_read_limit_reached"`
	}
	b, _ := json.Marshal(res.ofType("RECORD")[0]["record"].(map[string]any)["data"])
	json.Unmarshal(b, &data)
	if len(data.Slices[0].Pages) != 2 || !data.TestReadLimitReached {
		t.Fatalf("want 2 pages and the limit flag: %s", b)
	}
	resolve := newConnector(t, "", map[string]any{"__command": "resolve_manifest", "__injected_declarative_manifest": map[string]any{
		"version": "6.0.0", "definitions": map[string]any{"r": map[string]any{"type": "HttpRequester", "url_base": "https://x"}},
		"streams": []any{map[string]any{"type": "DeclarativeStream", "$parameters": map[string]any{"name": "s"}, "retriever": map[string]any{"requester": "#/definitions/r"}}}}})
	res = runCLI(t, "read", "--config", resolve.config, "--catalog", resolve.catalog)
	recs := res.ofType("RECORD")
	if res.code != 0 || len(recs) != 1 {
		t.Fatalf("exit %d %s", res.code, res.stdout)
	}
	b, _ = json.Marshal(recs[0]["record"])
	if !strings.Contains(string(b), `"stream":"resolve_manifest"`) || !strings.Contains(string(b), `"requester":{"$parameters":{"name":"s"},"name":"s","type":"HttpRequester","url_base":"https://x"}`) {
		t.Errorf("resolved manifest: %s", b)
	}
}

func TestTestReadSubcommandPretty(t *testing.T) {
	a := builderAPI(t)
	c := newConnector(t, strings.ReplaceAll(builderManifest(a.URL), "field_name: page", "field_name: cursor"),
		map[string]any{"client_id": "cid", "client_secret": "cs", "client_refresh_token": "r"})
	var out, errb strings.Builder
	code := Main([]string{"test-read", "--manifest", c.manifest, "--config", c.config, "--stream", "s", "--pretty"}, &out, &errb, nil, "test")
	want := fmt.Sprintf(`Refresh token (Obtains access token): POST %[1]s/oauth/token -> 200
page 1: GET %[1]s/s -> 200, 1 records; next token: c2
page 2: GET %[1]s/s?cursor=c2 -> 200, 1 records; next token: c3
page 3: GET %[1]s/s?cursor=c3 -> 200, 1 records; stop: no next page
s: 3 records
`, a.URL)
	if code != 0 || out.String() != want {
		t.Errorf("exit %d\n got: %s\nwant: %s", code, out.String(), want)
	}
}

func TestTestReadReportsRotationAsControl(t *testing.T) {
	o := newOAuthServer(t, true)
	m := oauthManifest(o.URL, "", "refresh_token_updater: {refresh_token_config_path: [client_refresh_token]}\n")
	mm, _ := yamlToMap(m)
	c := newConnector(t, "", map[string]any{"__command": "test_read", "__injected_declarative_manifest": mm, "client_id": "cid", "client_secret": "cs", "client_refresh_token": "refresh-0"}, "s")
	res := runCLI(t, "read", "--config", c.config, "--catalog", c.catalog)
	if len(res.ofType("CONTROL")) != 1 || len(res.ofType("RECORD")) != 1 {
		t.Fatalf("want one CONTROL and one RECORD: %s", res.stdout)
	}
	b, _ := json.Marshal(res.ofType("RECORD")[0])
	if !strings.Contains(string(b), `"latest_config_update":{"client_id":"cid","client_refresh_token":"refresh-1","client_secret":"cs","credentials":{"access_token":"access-1"`) {
		t.Errorf("latest_config_update: %s", b)
	}
}

// The builder's __test_read_config: a limit of 0 is the default (the
// reference's `or`), a negative or fractional one an error naming it, with no
// request sent.
func TestBuilderTestReadConfigLimits(t *testing.T) {
	a := builderAPI(t)
	m, _ := yamlToMap(strings.ReplaceAll(builderManifest(a.URL), "field_name: page", "field_name: cursor"))
	for _, tc := range []struct {
		limits any
		want   string // the error; "": a read of the default 5 pages
	}{
		{map[string]any{"max_pages_per_slice": 0}, ""},
		{map[string]any{"max_pages_per_slice": -1}, "__test_read_config.max_pages_per_slice must be a whole number of at least 1, got -1"},
		{map[string]any{"max_records": 2.5}, "__test_read_config.max_records must be a whole number of at least 1, got 2.5"},
		{map[string]any{"max_slices": "x"}, `__test_read_config.max_slices must be a whole number of at least 1, got "x"`},
		{"x", "__test_read_config must be an object"},
	} {
		before := len(a.requests())
		c := newConnector(t, "", map[string]any{"__command": "test_read", "__injected_declarative_manifest": m,
			"__test_read_config": tc.limits, "client_id": "cid", "client_secret": "cs", "client_refresh_token": "r"}, "s")
		res := runCLI(t, "read", "--config", c.config, "--catalog", c.catalog)
		errs := res.errors()
		if tc.want != "" {
			if len(errs) != 1 || errs[0]["message"] != tc.want || errs[0]["failure_type"] != "config_error" || len(a.requests()) != before {
				t.Errorf("%v: errors %v, %d requests; want %q", tc.limits, errs, len(a.requests())-before, tc.want)
			}
			continue
		}
		if len(errs) != 0 || len(res.ofType("RECORD")) != 1 {
			t.Errorf("%v: exit %d %s", tc.limits, res.code, res.stdout)
		}
	}
}
