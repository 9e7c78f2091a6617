package cli

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// sessionManifest logs in with a POST of the config's credentials and sends
// the token as Authorization: Bearer.
func sessionManifest(url string) string {
	return stream("s", "url_base: "+url+"\npath: /s\nauthenticator:\n"+indent(`type: SessionTokenAuthenticator
login_requester:
  type: HttpRequester
  url_base: `+url+`
  path: /login
  http_method: POST
  authenticator: {type: NoAuth}
  request_body_json:
    username: "{{ config['username'] }}"
    password: "{{ config['password'] }}"
session_token_path: [token]
expiration_duration: PT1H
request_authentication: {type: Bearer}`, 2), "[data]", "")
}

func TestSessionLoginRefusedIsAConfigErrorNotARetry(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		if r.URL.Path == "/login" {
			w.WriteHeader(401)
			fmt.Fprint(w, `{"error":"bad credentials"}`)
			return
		}
		fmt.Fprint(w, `{"data":[{"id":1}]}`)
	})
	c := newConnector(t, sessionManifest(a.URL), map[string]any{"username": "me", "password": "pw-secret"}, "s")
	want := "stream s: session token login failed: HTTP 401 Unauthorized from POST " + a.URL + `/login: {"error":"bad credentials"}`

	res := c.read(t)
	errs := res.errors()
	if res.code != 1 || len(errs) != 2 || errs[0]["failure_type"] != "config_error" || errs[0]["message"] != want {
		t.Fatalf("read: exit %d, errors %v\nstderr %s", res.code, errs, res.stderr)
	}
	equalLists(t, "requests", a.lines(), []string{"POST /login"})

	chk := c.check(t)
	st := chk.ofType("CONNECTION_STATUS")
	if chk.code != 0 || len(st) != 1 {
		t.Fatalf("check: exit %d: %s %s", chk.code, chk.stdout, chk.stderr)
	}
	cs := st[0]["connectionStatus"].(map[string]any)
	if cs["status"] != "FAILED" || cs["message"] != want {
		t.Fatalf("check status %v", cs)
	}
	for _, out := range []string{res.stdout, chk.stdout} {
		if strings.Contains(out, "pw-secret") {
			t.Fatalf("password in output: %s", out)
		}
	}
}

func TestNumericTokensAreSentAsWritten(t *testing.T) {
	t.Run("session", func(t *testing.T) {
		a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
			if r.URL.Path == "/login" {
				fmt.Fprint(w, `{"token":12345678901234567890}`)
				return
			}
			fmt.Fprint(w, `{"data":[{"id":1}]}`)
		})
		res := newConnector(t, sessionManifest(a.URL), map[string]any{"username": "me", "password": "pw"}, "s").read(t)
		reqs := a.requests()
		if res.code != 0 || len(reqs) != 2 || reqs[1].Header.Get("Authorization") != "Bearer 12345678901234567890" {
			t.Fatalf("exit %d, requests %+v", res.code, reqs)
		}
	})
	t.Run("oauth", func(t *testing.T) {
		a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
			if r.URL.Path == "/oauth/token" {
				fmt.Fprint(w, `{"access_token":1e10,"expires_in":3600}`)
				return
			}
			fmt.Fprint(w, `{"data":[{"id":1}]}`)
		})
		res := newConnector(t, oauthManifest(a.URL, refreshLine, ""), map[string]any{"client_id": "c", "client_secret": "s", "client_refresh_token": "r"}, "s").read(t)
		reqs := a.requests()
		if res.code != 0 || len(reqs) != 2 || reqs[1].Header.Get("Authorization") != "Bearer 1e10" {
			t.Fatalf("exit %d, requests %+v", res.code, reqs)
		}
	})
}

func TestSecretsMaskedWhenTheAPIEchoesThemEscapedOrEncoded(t *testing.T) {
	const password = `pä"ss/wörd\x`
	// The API echoes what it got as Python's json.dumps and PHP's
	// json_encode would write it, and the Authorization header as sent.
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		w.WriteHeader(400)
		fmt.Fprintf(w, `{"py":"p\u00e4\"ss/w\u00f6rd\\x","php":"pä\"ss\/wörd\\x","auth":%q}`, r.Header.Get("Authorization"))
	})
	m := authManifest(a.URL, "GET", "type: BasicHttpAuthenticator\nusername: \"{{ config['username'] }}\"\npassword: \"{{ config['password'] }}\"", "")
	m += `spec:
  type: Spec
  connection_specification:
    type: object
    properties:
      username: {type: string}
      password: {type: string, airbyte_secret: true}
`
	res := newConnector(t, m, map[string]any{"username": "me", "password": password}, "s").read(t)
	errs := res.errors()
	want := "stream s: HTTP 400 Bad Request from GET " + a.URL + `/s: {"py":"****","php":"****","auth":"Basic ****"}`
	if res.code != 1 || len(errs) == 0 || errs[0]["message"] != want {
		t.Fatalf("exit %d, errors %v\nwant %q", res.code, errs, want)
	}
}

func TestOAuthTokenValidForCenturiesIsReused(t *testing.T) {
	o := newOAuthServer(t, false)
	o.expires = 9999999999 // seconds: more than a time.Duration holds
	res := newConnector(t, oauthManifest(o.URL, refreshLine, ""), map[string]any{"client_id": "c", "client_secret": "s", "client_refresh_token": "r"}, "s").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", o.lines(), []string{"POST /oauth/token", "GET /s", "GET /s?page=2"})
}

func TestCredentialWithALineBreakIsAConfigErrorAtOnce(t *testing.T) {
	cases := []struct{ name, auth, header string }{
		{"bearer", "type: BearerAuthenticator\napi_token: \"{{ config['api_key'] }}\"", "Authorization"},
		{"api key header", "type: ApiKeyAuthenticator\napi_token: \"{{ config['api_key'] }}\"\ninject_into: {type: RequestOption, inject_into: header, field_name: X-Key}", "X-Key"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := dataAPI(t)
			res := newConnector(t, authManifest(a.URL, "GET", tc.auth, ""), map[string]any{"api_key": "tok-secret\n"}, "s").read(t)
			errs := res.errors()
			want := `stream s: request header "` + tc.header + `": the value holds a line break or another control character, which an HTTP header cannot carry`
			if res.code != 1 || len(errs) != 2 || errs[0]["failure_type"] != "config_error" || errs[0]["message"] != want {
				t.Fatalf("exit %d, errors %v", res.code, errs)
			}
			if len(res.ofType("LOG")) != 0 || len(a.requests()) != 0 {
				t.Fatalf("retried or sent: logs %v, requests %v", res.ofType("LOG"), a.lines())
			}
		})
	}
}

func TestTokenEndpointThatIsNoURLIsNamed(t *testing.T) {
	m := authManifest("http://127.0.0.1:1", "GET", `type: OAuthAuthenticator
token_refresh_endpoint: "{{ config['domain'] }}/oauth/token"
client_id: "{{ config['client_id'] }}"
client_secret: "{{ config['client_secret'] }}"
grant_type: client_credentials`, "")
	res := newConnector(t, m, map[string]any{"client_id": "c", "client_secret": "s", "domain": ""}, "s").read(t)
	errs := res.errors()
	want := `stream s: streams[0].retriever.requester.authenticator.token_refresh_endpoint: renders "/oauth/token", not a URL starting with http:// or https://; check the config`
	if res.code != 1 || len(errs) != 2 || errs[0]["failure_type"] != "config_error" || errs[0]["message"] != want {
		t.Fatalf("exit %d, errors %v", res.code, errs)
	}
}

// An empty refresh token (a config without one, or an empty string) is
// refused before the token endpoint is asked: the seed says the end user
// must supply one, and a provider refuses an empty refresh_token grant with
// an answer that names neither the config key nor the fix. Airbyte asks the
// endpoint anyway; the difference is deliberate (README).
func TestEmptyRefreshTokenIsAConfigErrorBeforeAnyRequest(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		fmt.Fprint(w, `{"access_token":"tok","expires_in":3600,"data":[{"id":1}]}`)
	})
	m := stream("s", "url_base: "+a.URL+"\npath: /s\nauthenticator:\n"+indent(`type: OAuthAuthenticator
token_refresh_endpoint: `+a.URL+`/token
client_id: "{{ config['client_id'] }}"
client_secret: "{{ config['client_secret'] }}"
refresh_token: "{{ config.get('refresh_token', '') }}"`, 2), "[data]", "")
	for _, config := range []map[string]any{
		{"client_id": "id", "client_secret": "cs"},
		{"client_id": "id", "client_secret": "cs", "refresh_token": ""},
	} {
		c := newConnector(t, m, config, "s")
		want := "stream s: streams[0].retriever.requester.authenticator: the refresh token is empty; check the config"
		res := c.read(t)
		if errs := res.errors(); res.code != 1 || len(errs) != 2 || errs[0]["failure_type"] != "config_error" || errs[0]["message"] != want {
			t.Fatalf("read: exit %d, errors %v\nwant %s", res.code, errs, want)
		}
		if got := a.lines(); len(got) != 0 {
			t.Fatalf("requests %v, want none", got)
		}
	}
}
