package cli

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// An RS256 token is longer than the 200 characters of a body an error
// message shows: an API echoing it in its error body must not leave its
// first characters in the TRACE (they were printed, cut before "...").
func TestTokenCutShortInAnErrorBodyIsMasked(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	var token string
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		token = strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"message":%q}`, token)
	})
	auth := "type: JwtAuthenticator\nsecret_key: \"{{ config['key'] }}\"\nalgorithm: RS256\nheader_prefix: Bearer\n"
	res := newConnector(t, jwtManifest(a.URL, auth), map[string]any{"key": string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))}, "s").read(t)
	if len(token) < 300 {
		t.Fatalf("token %q", token)
	}
	streamError(t, res, "system_error", `stream s: HTTP 400 Bad Request from GET `+a.URL+`/s: {"message":"****...`)
	if strings.Contains(res.stdout+res.stderr, token[:40]) {
		t.Errorf("the token's start was printed:\n%s", res.stdout)
	}
}

// With --debug, the answer of a token or login request is summarized
// without its body: it holds the new token, not yet known to the masker
// when the response is logged (the token was printed).
func TestDebugLogHidesTheBodiesOfTokenResponses(t *testing.T) {
	for _, tc := range []struct{ name, auth, login string }{
		{"OAuth", "type: OAuthAuthenticator\ntoken_refresh_endpoint: URL/login\nclient_id: cid\nclient_secret: cs\nrefresh_token: rt\n", "POST /login"},
		{"session token", "type: SessionTokenAuthenticator\nlogin_requester: {type: HttpRequester, url_base: URL, path: /login, http_method: POST}\nsession_token_path: [access_token]\nrequest_authentication: {type: Bearer}\n", "POST /login"},
		{"legacy session token", "type: LegacySessionTokenAuthenticator\nheader: X-Session\nlogin_url: login\nsession_token_response_key: access_token\nusername: u\npassword: p\nsession_token: \"\"\nvalidate_session_url: user\n", "POST /login"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
				if r.URL.Path == "/login" {
					fmt.Fprint(w, `{"access_token":"tok-5f2b9c1e","expires_in":3600}`)
					return
				}
				fmt.Fprint(w, `{"data":[{"id":1}]}`)
			})
			m := stream("s", "url_base: "+a.URL+"/\npath: s\nauthenticator:\n"+indent(strings.ReplaceAll(tc.auth, "URL", a.URL), 2), "[data]", "")
			res := newConnector(t, m, nil, "s").read(t, "--debug")
			if res.code != 0 || a.lines()[0] != tc.login {
				t.Fatalf("exit %d, requests %v: %s", res.code, a.lines(), res.stdout)
			}
			var summaries []string
			for _, l := range res.ofType("LOG") {
				msg := l["log"].(map[string]any)["message"].(string)
				if strings.HasPrefix(msg, "Response HTTP 200 to POST "+a.URL+"/login: ") {
					summaries = append(summaries, msg[strings.LastIndex(msg, "}, ")+3:])
				}
			}
			equalLists(t, "login response summaries", summaries, []string{"body not shown (it holds credentials)"})
			if strings.Contains(res.stdout+res.stderr, "tok-5f2b9c1e") {
				t.Errorf("the token was printed:\n%s", res.stdout)
			}
		})
	}
}

// A Retry-After beyond what a duration holds is waited until the ten
// minutes of retries end; it overflowed to a wait of 0 s and retried at once.
func TestHugeRetryAfterIsWaitedUntilRetriesEnd(t *testing.T) {
	waits := fakeClock(t)
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		if len(*waits) == 0 {
			w.Header().Set("Retry-After", "999999999999")
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprint(w, `{}`)
			return
		}
		fmt.Fprint(w, `{"data":[]}`)
	})
	res := newConnector(t, pagedFilters(a.URL, "{type: DefaultErrorHandler}"), nil, "s").read(t)
	equalLists(t, "requests", a.lines(), repeat("GET /s?page=1", 2))
	if res.code != 0 || fmt.Sprint(*waits) != "[10m0s]" {
		t.Fatalf("exit %d, waits %v: %s", res.code, *waits, res.stdout)
	}
}

// A truncated list that cannot be read ends the stream with its own failure
// (a 401 is a config error), not as a bad page of the parent: it was a
// system error naming the stream twice and quoting the parent's body.
func TestTruncatedListRetrieverFailureKeepsItsType(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		if r.URL.Path == "/invoices" {
			fmt.Fprint(w, `{"data":[{"id":"in_1","lines":{"data":[{"id":"il_1"}],"has_more":true}}]}`)
			return
		}
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"message":"expired"}`)
	})
	m := expanderStream(a.URL, `type: RecordExpander
expand_records_from_field: [lines, data]
truncation_indicator_path: [lines, has_more]
truncated_list_retriever:
  type: SimpleRetriever
  requester: {type: HttpRequester, url_base: "`+a.URL+`", path: "/invoices/{{ stream_slice['parent_record']['id'] }}/lines"}
  record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}`, "", "", "")
	res := newConnector(t, strings.ReplaceAll(m, "invoice_lines", "s"), nil, "s").read(t)
	equalLists(t, "requests", a.lines(), []string{"GET /invoices", "GET /invoices/in_1/lines"})
	streamError(t, res, "config_error", "stream s: HTTP 401 Unauthorized from GET "+a.URL+`/invoices/in_1/lines: {"message":"expired"}`+
		" (reading the complete list of a truncated record through streams[0].retriever.record_selector.extractor.record_expander.truncated_list_retriever)")
}

// A template of the new components that fails names its place once (it was
// "streams[0].condition: streams[0].condition: template ...").
func TestFailingTemplatesNameTheirPlaceOnce(t *testing.T) {
	a := dataAPI(t)
	conditional := fmt.Sprintf(`version: 6.44.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [s]}
streams:
  - type: ConditionalStreams
    condition: "{{ config['n'] / 0 }}"
    streams:
      - type: DeclarativeStream
        name: s
        retriever:
          type: SimpleRetriever
          requester: {type: HttpRequester, url_base: %q, path: /s}
          record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
`, a.URL)
	res := newConnector(t, conditional, map[string]any{"n": 1}, "s").read(t)
	if errs := res.errors(); res.code != 1 || len(errs) != 1 || errs[0]["message"] != `streams[0].condition: template "{{ config['n'] / 0 }}": division by zero` || errs[0]["failure_type"] != "config_error" {
		t.Errorf("exit %d, errors %v", res.code, errs)
	}

	backoff := `{type: DefaultErrorHandler, backoff_strategies: [{type: ConstantBackoffStrategy, backoff_time_in_seconds: "{{ config['n'] / 0 }}"}]}`
	res = newConnector(t, pagedFilters(a.URL, backoff), map[string]any{"n": 1}, "s").read(t)
	streamError(t, res, "config_error", `streams[0].retriever.requester.error_handler.backoff_strategies[0].backoff_time_in_seconds: template "{{ config['n'] / 0 }}": division by zero`)

	res = newConnector(t, asyncManifest(a.URL, `polling_job_timeout: "{{ config['n'] / 0 }}"`), map[string]any{"n": 1}, "reports").read(t)
	if errs := res.errors(); res.code != 1 || len(errs) != 2 || errs[0]["message"] != `streams[0].retriever.polling_job_timeout: template "{{ config['n'] / 0 }}": division by zero` {
		t.Errorf("exit %d, errors %v", res.code, errs)
	}

	selector := stream("s", "url_base: "+a.URL+`
path: /s
request_parameters:
  properties:
    type: QueryProperties
    property_list: [a, b]
    property_selector:
      type: JsonSchemaPropertySelector
      transformations: [{type: KeysReplace, old: "{{ config['n'] / 0 }}", new: ""}]`, "[data]", "")
	c := newConnector(t, selector, map[string]any{"n": 1}, "s")
	catalog := writeFile(t, c.dir, "selected.json", `{"streams":[{"stream":{"name":"s","json_schema":{"properties":{"a":{}}},"supported_sync_modes":["full_refresh"]},"sync_mode":"full_refresh","destination_sync_mode":"overwrite"}]}`)
	res = runCLI(t, "read", "--manifest", c.manifest, "--config", c.config, "--catalog", catalog)
	streamError(t, res, "config_error", `streams[0].retriever.requester.request_parameters.properties.property_selector.transformations[0].old: template "{{ config['n'] / 0 }}": division by zero`)
	equalLists(t, "requests", a.lines(), nil)
}

// A schema file whose $refs point at parts holding several $refs each
// expands exponentially (4 refs a level, 12 levels: 16 million copies from
// 1 KB): discover refuses it instead of running out of time and memory.
func TestSchemaRefsThatMultiplyAreRefused(t *testing.T) {
	c := newConnector(t, source(namedStream("inline", "http://127.0.0.1:1", "/x", `schema_loader: {type: JsonFileSchemaLoader, file_path: "./s.json"}`)), nil)
	var defs []string
	for i := 0; i < 12; i++ {
		ref := fmt.Sprintf(`{"$ref":"#/definitions/d%d"}`, i+1)
		defs = append(defs, fmt.Sprintf(`"d%d":{"type":"object","properties":{"a":%[2]s,"b":%[2]s,"c":%[2]s,"e":%[2]s}}`, i, ref))
	}
	file := writeFile(t, c.dir, "s.json", `{"type":"object","properties":{"x":{"$ref":"#/definitions/d0"}},"definitions":{`+strings.Join(defs, ",")+`,"d12":{"type":"string"}}}`)
	res := discover(c, t)
	if errs := res.errors(); res.code != 1 || len(errs) != 1 || errs[0]["failure_type"] != "config_error" ||
		errs[0]["message"] != "streams[0].schema_loader.file_path: schema file "+file+": its $refs expand to more than 250000 parts" {
		t.Errorf("exit %d, errors %v", res.code, errs)
	}
}

// The builder's full resolve tries its resolvers' requests once, as its
// test reads do (Airbyte's builder source never retries): a resolver
// answering 500 was retried for 31 s before the builder saw the error.
func TestBuilderFullResolveDoesNotRetry(t *testing.T) {
	waits := fakeClock(t)
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprint(w, `{"message":"down"}`)
	})
	m, _ := yamlToMap(dynamicManifest(a.URL, strings.ReplaceAll(httpTables, "URL", a.URL)))
	c := newConnector(t, "", map[string]any{"__command": "full_resolve_manifest", "__injected_declarative_manifest": m}, "static")
	res := runCLI(t, "read", "--config", c.config, "--catalog", c.catalog)
	equalLists(t, "requests", a.lines(), []string{"GET /tables"})
	if errs := res.errors(); res.code != 0 || len(res.msgs) != 1 || len(errs) != 1 || len(*waits) != 0 || errs[0]["failure_type"] != "transient_error" ||
		errs[0]["message"] != "stream tables: HTTP 500 Internal Server Error from GET "+a.URL+`/tables: {"message":"down"} (gave up after 1 attempt)` {
		t.Errorf("exit %d, waits %v: %s", res.code, *waits, res.stdout)
	}
}
