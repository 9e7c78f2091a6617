package cli

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

func TestCredentialsPinnedToTheRequesterHost(t *testing.T) {
	other := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) { fmt.Fprint(w, `{"data":[{"id":2}]}`) })
	for _, allow := range []bool{false, true} {
		a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
			fmt.Fprintf(w, `{"data":[{"id":1}],"next":"%s/page2"}`, other.URL)
		})
		extra := ""
		if allow {
			extra = "allowed_hosts: [\"" + strings.TrimPrefix(other.URL, "http://") + "\"]\n"
		}
		m := stream("s", "url_base: "+a.URL+"\npath: /s\n"+extra+"authenticator: {type: BearerAuthenticator, api_token: \"{{ config['k'] }}\"}", "[data]", `paginator:
  type: DefaultPaginator
  page_token_option: {type: RequestPath}
  pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next }}"}`)
		before := len(other.requests())
		res := newConnector(t, m, map[string]any{"k": "pinned-secret"}, "s").read(t)
		sent := other.requests()[before:]
		if !allow {
			errs := res.errors()
			if res.code == 0 || len(sent) != 0 || len(errs) == 0 || !strings.Contains(errs[0]["message"].(string), "credentials are not sent there") {
				t.Fatalf("not allowed: exit %d, %d requests to the other host, errors %v", res.code, len(sent), errs)
			}
			continue
		}
		if res.code != 0 || len(sent) != 1 || sent[0].Header.Get("Authorization") != "Bearer pinned-secret" {
			t.Fatalf("allowed: exit %d, requests %+v", res.code, sent)
		}
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
