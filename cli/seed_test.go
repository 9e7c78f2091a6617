package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The seed's rules (000_*.txt, sections 2, 4 and 5) run through the CLI on
// manifests shaped as the Connector Builder's form writes them: the global
// authenticator on definitions.base_requester, streams as $ref definitions,
// {{ config["key"] }} interpolation, paginators as builderPaginatorToManifest
// emits them.

// builderStream is one stream of a Builder manifest.
type builderStream struct {
	name, path, method, fieldPath, requesterExtra, paginator string
}

// formManifest renders a Builder-form manifest: authenticator is the YAML
// of definitions.base_requester.authenticator, omitted when empty (No auth).
func formManifest(urlBase, authenticator string, streams ...builderStream) string {
	var b strings.Builder
	fmt.Fprintf(&b, "version: 6.41.5\ntype: DeclarativeSource\ncheck:\n  type: CheckStream\n  stream_names:\n    - %s\n", streams[0].name)
	fmt.Fprintf(&b, "definitions:\n  base_requester:\n    type: HttpRequester\n    url_base: %s\n", urlBase)
	if authenticator != "" {
		b.WriteString("    authenticator:\n" + indent(authenticator, 6) + "\n")
	}
	b.WriteString("  streams:\n")
	for _, s := range streams {
		method := s.method
		if method == "" {
			method = "GET"
		}
		fmt.Fprintf(&b, `    %[1]s:
      type: DeclarativeStream
      name: %[1]s
      primary_key:
        - id
      retriever:
        type: SimpleRetriever
        requester:
          $ref: "#/definitions/base_requester"
          path: %[2]s
          http_method: %[3]s
`, s.name, s.path, method)
		if s.requesterExtra != "" {
			b.WriteString(indent(s.requesterExtra, 10) + "\n")
		}
		fmt.Fprintf(&b, `        record_selector:
          type: RecordSelector
          extractor:
            type: DpathExtractor
            field_path: %s
`, s.fieldPath)
		if s.paginator != "" {
			b.WriteString(indent(s.paginator, 8) + "\n")
		}
		b.WriteString(`      schema_loader:
        type: InlineSchemaLoader
        schema:
          $schema: http://json-schema.org/schema#
          type: object
          properties:
            id:
              type: number
`)
	}
	b.WriteString("streams:\n")
	for _, s := range streams {
		fmt.Fprintf(&b, "  - $ref: \"#/definitions/streams/%s\"\n", s.name)
	}
	return b.String()
}

// header is one request header as "Name: value", or "Name: -" when absent.
func header(r seen, name string) string {
	v, ok := r.Header[http.CanonicalHeaderKey(name)]
	if !ok {
		return name + ": -"
	}
	return name + ": " + strings.Join(v, ",")
}

// exchange describes one request: method, path and query, the named
// headers, and the body when there is one.
func exchange(r seen, headers ...string) string {
	l := r.Method + " " + r.Path
	if r.Query != "" {
		l += "?" + r.Query
	}
	for _, h := range headers {
		l += " | " + header(r, h)
	}
	if r.Body != "" {
		l += " | " + r.Body
	}
	return l
}

func exchanges(a *api, headers ...string) []string {
	var out []string
	for _, r := range a.requests() {
		out = append(out, exchange(r, headers...))
	}
	return out
}

// transcript is every message printed but CONTROL (checked apart), one
// line each: stream statuses, records, states with their record count, logs
// and errors.
func (r result) transcript() []string {
	var out []string
	for _, m := range r.msgs {
		if _, line := transcriptLine(m); line != "" {
			out = append(out, line)
		}
	}
	return out
}

// streamTranscript is the transcript's lines about one stream (its
// statuses, records, states, errors and the LOG counting its records), in
// order. Streams are read at the same time: their order holds within each
// stream, not between streams.
func (r result) streamTranscript(stream string) []string {
	var out []string
	for _, m := range r.msgs {
		if s, line := transcriptLine(m); s == stream && line != "" {
			out = append(out, line)
		}
	}
	return out
}

// transcriptLine is a message's line in the transcript ("" for CONTROL)
// and the stream it is about ("" for none).
func transcriptLine(m map[string]any) (stream, line string) {
	switch m["type"] {
	case "RECORD":
		rec := m["record"].(map[string]any)
		b, _ := json.Marshal(rec["data"])
		return fmt.Sprint(rec["stream"]), fmt.Sprintf("RECORD %v %s", rec["stream"], b)
	case "STATE":
		st := m["state"].(map[string]any)
		name := fmt.Sprint(st["stream"].(map[string]any)["stream_descriptor"].(map[string]any)["name"])
		b, _ := json.Marshal(st["stream"].(map[string]any)["stream_state"])
		return name, fmt.Sprintf("STATE %s %s count %v", name, b, st["sourceStats"].(map[string]any)["recordCount"])
	case "LOG":
		l := m["log"].(map[string]any)
		msg := fmt.Sprint(l["message"])
		if _, name, ok := strings.Cut(msg, " records from stream "); ok && strings.HasPrefix(msg, "Read ") {
			stream = name
		}
		return stream, fmt.Sprintf("LOG %v %v", l["level"], msg)
	case "TRACE":
		tr := m["trace"].(map[string]any)
		if ss, ok := tr["stream_status"].(map[string]any); ok {
			name := fmt.Sprint(ss["stream_descriptor"].(map[string]any)["name"])
			return name, fmt.Sprintf("STATUS %s %v", name, ss["status"])
		}
		if e, ok := tr["error"].(map[string]any); ok {
			if d, ok := e["stream_descriptor"].(map[string]any); ok {
				stream = fmt.Sprint(d["name"])
			}
		}
		b, _ := json.Marshal(tr)
		return stream, "TRACE " + string(b)
	case "CONTROL":
		return "", ""
	}
	b, _ := json.Marshal(m)
	return "", string(b)
}

// mustSucceed fails the test unless the read exited 0 and printed, for
// each stream, exactly and in order: STARTED, RUNNING, its records, one
// full-refresh STATE counting them, the count LOG and COMPLETE; and the
// streams' STARTED in catalog order.
func mustSucceed(t *testing.T, res result, streams ...string) {
	t.Helper()
	mustSucceedLogging(t, res, nil, streams...)
}

// mustSucceedLogging is mustSucceed with logs about no stream expected.
func mustSucceedLogging(t *testing.T, res result, logs []string, streams ...string) {
	t.Helper()
	if res.code != 0 {
		t.Fatalf("exit %d, errors %v\nstderr %s", res.code, res.errors(), res.stderr)
	}
	var started []string
	for _, s := range streams {
		want := []string{"STATUS " + s + " STARTED", "STATUS " + s + " RUNNING"}
		started = append(started, want[0])
		recs := res.records(s)
		for _, r := range recs {
			want = append(want, "RECORD "+s+" "+r)
		}
		want = append(want, fmt.Sprintf(`STATE %s {"__ab_no_cursor_state_message":true} count %d`, s, len(recs)),
			fmt.Sprintf("LOG INFO Read %d records from stream %s", len(recs), s), "STATUS "+s+" COMPLETE")
		equalLists(t, "messages of "+s, res.streamTranscript(s), want)
	}
	var starts []string
	for _, l := range res.transcript() {
		if strings.HasSuffix(l, " STARTED") {
			starts = append(starts, l)
		}
	}
	equalLists(t, "streams started", starts, started)
	equalLists(t, "messages about no stream", res.streamTranscript(""), logs)
}

// §2.1 No auth, §5.1 rule 1: the Builder omits the authenticator; no
// credentials are sent.
func TestSeedNoAuthSendsNothing(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) { fmt.Fprint(w, `{"data":[{"id":1}]}`) })
	m := formManifest(a.URL, "", builderStream{name: "items", path: "/items", fieldPath: "[data]"})
	res := newConnector(t, m, map[string]any{"api_key": "unused-secret"}, "items").read(t)
	mustSucceed(t, res, "items")
	equalLists(t, "requests", exchanges(a, "Authorization"), []string{"GET /items | Authorization: -"})
	equalLists(t, "records", res.records("items"), ids(1, 2))
}

// §2.1, §5.1 rule 1, §5.2 to §5.4: each method as the Builder writes it,
// applied to every data request of every stream.
func TestSeedSimpleMethodsOnEveryStream(t *testing.T) {
	cases := []struct {
		name, auth string
		config     map[string]any
		header     string
		want       []string
	}{
		{"basic", "type: BasicHttpAuthenticator\nusername: \"{{ config[\\\"username\\\"] }}\"\npassword: \"{{ config[\\\"password\\\"] }}\"",
			map[string]any{"username": "ann", "password": "p:w"}, "Authorization",
			[]string{"GET /a | Authorization: Basic YW5uOnA6dw==", "GET /b | Authorization: Basic YW5uOnA6dw=="}},
		{"basic, password left empty", "type: BasicHttpAuthenticator\nusername: \"{{ config[\\\"username\\\"] }}\"\npassword: \"{{ config[\\\"password\\\"] }}\"",
			map[string]any{"username": "ann"}, "Authorization",
			[]string{"GET /a | Authorization: Basic YW5uOg==", "GET /b | Authorization: Basic YW5uOg=="}},
		{"bearer", "type: BearerAuthenticator\napi_token: \"{{ config[\\\"api_key\\\"] }}\"",
			map[string]any{"api_key": "tok 1"}, "Authorization",
			[]string{"GET /a | Authorization: Bearer tok 1", "GET /b | Authorization: Bearer tok 1"}},
		{"api key header", "type: ApiKeyAuthenticator\napi_token: \"{{ config[\\\"api_key\\\"] }}\"\ninject_into:\n  type: RequestOption\n  inject_into: header\n  field_name: X-API-Key",
			map[string]any{"api_key": "k-1"}, "X-API-Key",
			[]string{"GET /a | X-API-Key: k-1", "GET /b | X-API-Key: k-1"}},
		{"api key request_parameter", "type: ApiKeyAuthenticator\napi_token: \"{{ config[\\\"api_key\\\"] }}\"\ninject_into:\n  type: RequestOption\n  inject_into: request_parameter\n  field_name: apikey",
			map[string]any{"api_key": "k/1+2"}, "Authorization",
			[]string{"GET /a?apikey=k%2F1%2B2 | Authorization: -", "GET /b?apikey=k%2F1%2B2 | Authorization: -"}},
		{"api key body_data", "type: ApiKeyAuthenticator\napi_token: \"{{ config[\\\"api_key\\\"] }}\"\ninject_into:\n  type: RequestOption\n  inject_into: body_data\n  field_name: token",
			map[string]any{"api_key": "k 1"}, "Content-Type",
			[]string{"GET /a | Content-Type: application/x-www-form-urlencoded | token=k+1", "GET /b | Content-Type: application/x-www-form-urlencoded | token=k+1"}},
		{"api key body_json", "type: ApiKeyAuthenticator\napi_token: \"{{ config[\\\"api_key\\\"] }}\"\ninject_into:\n  type: RequestOption\n  inject_into: body_json\n  field_name: token",
			map[string]any{"api_key": "k1"}, "Content-Type",
			[]string{`GET /a | Content-Type: application/json | {"token":"k1"}`, `GET /b | Content-Type: application/json | {"token":"k1"}`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) { fmt.Fprint(w, `{"data":[{"id":1}]}`) })
			m := formManifest(a.URL, tc.auth,
				builderStream{name: "a", path: "/a", fieldPath: "[data]"},
				builderStream{name: "b", path: "/b", fieldPath: "[data]"})
			res := newConnector(t, m, tc.config, "a", "b").read(t)
			mustSucceed(t, res, "a", "b")
			equalSorted(t, "requests", exchanges(a, tc.header), tc.want)
		})
	}
}

// tokenAPI is a token endpoint at /oauth/token, answering what answer gives
// for the n-th token request (from 1) and its JSON fields, and a data
// endpoint at /items serving three pages (?page=2, ?page=3) to the access
// tokens it issued.
type tokenAPI struct {
	*api
	mu     sync.Mutex
	issued map[string]bool
	n      int
}

func newTokenAPI(t *testing.T, answer func(n int, fields map[string]any) (access string, response map[string]any)) *tokenAPI {
	ta := &tokenAPI{issued: map[string]bool{}}
	ta.api = newAPI(t, func(w http.ResponseWriter, r *http.Request, body string) {
		ta.mu.Lock()
		defer ta.mu.Unlock()
		if r.URL.Path == "/oauth/token" {
			var fields map[string]any
			if json.Unmarshal([]byte(body), &fields) != nil || r.Header.Get("Content-Type") != "application/json" {
				w.WriteHeader(415)
				return
			}
			ta.n++
			access, resp := answer(ta.n, fields)
			if resp == nil {
				w.WriteHeader(400)
				fmt.Fprint(w, `{"error":"invalid_grant"}`)
				return
			}
			ta.issued[access] = true
			json.NewEncoder(w).Encode(resp)
			return
		}
		if !ta.issued[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")] {
			w.WriteHeader(401)
			fmt.Fprint(w, `{"error":"invalid_token"}`)
			return
		}
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		page = max(page, 1)
		next := "null"
		if page < 3 {
			next = strconv.Itoa(page + 1)
		}
		fmt.Fprintf(w, `{"data":[{"id":%d}],"next":%s}`, page, next)
	})
	return ta
}

// threePages follows the data endpoint's "next" into ?page=.
const threePages = `paginator:
  type: DefaultPaginator
  page_token_option:
    type: RequestOption
    inject_into: request_parameter
    field_name: page
  pagination_strategy:
    type: CursorPagination
    cursor_value: "{{ response.get(\"next\", {}) }}"
    stop_condition: "{{ not response.get(\"next\", {}) }}"`

// oauthForm is the Builder's OAuth authenticator (refresh_request_body is
// always written) with extra fields appended.
func oauthForm(url, extra string) string {
	return `type: OAuthAuthenticator
refresh_request_body: {}
token_refresh_endpoint: ` + url + `/oauth/token
client_id: "{{ config[\"client_id\"] }}"
client_secret: "{{ config[\"client_secret\"] }}"
` + extra
}

func readThreePages(t *testing.T, ta *tokenAPI, auth string, config map[string]any) result {
	t.Helper()
	m := formManifest(ta.URL, auth, builderStream{name: "items", path: "/items", fieldPath: "[data]", paginator: threePages})
	res := newConnector(t, m, config, "items").read(t)
	mustSucceed(t, res, "items")
	equalLists(t, "records", res.records("items"), ids(1, 4))
	return res
}

func fieldsJSON(fields map[string]any) string {
	b, _ := json.Marshal(fields)
	return string(b)
}

// §2.2, §4 (OAuth token request), §5.5 rules 1 to 6: the JSON token request
// of each grant type, the access and expiry properties under their default
// and configured names, expiry as seconds or as a date in the configured
// format, and a new token once the current one has expired.
func TestSeedOAuthTokenRequestAndExpiry(t *testing.T) {
	refreshGrant := "refresh_token: \"{{ config[\\\"client_refresh_token\\\"] }}\"\ngrant_type: refresh_token\n"
	config := map[string]any{"client_id": "cid", "client_secret": "cs", "client_refresh_token": "rt-0"}
	refreshBody := `{"client_id":"cid","client_secret":"cs","grant_type":"refresh_token","refresh_token":"rt-0"}`
	inAnHour := time.Now().UTC().Add(time.Hour)
	anHourAgo := time.Now().UTC().Add(-time.Hour)
	cases := []struct {
		name, extra string
		response    func(access string) map[string]any
		tokenBody   string
		// refreshes: whether every data request needed a new token.
		refreshes bool
	}{
		{"seconds, default names", refreshGrant,
			func(a string) map[string]any { return map[string]any{"access_token": a, "expires_in": 3600} },
			refreshBody, false},
		{"zero seconds: a new token for every request", refreshGrant,
			func(a string) map[string]any { return map[string]any{"access_token": a, "expires_in": 0} },
			refreshBody, true},
		{"configured property names, seconds as text", refreshGrant + "access_token_name: token\nexpires_in_name: ttl\n",
			func(a string) map[string]any {
				return map[string]any{"token": a, "ttl": "3600", "access_token": "decoy"}
			},
			refreshBody, false},
		{"client_credentials with scopes", "grant_type: client_credentials\nscopes:\n  - read\n  - write\n",
			func(a string) map[string]any { return map[string]any{"access_token": a, "expires_in": 3600} },
			`{"client_id":"cid","client_secret":"cs","grant_type":"client_credentials","scopes":["read","write"]}`, false},
		{"date format, expiry ahead", refreshGrant + "token_expiry_date_format: \"%Y-%m-%d %H:%M:%S\"\n",
			func(a string) map[string]any {
				return map[string]any{"access_token": a, "expires_in": inAnHour.Format("2006-01-02 15:04:05")}
			},
			refreshBody, false},
		{"date format, expiry passed", refreshGrant + "token_expiry_date_format: \"%d/%m/%Y %H:%M\"\nexpires_in_name: expires_at\n",
			func(a string) map[string]any {
				return map[string]any{"access_token": a, "expires_at": anHourAgo.Format("02/01/2006 15:04")}
			},
			refreshBody, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ta := newTokenAPI(t, func(n int, fields map[string]any) (string, map[string]any) {
				if fieldsJSON(fields) != tc.tokenBody {
					return "", nil
				}
				a := fmt.Sprintf("access-%d", n)
				return a, tc.response(a)
			})
			readThreePages(t, ta, oauthForm(ta.URL, tc.extra), config)
			want := []string{"POST /oauth/token | Authorization: - | " + tc.tokenBody, "GET /items | Authorization: Bearer access-1"}
			for page, token := 2, 1; page <= 3; page++ {
				if tc.refreshes {
					token++
					want = append(want, "POST /oauth/token | Authorization: - | "+tc.tokenBody)
				}
				want = append(want, fmt.Sprintf("GET /items?page=%d | Authorization: Bearer access-%d", page, token))
			}
			equalLists(t, "requests", exchanges(ta.api, "Authorization"), want)
		})
	}
}

// controls lists the configs of the CONTROL messages printed.
func (r result) controls() []map[string]any {
	var out []map[string]any
	for _, m := range r.ofType("CONTROL") {
		out = append(out, m["control"].(map[string]any)["connectorConfig"].(map[string]any)["config"].(map[string]any))
	}
	return out
}

// rotationForm is the Builder's "Overwrite config with refresh token
// response": its refresh_token_name is empty unless the user edits it.
func rotationForm(url, refreshTokenName string) string {
	return oauthForm(url, `refresh_token: "{{ config[\"client_refresh_token\"] }}"
grant_type: refresh_token
refresh_token_updater:
  refresh_token_name: "`+refreshTokenName+`"
  access_token_config_path:
    - oauth_access_token
  token_expiry_date_config_path:
    - oauth_token_expiry_date
  refresh_token_config_path:
    - client_refresh_token
`)
}

// §2.2 and §5.5 rule 7: with rotation, the initial access token of the
// testing values is used while its expiry date is ahead; then every refresh
// sends the refresh token the previous response gave (each is single-use),
// reads the new one under the refresh token property name, and the
// connector prints the config holding it.
func TestSeedOAuthRotationOverwritesConfig(t *testing.T) {
	t.Run("initial access token still valid", func(t *testing.T) {
		ta := newTokenAPI(t, func(int, map[string]any) (string, map[string]any) { return "", nil })
		ta.issued["initial-access"] = true
		res := readThreePages(t, ta, rotationForm(ta.URL, ""), map[string]any{"client_id": "cid", "client_secret": "cs", "client_refresh_token": "rt-0",
			"oauth_access_token": "initial-access", "oauth_token_expiry_date": "2099-01-01T00:00:00Z"})
		equalLists(t, "requests", exchanges(ta.api, "Authorization"), []string{
			"GET /items | Authorization: Bearer initial-access",
			"GET /items?page=2 | Authorization: Bearer initial-access",
			"GET /items?page=3 | Authorization: Bearer initial-access"})
		if len(res.controls()) != 0 {
			t.Fatalf("no token was obtained, yet: %v", res.controls())
		}
	})
	for _, tc := range []struct{ name, property string }{{"default property name", ""}, {"configured property name", "next_refresh_token"}} {
		t.Run(tc.name, func(t *testing.T) {
			responseKey := tc.property
			if responseKey == "" {
				responseKey = "refresh_token"
			}
			current := "rt-0"
			ta := newTokenAPI(t, func(n int, fields map[string]any) (string, map[string]any) {
				if fields["refresh_token"] != current {
					return "", nil // spent or unknown
				}
				current = fmt.Sprintf("rt-%d", n)
				a := fmt.Sprintf("access-%d", n)
				return a, map[string]any{"access_token": a, "expires_in": 0, responseKey: current}
			})
			config := map[string]any{"client_id": "cid", "client_secret": "cs", "client_refresh_token": "rt-0",
				"oauth_access_token": "stale", "oauth_token_expiry_date": "2020-01-01T00:00:00Z"}
			res := readThreePages(t, ta, rotationForm(ta.URL, tc.property), config)
			var want []string
			for n := 1; n <= 3; n++ {
				want = append(want, fmt.Sprintf(`POST /oauth/token | {"client_id":"cid","client_secret":"cs","grant_type":"refresh_token","refresh_token":"rt-%d"}`, n-1))
				page := "/items"
				if n > 1 {
					page += fmt.Sprintf("?page=%d", n)
				}
				want = append(want, "GET "+page)
			}
			equalLists(t, "requests", exchanges(ta.api), want)
			var got []string
			for _, c := range res.controls() {
				exp, _ := time.Parse(time.RFC3339, fmt.Sprint(c["oauth_token_expiry_date"]))
				got = append(got, fmt.Sprintf("%v %v %v %v expiry set: %v", c["client_id"], c["client_secret"], c["client_refresh_token"], c["oauth_access_token"], time.Since(exp) < time.Minute))
			}
			equalLists(t, "CONTROL configs", got, []string{"cid cs rt-1 access-1 expiry set: true", "cid cs rt-2 access-2 expiry set: true", "cid cs rt-3 access-3 expiry set: true"})
		})
	}
}

// sessionAPI is a session token endpoint at /api/session and a data endpoint
// at /items (three pages) accepting the tokens it issued, in the header or
// query parameter where dataAuth finds them. login checks a retrieval
// request, answering the HTTP status it returns (200: a new token); a
// page=2 request waits pause before its answer.
type sessionAPI struct {
	*api
	mu     sync.Mutex
	issued map[string]bool
	logins int
}

func newSessionAPI(t *testing.T, login func(r *http.Request, body string) int, dataAuth func(r *http.Request) string, pause time.Duration) *sessionAPI {
	sa := &sessionAPI{issued: map[string]bool{}}
	sa.api = newAPI(t, func(w http.ResponseWriter, r *http.Request, body string) {
		sa.mu.Lock()
		if r.URL.Path == "/api/session" {
			defer sa.mu.Unlock()
			if status := login(r, body); status != 200 {
				w.WriteHeader(status)
				return
			}
			sa.logins++
			tok := fmt.Sprintf("sess-%d", sa.logins)
			sa.issued[tok] = true
			fmt.Fprintf(w, `{"auth":{"session":{"token":%q}}}`, tok)
			return
		}
		ok := sa.issued[dataAuth(r)]
		sa.mu.Unlock()
		if !ok {
			w.WriteHeader(401)
			return
		}
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		page = max(page, 1)
		next := "null"
		if page < 3 {
			next = strconv.Itoa(page + 1)
		}
		if page == 2 {
			time.Sleep(pause)
		}
		fmt.Fprintf(w, `{"data":[{"id":%d}],"next":%s}`, page, next)
	})
	return sa
}

// okIf is 200 when the request is the expected one, else 401.
func okIf(expected bool) int {
	if expected {
		return 200
	}
	return 401
}

// sessionForm is the Builder's session token authenticator: the full
// retrieval URL in url_base, parameters and headers always written.
func sessionForm(url, method, inner, options, expiration, dataAuth string) string {
	return `type: SessionTokenAuthenticator
login_requester:
  type: HttpRequester
  url_base: ` + url + `/api/session
  authenticator:
` + indent(inner, 4) + `
  http_method: ` + method + `
` + indent(options, 2) + `
session_token_path:
  - auth
  - session
  - token
expiration_duration: ` + expiration + `
request_authentication:
` + indent(dataAuth, 2)
}

// §2.3, §4 (session token request) and §5.6: the retrieval request with its
// method, inner authentication, query parameters, headers and body; the
// token at the session token path; its reuse for the expiration duration,
// or a new token before every data request without one; and the data
// requests authenticated by API key (header or query parameter) or Bearer.
func TestSeedSessionToken(t *testing.T) {
	config := map[string]any{"username": "ann", "password": "pw", "api_key": "k-1", "tenant": "acme"}
	cases := []struct {
		name, method, inner, options, expiration, dataAuth string
		login                                              func(r *http.Request, body string) int
		carried                                            func(r *http.Request) string
		pause                                              time.Duration
		want                                               []string
		retried                                            bool // the first retrieval answers 418, retried once
	}{
		{"GET, inner Basic, parameters and headers, API key in a query parameter, reused for PT1H", "GET",
			"type: BasicHttpAuthenticator\nusername: \"{{ config[\\\"username\\\"] }}\"\npassword: \"{{ config[\\\"password\\\"] }}\"",
			"request_parameters:\n  tenant: \"{{ config[\\\"tenant\\\"] }}\"\nrequest_headers:\n  X-Client: builder",
			"PT1H", "type: ApiKey\ninject_into:\n  type: RequestOption\n  inject_into: request_parameter\n  field_name: session_id",
			func(r *http.Request, _ string) int {
				u, p, _ := r.BasicAuth()
				return okIf(r.Method == "GET" && u == "ann" && p == "pw" && r.URL.RawQuery == "tenant=acme" && r.Header.Get("X-Client") == "builder")
			},
			func(r *http.Request) string { return r.URL.Query().Get("session_id") }, 0,
			[]string{"GET /api/session?tenant=acme | Authorization: Basic YW5uOnB3 | X-Client: builder | X-Session: -",
				"GET /items?session_id=sess-1 | Authorization: - | X-Client: - | X-Session: -",
				"GET /items?page=2&session_id=sess-1 | Authorization: - | X-Client: - | X-Session: -",
				"GET /items?page=3&session_id=sess-1 | Authorization: - | X-Client: - | X-Session: -"}, false},
		{"POST, credentials in the body with inner No Auth, Bearer, no expiration: a token per request", "POST", "type: NoAuth",
			"request_parameters: {}\nrequest_headers: {}\nrequest_body_json:\n  username: \"{{ config[\\\"username\\\"] }}\"\n  password: \"{{ config[\\\"password\\\"] }}\"",
			`""`, "type: Bearer",
			func(r *http.Request, body string) int {
				return okIf(r.Method == "POST" && body == `{"password":"pw","username":"ann"}` && r.Header.Get("Authorization") == "")
			},
			func(r *http.Request) string { return strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ") }, 0,
			[]string{`POST /api/session | Authorization: - | X-Client: - | X-Session: - | {"password":"pw","username":"ann"}`,
				"GET /items | Authorization: Bearer sess-1 | X-Client: - | X-Session: -",
				`POST /api/session | Authorization: - | X-Client: - | X-Session: - | {"password":"pw","username":"ann"}`,
				"GET /items?page=2 | Authorization: Bearer sess-2 | X-Client: - | X-Session: -",
				`POST /api/session | Authorization: - | X-Client: - | X-Session: - | {"password":"pw","username":"ann"}`,
				"GET /items?page=3 | Authorization: Bearer sess-3 | X-Client: - | X-Session: -"}, false},
		{"inner Bearer, API key in a header, a new token once PT1S has passed", "POST",
			"type: BearerAuthenticator\napi_token: \"{{ config[\\\"api_key\\\"] }}\"",
			"request_parameters: {}\nrequest_headers: {}", "PT1S",
			"type: ApiKey\ninject_into:\n  type: RequestOption\n  inject_into: header\n  field_name: X-Session",
			func(r *http.Request, _ string) int { return okIf(r.Header.Get("Authorization") == "Bearer k-1") },
			func(r *http.Request) string { return r.Header.Get("X-Session") }, 1100 * time.Millisecond,
			[]string{"POST /api/session | Authorization: Bearer k-1 | X-Client: - | X-Session: -",
				"GET /items | Authorization: - | X-Client: - | X-Session: sess-1",
				"GET /items?page=2 | Authorization: - | X-Client: - | X-Session: sess-1",
				"POST /api/session | Authorization: Bearer k-1 | X-Client: - | X-Session: -",
				"GET /items?page=3 | Authorization: - | X-Client: - | X-Session: sess-2"}, false},
		{"inner API key in a query parameter", "GET",
			"type: ApiKeyAuthenticator\napi_token: \"{{ config[\\\"api_key\\\"] }}\"\ninject_into:\n  type: RequestOption\n  inject_into: request_parameter\n  field_name: key",
			"request_parameters: {}\nrequest_headers: {}", "P1D", "type: Bearer",
			func(r *http.Request, _ string) int { return okIf(r.URL.RawQuery == "key=k-1") },
			func(r *http.Request) string { return strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ") }, 0,
			[]string{"GET /api/session?key=k-1 | Authorization: - | X-Client: - | X-Session: -",
				"GET /items | Authorization: Bearer sess-1 | X-Client: - | X-Session: -",
				"GET /items?page=2 | Authorization: Bearer sess-1 | X-Client: - | X-Session: -",
				"GET /items?page=3 | Authorization: Bearer sess-1 | X-Client: - | X-Session: -"}, false},
		{"form body, the retrieval's error handler retries it", "POST", "type: NoAuth",
			"request_parameters: {}\nrequest_headers: {}\nrequest_body_data:\n  username: \"{{ config[\\\"username\\\"] }}\"\n  password: \"{{ config[\\\"password\\\"] }}\"\n" +
				"error_handler:\n  type: CompositeErrorHandler\n  error_handlers:\n    - type: DefaultErrorHandler\n      max_retries: 2\n" +
				"      backoff_strategies:\n        - type: ConstantBackoffStrategy\n          backoff_time_in_seconds: 0.01\n" +
				"      response_filters:\n        - type: HttpResponseFilter\n          action: RETRY\n          http_codes: [418]",
			"PT1H", "type: Bearer",
			func() func(r *http.Request, body string) int {
				n := 0
				return func(r *http.Request, body string) int {
					if n++; n == 1 {
						return 418
					}
					return okIf(body == "password=pw&username=ann" && r.Header.Get("Content-Type") == "application/x-www-form-urlencoded")
				}
			}(),
			func(r *http.Request) string { return strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ") }, 0,
			[]string{"POST /api/session | Authorization: - | X-Client: - | X-Session: - | password=pw&username=ann",
				"POST /api/session | Authorization: - | X-Client: - | X-Session: - | password=pw&username=ann",
				"GET /items | Authorization: Bearer sess-1 | X-Client: - | X-Session: -",
				"GET /items?page=2 | Authorization: Bearer sess-1 | X-Client: - | X-Session: -",
				"GET /items?page=3 | Authorization: Bearer sess-1 | X-Client: - | X-Session: -"}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sa := newSessionAPI(t, tc.login, tc.carried, tc.pause)
			m := formManifest(sa.URL, sessionForm(sa.URL, tc.method, tc.inner, tc.options, tc.expiration, tc.dataAuth),
				builderStream{name: "items", path: "/items", fieldPath: "[data]", paginator: threePages})
			res := newConnector(t, m, config, "items").read(t)
			var logs []string
			if tc.retried {
				logs = []string{"LOG WARN HTTP 418 I'm a teapot from POST " + sa.URL + "/api/session: (empty body); retrying in 10ms (attempt 2 of 3)"}
			}
			mustSucceedLogging(t, res, logs, "items")
			equalLists(t, "records", res.records("items"), ids(1, 4))
			equalLists(t, "requests", exchanges(sa.api, "Authorization", "X-Client", "X-Session"), tc.want)
		})
	}
}

// paramIn reads a pagination value where the manifest injects it.
func paramIn(r *http.Request, body, place, name string) string {
	switch place {
	case "request_parameter":
		return r.URL.Query().Get(name)
	case "header":
		return r.Header.Get(name)
	case "body_data":
		v, _ := url.ParseQuery(body)
		return v.Get(name)
	case "body_json":
		var m map[string]any
		json.Unmarshal([]byte(body), &m)
		if v, ok := m[name]; ok {
			return fmt.Sprint(v)
		}
	}
	return ""
}

// option is the Builder's injection setting.
func option(place, field string) string {
	return fmt.Sprintf("type: RequestOption\ninject_into: %s\nfield_name: %s", place, field)
}

// §2.4 and §4.1 Offset Increment rules 1 to 4: offset 0 first, the limit on
// every request when its injection is enabled, the next offset the previous
// plus the records received (an API may send more than the limit), a stop on
// a page shorter than the limit, and each value in a query parameter, a
// header or the body.
func TestSeedOffsetIncrement(t *testing.T) {
	cases := []struct {
		name, method, limitPlace, offsetPlace string
		perPage                               int // records the API sends per page, whatever the limit
		want                                  []string
	}{
		{"query parameters", "GET", "request_parameter", "request_parameter", 3,
			[]string{"GET /items?limit=3&offset=0", "GET /items?limit=3&offset=3", "GET /items?limit=3&offset=6"}},
		{"limit injection disabled", "GET", "", "request_parameter", 3,
			[]string{"GET /items?offset=0", "GET /items?offset=3", "GET /items?offset=6"}},
		{"the API sends more than the limit", "GET", "request_parameter", "request_parameter", 5,
			[]string{"GET /items?limit=3&offset=0", "GET /items?limit=3&offset=5"}},
		{"headers", "GET", "header", "header", 3,
			[]string{"GET /items | X-Limit: 3 | X-Offset: 0", "GET /items | X-Limit: 3 | X-Offset: 3", "GET /items | X-Limit: 3 | X-Offset: 6"}},
		{"JSON body", "POST", "body_json", "body_json", 3,
			[]string{`POST /items | X-Limit: - | X-Offset: - | {"limit":3,"offset":0}`, `POST /items | X-Limit: - | X-Offset: - | {"limit":3,"offset":3}`, `POST /items | X-Limit: - | X-Offset: - | {"limit":3,"offset":6}`}},
		{"form body, limit in a header", "POST", "header", "body_data", 3,
			[]string{"POST /items | X-Limit: 3 | X-Offset: - | offset=0", "POST /items | X-Limit: 3 | X-Offset: - | offset=3", "POST /items | X-Limit: 3 | X-Offset: - | offset=6"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			name := func(place, field string) string {
				if place == "header" {
					return "X-" + strings.ToUpper(field[:1]) + field[1:]
				}
				return field
			}
			a := newAPI(t, func(w http.ResponseWriter, r *http.Request, body string) {
				off, err := strconv.Atoi(paramIn(r, body, tc.offsetPlace, name(tc.offsetPlace, "offset")))
				if err != nil {
					w.WriteHeader(400)
					return
				}
				fmt.Fprintf(w, `{"data":%s}`, items(off, min(off+tc.perPage, 7)))
			})
			paginator := "paginator:\n  type: DefaultPaginator\n  page_token_option:\n" + indent(option(tc.offsetPlace, name(tc.offsetPlace, "offset")), 4) + "\n"
			if tc.limitPlace != "" {
				paginator += "  page_size_option:\n" + indent(option(tc.limitPlace, name(tc.limitPlace, "limit")), 4) + "\n"
			}
			paginator += "  pagination_strategy:\n    type: OffsetIncrement\n    page_size: 3"
			m := formManifest(a.URL, "", builderStream{name: "items", path: "/items", method: tc.method, fieldPath: "[data]", paginator: paginator})
			res := newConnector(t, m, nil, "items").read(t)
			mustSucceed(t, res, "items")
			equalLists(t, "records", res.records("items"), ids(0, 7))
			headers := []string{"X-Limit", "X-Offset"}
			if !strings.Contains(tc.want[0], "X-Limit") {
				headers = nil
			}
			equalLists(t, "requests", exchanges(a, headers...), tc.want)
		})
	}
}

// §2.4 and §4.1 Page Increment rules 1 to 4: the "Start from page" number
// first (0 when the Builder leaves it unset), then one more per request, the
// page size on every request when its injection is enabled, a stop on a page
// shorter than the page size, each value in a query parameter, a header or
// the body.
func TestSeedPageIncrement(t *testing.T) {
	cases := []struct {
		name, method, sizePlace, pagePlace, start string
		want                                      []string
	}{
		{"query parameters from page 1", "GET", "request_parameter", "request_parameter", "\n    start_from_page: 1",
			[]string{"GET /items?page=1&per_page=2 | X-Page: -", "GET /items?page=2&per_page=2 | X-Page: -", "GET /items?page=3&per_page=2 | X-Page: -"}},
		{"start from page unset", "GET", "request_parameter", "request_parameter", "",
			[]string{"GET /items?page=0&per_page=2 | X-Page: -", "GET /items?page=1&per_page=2 | X-Page: -", "GET /items?page=2&per_page=2 | X-Page: -"}},
		{"page size injection disabled, page number in a header", "GET", "", "header", "\n    start_from_page: 1",
			[]string{"GET /items | X-Page: 1", "GET /items | X-Page: 2", "GET /items | X-Page: 3"}},
		{"JSON body", "POST", "body_json", "body_json", "\n    start_from_page: 1",
			[]string{`POST /items | X-Page: - | {"page":1,"per_page":2}`, `POST /items | X-Page: - | {"page":2,"per_page":2}`, `POST /items | X-Page: - | {"page":3,"per_page":2}`}},
		{"form body", "POST", "body_data", "body_data", "\n    start_from_page: 1",
			[]string{"POST /items | X-Page: - | page=1&per_page=2", "POST /items | X-Page: - | page=2&per_page=2", "POST /items | X-Page: - | page=3&per_page=2"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pageName := "page"
			if tc.pagePlace == "header" {
				pageName = "X-Page"
			}
			first := 1
			if tc.start == "" {
				first = 0
			}
			a := newAPI(t, func(w http.ResponseWriter, r *http.Request, body string) {
				page, err := strconv.Atoi(paramIn(r, body, tc.pagePlace, pageName))
				if err != nil {
					w.WriteHeader(400)
					return
				}
				from := (page - first) * 2
				fmt.Fprintf(w, `{"data":%s}`, items(from, min(from+2, 5)))
			})
			paginator := "paginator:\n  type: DefaultPaginator\n  page_token_option:\n" + indent(option(tc.pagePlace, pageName), 4) + "\n"
			if tc.sizePlace != "" {
				paginator += "  page_size_option:\n" + indent(option(tc.sizePlace, "per_page"), 4) + "\n"
			}
			paginator += "  pagination_strategy:\n    type: PageIncrement\n    page_size: 2" + tc.start
			m := formManifest(a.URL, "", builderStream{name: "items", path: "/items", method: tc.method, fieldPath: "[data]", paginator: paginator})
			res := newConnector(t, m, nil, "items").read(t)
			mustSucceed(t, res, "items")
			equalLists(t, "records", res.records("items"), ids(0, 5))
			equalLists(t, "requests", exchanges(a, "X-Page"), tc.want)
		})
	}
}

// cursorForm is a Builder cursor paginator: the token option, an optional
// page size option, and the strategy's cursor, stop condition and page size.
func cursorForm(tokenOption, sizeOption, cursor, stop string, pageSize int) string {
	p := "paginator:\n  type: DefaultPaginator\n  page_token_option:\n" + indent(tokenOption, 4) + "\n"
	if sizeOption != "" {
		p += "  page_size_option:\n" + indent(sizeOption, 4) + "\n"
	}
	p += "  pagination_strategy:\n    type: CursorPagination\n    cursor_value: " + strconv.Quote(cursor) + "\n"
	if stop != "" {
		p += "    stop_condition: " + strconv.Quote(stop) + "\n"
	}
	if pageSize > 0 {
		p += fmt.Sprintf("    page_size: %d\n", pageSize)
	}
	return p
}

// §2.4, §2.5 and §4.1 Cursor Pagination rules 1 to 7: no cursor on the first
// request; the cursor read by the "Next page cursor" (response body path,
// header, Link header, custom template from the response or the last
// record) and sent as its injection says (query parameter, header, body, or
// the whole URL); the page size on every request; the stop when no value is
// found at the location, or when the stop condition holds.
func TestSeedCursorPagination(t *testing.T) {
	// pages are the API's answers, in order: a body and headers.
	type page struct {
		body    string
		headers map[string]string
	}
	var base string
	cases := []struct {
		name, method, paginator string
		pages                   []page
		want                    []string
	}{
		{"response path into a header, page size in the query", "GET",
			cursorForm(option("header", "X-Cursor"), option("request_parameter", "limit"),
				`{{ response.get("meta", {}).get("next_cursor", {}) }}`, `{{ not response.get("meta", {}).get("next_cursor", {}) }}`, 2),
			[]page{{body: `{"data":[{"id":0},{"id":1}],"meta":{"next_cursor":"c1"}}`}, {body: `{"data":[{"id":2},{"id":3}],"meta":{"next_cursor":"c2"}}`}, {body: `{"data":[{"id":4},{"id":5}],"meta":{}}`}},
			[]string{"GET /api/v1/items?limit=2 | X-Cursor: -", "GET /api/v1/items?limit=2 | X-Cursor: c1", "GET /api/v1/items?limit=2 | X-Cursor: c2"}},
		{"response path into the JSON body", "POST",
			cursorForm(option("body_json", "cursor"), option("body_json", "size"),
				`{{ response.get("paging", {}).get("next", {}) }}`, `{{ not response.get("paging", {}).get("next", {}) }}`, 2),
			[]page{{body: `{"data":[{"id":0},{"id":1}],"paging":{"next":"c1"}}`}, {body: `{"data":[{"id":2},{"id":3},{"id":4},{"id":5}],"paging":{"next":null}}`}},
			[]string{`POST /api/v1/items | X-Cursor: - | {"size":2}`, `POST /api/v1/items | X-Cursor: - | {"cursor":"c1","size":2}`}},
		{"header into a query parameter", "GET",
			cursorForm(option("request_parameter", "cursor"), "", `{{ headers.get("X-Next-Page", {}) }}`, `{{ not headers.get("X-Next-Page", {}) }}`, 0),
			[]page{{body: `{"data":[{"id":0},{"id":1}]}`, headers: map[string]string{"X-Next-Page": "c1"}}, {body: `{"data":[{"id":2},{"id":3}]}`, headers: map[string]string{"X-Next-Page": "c2"}}, {body: `{"data":[{"id":4},{"id":5}]}`}},
			[]string{"GET /api/v1/items | X-Cursor: -", "GET /api/v1/items?cursor=c1 | X-Cursor: -", "GET /api/v1/items?cursor=c2 | X-Cursor: -"}},
		{"Link header, path injection replaces the whole URL", "GET",
			cursorForm("type: RequestPath", option("request_parameter", "per_page"),
				`{{ headers.get("link", {}).get("next", {}).get("url", {}) }}`, `{{ not headers.get("link", {}).get("next", {}).get("url", {}) }}`, 2),
			[]page{
				{body: `{"data":[{"id":0},{"id":1}]}`, headers: map[string]string{"Link": `<{base}/v2/next-items?after=c1&per_page=2>; rel="next", <{base}/v2/next-items?after=c9&per_page=2>; rel="last"`}},
				{body: `{"data":[{"id":2},{"id":3}]}`, headers: map[string]string{"Link": `<{base}/items?per_page=2>; rel="first", <{base}/v3/other?token=c2&per_page=2>; rel="next"`}},
				{body: `{"data":[{"id":4},{"id":5}]}`, headers: map[string]string{"Link": `<{base}/items?per_page=2>; rel="first"`}}},
			[]string{"GET /api/v1/items?per_page=2 | X-Cursor: -", "GET /v2/next-items?after=c1&per_page=2 | X-Cursor: -", "GET /v3/other?token=c2&per_page=2 | X-Cursor: -"}},
		{"full next URL from the response body, path injection", "GET",
			cursorForm("type: RequestPath", "", `{{ response.get("links", {}).get("next", {}) }}`, `{{ not response.get("links", {}).get("next", {}) }}`, 0),
			[]page{{body: `{"data":[{"id":0},{"id":1}],"links":{"next":"{base}/api/v1/items?cursor=c1&sort=id"}}`}, {body: `{"data":[{"id":2},{"id":3}],"links":{"next":"{base}/api/v1/items?cursor=c2&sort=id"}}`}, {body: `{"data":[{"id":4},{"id":5}],"links":{"next":null}}`}},
			[]string{"GET /api/v1/items | X-Cursor: -", "GET /api/v1/items?cursor=c1&sort=id | X-Cursor: -", "GET /api/v1/items?cursor=c2&sort=id | X-Cursor: -"}},
		{"custom from the response, stop condition is false", "GET",
			cursorForm(option("request_parameter", "starting_after"), "", `{{ response['data'][-1]['id'] }}`, `{{ response.has_more is false }}`, 0),
			[]page{{body: `{"data":[{"id":0},{"id":1}],"has_more":true}`}, {body: `{"data":[{"id":2},{"id":3}],"has_more":true}`}, {body: `{"data":[{"id":4},{"id":5}],"has_more":false}`}},
			[]string{"GET /api/v1/items | X-Cursor: -", "GET /api/v1/items?starting_after=1 | X-Cursor: -", "GET /api/v1/items?starting_after=3 | X-Cursor: -"}},
		{"custom from the last record, into the form body", "POST",
			cursorForm(option("body_data", "after"), "", `{{ last_records[-1]['id'] }}`, `{{ response.has_more is false }}`, 0),
			[]page{{body: `{"data":[{"id":0},{"id":1}],"has_more":true}`}, {body: `{"data":[{"id":2},{"id":3}],"has_more":true}`}, {body: `{"data":[{"id":4},{"id":5}],"has_more":false}`}},
			[]string{"POST /api/v1/items | X-Cursor: -", "POST /api/v1/items | X-Cursor: - | after=1", "POST /api/v1/items | X-Cursor: - | after=3"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			n := 0
			a := newAPI(t, func(w http.ResponseWriter, r *http.Request, body string) {
				mu.Lock()
				defer mu.Unlock()
				if n >= len(tc.pages) {
					w.WriteHeader(400)
					return
				}
				p := tc.pages[n]
				n++
				for k, v := range p.headers {
					w.Header().Set(k, strings.ReplaceAll(v, "{base}", base))
				}
				fmt.Fprint(w, strings.ReplaceAll(p.body, "{base}", base))
			})
			base = a.URL
			m := formManifest(a.URL+"/api/v1", "", builderStream{name: "items", path: "/items", method: tc.method, fieldPath: "[data]", paginator: tc.paginator})
			res := newConnector(t, m, nil, "items").read(t)
			mustSucceed(t, res, "items")
			equalLists(t, "records", res.records("items"), ids(0, 6))
			equalLists(t, "requests", exchanges(a, "X-Cursor"), tc.want)
		})
	}
}

// §4.1 "Custom parameter injection" and §2.6: with the pagination form's
// injection left out, the generic request options carry the pagination
// token with jinja: the combined offset-and-limit query parameter of the
// seed, a prefixed header, a JSON body property next to a config value, and
// the URL path.
func TestSeedCustomParameterInjection(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		from, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/items/"))
		fmt.Fprintf(w, `{"data":%s}`, items(from, min(from+2, 5)))
	})
	m := formManifest(a.URL, "", builderStream{name: "items", path: "/items/{{ next_page_token['next_page_token'] or 0 }}", method: "POST", fieldPath: "[data]",
		requesterExtra: `request_parameters:
  limit: "{{ next_page_token['next_page_token'] or '0' }},2"
request_headers:
  X-Range: "items={{ next_page_token['next_page_token'] or 0 }}-"
request_body_json:
  account: "{{ config[\"account\"] }}"
  from: "{{ next_page_token['next_page_token'] or 0 }}"`,
		paginator: "paginator:\n  type: DefaultPaginator\n  pagination_strategy:\n    type: OffsetIncrement\n    page_size: 2"})
	res := newConnector(t, m, map[string]any{"account": "acme"}, "items").read(t)
	mustSucceed(t, res, "items")
	equalLists(t, "records", res.records("items"), ids(0, 5))
	equalLists(t, "requests", exchanges(a, "X-Range"), []string{
		`POST /items/0?limit=0%2C2 | X-Range: items=0- | {"account":"acme","from":0}`,
		`POST /items/2?limit=2%2C2 | X-Range: items=2- | {"account":"acme","from":2}`,
		`POST /items/4?limit=4%2C2 | X-Range: items=4- | {"account":"acme","from":4}`})
}

// §2.3 (inner authentication), §5.5 rules 6 and 8, §5.6 rule 7: what the
// seed does not support is refused before any request, naming the place.
func TestSeedUnsupportedAuthIsRefused(t *testing.T) {
	inner := "type: OAuthAuthenticator\ntoken_refresh_endpoint: {url}/oauth/token\nclient_id: \"{{ config[\\\"client_id\\\"] }}\"\nclient_secret: \"{{ config[\\\"client_secret\\\"] }}\"\ngrant_type: client_credentials"
	cases := []struct {
		name, auth string
		config     map[string]any
		want       string
	}{
		{"PKCE grant", "{oauth}grant_type: authorization_code\n", map[string]any{"client_id": "cid", "client_secret": "cs"},
			`invalid manifest: streams[0].retriever.requester.authenticator.grant_type: grant type "authorization_code" is not supported: only refresh_token, client_credentials and password are (PKCE, authorization code and other flows need custom code)`},
		{"refresh_token grant without a refresh token", "{oauth}refresh_token: \"{{ config[\\\"client_refresh_token\\\"] }}\"\ngrant_type: refresh_token\n", map[string]any{"client_id": "cid", "client_secret": "cs"},
			"Config validation error: config key client_refresh_token is required"},
		{"OAuth as the session token's inner authentication", sessionForm("{url}", "POST", inner, "request_parameters: {}", "PT1H", "type: Bearer"), map[string]any{"client_id": "cid", "client_secret": "cs"},
			"invalid manifest: streams[0].retriever.requester.authenticator.login_requester.authenticator: OAuthAuthenticator is not supported here (supported: NoAuth, BasicHttpAuthenticator, BearerAuthenticator, ApiKeyAuthenticator)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
				fmt.Fprint(w, `{"access_token":"t","expires_in":60,"data":[{"id":1}]}`)
			})
			auth := strings.ReplaceAll(strings.ReplaceAll(tc.auth, "{oauth}", oauthForm(a.URL, "")), "{url}", a.URL)
			m := formManifest(a.URL, auth, builderStream{name: "items", path: "/items", fieldPath: "[data]"})
			res := newConnector(t, m, tc.config, "items").read(t)
			errs := res.errors()
			if res.code != 1 || len(res.msgs) != 1 || len(errs) != 1 || errs[0]["failure_type"] != "config_error" || errs[0]["message"] != tc.want {
				t.Fatalf("exit %d, stdout %s\nwant the single error %q", res.code, res.stdout, tc.want)
			}
			if len(a.requests()) != 0 {
				t.Fatalf("requests sent: %v", a.lines())
			}
		})
	}
}

// §5.1 rule 1 with §5.5 and §5.6: the connector's one authenticator is
// shared by its streams, so one OAuth access token or one session token
// (while valid) serves the data requests of every stream.
func TestSeedOneTokenServesEveryStream(t *testing.T) {
	twoStreams := []builderStream{
		{name: "a", path: "/items", fieldPath: "[data]", paginator: threePages},
		{name: "b", path: "/items", fieldPath: "[data]", paginator: threePages}}
	pages := func(auth string) []string {
		var out []string
		for range 2 {
			out = append(out, "GET /items | "+auth, "GET /items?page=2 | "+auth, "GET /items?page=3 | "+auth)
		}
		return out
	}
	t.Run("OAuth", func(t *testing.T) {
		ta := newTokenAPI(t, func(n int, fields map[string]any) (string, map[string]any) {
			a := fmt.Sprintf("access-%d", n)
			return a, map[string]any{"access_token": a, "expires_in": 3600}
		})
		m := formManifest(ta.URL, oauthForm(ta.URL, "grant_type: client_credentials\n"), twoStreams...)
		res := newConnector(t, m, map[string]any{"client_id": "cid", "client_secret": "cs"}, "a", "b").read(t)
		mustSucceed(t, res, "a", "b")
		got := exchanges(ta.api, "Authorization")
		equalLists(t, "first request", got[:1], []string{`POST /oauth/token | Authorization: - | {"client_id":"cid","client_secret":"cs","grant_type":"client_credentials"}`})
		equalSorted(t, "requests", got[1:], pages("Authorization: Bearer access-1"))
	})
	t.Run("session token", func(t *testing.T) {
		sa := newSessionAPI(t, func(r *http.Request, body string) int { return okIf(body == `{"user":"ann"}`) },
			func(r *http.Request) string { return r.Header.Get("X-Session") }, 0)
		auth := sessionForm(sa.URL, "POST", "type: NoAuth", "request_body_json:\n  user: \"{{ config[\\\"username\\\"] }}\"", "PT1H",
			"type: ApiKey\ninject_into:\n  type: RequestOption\n  inject_into: header\n  field_name: X-Session")
		res := newConnector(t, formManifest(sa.URL, auth, twoStreams...), map[string]any{"username": "ann"}, "a", "b").read(t)
		mustSucceed(t, res, "a", "b")
		got := exchanges(sa.api, "X-Session")
		equalLists(t, "first request", got[:1], []string{`POST /api/session | X-Session: - | {"user":"ann"}`})
		equalSorted(t, "requests", got[1:], pages("X-Session: sess-1"))
	})
}
