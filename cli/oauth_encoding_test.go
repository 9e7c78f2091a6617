package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// authRequest is an OAuth provider whose token endpoint reads only the
// encodings it accepts, answering the others as real providers do, plus a data
// endpoint that accepts only the access tokens it issued. Each issued token
// is refused by the data endpoint once it has served refuseAfter pages.
type authRequest struct {
	*api
	mu          sync.Mutex
	accepts     string // "json", "form", "both", "query" or "none"
	refusal     func(w http.ResponseWriter, contentType string)
	rotate      bool
	spent       map[string]bool
	issued      map[string]int // access token -> pages served
	refuseAfter int
	n           int
	tokenReqs   []string // content type and body (or query) of every token request
}

func newTokenEndpoint(t *testing.T, accepts string, refusal func(w http.ResponseWriter, contentType string)) *authRequest {
	te := &authRequest{accepts: accepts, refusal: refusal, spent: map[string]bool{}, issued: map[string]int{}, refuseAfter: 1 << 30}
	te.api = newAPI(t, func(w http.ResponseWriter, r *http.Request, body string) {
		te.mu.Lock()
		defer te.mu.Unlock()
		if r.URL.Path == "/oauth/token" {
			te.token(w, r, body)
			return
		}
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		served, ok := te.issued[tok]
		if !ok || served >= te.refuseAfter {
			w.WriteHeader(401)
			fmt.Fprint(w, `{"error":"invalid_token"}`)
			return
		}
		te.issued[tok]++
		if r.URL.Query().Get("page") == "" {
			fmt.Fprint(w, `{"data":[{"id":1}],"next":"2"}`)
		} else {
			fmt.Fprint(w, `{"data":[{"id":2}]}`)
		}
	})
	return te
}

func (te *authRequest) token(w http.ResponseWriter, r *http.Request, body string) {
	ct := r.Header.Get("Content-Type")
	te.tokenReqs = append(te.tokenReqs, strings.TrimSpace(ct+" "+body+" "+r.URL.RawQuery))
	fields := map[string]string{}
	switch {
	case strings.HasPrefix(ct, "application/json") && (te.accepts == "json" || te.accepts == "both"):
		var m map[string]any
		json.Unmarshal([]byte(body), &m)
		for k, v := range m {
			fields[k], _ = v.(string)
		}
	case strings.HasPrefix(ct, "application/x-www-form-urlencoded") && (te.accepts == "form" || te.accepts == "both"):
		v, _ := url.ParseQuery(body)
		for k := range v {
			fields[k] = v.Get(k)
		}
	case te.accepts == "query" && body == "":
		for k := range r.URL.Query() {
			fields[k] = r.URL.Query().Get(k)
		}
	default:
		te.refusal(w, ct)
		return
	}
	if fields["client_id"] != "cid" || fields["client_secret"] != "csecret" {
		w.WriteHeader(401)
		fmt.Fprint(w, `{"error":"invalid_client"}`)
		return
	}
	if rt := fields["refresh_token"]; te.spent[rt] || rt == "" {
		w.WriteHeader(400)
		fmt.Fprint(w, `{"error":"invalid_grant","error_description":"the refresh token was used already"}`)
		return
	}
	if te.rotate {
		te.spent[fields["refresh_token"]] = true
	}
	te.n++
	access := fmt.Sprintf("access-%d", te.n)
	te.issued[access] = 0
	resp := map[string]any{"access_token": access, "expires_in": 3600, "token_type": "Bearer"}
	if te.rotate {
		resp["refresh_token"] = fmt.Sprintf("refresh-%d", te.n)
	}
	json.NewEncoder(w).Encode(resp)
}

// Answers of real providers to a JSON token request.
func unsupportedMediaType(w http.ResponseWriter, _ string) {
	w.WriteHeader(415)
	fmt.Fprint(w, `{"error":"unsupported_media_type"}`)
}

func entraMissingGrantType(w http.ResponseWriter, _ string) {
	w.WriteHeader(400)
	fmt.Fprint(w, `{"error":"invalid_request","error_description":"AADSTS900144: The request body must contain the following parameter: 'grant_type'."}`)
}

func noClientCredentialsRead(w http.ResponseWriter, _ string) {
	w.WriteHeader(401)
	fmt.Fprint(w, `{"error":"invalid_client","error_description":"client authentication failed"}`)
}

const (
	jsonTokenBody = `application/json {"client_id":"cid","client_secret":"csecret","grant_type":"refresh_token","refresh_token":"rt0"}`
	formTokenBody = `application/x-www-form-urlencoded client_id=cid&client_secret=csecret&grant_type=refresh_token&refresh_token=rt0`
)

var oauthConfig = map[string]any{"client_id": "cid", "client_secret": "csecret", "client_refresh_token": "rt0"}

func fallbackLog(url string, status int) string {
	return fmt.Sprintf("The token endpoint %s/oauth/token refused a JSON token request (HTTP %d) and accepted a form-encoded one: token requests are form-encoded for the rest of this run", url, status)
}

// logs lists the LOG messages of a level.
func (r result) logs(level string) []string {
	var out []string
	for _, m := range r.ofType("LOG") {
		l := m["log"].(map[string]any)
		if l["level"] == level {
			out = append(out, l["message"].(string))
		}
	}
	return out
}

func TestOAuthFallsBackToFormWhenJSONIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name    string
		refusal func(http.ResponseWriter, string)
		status  int
	}{
		{"415", unsupportedMediaType, 415},
		{"400 invalid_request (Microsoft Entra)", entraMissingGrantType, 400},
		{"401 invalid_client", noClientCredentialsRead, 401},
	} {
		t.Run(tc.name, func(t *testing.T) {
			te := newTokenEndpoint(t, "form", tc.refusal)
			te.refuseAfter = 1 // the second page gets a 401: a second token request follows
			res := newConnector(t, oauthManifest(te.URL, refreshLine, ""), oauthConfig, "s").read(t)
			if res.code != 0 {
				t.Fatalf("exit %d: %s", res.code, res.stdout)
			}
			// JSON first, the form once, and later refreshes as forms only.
			equalLists(t, "token requests", te.tokenReqs, []string{jsonTokenBody, formTokenBody, formTokenBody})
			equalLists(t, "requests", te.lines(), []string{"POST /oauth/token", "POST /oauth/token", "GET /s", "GET /s?page=2", "POST /oauth/token", "GET /s?page=2"})
			equalLists(t, "records", res.records("s"), ids(1, 3))
			equalLists(t, "info logs", res.logs("INFO"), []string{fallbackLog(te.URL, tc.status), "Read 2 records from stream s"})
		})
	}
}

func TestOAuthDoesNotFallBackOnInvalidGrantOrWhenPinned(t *testing.T) {
	invalidGrant := func(w http.ResponseWriter, _ string) {
		w.WriteHeader(400)
		fmt.Fprint(w, `{"error":"invalid_grant","error_description":"expired"}`)
	}
	te := newTokenEndpoint(t, "form", invalidGrant)
	res := newConnector(t, oauthManifest(te.URL, refreshLine, ""), oauthConfig, "s").read(t)
	equalLists(t, "token requests", te.tokenReqs, []string{jsonTokenBody})
	errs := res.errors()
	want := "stream s: Refresh token is invalid or expired (token endpoint answered HTTP 400 invalid_grant). Please re-authenticate and update the credentials in the source settings."
	if res.code == 0 || len(errs) == 0 || errs[0]["message"] != want || errs[0]["failure_type"] != "config_error" {
		t.Fatalf("exit %d, errors %v", res.code, errs)
	}

	te = newTokenEndpoint(t, "form", unsupportedMediaType)
	res = newConnector(t, oauthManifest(te.URL, refreshLine, "refresh_request_body_encoding: json\n"), oauthConfig, "s").read(t)
	equalLists(t, "pinned json", te.tokenReqs, []string{jsonTokenBody})
	errs = res.errors()
	want = fmt.Sprintf(`stream s: token endpoint %s/oauth/token answered HTTP 415: {"error":"unsupported_media_type"}`, te.URL)
	if res.code == 0 || len(errs) == 0 || errs[0]["message"] != want || errs[0]["failure_type"] != "config_error" {
		t.Fatalf("exit %d, errors %v", res.code, errs)
	}

	te = newTokenEndpoint(t, "both", unsupportedMediaType)
	res = newConnector(t, oauthManifest(te.URL, refreshLine, "refresh_request_body_encoding: form\n"), oauthConfig, "s").read(t)
	equalLists(t, "pinned form", te.tokenReqs, []string{formTokenBody})
	if res.code != 0 || len(res.logs("INFO")) != 1 {
		t.Fatalf("exit %d, logs %v", res.code, res.logs("INFO"))
	}

	// A form Content-Type among the manifest's refresh_request_headers pins the form too.
	te = newTokenEndpoint(t, "form", unsupportedMediaType)
	newConnector(t, oauthManifest(te.URL, refreshLine, "refresh_request_headers: {Content-Type: application/x-www-form-urlencoded}\n"), oauthConfig, "s").read(t)
	equalLists(t, "form by Content-Type", te.tokenReqs, []string{formTokenBody})
}

func TestOAuthReportsTheFormAttemptsErrorWhenBothFail(t *testing.T) {
	te := newTokenEndpoint(t, "form", unsupportedMediaType)
	res := newConnector(t, oauthManifest(te.URL, refreshLine, ""), map[string]any{"client_id": "cid", "client_secret": "wrong-secret", "client_refresh_token": "rt0"}, "s").read(t)
	equalLists(t, "token requests", te.tokenReqs, []string{
		`application/json {"client_id":"cid","client_secret":"wrong-secret","grant_type":"refresh_token","refresh_token":"rt0"}`,
		`application/x-www-form-urlencoded client_id=cid&client_secret=wrong-secret&grant_type=refresh_token&refresh_token=rt0`,
	})
	errs := res.errors()
	want := "stream s: Refresh token is invalid or expired (token endpoint answered HTTP 401 invalid_client). Please re-authenticate and update the credentials in the source settings."
	if res.code == 0 || len(errs) == 0 || errs[0]["message"] != want || errs[0]["failure_type"] != "config_error" {
		t.Fatalf("exit %d, errors %v", res.code, errs)
	}
	if len(res.logs("INFO")) != 0 {
		t.Errorf("no fallback log without a successful form: %v", res.logs("INFO"))
	}

	// The form is refused too: its answer is the one reported.
	refuseForm := newTokenEndpoint(t, "none", func(w http.ResponseWriter, contentType string) {
		if strings.HasPrefix(contentType, "application/json") {
			unsupportedMediaType(w, contentType)
			return
		}
		w.WriteHeader(400)
		fmt.Fprint(w, `{"error":"unsupported_grant_type"}`)
	})
	res = newConnector(t, oauthManifest(refuseForm.URL, refreshLine, ""), oauthConfig, "s").read(t)
	errs = res.errors()
	want = fmt.Sprintf(`stream s: token endpoint %s/oauth/token answered HTTP 400: {"error":"unsupported_grant_type"}`, refuseForm.URL)
	if len(refuseForm.tokenReqs) != 2 || len(errs) == 0 || errs[0]["message"] != want {
		t.Fatalf("token requests %v, errors %v", refuseForm.tokenReqs, errs)
	}
}

func TestOAuthFormFallbackUnderRotationNeverResendsASpentToken(t *testing.T) {
	te := newTokenEndpoint(t, "form", entraMissingGrantType)
	te.rotate = true
	te.refuseAfter = 1
	m := oauthManifest(te.URL, "", `refresh_token_updater:
  refresh_token_name: refresh_token
  access_token_config_path: [oauth_access_token]
  refresh_token_config_path: [client_refresh_token]
  token_expiry_date_config_path: [oauth_token_expiry_date]
`)
	res := newConnector(t, m, oauthConfig, "s").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "token requests", te.tokenReqs, []string{
		jsonTokenBody,
		formTokenBody,
		`application/x-www-form-urlencoded client_id=cid&client_secret=csecret&grant_type=refresh_token&refresh_token=refresh-1`,
	})
	var rotated []string
	for _, c := range res.ofType("CONTROL") {
		cfg := c["control"].(map[string]any)["connectorConfig"].(map[string]any)["config"].(map[string]any)
		rotated = append(rotated, fmt.Sprint(cfg["client_refresh_token"], " ", cfg["oauth_access_token"]))
	}
	equalLists(t, "rotations", rotated, []string{"refresh-1 access-1", "refresh-2 access-2"})
	equalLists(t, "records", res.records("s"), ids(1, 3))
}

func TestOAuthRefreshRequestAsQueryParameters(t *testing.T) {
	te := newTokenEndpoint(t, "query", unsupportedMediaType)
	res := newConnector(t, oauthManifest(te.URL, refreshLine, "send_refresh_request_as_query_params: true\n"), oauthConfig, "s").read(t)
	equalLists(t, "token requests", te.tokenReqs, []string{"client_id=cid&client_secret=csecret&grant_type=refresh_token&refresh_token=rt0"})
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
}
