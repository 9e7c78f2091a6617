package cli

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// brokenSelective is a stream whose SelectiveAuthenticator offers a bearer
// token and an OAuth branch with a template that does not compile.
func brokenSelective(url string) string {
	return stream("s", fmt.Sprintf(`url_base: %s
path: /items
authenticator:
  type: SelectiveAuthenticator
  authenticator_selection_path: [authorization, auth_type]
  authenticators:
    token: {type: BearerAuthenticator, api_token: "{{ config.authorization.api_token }}"}
    oauth:
      type: OAuthAuthenticator
      token_refresh_endpoint: %[1]s/token
      client_id: "{{ config.authorization.client_id }}"
      client_secret: "{{ config.authorization.client_secret) }}"
      refresh_token: "{{ config.authorization.refresh_token }}"`, url), "[data]", "")
}

const brokenSelectiveWarning = `streams[0].retriever.requester.authenticator.authenticators.oauth.client_secret: invalid template "{{ config.authorization.client_secret) }}": line 1: unexpected ")": it fails when it is evaluated, as in Airbyte's runtime`

// A template that does not compile in an authenticator the config does not
// choose is a WARN, and the chosen one reads, as in Airbyte (which compiles
// a template only when it evaluates it: run against this API it reads the
// record with the bearer token); refused at load before.
func TestSelectiveBrokenBranchNotChosenRuns(t *testing.T) {
	a := fixedAPI(t, `{"data":[{"id":1}]}`)
	res := newConnector(t, brokenSelective(a.URL), map[string]any{"authorization": map[string]any{"auth_type": "token", "api_token": "abc"}}, "s").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	reqs := a.requests()
	if len(reqs) != 1 || reqs[0].Path != "/items" || reqs[0].Header.Get("Authorization") != "Bearer abc" {
		t.Fatalf("requests: %+v", reqs)
	}
	equalLists(t, "records", res.records("s"), ids(1, 2))
	equalLists(t, "warnings", res.warnings(), []string{brokenSelectiveWarning})
}

// A config choosing the broken authenticator fails the stream when its
// token request evaluates the template, before any request, as in Airbyte
// (whose token request fails on the template: "Unexpected error during
// OAuth token refresh: unexpected ')'"); a config_error naming the
// template here, as a manifest's fault is the user's to fix.
func TestSelectiveBrokenBranchChosenFails(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		fmt.Fprint(w, `{"access_token":"t","expires_in":3600}`)
	})
	res := newConnector(t, brokenSelective(a.URL), map[string]any{"authorization": map[string]any{"auth_type": "oauth", "client_id": "i", "client_secret": "s", "refresh_token": "r"}}, "s").read(t)
	equalLists(t, "requests", a.lines(), nil)
	equalLists(t, "warnings", res.warnings(), []string{brokenSelectiveWarning})
	streamError(t, res, "config_error", `stream s: streams[0].retriever.requester.authenticator.authenticators.oauth.client_secret: invalid template "{{ config.authorization.client_secret) }}": line 1: unexpected ")"`)
}

// A broken template never evaluated costs nothing: the chosen OAuth
// branch is given its access token (access_token_value, no endpoint), so
// its broken client_secret is never rendered, and the stream reads, as in
// Airbyte (ticktick's).
func TestBrokenTemplateNeverEvaluatedRuns(t *testing.T) {
	a := fixedAPI(t, `{"data":[{"id":1}]}`)
	m := strings.NewReplacer("token_refresh_endpoint: "+a.URL+"/token", `access_token_value: "{{ config.authorization.access_token }}"`,
		`refresh_token: "{{ config.authorization.refresh_token }}"`, "grant_type: client_credentials").Replace(brokenSelective(a.URL))
	res := newConnector(t, m, map[string]any{"authorization": map[string]any{"auth_type": "oauth", "client_id": "i", "access_token": "given"}}, "s").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	reqs := a.requests()
	if len(reqs) != 1 || reqs[0].Header.Get("Authorization") != "Bearer given" {
		t.Fatalf("requests: %+v", reqs)
	}
	equalLists(t, "warnings", res.warnings(), []string{brokenSelectiveWarning})
}
