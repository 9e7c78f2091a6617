package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

func dataAPI(t *testing.T) *api {
	return newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		fmt.Fprint(w, `{"data":[{"id":1}]}`)
	})
}

func authManifest(url, method, authenticator, extra string) string {
	return stream("s", "url_base: "+url+"\npath: /s\nhttp_method: "+method+"\n"+extra+"authenticator:\n"+indent(authenticator, 2), "[data]", "")
}

func TestBasicBearerAndAPIKeyPlacements(t *testing.T) {
	cases := []struct {
		name, method, auth, extra string
		config                    map[string]any
		check                     func(r seen) string
	}{
		{"basic", "GET", "type: BasicHttpAuthenticator\nusername: \"{{ config['username'] }}\"\npassword: \"{{ config['password'] }}\"",
			"", map[string]any{"username": "user", "password": "password"},
			func(r seen) string { return r.Header.Get("Authorization") }},
		{"basic empty password keeps colon", "GET", "type: BasicHttpAuthenticator\nusername: \"{{ config.username }}\"",
			"", map[string]any{"username": "user"},
			func(r seen) string { return r.Header.Get("Authorization") }},
		{"bearer", "GET", "type: BearerAuthenticator\napi_token: '{{ config[\"api_key\"] }}'",
			"", map[string]any{"api_key": "tok-123"},
			func(r seen) string { return r.Header.Get("Authorization") }},
		{"api key header", "GET", "type: ApiKeyAuthenticator\napi_token: \"{{ config['api_key'] }}\"\ninject_into: {type: RequestOption, inject_into: header, field_name: X-API-Key}",
			"", map[string]any{"api_key": "1e10"},
			func(r seen) string { return r.Header.Get("X-Api-Key") }},
		{"api key legacy header", "GET", "type: ApiKeyAuthenticator\napi_token: \"Token {{ config['api_key'] }}\"\nheader: Authorization",
			"", map[string]any{"api_key": "k"},
			func(r seen) string { return r.Header.Get("Authorization") }},
		{"api key query", "GET", "type: ApiKeyAuthenticator\napi_token: \"{{ config['api_key'] }}\"\ninject_into: {type: RequestOption, inject_into: request_parameter, field_name: api_key}",
			"request_parameters: {q: x}\n", map[string]any{"api_key": "a b&c"},
			func(r seen) string { return r.Query }},
		{"api key form body on POST", "POST", "type: ApiKeyAuthenticator\napi_token: \"{{ config['api_key'] }}\"\ninject_into: {type: RequestOption, inject_into: body_data, field_name: key}",
			"request_body_data: {q: x}\n", map[string]any{"api_key": "k1"},
			func(r seen) string { return r.Header.Get("Content-Type") + " " + r.Body }},
		{"api key JSON body nested on POST", "POST", "type: ApiKeyAuthenticator\napi_token: \"{{ config['api_key'] }}\"\ninject_into: {type: RequestOption, inject_into: body_json, field_path: [auth, \"{{ config.version }}\", token]}",
			"request_body_json: {filter: {active: true}}\n", map[string]any{"api_key": "k2", "version": "v2"},
			func(r seen) string { return r.Header.Get("Content-Type") + " " + r.Body }},
	}
	want := []string{
		"Basic dXNlcjpwYXNzd29yZA==",
		"Basic dXNlcjo=",
		"Bearer tok-123",
		"1e10",
		"Token k",
		"api_key=a+b%26c&q=x",
		"application/x-www-form-urlencoded key=k1&q=x",
		`application/json {"auth":{"v2":{"token":"k2"}},"filter":{"active":true}}`,
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := dataAPI(t)
			c := newConnector(t, authManifest(a.URL, tc.method, tc.auth, tc.extra), tc.config, "s")
			res := c.read(t)
			if res.code != 0 {
				t.Fatalf("exit %d: %s", res.code, res.stdout)
			}
			reqs := a.requests()
			if len(reqs) != 1 || reqs[0].Method != tc.method {
				t.Fatalf("requests: %+v", reqs)
			}
			if got := tc.check(reqs[0]); got != want[i] {
				t.Errorf("got %q, want %q", got, want[i])
			}
		})
	}
}

func TestNoAuthSendsNoCredentials(t *testing.T) {
	a := dataAPI(t)
	c := newConnector(t, authManifest(a.URL, "GET", "type: NoAuth", ""), nil, "s")
	c.read(t)
	r := a.requests()[0]
	if r.Header.Get("Authorization") != "" || r.Query != "" {
		t.Fatalf("credentials sent: %+v", r)
	}
}

// oauthServer is a token endpoint plus a data endpoint that accepts only the
// access tokens it issued.
type oauthServer struct {
	*api
	mu       sync.Mutex
	issued   map[string]bool
	tokenReq []string
	n        int
	rotate   bool
	spent    map[string]bool
	expires  any
}

func newOAuthServer(t *testing.T, rotate bool) *oauthServer {
	o := &oauthServer{issued: map[string]bool{}, spent: map[string]bool{}, rotate: rotate, expires: 3600}
	o.api = newAPI(t, func(w http.ResponseWriter, r *http.Request, body string) {
		o.mu.Lock()
		defer o.mu.Unlock()
		if r.URL.Path == "/oauth/token" {
			o.tokenReq = append(o.tokenReq, r.Header.Get("Content-Type")+" "+body)
			var req map[string]any
			json.Unmarshal([]byte(body), &req)
			rt, _ := req["refresh_token"].(string)
			if o.rotate && o.spent[rt] {
				w.WriteHeader(400)
				fmt.Fprint(w, `{"error":"invalid_grant","error_description":"refresh token already used"}`)
				return
			}
			o.spent[rt] = true
			o.n++
			access := fmt.Sprintf("access-%d", o.n)
			o.issued[access] = true
			resp := map[string]any{"access_token": access, "expires_in": o.expires}
			if o.rotate {
				resp["refresh_token"] = fmt.Sprintf("refresh-%d", o.n)
			}
			json.NewEncoder(w).Encode(resp)
			return
		}
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !o.issued[tok] {
			w.WriteHeader(401)
			fmt.Fprint(w, `{"error":"bad token"}`)
			return
		}
		if r.URL.Query().Get("page") == "" {
			fmt.Fprint(w, `{"data":[{"id":1}],"next":"2"}`)
		} else {
			fmt.Fprint(w, `{"data":[{"id":2}]}`)
		}
	})
	return o
}

// isoformat is an expiry date as the CDK writes it into the config: Python's
// isoformat in UTC, with microseconds unless they are zero.
var isoformat = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?\+00:00$`)

const refreshLine = "refresh_token: \"{{ config['client_refresh_token'] }}\"\n"

func oauthManifest(url, refresh, extra string) string {
	return stream("s", "url_base: "+url+"\npath: /s\nauthenticator:\n"+indent(`type: OAuthAuthenticator
token_refresh_endpoint: `+url+`/oauth/token
client_id: "{{ config['client_id'] }}"
client_secret: "{{ config['client_secret'] }}"
`+refresh+extra, 2), "[data]", `paginator:
  type: DefaultPaginator
  page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}
  pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next }}"}`)
}

func TestOAuthTokenRequestIsJSONAndTokenIsReused(t *testing.T) {
	o := newOAuthServer(t, false)
	c := newConnector(t, oauthManifest(o.URL, refreshLine, "scopes: [read, write]\n"), map[string]any{"client_id": "cid", "client_secret": "csecret", "client_refresh_token": "rt0"}, "s")
	res := c.read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "token requests", o.tokenReq, []string{`application/json {"client_id":"cid","client_secret":"csecret","grant_type":"refresh_token","refresh_token":"rt0","scopes":["read","write"]}`})
	equalLists(t, "requests", o.lines(), []string{"POST /oauth/token", "GET /s", "GET /s?page=2"})
	for _, r := range o.requests()[1:] {
		if r.Header.Get("Authorization") != "Bearer access-1" {
			t.Errorf("data request auth %q", r.Header.Get("Authorization"))
		}
	}
	equalLists(t, "records", res.records("s"), ids(1, 3))
	for _, secret := range []string{"csecret", "rt0", "access-1"} {
		for _, m := range append(res.ofType("LOG"), res.ofType("TRACE")...) {
			b, _ := json.Marshal(m)
			if strings.Contains(string(b), secret) {
				t.Errorf("secret %q in %s", secret, b)
			}
		}
	}
}

func TestOAuthClientCredentialsAndFormOption(t *testing.T) {
	o := newOAuthServer(t, false)
	m := oauthManifest(o.URL, "", "grant_type: client_credentials\nrefresh_request_body_encoding: form\nrefresh_request_body: {audience: api}\n")
	c := newConnector(t, m, map[string]any{"client_id": "cid", "client_secret": "cs"}, "s")
	c.read(t)
	equalLists(t, "token requests", o.tokenReq, []string{`application/x-www-form-urlencoded audience=api&client_id=cid&client_secret=cs&grant_type=client_credentials`})
}

// TestOAuthPasswordGrant: the resource owner's password grant runs as
// Airbyte's runtime runs it (uptick's): grant_type password, the client's
// credentials and refresh_request_body's username and password in the JSON
// body, no refresh token; the data requests carry the token obtained.
func TestOAuthPasswordGrant(t *testing.T) {
	o := newOAuthServer(t, false)
	m := oauthManifest(o.URL, "", "grant_type: password\nrefresh_request_body: {username: \"{{ config['username'] }}\", password: \"{{ config['password'] }}\"}\n")
	c := newConnector(t, m, map[string]any{"client_id": "cid", "client_secret": "cs", "username": "ada", "password": "pw-secret"}, "s")
	res := c.read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "token requests", o.tokenReq, []string{`application/json {"client_id":"cid","client_secret":"cs","grant_type":"password","password":"pw-secret","username":"ada"}`})
	if strings.Contains(res.stdout, "pw-secret") {
		t.Fatalf("the password shows: %s", res.stdout)
	}
}

func TestOAuthInvalidGrantIsConfigErrorWithoutSecrets(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		w.WriteHeader(400)
		fmt.Fprint(w, `{"error":"invalid_grant"}`)
	})
	c := newConnector(t, oauthManifest(a.URL, refreshLine, ""), map[string]any{"client_id": "cid", "client_secret": "csecret", "client_refresh_token": "rt-secret"}, "s")
	res := c.read(t)
	errs := res.errors()
	if res.code == 0 || len(errs) == 0 || errs[0]["failure_type"] != "config_error" || !strings.Contains(errs[0]["message"].(string), "re-authenticate") {
		t.Fatalf("exit %d errors %v", res.code, errs)
	}
	if strings.Contains(res.stdout, "rt-secret") || strings.Contains(res.stdout, "csecret") {
		t.Fatalf("secret leaked: %s", res.stdout)
	}
	chk := c.check(t)
	st := chk.ofType("CONNECTION_STATUS")
	if chk.code != 0 || len(st) != 1 || st[0]["connectionStatus"].(map[string]any)["status"] != "FAILED" {
		t.Fatalf("check: exit %d %s", chk.code, chk.stdout)
	}
}

// lockedBuffer is stdout that a server handler may read while the CLI writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestOAuthRotationPrintsControlBeforeUsingNewToken(t *testing.T) {
	o := newOAuthServer(t, true)
	var stdout lockedBuffer
	var controlBeforeData []bool
	inner := o.api.Server.Config.Handler
	o.api.Server.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/s" {
			controlBeforeData = append(controlBeforeData, strings.Contains(stdout.String(), `"type":"CONTROL"`))
		}
		inner.ServeHTTP(w, r)
	})
	m := oauthManifest(o.URL, "", `refresh_token_updater:
  refresh_token_name: refresh_token
  access_token_config_path: [oauth_access_token]
  refresh_token_config_path: [client_refresh_token]
  token_expiry_date_config_path: [oauth_token_expiry_date]
`)
	c := newConnector(t, m, map[string]any{"client_id": "cid", "client_secret": "cs", "client_refresh_token": "refresh-0",
		"oauth_access_token": "stale", "oauth_token_expiry_date": "2020-01-01T00:00:00Z"}, "s")
	var errb bytes.Buffer
	code := Main([]string{"read", "--manifest", c.manifest, "--config", c.config, "--catalog", c.catalog, "--write-config"}, &stdout, &errb, nil, "test")
	if code != 0 {
		t.Fatalf("exit %d: %s %s", code, stdout.String(), errb.String())
	}
	if len(controlBeforeData) != 2 || !controlBeforeData[0] {
		t.Fatalf("CONTROL must be on stdout before the first data request: %v", controlBeforeData)
	}
	var control map[string]any
	for _, line := range strings.Split(stdout.String(), "\n") {
		if strings.Contains(line, `"type":"CONTROL"`) {
			if control != nil {
				t.Fatal("more than one CONTROL for one refresh")
			}
			json.Unmarshal([]byte(line), &control)
		}
	}
	cfg := control["control"].(map[string]any)["connectorConfig"].(map[string]any)["config"].(map[string]any)
	if cfg["client_refresh_token"] != "refresh-1" || cfg["oauth_access_token"] != "access-1" || cfg["client_id"] != "cid" || cfg["client_secret"] != "cs" {
		t.Fatalf("control config: %v", cfg)
	}
	if exp, _ := cfg["oauth_token_expiry_date"].(string); !isoformat.MatchString(exp) {
		t.Fatalf("expiry %q is not written as the CDK writes it (Python's isoformat in UTC)", exp)
	}
	saved, _ := readJSONObject(c.config, "config")
	if saved["client_refresh_token"] != "refresh-1" {
		t.Fatalf("--write-config did not save the new refresh token: %v", saved)
	}
	// A second run starts from the saved config: the still-valid access token is reused, no token request.
	before := len(o.tokenReq)
	res := c.read(t)
	if res.code != 0 || len(o.tokenReq) != before {
		t.Fatalf("second run: exit %d, token requests %d -> %d", res.code, before, len(o.tokenReq))
	}
}

// Airbyte sends the login request with no slice: its templates see
// stream_slice (and its aliases) None, even when the stream reads a
// partition, and no page token.
func TestSessionLoginHasNoSlice(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, body string) {
		if r.URL.Path == "/login" {
			fmt.Fprint(w, `{"token":"t"}`)
			return
		}
		fmt.Fprint(w, `{"data":[{"id":1}]}`)
	})
	m := stream("s", "url_base: "+a.URL+"\npath: /s\nauthenticator:\n"+indent(`type: SessionTokenAuthenticator
login_requester:
  type: HttpRequester
  url_base: `+a.URL+`
  path: /login
  http_method: POST
  request_body_json:
    slice: "{{ stream_slice is none and stream_partition is none and stream_interval is none }}"
    page: "{{ next_page_token is none }}"
session_token_path: [token]
expiration_duration: PT1H
request_authentication: {type: Bearer}`, 2), "[data]", `partition_router: {type: ListPartitionRouter, cursor_field: region, values: [eu], request_option: {type: RequestOption, inject_into: request_parameter, field_name: region}}`)
	res := newConnector(t, m, nil, "s").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{"POST /login", "GET /s?region=eu"})
	if body := a.requests()[0].Body; body != `{"page":true,"slice":true}` {
		t.Errorf("login body %s", body)
	}
}

func TestSessionTokenLoginCounts(t *testing.T) {
	for _, tc := range []struct {
		name, expiration string
		logins           int
	}{{"with expiration", "expiration_duration: PT1H\n", 1}, {"without expiration", "", 2}} {
		t.Run(tc.name, func(t *testing.T) {
			logins := 0
			a := newAPI(t, func(w http.ResponseWriter, r *http.Request, body string) {
				if r.URL.Path == "/login" {
					logins++
					if r.Method != "POST" || body != `{"password":"pw","username":"me"}` {
						w.WriteHeader(400)
						return
					}
					fmt.Fprintf(w, `{"session":{"id":"sess-%d"}}`, logins)
					return
				}
				if !strings.HasPrefix(r.Header.Get("X-Session"), "sess-") {
					w.WriteHeader(401)
					return
				}
				if r.URL.Query().Get("page") == "" {
					fmt.Fprint(w, `{"data":[{"id":1}],"next":"2"}`)
				} else {
					fmt.Fprint(w, `{"data":[{"id":2}]}`)
				}
			})
			m := stream("s", "url_base: "+a.URL+"\npath: /s\nauthenticator:\n"+indent(`type: SessionTokenAuthenticator
login_requester:
  type: HttpRequester
  url_base: `+a.URL+`
  path: /login
  http_method: POST
  authenticator: {type: NoAuth}
  request_body_json:
    username: "{{ config['username'] }}"
    password: "{{ config['password'] }}"
session_token_path: [session, id]
`+tc.expiration+`request_authentication:
  type: ApiKey
  inject_into: {type: RequestOption, inject_into: header, field_name: X-Session}`, 2), "[data]", `paginator:
  type: DefaultPaginator
  page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}
  pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next }}"}`)
			res := newConnector(t, m, map[string]any{"username": "me", "password": "pw"}, "s").read(t)
			if res.code != 0 || logins != tc.logins {
				t.Fatalf("exit %d, logins %d want %d: %v", res.code, logins, tc.logins, a.lines())
			}
			equalLists(t, "records", res.records("s"), ids(1, 3))
		})
	}
}

func TestCheckFailsOnWrongKeyWithStatusAndExitsZero(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		w.WriteHeader(401)
		fmt.Fprint(w, `{"error":"invalid key"}`)
	})
	c := newConnector(t, authManifest(a.URL, "GET", "type: BearerAuthenticator\napi_token: \"{{ config['api_key'] }}\"", ""), map[string]any{"api_key": "wrong-key-123"}, "s")
	res := c.check(t)
	st := res.ofType("CONNECTION_STATUS")
	if res.code != 0 || len(st) != 1 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	cs := st[0]["connectionStatus"].(map[string]any)
	if cs["status"] != "FAILED" || !strings.Contains(cs["message"].(string), "HTTP 401") || strings.Contains(cs["message"].(string), "\n") {
		t.Fatalf("status %v", cs)
	}
	if len(a.requests()) != 1 {
		t.Fatalf("a 401 must not be retried: %v", a.lines())
	}
}

// Authenticators sharing the config's token (a refresh token updater) that
// need it at the same moment, two streams starting together, refresh it
// once: one refreshes while the other waits, then takes the token written
// into the config, as the CDK's one token refresh is seen by every
// authenticator; each refreshed (zendesk-support asked three times where
// Airbyte's runtime asks once).
func TestConcurrentAuthenticatorsRefreshTheSharedTokenOnce(t *testing.T) {
	var mu sync.Mutex
	tokens := 0
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		if r.URL.Path == "/oauth/token" {
			time.Sleep(200 * time.Millisecond) // both streams ask meanwhile
			mu.Lock()
			tokens++
			n := tokens
			mu.Unlock()
			fmt.Fprintf(w, `{"access_token":"tok-%d","refresh_token":"r%d","expires_in":3600}`, n, n)
			return
		}
		fmt.Fprint(w, `{"data":[{"id":1}]}`)
	})
	auth := func(n int) string {
		return fmt.Sprintf(`      authenticator:
        type: OAuthAuthenticator
        token_refresh_endpoint: "%s/oauth/token"
        client_id: "{{ config.credentials.client_id }}"
        client_secret: "{{ config.credentials.client_secret }}"
        refresh_token: "{{ config.credentials.refresh_token }}"
        scopes: [s%d]
        refresh_token_updater:
          access_token_config_path: [credentials, access_token]
          refresh_token_config_path: [credentials, refresh_token]
          token_expiry_date_config_path: [credentials, expires_at]`, a.URL, n)
	}
	var streams string
	for i, name := range []string{"one", "two"} {
		streams += fmt.Sprintf(`  - type: DeclarativeStream
    name: %s
    retriever:
      type: SimpleRetriever
      requester:
        type: HttpRequester
        url_base: %s
        path: /%s
  %s
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
`, name, a.URL, name, strings.TrimPrefix(indent(auth(i), 2), "  "))
	}
	m := "version: 6.0.0\ncheck: {type: CheckStream, stream_names: [one]}\nconcurrency_level: {type: ConcurrencyLevel, default_concurrency: 2}\nstreams:\n" + streams
	cfg := map[string]any{"credentials": map[string]any{"client_id": "cid", "client_secret": "cs", "refresh_token": "r0",
		"access_token": "old", "expires_at": "2020-01-01T00:00:00Z"}}
	res := newConnector(t, m, cfg, "one", "two").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalSorted(t, "requests", a.lines(), []string{"POST /oauth/token", "GET /one", "GET /two"})
	for _, r := range a.requests() {
		if r.Path != "/oauth/token" && r.Header.Get("Authorization") != "Bearer tok-1" {
			t.Errorf("%s: Authorization %q, want the one token", r.Path, r.Header.Get("Authorization"))
		}
	}
}
