package cli

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

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
