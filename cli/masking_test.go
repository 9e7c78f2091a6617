package cli

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// Issue 30: every credential masked, as sent (derived, encoded, prefixed);
// bodies of credential endpoints we cannot read are described, not quoted;
// secrets under additionalProperties and patternProperties; tokens in a
// test read's token responses.

// shown is a StreamRead as text, for looking for secrets in it.
func shown(read map[string]any) string {
	b, _ := json.Marshal(read)
	return string(b)
}

// A credential derived from a secret (Basic credentials an ApiKey
// authenticator writes itself) is masked where the API echoes the request's
// headers: in check's CONNECTION_STATUS and in read's error.
func TestDerivedCredentialIsMaskedWhereEchoed(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		w.WriteHeader(401)
		b, _ := json.Marshal(map[string]any{"error": "unauthorized", "you_sent": r.Header.Get("Authorization"), "also": strings.TrimPrefix(r.Header.Get("Authorization"), "Basic ")})
		w.Write(b)
	})
	m := authManifest(a.URL, "GET", `type: ApiKeyAuthenticator
api_token: "Basic {{ (config['key'] ~ ':') | base64encode }}"
inject_into: {type: RequestOption, inject_into: header, field_name: Authorization}`, "") + strings.ReplaceAll(secretSpec, "api_key", "key")
	c := newConnector(t, m, map[string]any{"key": "key-secret-0451"}, "s")
	check := c.check(t)
	st := check.ofType("CONNECTION_STATUS")
	if len(st) != 1 || st[0]["connectionStatus"].(map[string]any)["status"] != "FAILED" || !strings.Contains(fmt.Sprint(st), `"you_sent":"Basic ****"`) {
		t.Errorf("connection status %v", st)
	}
	read := c.read(t)
	if errs := read.errors(); read.code == 0 || len(errs) == 0 || !strings.Contains(errs[0]["message"].(string), `"also":"****"`) {
		t.Errorf("exit %d, errors %v", read.code, errs)
	}
	if got := a.requests(); len(got) != 2 || got[0].Header.Get("Authorization") != "Basic "+base64.StdEncoding.EncodeToString([]byte("key-secret-0451:")) {
		t.Fatalf("requests %+v", got)
	}
	if n := leaks(t, "our output", []string{check.stdout, check.stderr, read.stdout, read.stderr}, "key-secret-0451"); n != 0 {
		t.Errorf("%d secrets leaked", n)
	}
}

// A test read shows every credential an authenticator derived masked, in
// whatever header or query parameter it went: here a prefixed key in a
// header not named Authorization, and an encoded one in the query.
func TestTestReadMasksDerivedCredentials(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) { fmt.Fprint(w, `{"data":[{"id":1}]}`) })
	for _, tc := range []struct{ name, auth, want string }{
		{"prefixed header", `type: ApiKeyAuthenticator
api_token: "Token {{ config['key'] }}"
inject_into: {type: RequestOption, inject_into: header, field_name: X-Api-Key}`, `"X-Api-Key":"Token ****"`},
		{"encoded query", `type: ApiKeyAuthenticator
api_token: "{{ config['key'] | base64encode }}"
inject_into: {type: RequestOption, inject_into: request_parameter, field_name: token}`, `/s?token=****"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			read := builderRead(t, authManifest(a.URL, "GET", tc.auth, ""), map[string]any{"key": "key-secret-0451"}, "s")
			page, _ := json.Marshal(read["slices"].([]any)[0].(map[string]any)["pages"].([]any)[0].(map[string]any)["request"])
			if !strings.Contains(string(page), tc.want) {
				t.Errorf("request shown %s, want %s in it", page, tc.want)
			}
			if n := leaks(t, "our output", []string{shown(read)}, "key-secret-0451"); n != 0 {
				t.Errorf("%d secrets leaked", n)
			}
		})
	}
}

// A token endpoint answering 200 with a form instead of JSON, and a login
// answering HTML, are described (type, length, keys), never quoted: the
// token they hold stays out of the error.
func TestUnreadableCredentialAnswersAreDescribed(t *testing.T) {
	oauthAPI := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		w.Header().Set("Content-Type", "application/x-www-form-urlencoded")
		fmt.Fprint(w, "access_token=tok-secret-0451&token_type=bearer&expires_in=3600")
	})
	res := newConnector(t, oauthManifest(oauthAPI.URL, refreshLine, ""), map[string]any{"client_id": "c", "client_secret": "s3c", "client_refresh_token": "r3f"}, "s").read(t)
	want := fmt.Sprintf(`stream s: token endpoint %s/oauth/token answered HTTP 200 with a body that is not a JSON object: a body of 62 bytes (Content-Type "application/x-www-form-urlencoded"), which looks like a form with the keys access_token, token_type, expires_in; not shown, as it may hold a credential`, oauthAPI.URL)
	if errs := res.errors(); res.code == 0 || len(errs) == 0 || errs[0]["message"] != want {
		t.Errorf("exit %d, errors %v\nwant %q", res.code, errs, want)
	}

	loginAPI := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<html><token>sess-secret-0451</token></html>`)
	})
	res2 := newConnector(t, sessionManifest(loginAPI.URL), map[string]any{"username": "me", "password": "pw-secret-0451"}, "s").read(t)
	want2 := fmt.Sprintf(`stream s: session token login %s/login answered HTTP 200: JsonDecoder: the body is not valid JSON: a body of 44 bytes (Content-Type "text/html"), which is not valid JSON and looks like XML with the keys html, token; not shown, as it may hold a credential`, loginAPI.URL)
	if errs := res2.errors(); res2.code == 0 || len(errs) == 0 || errs[0]["message"] != want2 {
		t.Errorf("exit %d, errors %v\nwant %q", res2.code, errs, want2)
	}
	if n := leaks(t, "our output", []string{res.stdout, res.stderr, res2.stdout, res2.stderr}, "tok-secret-0451", "sess-secret-0451", "pw-secret-0451"); n != 0 {
		t.Errorf("%d secrets leaked", n)
	}
}

// A test read masks every token of a token response: the access token and
// a refresh token the manifest does not rotate.
func TestTestReadMasksEveryTokenOfATokenResponse(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		if r.URL.Path == "/oauth/token" {
			fmt.Fprint(w, `{"access_token":"acc-secret-0451","refresh_token":"new-rt-secret-0451","id_token":"id-secret-0451","expires_in":3600}`)
			return
		}
		fmt.Fprint(w, `{"data":[{"id":1}]}`)
	})
	read := builderRead(t, oauthManifest(a.URL, refreshLine, ""), map[string]any{"client_id": "c", "client_secret": "csecret-0451", "client_refresh_token": "rt-secret-0451"}, "s")
	aux, _ := json.Marshal(read["auxiliary_requests"])
	if !strings.Contains(string(aux), `{\"access_token\":\"****\",\"refresh_token\":\"****\",\"id_token\":\"****\",\"expires_in\":3600}`) {
		t.Errorf("auxiliary requests %s", aux)
	}
	if n := leaks(t, "our output", []string{shown(read)}, "acc-secret-0451", "new-rt-secret-0451", "id-secret-0451", "csecret-0451", "rt-secret-0451"); n != 0 {
		t.Errorf("%d secrets leaked", n)
	}
}

// Config values that a spec marks airbyte_secret under additionalProperties
// and patternProperties are secrets; the others are not.
func TestSecretsUnderAdditionalAndPatternProperties(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		w.WriteHeader(400)
		fmt.Fprintf(w, `{"error":"bad query %s"}`, r.URL.RawQuery)
	})
	m := stream("s", "url_base: "+a.URL+"\npath: /s\nrequest_parameters:\n  a: \"{{ config['tokens']['a'] }}\"\n  x: \"{{ config['key_x'] }}\"\n  p: \"{{ config['plain'] }}\"", "[data]", "") + `spec:
  type: Spec
  connection_specification:
    type: object
    properties:
      tokens:
        type: object
        additionalProperties: {type: string, airbyte_secret: true}
      plain: {type: string}
    patternProperties:
      "^key_": {type: string, airbyte_secret: true}
`
	res := newConnector(t, m, map[string]any{"tokens": map[string]any{"a": "add-secret-0451"}, "key_x": "pat-secret-0451", "plain": "visible-0451"}, "s").read(t)
	want := fmt.Sprintf(`stream s: HTTP 400 Bad Request from GET %s/s?a=****&p=visible-0451&x=****: {"error":"bad query a=****&p=visible-0451&x=****"}`, a.URL)
	if errs := res.errors(); res.code == 0 || len(errs) == 0 || errs[0]["message"] != want {
		t.Errorf("exit %d, errors %v\nwant %q", res.code, errs, want)
	}
	if n := leaks(t, "our output", []string{res.stdout, res.stderr}, "add-secret-0451", "pat-secret-0451"); n != 0 {
		t.Errorf("%d secrets leaked", n)
	}
}
