package cli

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// warnings lists the messages of the WARN logs printed.
func (r result) warnings() []string {
	var out []string
	for _, l := range r.ofType("LOG") {
		if lg := l["log"].(map[string]any); lg["level"] == "WARN" {
			out = append(out, lg["message"].(string))
		}
	}
	return out
}

// onLocalhost is a test server's URL with the host name localhost: the same
// server, another host than 127.0.0.1 for the credentials rule.
func onLocalhost(a *api) string {
	return strings.Replace(a.URL, "127.0.0.1", "localhost", 1)
}

func hostOf(rawURL string) string {
	u, _ := url.Parse(rawURL)
	return u.Host
}

// credentialHeaders are every header an authenticator of these tests sets.
var credentialHeaders = []string{"Authorization", "X-Api-Key", "X-Session"}

// Design decision 9: a next-page URL gets the authenticator's credentials on
// url_base's host (or a subdomain of it) only, whatever the authenticator.
// Elsewhere the request goes out without them (no header, query parameter
// or body field of the authenticator), and one WARN names the host. The
// reference sends them wherever the URL points.
func TestNextPageURLOnAnotherHostGoesWithoutCredentials(t *testing.T) {
	cases := []struct {
		name, auth string
		post       bool
		config     map[string]any
		// sent is the credential as the API host received it.
		sent func(seen) string
		want string
	}{
		{name: "bearer", auth: `{type: BearerAuthenticator, api_token: "{{ config['k'] }}"}`,
			sent: headerValue("Authorization"), want: "Bearer the-secret"},
		{name: "basic", auth: `{type: BasicHttpAuthenticator, username: "{{ config['k'] }}", password: "{{ config['pw'] }}"}`,
			sent: headerValue("Authorization"), want: "Basic dGhlLXNlY3JldDpwdw=="},
		{name: "api key header", auth: `{type: ApiKeyAuthenticator, api_token: "{{ config['k'] }}", inject_into: {type: RequestOption, inject_into: header, field_name: X-Api-Key}}`,
			sent: headerValue("X-Api-Key"), want: "the-secret"},
		{name: "api key query", auth: `{type: ApiKeyAuthenticator, api_token: "{{ config['k'] }}", inject_into: {type: RequestOption, inject_into: request_parameter, field_name: api_key}}`,
			sent: func(s seen) string { q, _ := url.ParseQuery(s.Query); return q.Get("api_key") }, want: "the-secret"},
		{name: "api key body", post: true, auth: `{type: ApiKeyAuthenticator, api_token: "{{ config['k'] }}", inject_into: {type: RequestOption, inject_into: body_json, field_name: key}}`,
			sent: func(s seen) string { return s.Body }, want: `{"key":"the-secret","q":1}`},
		{name: "jwt", auth: `{type: JwtAuthenticator, secret_key: "{{ config['k'] }}", algorithm: HS256, header_prefix: Bearer}`,
			sent: func(s seen) string { return strings.SplitAfter(s.Header.Get("Authorization"), "Bearer ey")[0] }, want: "Bearer ey"},
		{name: "selective", auth: `{type: SelectiveAuthenticator, authenticator_selection_path: [kind], authenticators: {token: {type: BearerAuthenticator, api_token: "{{ config['k'] }}"}}}`,
			config: map[string]any{"kind": "token"}, sent: headerValue("Authorization"), want: "Bearer the-secret"},
		{name: "oauth", auth: `{type: OAuthAuthenticator, token_refresh_endpoint: "{{ config['token_url'] }}", client_id: "{{ config['id'] }}", client_secret: "{{ config['k'] }}", refresh_token: "{{ config['rt'] }}"}`,
			sent: headerValue("Authorization"), want: "Bearer the-token"},
		{name: "session token", auth: `{type: SessionTokenAuthenticator, login_requester: {type: HttpRequester, url_base: "{{ config['login_url'] }}", path: /login, http_method: POST, authenticator: {type: NoAuth}}, session_token_path: [token], request_authentication: {type: ApiKey, inject_into: {type: RequestOption, inject_into: header, field_name: X-Session}}}`,
			sent: headerValue("X-Session"), want: "the-token"},
	}
	tokens := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		fmt.Fprint(w, `{"access_token":"the-token","expires_in":3600,"token":"the-token"}`)
	})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			other := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
				if r.URL.Query().Get("p") == "2" {
					fmt.Fprintf(w, `{"data":[{"id":3}],"next":"http://%s/more?p=3"}`, r.Host)
					return
				}
				fmt.Fprint(w, `{"data":[{"id":4}]}`)
			})
			a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
				if r.URL.Path == "/s" {
					fmt.Fprintf(w, `{"data":[{"id":1}],"next":"http://%s/s2"}`, r.Host)
					return
				}
				fmt.Fprintf(w, `{"data":[{"id":2}],"next":"%s/more?p=2"}`, onLocalhost(other))
			})
			requester := "url_base: " + a.URL + "\npath: /s\nauthenticator: " + tc.auth
			method, body := "GET", ""
			if tc.post {
				method, body = "POST", `{"q":1}`
				requester += "\nhttp_method: POST\nrequest_body_json: {q: 1}"
			}
			config := map[string]any{"k": "the-secret", "pw": "pw", "id": "id", "rt": "rt", "token_url": tokens.URL + "/token", "login_url": tokens.URL}
			for k, v := range tc.config {
				config[k] = v
			}
			m := stream("s", requester, "[data]", `paginator:
  type: DefaultPaginator
  page_token_option: {type: RequestPath}
  pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next }}"}`)
			res := newConnector(t, m, config, "s").read(t)
			if res.code != 0 {
				t.Fatalf("exit %d: %s", res.code, res.stdout)
			}
			equalLists(t, "records", res.records("s"), ids(1, 5))
			var paths []string
			for _, r := range a.requests() {
				paths = append(paths, r.Method+" "+r.Path)
				if got := tc.sent(r); got != tc.want {
					t.Errorf("%s %s on url_base's host: credential %q, want %q", r.Method, r.Path, got, tc.want)
				}
			}
			equalLists(t, "url_base's host", paths, []string{method + " /s", method + " /s2"})
			equalLists(t, "other host", other.lines(), []string{method + " /more?p=2", method + " /more?p=3"})
			for _, r := range other.requests() {
				for _, h := range credentialHeaders {
					if v := r.Header.Get(h); v != "" {
						t.Errorf("%s %s?%s on the other host: %s %q", r.Method, r.Path, r.Query, h, v)
					}
				}
				if r.Body != body {
					t.Errorf("%s %s?%s on the other host: body %q, want %q", r.Method, r.Path, r.Query, r.Body, body)
				}
			}
			equalLists(t, "warnings", res.warnings(), []string{fmt.Sprintf(
				`streams[0].retriever.requester: the request to %q is sent without the authenticator's credentials, as host %q is not url_base's host %q nor a subdomain of it (said once per host)`,
				onLocalhost(other), hostOf(onLocalhost(other)), hostOf(a.URL))})
			for _, secret := range []string{"the-secret", "the-token"} {
				if strings.Contains(res.stdout, secret) {
					t.Errorf("%s in the output: %s", secret, res.stdout)
				}
			}
		})
	}
}

func headerValue(name string) func(seen) string {
	return func(s seen) string { return s.Header.Get(name) }
}

// A 401 from the host that got no credentials fails with the reason they
// were not sent, as the config_error a 401 is, and no new token is asked
// for: the refused request did not carry the old one.
func TestUnauthorizedOnAnotherHostSaysCredentialsWereWithheld(t *testing.T) {
	other := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		w.WriteHeader(401)
		fmt.Fprint(w, `{"error":"who are you?"}`)
	})
	tokens := 0
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		if r.URL.Path == "/oauth/token" {
			tokens++
			fmt.Fprint(w, `{"access_token":"the-token","expires_in":3600}`)
			return
		}
		fmt.Fprintf(w, `{"data":[{"id":1}],"next":"%s/more"}`, onLocalhost(other))
	})
	m := stream("s", "url_base: "+a.URL+"\npath: /s\nauthenticator:\n"+indent(`type: OAuthAuthenticator
token_refresh_endpoint: `+a.URL+`/oauth/token
client_id: "{{ config['id'] }}"
client_secret: "{{ config['k'] }}"
refresh_token: "{{ config['rt'] }}"`, 2), "[data]", `paginator:
  type: DefaultPaginator
  page_token_option: {type: RequestPath}
  pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next }}"}`)
	res := newConnector(t, m, map[string]any{"k": "the-secret", "id": "id", "rt": "rt"}, "s").read(t)
	if res.code != 1 {
		t.Fatalf("exit %d, want 1: %s", res.code, res.stdout)
	}
	equalLists(t, "url_base's host", a.lines(), []string{"POST /oauth/token", "GET /s"})
	equalLists(t, "other host", other.lines(), []string{"GET /more"})
	host := hostOf(onLocalhost(other))
	errs := res.errors()
	if len(errs) == 0 {
		t.Fatalf("no error TRACE: %s", res.stdout)
	}
	want := fmt.Sprintf(`stream s: HTTP 401 Unauthorized from GET http://%s/more: {"error":"who are you?"}; the authenticator's credentials were not sent with it, as host %q is not url_base's host %q nor a subdomain of it`,
		host, host, hostOf(a.URL))
	if errs[0]["message"] != want || errs[0]["failure_type"] != "config_error" {
		t.Errorf("error %v %q,\nwant config_error %q", errs[0]["failure_type"], errs[0]["message"], want)
	}
	if tokens != 1 {
		t.Errorf("%d token requests, want 1", tokens)
	}
}

// The same host on another port is another origin: credentials stay on
// url_base's port, as Python's requests keeps them on a redirect.
func TestNextPageURLOnAnotherPortGoesWithoutCredentials(t *testing.T) {
	other := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) { fmt.Fprint(w, `{"data":[{"id":2}]}`) })
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		fmt.Fprintf(w, `{"data":[{"id":1}],"next":"%s/more"}`, other.URL)
	})
	m := stream("s", "url_base: "+a.URL+"\npath: /s\nauthenticator: {type: BearerAuthenticator, api_token: \"{{ config['k'] }}\"}", "[data]", `paginator:
  type: DefaultPaginator
  page_token_option: {type: RequestPath}
  pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next }}"}`)
	res := newConnector(t, m, map[string]any{"k": "the-secret"}, "s").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	if got := a.requests()[0].Header.Get("Authorization"); got != "Bearer the-secret" {
		t.Errorf("url_base's host: Authorization %q", got)
	}
	if got := other.requests()[0].Header.Get("Authorization"); got != "" {
		t.Errorf("other port: Authorization %q", got)
	}
	equalLists(t, "warnings", res.warnings(), []string{fmt.Sprintf(
		`streams[0].retriever.requester: the request to %q is sent without the authenticator's credentials, as %s is not on url_base's scheme and port (%s) (said once per host)`,
		other.URL, other.URL, a.URL)})
}

// A redirect (3xx) to another host loses the authenticator's headers, an
// API key's own header as Authorization (net/http drops only the latter);
// one on url_base's host keeps them. A 307 that would resend credentials
// in the body elsewhere is not followed.
func TestRedirectToAnotherHostDropsCredentials(t *testing.T) {
	other := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) { fmt.Fprint(w, `{"data":[{"id":2}]}`) })
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		switch r.URL.Path {
		case "/s":
			http.Redirect(w, r, "/same?"+r.URL.RawQuery, http.StatusFound)
		case "/same":
			http.Redirect(w, r, onLocalhost(other)+"/moved?x=1&api_key="+r.URL.Query().Get("api_key"), http.StatusFound)
		case "/post":
			http.Redirect(w, r, onLocalhost(other)+"/moved", http.StatusTemporaryRedirect)
		}
	})
	auth := `authenticator:
  type: ApiKeyAuthenticator
  api_token: "{{ config['k'] }}"
  inject_into: {type: RequestOption, inject_into: %s, field_name: %s}`
	for _, tc := range []struct{ into, field string }{{"header", "X-Api-Key"}, {"request_parameter", "api_key"}} {
		a.reqs, other.reqs = nil, nil
		m := stream("s", "url_base: "+a.URL+"\npath: /s\n"+fmt.Sprintf(auth, tc.into, tc.field), "[data]", "")
		res := newConnector(t, m, map[string]any{"k": "the-secret"}, "s").read(t)
		if res.code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.into, res.code, res.stdout)
		}
		equalLists(t, "records", res.records("s"), []string{`{"id":2}`})
		sent := a.requests()
		if tc.into == "header" {
			equalLists(t, "url_base's host", a.lines(), []string{"GET /s", "GET /same"})
			for _, r := range sent {
				if r.Header.Get("X-Api-Key") != "the-secret" {
					t.Errorf("%s on url_base's host: X-Api-Key %q", r.Path, r.Header.Get("X-Api-Key"))
				}
			}
			equalLists(t, "other host", other.lines(), []string{"GET /moved?x=1&api_key="})
		} else {
			equalLists(t, "url_base's host", a.lines(), []string{"GET /s?api_key=the-secret", "GET /same?api_key=the-secret"})
			equalLists(t, "other host", other.lines(), []string{"GET /moved?x=1"})
		}
		for _, h := range credentialHeaders {
			if v := other.requests()[0].Header.Get(h); v != "" {
				t.Errorf("%s: other host got %s %q", tc.into, h, v)
			}
		}
	}

	a.reqs, other.reqs = nil, nil
	m := stream("s", "url_base: "+a.URL+"\npath: /post\nhttp_method: POST\n"+fmt.Sprintf(auth, "body_json", "key"), "[data]", "")
	res := newConnector(t, m, map[string]any{"k": "the-secret"}, "s").read(t)
	errs := res.errors()
	want := fmt.Sprintf(`stream s: host %q redirected a POST request to host %q, which would resend the body with the authenticator's credentials: not followed, as host %q is not url_base's host %q nor a subdomain of it`,
		hostOf(a.URL), hostOf(onLocalhost(other)), hostOf(onLocalhost(other)), hostOf(a.URL))
	if res.code != 1 || len(errs) == 0 || errs[0]["message"] != want || errs[0]["failure_type"] != "config_error" {
		t.Fatalf("exit %d, errors %v, want %q", res.code, errs, want)
	}
	equalLists(t, "url_base's host", a.lines(), []string{"POST /post"})
	equalLists(t, "other host", other.lines(), nil)
}
