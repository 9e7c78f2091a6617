package cli

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// legacySessionAPI accepts the session token "good" (and the one its login
// gives, "fresh") in X-Session, validates at /api/user/current, logs in at
// /api/session with {"username":"u","password":"p"}, and serves two pages
// of /api/s.
func legacySessionAPI(t *testing.T) *api {
	return newAPI(t, func(w http.ResponseWriter, r *http.Request, body string) {
		token := r.Header.Get("X-Session")
		switch {
		case r.URL.Path == "/api/session":
			if body != `{"password":"p","username":"u"}` || r.Header.Get("Content-Type") != "application/json" {
				w.WriteHeader(http.StatusBadRequest)
				return
			}
			fmt.Fprint(w, `{"id":"fresh"}`)
		case token != "good" && token != "fresh":
			w.WriteHeader(http.StatusUnauthorized)
		case r.URL.Path == "/api/user/current":
			fmt.Fprint(w, `{"id":1}`)
		case r.URL.Query().Get("page") == "":
			fmt.Fprint(w, `{"data":[{"id":1}],"next":2}`)
		default:
			fmt.Fprint(w, `{"data":[{"id":2}]}`)
		}
	})
}

func legacySessionManifest(urlBase, loginURL string) string {
	return stream("s", "url_base: "+urlBase+`
path: s
authenticator:
  type: LegacySessionTokenAuthenticator
  header: X-Session
  login_url: `+loginURL+`
  validate_session_url: user/current
  session_token: "{{ config.get('session_token', '') }}"
  session_token_response_key: id
  username: "{{ config.get('username', '') }}"
  password: "{{ config.get('password', '') }}"
`, "[data]", `paginator:
  type: DefaultPaginator
  pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.get('next') }}", stop_condition: "{{ not response.get('next') }}"}
  page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}`)
}

// requestLines are the requests an API received with the session header.
func requestLines(a *api) []string {
	var out []string
	for _, r := range a.requests() {
		line := r.Method + " " + r.Path
		if r.Query != "" {
			line += "?" + r.Query
		}
		out = append(out, line+" X-Session="+r.Header.Get("X-Session")+" "+r.Body)
	}
	return out
}

func TestLegacySessionTokenFromTheConfigIsValidatedOnce(t *testing.T) {
	a := legacySessionAPI(t)
	res := newConnector(t, legacySessionManifest(a.URL+"/api/", "session"), map[string]any{"session_token": "good"}, "s").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", requestLines(a), []string{
		"GET /api/user/current X-Session=good ",
		"GET /api/s X-Session=good ",
		"GET /api/s?page=2 X-Session=good ",
	})
	equalLists(t, "records", res.records("s"), []string{`{"id":1}`, `{"id":2}`})
	if strings.Contains(res.stdout+res.stderr, `"good"`) {
		t.Errorf("the session token was printed")
	}
}

func TestLegacySessionTokenRefusedLogsInWithUsernameAndPassword(t *testing.T) {
	for _, cfg := range []map[string]any{
		{"session_token": "stale", "username": "u", "password": "p"},
		{"username": "u", "password": "p"},
	} {
		a := legacySessionAPI(t)
		// url_base without a trailing slash and a login_url with a leading one
		// join as the same URL.
		res := newConnector(t, legacySessionManifest(a.URL+"/api", "/session"), cfg, "s").read(t)
		if res.code != 0 {
			t.Fatalf("%v: exit %d: %s", cfg, res.code, res.stdout)
		}
		want := []string{
			`POST /api/session X-Session= {"password":"p","username":"u"}`,
			"GET /api/s X-Session=fresh ",
			"GET /api/s?page=2 X-Session=fresh ",
		}
		if cfg["session_token"] != nil {
			want = append([]string{"GET /api/user/current X-Session=stale "}, want...)
		}
		equalLists(t, fmt.Sprint(cfg), requestLines(a), want)
		if strings.Contains(res.stdout, "fresh") || strings.Contains(res.stdout, `"p"`) {
			t.Errorf("%v: a secret was printed: %s", cfg, res.stdout)
		}
	}
}

func TestLegacySessionTokenWithoutCredentialsIsAConfigError(t *testing.T) {
	a := legacySessionAPI(t)
	conn := newConnector(t, legacySessionManifest(a.URL+"/api/", "session"), map[string]any{"session_token": "stale"}, "s")
	errs := conn.read(t).errors()
	want := "stream s: streams[0].retriever.requester.authenticator: the session token is missing or not valid, and there is no username and password to log in with"
	if len(errs) == 0 || errs[0]["message"] != want || errs[0]["failure_type"] != "config_error" {
		t.Errorf("got %v, want %q", errs, want)
	}
	equalLists(t, "requests", requestLines(a), []string{"GET /api/user/current X-Session=stale "})
}

func TestLegacySessionTokenNeedsTheRequesterURLBase(t *testing.T) {
	m := strings.Replace(legacySessionManifest("http://127.0.0.1:1/api/", "session"), "url_base: http://127.0.0.1:1/api/\n", "url: http://127.0.0.1:1/api/s\n", 1)
	res := runCLI(t, "discover", "--manifest", writeFile(t, t.TempDir(), "m.yaml", m), "--config", writeFile(t, t.TempDir(), "c.json", "{}"))
	errs := res.errors()
	if res.code != 1 || len(errs) != 1 || !strings.Contains(errs[0]["message"].(string), "authenticator: a LegacySessionTokenAuthenticator needs the requester's url_base") {
		t.Errorf("got exit %d %v", res.code, errs)
	}
}

// A stream the CDK reads whole (its requester is custom) logs in with Go's
// legacy session authenticator, under the requester's url_base as for a
// stream Go reads. (The CDK builds a custom requester's legacy session
// authenticator only with a url_base in its $parameters.)
func TestLegacySessionTokenOnAStreamTheCDKReads(t *testing.T) {
	a := legacySessionAPI(t)
	m := strings.Replace(legacySessionManifest(a.URL+"/api/", "session"), "type: HttpRequester",
		"type: CustomRequester\n        class_name: source_declarative_manifest.components.SameRequester\n        $parameters: {url_base: "+a.URL+"/api/}", 1)
	c, _ := componentsRun(t, m, map[string]any{"username": "u", "password": "p"}, "s")
	code := writeFile(t, c.dir, "same.py", "from airbyte_cdk.sources.declarative.requesters.http_requester import HttpRequester\n\nclass SameRequester(HttpRequester):\n    pass\n")
	res := c.read(t, "--components-path", code)
	if res.code != 0 {
		t.Fatalf("exit %d: %v %s", res.code, res.errors(), res.stderr)
	}
	equalLists(t, "requests", requestLines(a), []string{
		`POST /api/session X-Session= {"password":"p","username":"u"}`,
		"GET /api/s X-Session=fresh ",
		"GET /api/s?page=2 X-Session=fresh ",
	})
	equalLists(t, "records", res.records("s"), []string{`{"id":1}`, `{"id":2}`})
}
