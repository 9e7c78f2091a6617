package cli

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// Seed 4.1, cursor pagination 5: with inject_into path the whole URL of the
// next request is the cursor, on whatever host it names; the request carries
// the stream's credentials, as in the reference, and a WARN says where they
// went, once per host.
func TestNextPageURLOnAnotherHostIsFollowedWithCredentials(t *testing.T) {
	other := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		if r.URL.Query().Get("p") == "2" {
			fmt.Fprintf(w, `{"data":[{"id":2}],"next":"%s/more?p=3"}`, "http://"+r.Host)
			return
		}
		fmt.Fprint(w, `{"data":[{"id":3}]}`)
	})
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		fmt.Fprintf(w, `{"data":[{"id":1}],"next":"%s/more?p=2"}`, other.URL)
	})
	m := stream("s", "url_base: "+a.URL+"\npath: /s\nauthenticator: {type: BearerAuthenticator, api_token: \"{{ config['k'] }}\"}", "[data]", `paginator:
  type: DefaultPaginator
  page_token_option: {type: RequestPath}
  pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next }}"}`)
	res := newConnector(t, m, map[string]any{"k": "the-secret"}, "s").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "records", res.records("s"), []string{`{"id":1}`, `{"id":2}`, `{"id":3}`})
	equalLists(t, "first host", a.lines(), []string{"GET /s"})
	equalLists(t, "other host", other.lines(), []string{"GET /more?p=2", "GET /more?p=3"})
	for _, r := range append(a.requests(), other.requests()...) {
		if got := r.Header.Get("Authorization"); got != "Bearer the-secret" {
			t.Errorf("%s %s: Authorization %q", r.Method, r.Path, got)
		}
	}
	var warns []string
	for _, l := range res.ofType("LOG") {
		if lg := l["log"].(map[string]any); lg["level"] == "WARN" {
			warns = append(warns, lg["message"].(string))
		}
	}
	host := strings.TrimPrefix(other.URL, "http://")
	equalLists(t, "warnings", warns, []string{fmt.Sprintf(`streams[0].retriever.requester: the next page URL points at host %q, not url_base's %q; the request is sent there with the authenticator's credentials (said once per host)`,
		host, strings.TrimPrefix(a.URL, "http://"))})
	if strings.Contains(res.stdout, "the-secret") {
		t.Errorf("the token is in the output: %s", res.stdout)
	}
}

func TestSecretsMaskedInURLsAndEchoedBodies(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		w.WriteHeader(400)
		fmt.Fprintf(w, `{"error":"bad key %s at %s"}`, r.URL.Query().Get("key"), r.URL.String())
	})
	m := authManifest(a.URL, "GET", "type: ApiKeyAuthenticator\napi_token: \"{{ config['api_key'] }}\"\ninject_into: {type: RequestOption, inject_into: request_parameter, field_name: key}", "")
	m += `spec:
  type: Spec
  connection_specification:
    type: object
    properties:
      api_key: {type: string, airbyte_secret: true}
`
	res := newConnector(t, m, map[string]any{"api_key": "s3cr3t/with+chars"}, "s").read(t)
	if res.code == 0 {
		t.Fatal("want a failure")
	}
	for _, leak := range []string{"s3cr3t/with+chars", "s3cr3t%2Fwith%2Bchars", "s3cr3t%2Fwith+chars"} {
		if strings.Contains(res.stdout, leak) {
			t.Errorf("secret form %q in output: %s", leak, res.stdout)
		}
	}
	if !strings.Contains(res.stdout, "****") {
		t.Errorf("no masked secret in the error: %s", res.stdout)
	}
}

func TestUnauthorizedDataRequestRefreshesTokenOnce(t *testing.T) {
	tokens := 0
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		if r.URL.Path == "/oauth/token" {
			tokens++
			fmt.Fprintf(w, `{"access_token":"t%d","expires_in":3600}`, tokens)
			return
		}
		if r.Header.Get("Authorization") != "Bearer t2" {
			w.WriteHeader(401)
			return
		}
		fmt.Fprint(w, `{"data":[{"id":1}]}`)
	})
	res := newConnector(t, oauthManifest(a.URL, refreshLine, ""), map[string]any{"client_id": "c", "client_secret": "s", "client_refresh_token": "r"}, "s").read(t)
	if res.code != 0 || tokens != 2 {
		t.Fatalf("exit %d, token requests %d: %v", res.code, tokens, a.lines())
	}
	equalLists(t, "requests", a.lines(), []string{"POST /oauth/token", "GET /s", "POST /oauth/token", "GET /s"})
}
