package cli

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// Issue 30: no secret reaches another host by any path, and every
// credential is masked. Each test runs the CLI against a real loopback API
// (127.0.0.1) and a second server standing in for the foreign host
// (localhost, another port), and asserts what the foreign host received
// and what we printed: no secret, in any form, at either.

// foreignHost is a server on another host (localhost, where the API is on
// 127.0.0.1) that keeps every request it receives whole.
type foreignHost struct {
	*httptest.Server
	URL  string // with localhost
	mu   sync.Mutex
	seen []string // each request as sent on the wire
	refs []string // their Referer headers
}

func newForeignHost(t *testing.T, answer func(w http.ResponseWriter, r *http.Request)) *foreignHost {
	t.Helper()
	f := &foreignHost{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		dump, _ := httputil.DumpRequest(r, true)
		f.mu.Lock()
		f.seen = append(f.seen, string(dump))
		f.refs = append(f.refs, r.Header.Get("Referer"))
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		answer(w, r)
	}))
	t.Cleanup(f.Close)
	f.URL = strings.Replace(f.Server.URL, "127.0.0.1", "localhost", 1)
	return f
}

func (f *foreignHost) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.seen...)
}

// secretForms are the ways a secret can be written: as it is, URL-encoded,
// base64-encoded alone and as Basic credentials with an empty password.
func secretForms(secrets ...string) []string {
	var out []string
	for _, s := range secrets {
		out = append(out, s, url.QueryEscape(s), base64.StdEncoding.EncodeToString([]byte(s)), base64.StdEncoding.EncodeToString([]byte(s+":")))
	}
	return out
}

// leaks counts the forms of the secrets found in texts, and names them.
func leaks(t *testing.T, where string, texts []string, secrets ...string) int {
	t.Helper()
	n := 0
	for _, text := range texts {
		for _, form := range secretForms(secrets...) {
			if strings.Contains(text, form) {
				n++
				t.Errorf("%s holds the secret %q: %s", where, form, text)
			}
		}
	}
	return n
}

// Go's client sends the first URL as a Referer on a redirect, so an API key
// in the query reached the redirect's target there. No request carries a
// Referer, on any redirect status, to another host or the same one.
func TestRedirectSendsNoReferer(t *testing.T) {
	for _, status := range []int{301, 302, 303, 307, 308} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			foreign := newForeignHost(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `{"data":[{"id":2}]}`) })
			home := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
				switch r.URL.Path {
				case "/s":
					http.Redirect(w, r, "/same?x=1", status)
				case "/same":
					http.Redirect(w, r, foreign.URL+"/landing?x=1", status)
				}
			})
			m := authManifest(home.URL, "GET", "type: ApiKeyAuthenticator\napi_token: \"{{ config['api_key'] }}\"\ninject_into: {type: RequestOption, inject_into: request_parameter, field_name: api_key}", "")
			res := newConnector(t, m, map[string]any{"api_key": "key-secret-0451"}, "s").read(t)
			if res.code != 0 {
				t.Fatalf("exit %d: %s", res.code, res.stdout)
			}
			equalLists(t, "records", res.records("s"), []string{`{"id":2}`})
			for _, r := range home.requests() {
				if ref := r.Header.Get("Referer"); ref != "" {
					t.Errorf("%s %s: Referer %q", r.Method, r.Path, ref)
				}
			}
			equalLists(t, "foreign Referers", foreign.refs, []string{""})
			if n := leaks(t, "the foreign host", foreign.requests(), "key-secret-0451") + leaks(t, "our output", []string{res.stdout, res.stderr}, "key-secret-0451"); n != 0 {
				t.Errorf("%d secrets leaked", n)
			}
		})
	}
}

// A token or login request redirected to another host is not followed, in
// any body encoding and on any redirect status: a config_error names the
// endpoint and the redirect's host, never its query, and the foreign host
// receives nothing.
func TestTokenAndLoginRequestsAreNotRedirectedToAnotherHost(t *testing.T) {
	oauth := func(extra string) func(url string) string {
		return func(url string) string {
			return oauthManifest(url, refreshLine, extra)
		}
	}
	for _, tc := range []struct {
		name     string
		manifest func(url string) string
		path     string // the endpoint redirected
		status   int
		samePort bool // redirected to the same host (127.0.0.1) on another port: still another origin
	}{
		{"oauth json 307", oauth(""), "/oauth/token", 307, false},
		{"oauth json 308", oauth(""), "/oauth/token", 308, false},
		{"oauth form 307", oauth("refresh_request_headers: {Content-Type: application/x-www-form-urlencoded}\n"), "/oauth/token", 307, false},
		{"oauth query 302", oauth("refresh_request_headers: {Content-Type: application/json}\nsend_refresh_request_as_query_params: true\n"), "/oauth/token", 302, false},
		{"oauth query 307", oauth("send_refresh_request_as_query_params: true\n"), "/oauth/token", 307, false},
		{"session login 307", sessionManifest, "/login", 307, false},
		{"session login 303", sessionManifest, "/login", 303, false},
		{"oauth json 307, same host, another port", oauth(""), "/oauth/token", 307, true},
		{"legacy session login 307", func(url string) string { return legacySessionManifest(url+"/api/", "session") }, "/api/session", 307, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			foreign := newForeignHost(t, func(w http.ResponseWriter, r *http.Request) {
				fmt.Fprint(w, `{"access_token":"stolen","token":"stolen","expires_in":3600}`)
			})
			target := foreign.URL
			if tc.samePort {
				target = foreign.Server.URL
			}
			home := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
				if r.URL.Path == tc.path {
					http.Redirect(w, r, target+"/grab?code=q-0451", tc.status)
					return
				}
				fmt.Fprint(w, `{"data":[{"id":1}]}`)
			})
			config := map[string]any{"client_id": "cid", "client_secret": "csecret-0451", "client_refresh_token": "rt-secret-0451", "username": "me", "password": "pw-secret-0451"}
			res := newConnector(t, tc.manifest(home.URL), config, "s").read(t)
			if got := foreign.requests(); len(got) != 0 {
				t.Errorf("the foreign host received %q", got)
			}
			errs := res.errors()
			want := fmt.Sprintf("POST %s%s, a request for credentials, was redirected to %s: not followed, as its body and credentials go to that endpoint's own host and scheme only",
				home.URL, tc.path, target)
			if res.code == 0 || len(errs) == 0 || errs[0]["failure_type"] != "config_error" || !strings.HasSuffix(errs[0]["message"].(string), want) {
				t.Errorf("exit %d, errors %v\nwant a config_error ending %q", res.code, errs, want)
			}
			if strings.Contains(res.stdout, "q-0451") {
				t.Errorf("the redirect's query is printed: %s", res.stdout)
			}
			leaks(t, "our output", []string{res.stdout, res.stderr}, "csecret-0451", "rt-secret-0451", "pw-secret-0451")
		})
	}
}

// secretSpec marks the config's api_key secret.
const secretSpec = `spec:
  type: Spec
  connection_specification:
    type: object
    properties:
      api_key: {type: string, airbyte_secret: true}
`

// A secret config value in request options (a request parameter, a header,
// a JSON body field), not in an authenticator, goes only where the
// authenticator's credentials go: a next-page URL on another host gets the
// request without them, the other options kept, with one WARN for the
// host.
func TestSecretRequestOptionsStayWithTheirHost(t *testing.T) {
	foreign := newForeignHost(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("page") == "2" {
			fmt.Fprintf(w, `{"data":[{"id":2}],"next":"%s/more?page=3"}`, "http://"+r.Host)
			return
		}
		fmt.Fprint(w, `{"data":[{"id":3}]}`)
	})
	home := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		fmt.Fprintf(w, `{"data":[{"id":1}],"next":"%s/more?page=2"}`, foreign.URL)
	})
	m := stream("s", "url_base: "+home.URL+`
path: /s
http_method: POST
request_parameters:
  key: "{{ config['api_key'] }}"
  sig: "v1-{{ config['api_key'] | hash('md5') }}-{{ config['api_key'] }}"
  region: eu
request_headers:
  X-Key: "Key {{ config['api_key'] }}"
  X-Client: go
request_body_json:
  auth: {key: "{{ config['api_key'] }}", user: me}
  q: all`, "[data]", `paginator:
  type: DefaultPaginator
  page_token_option: {type: RequestPath}
  pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next }}", stop_condition: "{{ not response.next }}"}`) + secretSpec
	res := newConnector(t, m, map[string]any{"api_key": "key-secret-0451"}, "s").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "records", res.records("s"), ids(1, 4))
	got := home.requests()
	if len(got) != 1 || got[0].Header.Get("X-Key") != "Key key-secret-0451" || !strings.Contains(got[0].Query, "key=key-secret-0451") ||
		got[0].Body != `{"auth":{"key":"key-secret-0451","user":"me"},"q":"all"}` {
		t.Errorf("home requests: %+v", got)
	}
	fr := foreign.requests()
	if len(fr) != 2 {
		t.Fatalf("foreign requests: %q", fr)
	}
	for _, r := range fr {
		for _, kept := range []string{"region=eu", "X-Client: go", `{"auth":{"user":"me"},"q":"all"}`} {
			if !strings.Contains(r, kept) {
				t.Errorf("the foreign request lacks %q: %s", kept, r)
			}
		}
	}
	var warns []string
	for _, l := range res.ofType("LOG") {
		if lg := l["log"].(map[string]any); lg["level"] == "WARN" {
			warns = append(warns, lg["message"].(string))
		}
	}
	want := fmt.Sprintf(`streams[0].retriever.requester: the request to %q is sent without JSON body field auth.key, header X-Key, query parameter key, query parameter sig (holding a secret), as host %q is not url_base's host %q nor a subdomain of it (said once per host)`,
		foreign.URL, strings.TrimPrefix(foreign.URL, "http://"), strings.TrimPrefix(home.URL, "http://"))
	equalLists(t, "warnings", warns, []string{want})
	if n := leaks(t, "the foreign host", fr, "key-secret-0451") + leaks(t, "our output", []string{res.stdout, res.stderr}, "key-secret-0451"); n != 0 {
		t.Errorf("%d secrets leaked", n)
	}
}

// A secret in a part of the request that cannot be left out alone (a body
// given as one text) stops the request to another host, a config_error
// naming the host; and a data request's redirect to another host loses the
// headers and query parameters holding a secret.
func TestSecretInAWholeBodyOrARedirectStaysWithItsHost(t *testing.T) {
	foreign := newForeignHost(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `{"data":[{"id":2}]}`) })
	home := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		fmt.Fprintf(w, `{"data":[{"id":1}],"next":"%s/more"}`, foreign.URL)
	})
	m := stream("s", "url_base: "+home.URL+"\npath: /s\nhttp_method: POST\nrequest_body_data: \"token={{ config['api_key'] }}&q=all\"", "[data]", `paginator:
  type: DefaultPaginator
  page_token_option: {type: RequestPath}
  pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next }}", stop_condition: "{{ not response.next }}"}`) + secretSpec
	res := newConnector(t, m, map[string]any{"api_key": "key-secret-0451"}, "s").read(t)
	errs := res.errors()
	want := fmt.Sprintf(`stream s: streams[0].retriever.requester: the request to %q is not sent: its body holds a secret, and secrets go only where the authenticator's credentials go, which %s is not, as host %q is not url_base's host %q nor a subdomain of it`,
		foreign.URL, foreign.URL, strings.TrimPrefix(foreign.URL, "http://"), strings.TrimPrefix(home.URL, "http://"))
	if res.code == 0 || len(errs) == 0 || errs[0]["message"] != want || errs[0]["failure_type"] != "config_error" {
		t.Errorf("exit %d, errors %v\nwant %q", res.code, errs, want)
	}
	if got := foreign.requests(); len(got) != 0 {
		t.Errorf("the foreign host received %q", got)
	}

	redirected := newForeignHost(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `{"data":[{"id":2}]}`) })
	home2 := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		http.Redirect(w, r, redirected.URL+"/landing?key="+r.URL.Query().Get("key")+"&region=eu", http.StatusFound)
	})
	m2 := stream("s", "url_base: "+home2.URL+"\npath: /s\nrequest_parameters: {key: \"{{ config['api_key'] }}\"}\nrequest_headers: {X-Key: \"{{ config['api_key'] }}\", X-Client: go}", "[data]", "") + secretSpec
	res2 := newConnector(t, m2, map[string]any{"api_key": "key-secret-0451"}, "s").read(t)
	if res2.code != 0 {
		t.Fatalf("exit %d: %s", res2.code, res2.stdout)
	}
	got := redirected.requests()
	if len(got) != 1 || !strings.HasPrefix(got[0], "GET /landing?region=eu HTTP/1.1") || !strings.Contains(got[0], "X-Client: go") {
		t.Errorf("redirected requests: %q", got)
	}
	if n := leaks(t, "the foreign host", append(foreign.requests(), got...), "key-secret-0451") + leaks(t, "our output", []string{res.stdout, res.stderr, res2.stdout, res2.stderr}, "key-secret-0451"); n != 0 {
		t.Errorf("%d secrets leaked", n)
	}
}
