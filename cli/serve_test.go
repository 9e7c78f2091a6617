package cli

import (
	"bufio"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/airbyte-go/source-declarative/components"
	"github.com/airbyte-go/source-declarative/components/pythontest"
	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/server"
)

// TestMain lets a test run the command line as a process of its own (the
// serve command's signals): with CLI_TEST_MAIN=1 the test binary is the
// connector.
func TestMain(m *testing.M) {
	if os.Getenv("CLI_TEST_MAIN") == "1" {
		os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr, nil, "test"))
	}
	os.Exit(m.Run())
}

// manifestServer is the manifest server over loopback, running the CLI's
// commands.
type manifestServer struct {
	*httptest.Server
	log *lockedBuffer
}

func startManifestServer(t *testing.T, opts server.Options) *manifestServer {
	t.Helper()
	log := &lockedBuffer{}
	if opts.Commands == nil {
		opts.Commands = builderCommands{}
	}
	opts.Log = log
	s := &manifestServer{Server: httptest.NewServer(server.New(opts)), log: log}
	t.Cleanup(s.Close)
	return s
}

// answer is one response of the manifest server.
type answer struct {
	status int
	header http.Header
	body   string
}

func (s *manifestServer) post(t *testing.T, path, body string, headers ...string) answer {
	t.Helper()
	req, err := http.NewRequest("POST", s.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return s.do(t, req)
}

func (s *manifestServer) do(t *testing.T, req *http.Request) answer {
	t.Helper()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, string(b)}
}

// is fails unless the answer has the status, the JSON content type and the
// body, byte for byte.
func (a answer) is(t *testing.T, what string, status int, body string) {
	t.Helper()
	if a.status != status || a.body != body {
		t.Errorf("%s:\n got %d %s\nwant %d %s", what, a.status, a.body, status, body)
	}
	if ct := a.header.Get("Content-Type"); ct != "application/json" && status != http.StatusTemporaryRedirect {
		t.Errorf("%s: Content-Type %q", what, ct)
	}
}

// requestJSON is a request body holding the manifest (YAML) and fields.
func requestJSON(t *testing.T, manifestYAML string, fields map[string]any) string {
	t.Helper()
	m, err := manifest.Parse([]byte(manifestYAML))
	if err != nil {
		t.Fatal(err)
	}
	body := map[string]any{"manifest": m}
	for k, v := range fields {
		body[k] = v
	}
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// tenantManifest reads /items of the API for a tenant, with an API key the
// spec marks secret. The path holds the version of the manifest the config
// carries under __injected_declarative_manifest: the server's manifest is
// injected there, as the platform injects it.
func tenantManifest(url string) string {
	return fmt.Sprintf(`version: 6.0.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [items]}
streams:
  - type: DeclarativeStream
    name: items
    primary_key: [id]
    retriever:
      type: SimpleRetriever
      requester:
        type: HttpRequester
        url_base: %s
        path: "/items/{{ config['__injected_declarative_manifest']['version'] }}"
        request_parameters: {tenant: "{{ config['tenant'] }}"}
        authenticator: {type: ApiKeyAuthenticator, api_token: "{{ config['api_key'] }}", inject_into: {type: RequestOption, inject_into: header, field_name: X-Api-Key}}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
spec:
  type: Spec
  connection_specification:
    type: object
    required: [api_key, tenant]
    properties:
      api_key: {type: string, airbyte_secret: true}
      tenant: {type: string}
`, url)
}

// tenantAPI answers /items/6.0.0 with two records naming the request's
// tenant and whether its key was the tenant's own, with no Date header (so
// that a StreamRead showing the response is the same every time).
func tenantAPI(t *testing.T, delay time.Duration) *api {
	return newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		w.Header()["Date"] = nil
		if r.URL.Path != "/items/6.0.0" {
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"error":"no route"}`))
			return
		}
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
		tenant := r.URL.Query().Get("tenant")
		own := r.Header.Get("X-Api-Key") == "key-of-"+tenant
		fmt.Fprintf(w, `{"data":[{"id":1,"tenant":%q,"own_key":%t},{"id":2,"tenant":%q,"own_key":%t}]}`, tenant, own, tenant, own)
	})
}

// TestServeTestRead: a test read answers the builder's StreamRead, the API
// asked exactly once with the request's config, the key masked, and one
// access-log line without it.
func TestServeTestRead(t *testing.T) {
	a := tenantAPI(t, 0)
	s := startManifestServer(t, server.Options{})
	got := s.post(t, "/v1/manifest/test_read", requestJSON(t, tenantManifest(a.URL), map[string]any{
		"config": map[string]any{"api_key": "key-of-acme", "tenant": "acme"}, "stream_name": "items"}))
	got.body = strings.ReplaceAll(got.body, a.URL, "API")
	got.is(t, "test_read", 200, `{"logs":[],"slices":[{"pages":[{"records":[{"id":1,"tenant":"acme","own_key":true},{"id":2,"tenant":"acme","own_key":true}],`+
		`"request":{"url":"API/items/6.0.0?tenant=acme","headers":{"X-Api-Key":"****"},"http_method":"GET","body":null},`+
		`"response":{"status":200,"body":"{\"data\":[{\"id\":1,\"tenant\":\"acme\",\"own_key\":true},{\"id\":2,\"tenant\":\"acme\",\"own_key\":true}]}","headers":{"Content-Length":"90","Content-Type":"application/json"}}}],`+
		`"slice_descriptor":"{}","state":[{"type":"STREAM","stream":{"stream_descriptor":{"name":"items","namespace":null},"stream_state":{"__ab_no_cursor_state_message":true}},"global_":null,"data":null,"sourceStats":{"recordCount":2.0},"destinationStats":null}],"auxiliary_requests":[]}],`+
		`"test_read_limit_reached":false,"auxiliary_requests":[],`+
		`"inferred_schema":{"$schema":"http://json-schema.org/schema#","type":"object","properties":{"id":{"type":"number"},"tenant":{"type":["string","null"]},"own_key":{"type":["boolean","null"]}},"required":["id"]},`+
		`"inferred_datetime_formats":{},"latest_config_update":null}`)
	reqs := a.requests()
	if len(reqs) != 1 || reqs[0].Method != "GET" || reqs[0].Path != "/items/6.0.0" || reqs[0].Query != "tenant=acme" || reqs[0].Header.Get("X-Api-Key") != "key-of-acme" {
		t.Fatalf("requests %+v", reqs)
	}
	accessLog(t, s, "POST /v1/manifest/test_read 200")
	if strings.Contains(s.log.String(), "key-of-acme") {
		t.Fatalf("the log shows the key: %s", s.log)
	}
}

// accessLog fails unless the server's log is exactly one line per request,
// each "TIME METHOD PATH STATUS DURATION" starting as want says.
func accessLog(t *testing.T, s *manifestServer, want ...string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(s.log.String()), "\n")
	if len(lines) != len(want) {
		t.Fatalf("log %q, want %d lines", lines, len(want))
	}
	for i, l := range lines {
		f := strings.Fields(l)
		if len(f) != 5 || strings.Join(f[1:4], " ") != want[i] {
			t.Errorf("log line %q, want TIME %s DURATION", l, want[i])
			continue
		}
		if _, err := time.Parse(time.RFC3339, f[0]); err != nil {
			t.Errorf("log line %q: time %v", l, err)
		}
		if _, err := time.ParseDuration(f[4]); err != nil {
			t.Errorf("log line %q: duration %v", l, err)
		}
	}
}

// TestServeCheckDiscoverResolve: check, discover, resolve and full resolve
// answer the reference's response bodies; a config the spec refuses fails
// check (200, success false) and discover (400), as in Airbyte's server,
// and a manifest that cannot load is a 400.
func TestServeCheckDiscoverResolve(t *testing.T) {
	a := tenantAPI(t, 0)
	s := startManifestServer(t, server.Options{})
	good := map[string]any{"api_key": "key-of-acme", "tenant": "acme"}
	m := tenantManifest(a.URL)
	s.post(t, "/v1/manifest/check", requestJSON(t, m, map[string]any{"config": good})).is(t, "check", 200, `{"success":true,"message":null}`)
	s.post(t, "/v1/manifest/check", requestJSON(t, m, map[string]any{"config": map[string]any{"api_key": "key-of-acme"}})).is(t, "check without tenant", 200,
		`{"success":false,"message":"Config validation error: config key tenant is required"}`)
	s.post(t, "/v1/manifest/check", `{"manifest":{"version":"6.0.0","streams":"x"},"config":{}}`).is(t, "check of a bad manifest", 400,
		`{"detail":"Error checking connection: invalid manifest: manifest.check: is required; manifest.streams: expected array, but got string"}`)
	s.post(t, "/v1/manifest/discover", requestJSON(t, m, map[string]any{"config": good})).is(t, "discover", 200,
		`{"catalog":{"streams":[{"name":"items","json_schema":{},"supported_sync_modes":["full_refresh"],"source_defined_cursor":null,"default_cursor_field":null,"source_defined_primary_key":[["id"]],"namespace":null,"is_resumable":false,"is_file_based":false}]}}`)
	s.post(t, "/v1/manifest/discover", requestJSON(t, m, map[string]any{"config": map[string]any{}})).is(t, "discover without config", 400,
		`{"detail":"Error discovering streams: Config validation error: config key api_key is required; config key tenant is required"}`)
	const small = `{"manifest":{"version":"6.0.0","check":{"type":"CheckStream","stream_names":["a"]},"definitions":{"r":{"type":"HttpRequester","url_base":"https://x.test","path":"/a"}},"streams":[{"type":"DeclarativeStream","name":"a","retriever":{"type":"SimpleRetriever","requester":{"$ref":"#/definitions/r"},"record_selector":{"type":"RecordSelector","extractor":{"type":"DpathExtractor","field_path":[]}}}}]}`
	s.post(t, "/v1/manifest/resolve", small+`}`).is(t, "resolve", 200,
		`{"manifest":{"check":{"stream_names":["a"],"type":"CheckStream"},"definitions":{"r":{"path":"/a","type":"HttpRequester","url_base":"https://x.test"}},"streams":[{"name":"a","retriever":{"record_selector":{"extractor":{"field_path":[],"type":"DpathExtractor"},"type":"RecordSelector"},"requester":{"path":"/a","type":"HttpRequester","url_base":"https://x.test"},"type":"SimpleRetriever"},"type":"DeclarativeStream"}],"type":"DeclarativeSource","version":"6.0.0"}}`)
	s.post(t, "/v1/manifest/full_resolve", small+`,"config":{},"stream_limit":1}`).is(t, "full_resolve", 200,
		`{"manifest":{"check":{"stream_names":["a"],"type":"CheckStream"},"definitions":{"r":{"path":"/a","type":"HttpRequester","url_base":"https://x.test"}},"streams":[{"dynamic_stream_name":null,"name":"a","retriever":{"record_selector":{"extractor":{"field_path":[],"type":"DpathExtractor"},"type":"RecordSelector"},"requester":{"path":"/a","type":"HttpRequester","url_base":"https://x.test"},"type":"SimpleRetriever"},"type":"DeclarativeStream"}],"type":"DeclarativeSource","version":"6.0.0"}}`)
	equalLists(t, "requests", a.lines(), []string{"GET /items/6.0.0?tenant=acme"})
}

// TestServeRefusesMalformedRequests: what Airbyte's server (FastAPI 0.115,
// pydantic 2) answers a request that does not fit its model, item for item,
// except where an error would echo the config: its texts are ****.
func TestServeRefusesMalformedRequests(t *testing.T) {
	s := startManifestServer(t, server.Options{MaxBody: 4096})
	for _, c := range []struct {
		path, body, contentType string
		status                  int
		want                    string
	}{
		{"/v1/manifest/test_read", `{}`, "", 422, `{"detail":[{"type":"missing","loc":["body","manifest"],"msg":"Field required","input":{}},{"type":"missing","loc":["body","config"],"msg":"Field required","input":{}},{"type":"missing","loc":["body","stream_name"],"msg":"Field required","input":{}}]}`},
		{"/v1/manifest/test_read", `{"manifest":{},"config":{},"stream_name":"x","record_limit":0,"page_limit":21,"slice_limit":"a","state":{}}`, "", 422,
			`{"detail":[{"type":"list_type","loc":["body","state"],"msg":"Input should be a valid list","input":{}},{"type":"greater_than_equal","loc":["body","record_limit"],"msg":"Input should be greater than or equal to 1","input":0,"ctx":{"ge":1}},{"type":"less_than_equal","loc":["body","page_limit"],"msg":"Input should be less than or equal to 20","input":21,"ctx":{"le":20}},{"type":"int_parsing","loc":["body","slice_limit"],"msg":"Input should be a valid integer, unable to parse string as an integer","input":"a"}]}`},
		{"/v1/manifest/test_read", `{"manifest":[],"config":1,"stream_name":5}`, "", 422,
			`{"detail":[{"type":"model_attributes_type","loc":["body","manifest"],"msg":"Input should be a valid dictionary or object to extract fields from","input":[]},{"type":"model_attributes_type","loc":["body","config"],"msg":"Input should be a valid dictionary or object to extract fields from","input":1},{"type":"string_type","loc":["body","stream_name"],"msg":"Input should be a valid string","input":5}]}`},
		{"/v1/manifest/test_read", `{"manifest":{},"config":{},"stream_name":"x","record_limit":1.5,"page_limit":"3","slice_limit":true,"context":{"workspace_id":3}}`, "", 422,
			`{"detail":[{"type":"int_from_float","loc":["body","record_limit"],"msg":"Input should be a valid integer, got a number with a fractional part","input":1.5},{"type":"string_type","loc":["body","context","workspace_id"],"msg":"Input should be a valid string","input":3}]}`},
		{"/v1/manifest/full_resolve", `{"manifest":{},"config":{},"stream_limit":101}`, "", 422, `{"detail":[{"type":"less_than_equal","loc":["body","stream_limit"],"msg":"Input should be less than or equal to 100","input":101,"ctx":{"le":100}}]}`},
		{"/v1/manifest/check", `not json`, "", 422, `{"detail":[{"type":"json_invalid","loc":["body",0],"msg":"JSON decode error","input":{},"ctx":{"error":"Expecting value"}}]}`},
		{"/v1/manifest/check", `{"a":1,}`, "application/json", 422, `{"detail":[{"type":"json_invalid","loc":["body",6],"msg":"JSON decode error","input":{},"ctx":{"error":"Illegal trailing comma before end of object"}}]}`},
		{"/v1/manifest/check", ``, "application/json", 422, `{"detail":[{"type":"missing","loc":["body"],"msg":"Field required","input":null}]}`},
		{"/v1/manifest/check", `null`, "application/json", 422, `{"detail":[{"type":"missing","loc":["body"],"msg":"Field required","input":null}]}`},
		{"/v1/manifest/check", `[1]`, "application/json", 422, `{"detail":[{"type":"model_attributes_type","loc":["body"],"msg":"Input should be a valid dictionary or object to extract fields from","input":[1]}]}`},
		{"/v1/manifest/check", `{"manifest":{},"config":{},"context":"x"}`, "application/vnd.api+json; charset=utf-8", 422, `{"detail":[{"type":"model_attributes_type","loc":["body","context"],"msg":"Input should be a valid dictionary or object to extract fields from","input":"x"}]}`},
		{"/v1/manifest/check", "\xff", "application/json", 400, `{"detail":"There was an error parsing the body"}`},
		{"/v1/manifest/check", strings.Repeat("[", 10000) + strings.Repeat("]", 10000), "application/json", 413, `{"detail":"Request body too large: at most 4096 bytes"}`},
		// The config is echoed with its texts masked; the reference echoes it whole.
		{"/v1/manifest/test_read", `{"manifest":{"version":"6.0.0"},"config":{"api_key":"s3cret","n":1,"nested":["t0ken",true]}}`, "", 422,
			`{"detail":[{"type":"missing","loc":["body","stream_name"],"msg":"Field required","input":{"config":{"api_key":"****","n":1,"nested":["****",true]},"manifest":{"version":"6.0.0"}}}]}`},
		{"/v1/manifest/check", `{"manifest":{},"config":"s3cret"}`, "", 422, `{"detail":[{"type":"model_attributes_type","loc":["body","config"],"msg":"Input should be a valid dictionary or object to extract fields from","input":"****"}]}`},
		{"/v1/manifest/check", `{"manifest":{},"config":{"api_key":"s3cret"}}`, "text/plain", 422, `{"detail":[{"type":"model_attributes_type","loc":["body"],"msg":"Input should be a valid dictionary or object to extract fields from","input":"****"}]}`},
	} {
		req, _ := http.NewRequest("POST", s.URL+c.path, strings.NewReader(c.body))
		if c.contentType != "" {
			req.Header.Set("Content-Type", c.contentType)
		}
		s.do(t, req).is(t, c.path+" "+clipText(c.body), c.status, c.want)
	}
	deep := strings.Repeat("[", 9999) + strings.Repeat("]", 9999)
	s2 := startManifestServer(t, server.Options{})
	s2.post(t, "/v1/manifest/check", deep).is(t, "9,999 nested lists", 400, `{"detail":"There was an error parsing the body"}`)
	chunked, _ := http.NewRequest("POST", s.URL+"/v1/manifest/check", io.MultiReader(strings.NewReader(`{"manifest":{"a":"`), strings.NewReader(strings.Repeat("x", 5000)), strings.NewReader(`"}}`)))
	chunked.ContentLength = -1 // sent chunked: the limit holds as the body is read
	s.do(t, chunked).is(t, "a chunked body past the limit", 413, `{"detail":"Request body too large: at most 4096 bytes"}`)
}

func clipText(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}

// TestServeRoutes: unknown paths, other methods and the other spelling of
// a path's trailing slash are answered as Starlette answers them.
func TestServeRoutes(t *testing.T) {
	s := startManifestServer(t, server.Options{})
	get := func(method, path string) answer {
		req, _ := http.NewRequest(method, s.URL+path, nil)
		return s.do(t, req)
	}
	get("GET", "/health/").is(t, "health", 200, `{"status":"ok"}`)
	get("GET", "/capabilities/").is(t, "capabilities", 200, `{"custom_code_execution":false}`)
	get("GET", "/nope").is(t, "unknown path", 404, `{"detail":"Not Found"}`)
	notAllowed := get("GET", "/v1/manifest/test_read")
	notAllowed.is(t, "GET test_read", 405, `{"detail":"Method Not Allowed"}`)
	if notAllowed.header.Get("Allow") != "POST" {
		t.Errorf("Allow %q", notAllowed.header.Get("Allow"))
	}
	if a := get("POST", "/health/"); a.status != 405 || a.header.Get("Allow") != "GET" {
		t.Errorf("POST /health/: %d Allow %q", a.status, a.header.Get("Allow"))
	}
	for path, to := range map[string]string{"/health": "/health/", "/v1/manifest/check/?x=1": "/v1/manifest/check?x=1"} {
		a := get("POST", path)
		if want := s.URL + to; a.status != 307 || a.header.Get("Location") != want || a.body != "" {
			t.Errorf("%s: %d Location %q body %q, want 307 to %s", path, a.status, a.header.Get("Location"), a.body, want)
		}
	}
}

// TestServeBearerTokens: with a secret, every /v1 route needs an HS256 token
// signed with it (401 otherwise, with WWW-Authenticate: Bearer); health and
// capabilities stay open; the token never reaches the log.
func TestServeBearerTokens(t *testing.T) {
	s := startManifestServer(t, server.Options{Secret: "s3cret"})
	valid := hs256Token(t, "s3cret", `{"sub":"builder","exp":4102444800}`)
	for _, c := range []struct {
		name, auth string
		status     int
		body       string
	}{
		{"no token", "", 401, `{"detail":"Bearer token required"}`},
		{"basic credentials", "Basic dXNlcjpwYXNz", 401, `{"detail":"Bearer token required"}`},
		{"not a token", "Bearer abc", 401, `{"detail":"Invalid token"}`},
		{"another secret", "Bearer " + hs256Token(t, "other", `{"sub":"builder"}`), 401, `{"detail":"Invalid token"}`},
		{"alg none", "Bearer eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.eyJzdWIiOiJidWlsZGVyIn0.", 401, `{"detail":"Invalid token"}`},
		{"expired", "Bearer " + hs256Token(t, "s3cret", `{"exp":1700000000}`), 401, `{"detail":"Invalid token"}`},
		{"valid", "Bearer " + valid, 422, `{"detail":[{"type":"missing","loc":["body","manifest"],"msg":"Field required","input":{}},{"type":"missing","loc":["body","config"],"msg":"Field required","input":{}}]}`},
	} {
		var headers []string
		if c.auth != "" {
			headers = []string{"Authorization", c.auth}
		}
		a := s.post(t, "/v1/manifest/check", `{}`, headers...)
		a.is(t, c.name, c.status, c.body)
		if wa := a.header.Get("WWW-Authenticate"); (c.status == 401) != (wa == "Bearer") {
			t.Errorf("%s: WWW-Authenticate %q", c.name, wa)
		}
	}
	req, _ := http.NewRequest("GET", s.URL+"/health/", nil)
	s.do(t, req).is(t, "health without a token", 200, `{"status":"ok"}`)
	if strings.Contains(s.log.String(), valid) || strings.Contains(s.log.String(), "s3cret") {
		t.Fatalf("the log shows the token or the secret: %s", s.log)
	}
}

// hs256Token signs claims (JSON) with secret, by hand: the verifier under
// test is not asked to make its own tokens.
func hs256Token(t *testing.T, secret, claims string) string {
	t.Helper()
	enc := base64.RawURLEncoding.EncodeToString
	input := enc([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." + enc([]byte(claims))
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(input))
	return input + "." + enc(mac.Sum(nil))
}

// TestServeIsolatesConcurrentRequests: 16 test reads at once, each with its
// tenant and key: each request reads with its own config and key, and its
// answer shows its own records and no key.
func TestServeIsolatesConcurrentRequests(t *testing.T) {
	a := tenantAPI(t, 20*time.Millisecond)
	s := startManifestServer(t, server.Options{})
	m := tenantManifest(a.URL)
	const n = 16
	answers := make([]answer, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			tenant := fmt.Sprintf("t%02d", i)
			answers[i] = s.post(t, "/v1/manifest/test_read", requestJSON(t, m, map[string]any{
				"config": map[string]any{"api_key": "key-of-" + tenant, "tenant": tenant}, "stream_name": "items"}))
		})
	}
	wg.Wait()
	for i, got := range answers {
		tenant := fmt.Sprintf("t%02d", i)
		pg, ok := onlyPage([]byte(got.body))
		if got.status != 200 || !ok {
			t.Fatalf("%s: %d %s", tenant, got.status, got.body)
		}
		for _, rec := range pg.Records {
			if rec["tenant"] != tenant || rec["own_key"] != true {
				t.Errorf("%s: record %v", tenant, rec)
			}
		}
		if strings.Contains(got.body, "key-of-") {
			t.Errorf("%s: a key in the answer: %s", tenant, got.body)
		}
	}
	if len(a.requests()) != n {
		t.Fatalf("%d requests, want %d", len(a.requests()), n)
	}
	for _, r := range a.requests() {
		if r.Header.Get("X-Api-Key") != "key-of-"+strings.TrimPrefix(r.Query, "tenant=") {
			t.Errorf("request %s with key %s", r.Query, r.Header.Get("X-Api-Key"))
		}
	}
}

// TestServeTimeLimit: a request past the server's limit is cancelled: the
// test read answers what it read with the error, check a 400 saying so.
func TestServeTimeLimit(t *testing.T) {
	a := tenantAPI(t, time.Minute)
	s := startManifestServer(t, server.Options{RequestTimeout: 200 * time.Millisecond})
	m := tenantManifest(a.URL)
	config := map[string]any{"api_key": "key-of-acme", "tenant": "acme"}
	start := time.Now()
	read := s.post(t, "/v1/manifest/test_read", requestJSON(t, m, map[string]any{"config": config, "stream_name": "items"}))
	if time.Since(start) > 5*time.Second || read.status != 200 || !strings.Contains(read.body, `"level":"ERROR"`) || !strings.Contains(read.body, "context deadline exceeded") {
		t.Fatalf("test read after %s: %d %s", time.Since(start), read.status, read.body)
	}
	check := s.post(t, "/v1/manifest/check", requestJSON(t, m, map[string]any{"config": config}))
	if check.status != 200 || !strings.HasPrefix(check.body, `{"success":false,"message":`) || !strings.Contains(check.body, "context deadline exceeded") {
		t.Fatalf("check: %d %s", check.status, check.body)
	}
}

// TestServeCancelsReadOfGoneClient: a client that goes away cancels its
// read: the API sees its request given up, and the log says so.
func TestServeCancelsReadOfGoneClient(t *testing.T) {
	asked, gaveUp := make(chan struct{}, 1), make(chan struct{}, 1)
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		asked <- struct{}{}
		select {
		case <-r.Context().Done():
			gaveUp <- struct{}{}
		case <-time.After(time.Minute):
		}
	})
	s := startManifestServer(t, server.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", s.URL+"/v1/manifest/test_read", strings.NewReader(requestJSON(t, tenantManifest(a.URL),
		map[string]any{"config": map[string]any{"api_key": "key-of-acme", "tenant": "acme"}, "stream_name": "items"})))
	done := make(chan error, 1)
	go func() {
		_, err := http.DefaultClient.Do(req)
		done <- err
	}()
	<-asked
	cancel()
	<-done
	select {
	case <-gaveUp:
	case <-time.After(5 * time.Second):
		t.Fatal("the API's request was not given up after the client went away")
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(s.log.String(), "(client gone)") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if f := strings.Fields(s.log.String()); len(f) != 7 || strings.Join(f[1:4], " ") != "POST /v1/manifest/test_read 200" || strings.Join(f[5:], " ") != "(client gone)" {
		t.Fatalf("log %q", s.log)
	}
}

// objectsManifest reads /objects with the custom record extractor
// ObjectValues of componentsPy, its token secret.
func objectsManifest(url string) string {
	return `version: 7.0.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [objects]}
spec: {type: Spec, connection_specification: {type: object, properties: {token: {type: string, airbyte_secret: true}}}}
streams:
  - type: DeclarativeStream
    name: objects
    schema_loader: {type: InlineSchemaLoader, schema: {type: object}}
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: "` + url + `", path: /objects,
        authenticator: {type: BearerAuthenticator, api_token: "{{ config.token }}"}}
      record_selector: {type: RecordSelector, extractor: {type: CustomRecordExtractor, class_name: source_declarative_manifest.components.ObjectValues}}
`
}

// TestServeRunsCustomCode: a test read's custom_components_code runs in a
// components host, injected in the config with its md5 as Airbyte's server
// injects it (AIRBYTE_ENABLE_UNSAFE_CODE true): the records are what the
// custom extractor makes of the API's answer, the token masked.
func TestServeRunsCustomCode(t *testing.T) {
	t.Setenv("AIRBYTE_ENABLE_UNSAFE_CODE", "true")
	a := newAPI(t, func(w http.ResponseWriter, _ *http.Request, _ string) {
		w.Header()["Date"] = nil
		fmt.Fprint(w, `{"items":{"k":{"n":2,"name":"q"},"m":{"n":3,"name":"r"}}}`)
	})
	s := startManifestServer(t, server.Options{Commands: builderCommands{python: pythontest.Python(t)}})
	got := s.post(t, "/v1/manifest/test_read", requestJSON(t, objectsManifest(a.URL), map[string]any{
		"config": map[string]any{"token": "tok-secret"}, "stream_name": "objects", "custom_components_code": componentsPy}))
	pg, ok := onlyPage([]byte(got.body))
	if got.status != 200 || !ok {
		t.Fatalf("%d %s", got.status, got.body)
	}
	records, _ := json.Marshal(pg.Records)
	if string(records) != `[{"key":"k","n":2,"name":"q"},{"key":"m","n":3,"name":"r"}]` {
		t.Errorf("records %s", records)
	}
	if pg.Request.URL != a.URL+"/objects" || pg.Request.Headers["Authorization"] != "Bearer ****" || strings.Contains(got.body, "tok-secret") {
		t.Errorf("page %+v; body %s", pg.Request, got.body)
	}
	reqs := a.requests()
	if len(reqs) != 1 || reqs[0].Method != "GET" || reqs[0].Path != "/objects" || reqs[0].Header.Get("Authorization") != "Bearer tok-secret" {
		t.Fatalf("requests %+v", reqs)
	}
}

// TestServeRefusesCustomCodeNotPermitted: without AIRBYTE_ENABLE_UNSAFE_CODE
// a test read carrying custom code is a 400 in the CDK's words after the
// component that needs it (Airbyte's server answers 500 Internal Server
// Error: its refusal escapes the route's error handling), a check fails,
// and no request is made.
func TestServeRefusesCustomCodeNotPermitted(t *testing.T) {
	t.Setenv("AIRBYTE_ENABLE_UNSAFE_CODE", "false")
	a := newAPI(t, func(w http.ResponseWriter, _ *http.Request, _ string) { fmt.Fprint(w, `{"items":{}}`) })
	s := startManifestServer(t, server.Options{})
	s.post(t, "/v1/manifest/test_read", requestJSON(t, objectsManifest(a.URL), map[string]any{
		"config": map[string]any{"token": "tok-secret"}, "stream_name": "objects", "custom_components_code": componentsPy})).is(t, "custom code", 400,
		`{"detail":"Error reading stream: streams[0].retriever.record_selector.extractor: `+components.ErrNotPermitted.Error()+`"}`)
	// A check of a manifest naming a custom component fails, as Airbyte's
	// server's check reports the CDK's refusal.
	s.post(t, "/v1/manifest/check", requestJSON(t, objectsManifest(a.URL), map[string]any{"config": map[string]any{"token": "tok-secret"}})).is(t, "check", 200,
		`{"success":false,"message":"streams[0].retriever.record_selector.extractor: `+components.ErrNotPermitted.Error()+`"}`)
	if len(a.requests()) != 0 {
		t.Fatalf("requests %v", a.lines())
	}
}

// TestServeCapabilities: custom_code_execution is true only with
// AIRBYTE_ENABLE_UNSAFE_CODE true and a Python with airbyte-cdk 7.x to run
// the components, and serve says which on start.
func TestServeCapabilities(t *testing.T) {
	python := pythontest.Python(t)
	for _, c := range []struct {
		unsafe, python string
		want, log      string
	}{
		{"false", python, "false", "custom components: refused (AIRBYTE_ENABLE_UNSAFE_CODE is not true)"},
		{"true", filepath.Join(t.TempDir(), "no-python"), "false", "custom components: refused: components host: custom Python components need Python 3 with airbyte-cdk 7.x"},
		{"TRUE", python, "true", "custom components: run by " + python + " (airbyte-cdk 7."},
	} {
		t.Setenv("AIRBYTE_ENABLE_UNSAFE_CODE", c.unsafe)
		p := startServeProcess(t, "--python", c.python)
		p.waitLog(t, c.log)
		resp, err := http.Get(p.url + "/capabilities/")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != `{"custom_code_execution":`+c.want+`}` {
			t.Errorf("unsafe %s, python %s: %s", c.unsafe, c.python, b)
		}
		p.cmd.Process.Signal(syscall.SIGTERM)
		<-p.exited
	}
}

// TestServeClosesTheAPIConnections: a request's connections to the API end
// with it (each request has a client of its own: idle connections kept
// for later would pile up, one set per request).
func TestServeClosesTheAPIConnections(t *testing.T) {
	var mu sync.Mutex
	open := map[net.Conn]bool{}
	api := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"data":[{"id":1}]}`))
	}))
	api.Config.ConnState = func(c net.Conn, state http.ConnState) {
		mu.Lock()
		defer mu.Unlock()
		switch state {
		case http.StateNew:
			open[c] = true
		case http.StateClosed, http.StateHijacked:
			delete(open, c)
		}
	}
	api.Start()
	defer api.Close()
	s := startManifestServer(t, server.Options{})
	for range 3 {
		if got := s.post(t, "/v1/manifest/test_read", requestJSON(t, tenantManifest(api.URL), map[string]any{
			"config": map[string]any{"api_key": "k", "tenant": "acme"}, "stream_name": "items"})); got.status != 200 {
			t.Fatalf("%d %s", got.status, got.body)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		n := len(open)
		mu.Unlock()
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d connections to the API still open after the requests", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestServeAnswersMangledRequests4xx: bodies cut and bytes changed at
// random (seeded) are answered below 500, never by a crash.
func TestServeAnswersMangledRequests4xx(t *testing.T) {
	a := tenantAPI(t, 0)
	s := startManifestServer(t, server.Options{})
	body := requestJSON(t, tenantManifest(a.URL), map[string]any{"config": map[string]any{"api_key": "key-of-acme", "tenant": "acme"},
		"stream_name": "items", "state": []any{}, "record_limit": 10, "context": map[string]any{"workspace_id": "w"}})
	rnd := rand.New(rand.NewPCG(28, 28))
	paths := []string{"/v1/manifest/test_read", "/v1/manifest/check", "/v1/manifest/discover", "/v1/manifest/resolve", "/v1/manifest/full_resolve"}
	for i := range 300 {
		b := []byte(body)
		switch i % 3 {
		case 0:
			b = b[:rnd.IntN(len(b))]
		default:
			for range 1 + rnd.IntN(4) {
				const bytes = "{}[]\":,0a\\ \xff-"
				b[rnd.IntN(len(b))] = bytes[rnd.IntN(len(bytes))]
			}
		}
		path := paths[i%len(paths)]
		if got := s.post(t, path, string(b)); got.status >= 500 {
			t.Fatalf("%s %q: %d %s", path, b, got.status, got.body)
		}
	}
}

// serveProcess is `serve` running as a process of its own (this test binary
// as the command line, TestMain).
type serveProcess struct {
	cmd    *exec.Cmd
	url    string
	stderr *lockedBuffer
	exited chan error
}

func startServeProcess(t *testing.T, args ...string) *serveProcess {
	t.Helper()
	p := &serveProcess{cmd: exec.Command(os.Args[0], append([]string{"serve", "--port", "0"}, args...)...), stderr: &lockedBuffer{}, exited: make(chan error, 1)}
	p.cmd.Env = append(os.Environ(), "CLI_TEST_MAIN=1")
	r, w := io.Pipe()
	p.cmd.Stderr = io.MultiWriter(p.stderr, w)
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.exited <- p.cmd.Wait(); w.Close() }()
	t.Cleanup(func() { p.cmd.Process.Kill() })
	line, err := bufio.NewReader(r).ReadString('\n')
	go io.Copy(io.Discard, r)
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "manifest server listening on ")
	if err != nil || !ok {
		t.Fatalf("first line %q (%v): %s", line, err, p.stderr)
	}
	p.url = addr
	return p
}

// waitLog waits for the process's stderr to hold text.
func (p *serveProcess) waitLog(t *testing.T, text string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(p.stderr.String(), text); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in %s", text, p.stderr)
		}
	}
}

// TestServeStopsGracefullyOnSIGTERM: on SIGTERM the server accepts no new
// connection, lets the request in flight finish, and exits 0; past
// --shutdown-timeout the requests in flight are cancelled, answered, and
// the server exits all the same.
func TestServeStopsGracefullyOnSIGTERM(t *testing.T) {
	for _, c := range []struct {
		name  string
		delay time.Duration
		grace string
		want  string // in the answer
	}{
		{"in time", 500 * time.Millisecond, "10s", `"own_key":true`},
		{"past the grace", time.Minute, "300ms", `"level":"ERROR"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := tenantAPI(t, c.delay)
			p := startServeProcess(t, "--shutdown-timeout", c.grace)
			body := requestJSON(t, tenantManifest(a.URL), map[string]any{"config": map[string]any{"api_key": "key-of-acme", "tenant": "acme"}, "stream_name": "items"})
			type result struct {
				status int
				body   string
				err    error
			}
			answered := make(chan result, 1)
			go func() {
				resp, err := http.Post(p.url+"/v1/manifest/test_read", "application/json", strings.NewReader(body))
				if err != nil {
					answered <- result{err: err}
					return
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				answered <- result{status: resp.StatusCode, body: string(b)}
			}()
			for deadline := time.Now().Add(10 * time.Second); len(a.requests()) == 0; time.Sleep(5 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("the read never reached the API")
				}
			}
			p.cmd.Process.Signal(syscall.SIGTERM)
			p.waitLog(t, "stopping: no new request accepted")
			if conn, err := net.Dial("tcp", strings.TrimPrefix(p.url, "http://")); err == nil {
				conn.Close()
				t.Fatal("a new connection was accepted after SIGTERM")
			}
			select {
			case r := <-answered:
				if r.err != nil || r.status != 200 || !strings.Contains(r.body, c.want) {
					t.Fatalf("the request in flight: %v %d %s", r.err, r.status, r.body)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("the request in flight was not answered")
			}
			select {
			case err := <-p.exited:
				if err != nil {
					t.Fatalf("exit: %v\n%s", err, p.stderr)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("the server did not exit")
			}
			if strings.Contains(p.stderr.String(), "key-of-acme") {
				t.Fatalf("stderr shows the key: %s", p.stderr)
			}
		})
	}
}

// TestServeSaysHowItListens: serve says on stderr where it listens, who can
// connect and whether a token is needed; flags that do not apply to it are
// refused.
func TestServeSaysHowItListens(t *testing.T) {
	t.Setenv("AIRBYTE_ENABLE_UNSAFE_CODE", "")
	t.Setenv("AB_JWT_SIGNATURE_SECRET", "")
	p := startServeProcess(t)
	p.waitLog(t, "custom components:")
	want := []string{"manifest server listening on " + p.url, "bound to the loopback interface: only this machine can connect (--host to listen elsewhere)",
		"AB_JWT_SIGNATURE_SECRET is not set: every request passes without a token", "custom components: refused (AIRBYTE_ENABLE_UNSAFE_CODE is not true)"}
	equalLists(t, "stderr", strings.Split(strings.TrimSpace(p.stderr.String()), "\n"), want)
	p.cmd.Process.Signal(syscall.SIGTERM)
	if err := <-p.exited; err != nil {
		t.Fatal(err)
	}
	res := runCLI(t, "serve", "--manifest", "m.yaml")
	if res.code != 2 || !strings.Contains(res.stderr, "--manifest and --debug do not apply") || res.stdout != "" {
		t.Fatalf("serve --manifest: exit %d %q %q", res.code, res.stdout, res.stderr)
	}
}
