package cli

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// catalogManifest reads a catalog manifest from ../shared/manifests, with its
// API address replaced; the test is skipped when the folder is absent.
func catalogManifest(t *testing.T, name, realURL, testURL string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "shared", "manifests", name))
	if os.IsNotExist(err) {
		t.Skip("catalog manifests not found: expected at ../../shared/manifests/" + name + " (the shared folder beside the repository)")
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(string(b), realURL, testURL)
}

func TestAlternatingCursorStopsAtTheFirstRepeatedRequest(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		switch r.URL.Query().Get("cursor") {
		case "", "b":
			fmt.Fprint(w, `{"data":[{"id":1}],"next":"a"}`)
		default:
			fmt.Fprint(w, `{"data":[{"id":2}],"next":"b"}`)
		}
	})
	m := stream("s", "url_base: "+a.URL+"\npath: /s", "[data]", `paginator:
  type: DefaultPaginator
  page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: cursor}
  pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next }}"}`)
	res := newConnector(t, m, nil, "s").read(t)
	// Pages 1 to 3 are new requests; page 4 would ask for cursor=a again, as page 2 did.
	equalLists(t, "requests", a.lines(), []string{"GET /s", "GET /s?cursor=a", "GET /s?cursor=b"})
	equalLists(t, "records", res.records("s"), []string{`{"id":1}`, `{"id":2}`, `{"id":1}`})
	errs := res.errors()
	want := fmt.Sprintf("stream s: page 4 would be requested exactly like page 2 (GET %s/s?cursor=a): the pagination came back to a request it already sent; stopping instead of reading the same pages forever", a.URL)
	if res.code == 0 || len(errs) == 0 || errs[0]["message"] != want || errs[0]["failure_type"] != "system_error" {
		t.Fatalf("exit %d, errors %v", res.code, errs)
	}
}

// source-xkcd against an API whose second comic is an empty object: the
// stream must end after two requests, with no record twice, whether its stop
// condition fires or the repeated-request guard stops it.
func TestCatalogXkcdAgainstAnEmptySecondPage(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		if r.URL.Path == "/1/info.0.json" {
			fmt.Fprint(w, `{"num":1,"title":"Barrel - Part 1"}`)
			return
		}
		fmt.Fprint(w, `{}`)
	})
	m := catalogManifest(t, "source-xkcd.yaml", "https://xkcd.com", a.URL)
	c := newConnector(t, m, map[string]any{}, "xkcd")
	res := c.read(t)
	equalLists(t, "requests", a.lines(), []string{"GET /1/info.0.json", "GET /2/info.0.json"})
	equalLists(t, "records", res.records("xkcd"), []string{`{"num":1,"title":"Barrel - Part 1"}`})
	if errs := res.errors(); len(errs) > 0 {
		want := fmt.Sprintf("stream xkcd: page 3 would be requested exactly like page 1 (GET %s/1/info.0.json): the pagination came back to a request it already sent; stopping instead of reading the same pages forever", a.URL)
		if errs[0]["message"] != want {
			t.Fatalf("errors %v", errs)
		}
	}
}

// A cursor's templates see what Airbyte's CursorPaginationStrategy gives
// them (config, parameters, response, headers, last_record, last_page_size)
// and the seed's last_records; the page size and the previous token are not
// variables there (undeclared, the stream fails, as in Airbyte).
func TestCursorTemplatesVariables(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		if r.URL.Query().Get("after") == "" {
			fmt.Fprint(w, `{"data":[{"id":1},{"id":2}]}`)
			return
		}
		fmt.Fprint(w, `{"data":[{"id":3}]}`)
	})
	paged := func(cursor, stop string) string {
		return stream("s", "url_base: "+a.URL+"\npath: /s", "[data]", `paginator:
  type: DefaultPaginator
  page_size_option: {type: RequestOption, inject_into: request_parameter, field_name: limit}
  page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: after}
  pagination_strategy:
    type: CursorPagination
    page_size: 2
    cursor_value: "`+cursor+`"
    stop_condition: "`+stop+`"`)
	}
	res := newConnector(t, paged("{{ last_records[-1].id + last_record.id - last_page_size }}", "{{ last_page_size < 2 }}"), nil, "s").read(t)
	equalLists(t, "requests", a.lines(), []string{"GET /s?limit=2", "GET /s?after=2&limit=2"})
	equalLists(t, "records", res.records("s"), ids(1, 4))
	for name, tc := range map[string][2]string{
		"page_size":             {"{{ last_record.id }}", "{{ last_page_size < page_size }}"},
		"last_page_token_value": {"{{ (last_page_token_value or 0) + last_page_size }}", "{{ last_page_size < 2 }}"},
	} {
		res := newConnector(t, paged(tc[0], tc[1]), nil, "s").read(t)
		if errs := res.errors(); res.code != 1 || len(errs) == 0 || !strings.HasSuffix(fmt.Sprint(errs[0]["message"]), "uses undeclared variables: "+name) {
			t.Errorf("%s: exit %d, errors %v", name, res.code, errs)
		}
	}
}

func TestPageIncrementWithoutPageSizeReadsUntilAnEmptyPage(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		switch r.URL.Query().Get("page") {
		case "0":
			fmt.Fprintf(w, `{"data":%s}`, items(0, 3))
		case "1":
			fmt.Fprintf(w, `{"data":%s}`, items(3, 4))
		default:
			fmt.Fprint(w, `{"data":[]}`)
		}
	})
	m := stream("s", "url_base: "+a.URL+"\npath: /s", "[data]", `paginator:
  type: DefaultPaginator
  page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}
  pagination_strategy: {type: PageIncrement, start_from_page: 0, inject_on_first_request: true}`)
	res := newConnector(t, m, nil, "s").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{"GET /s?page=0", "GET /s?page=1", "GET /s?page=2"})
	equalLists(t, "records", res.records("s"), ids(0, 4))
}

func TestIntegralFloatsReadAsIntegers(t *testing.T) {
	a := offsetAPI(t, 3)
	m := stream("s", "url_base: "+a.URL+"\npath: /s\nerror_handler: {type: DefaultErrorHandler, max_retries: 1.0, response_filters: [{type: HttpResponseFilter, action: IGNORE, http_codes: [404.0]}]}", "[data]", `paginator:
  type: DefaultPaginator
  page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: offset}
  page_size_option: {type: RequestOption, inject_into: request_parameter, field_name: limit}
  pagination_strategy: {type: OffsetIncrement, page_size: 2.0, inject_on_first_request: true}`)
	res := newConnector(t, m, nil, "s").read(t)
	equalLists(t, "requests", a.lines(), []string{"GET /s?limit=2&offset=0", "GET /s?limit=2&offset=2"})
	equalLists(t, "records", res.records("s"), ids(0, 3))

	bad := strings.Replace(m, "page_size: 2.0", "page_size: 2.5", 1)
	res = newConnector(t, bad, nil, "s").read(t)
	errs := res.errors()
	want := "invalid manifest: streams[0].retriever.paginator.pagination_strategy.page_size: must be a whole number, got 2.5"
	if res.code == 0 || len(errs) != 1 || errs[0]["message"] != want || errs[0]["failure_type"] != "config_error" {
		t.Fatalf("exit %d, errors %v", res.code, errs)
	}
}

func TestUnifiedRequestBody(t *testing.T) {
	cases := []struct{ body, want string }{
		{"{type: RequestBodyJsonObject, value: {q: '{{ config.q }}', n: 2, nested: {on: true}}}", `application/json {"n":2,"nested":{"on":true},"q":"find"}`},
		{"{type: RequestBodyUrlEncodedForm, value: {q: '{{ config.q }}', lang: en}}", `application/x-www-form-urlencoded lang=en&q=find`},
		{"{type: RequestBodyPlainText, value: 'search {{ config.q }}'}", `text/plain; charset=utf-8 search find`},
		{`{type: RequestBodyPlainText, value: '{"q": "{{ config.q }}"}'}`, `application/json {"q": "find"}`},
		{"{type: RequestBodyGraphQL, value: {query: 'query { items(q: \"{{ config.q }}\") { id } }', variables: {first: 10}}}", `application/json {"query":"query { items(q: \"find\") { id } }","variables":{"first":10}}`},
	}
	for _, tc := range cases {
		a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) { fmt.Fprint(w, `{"data":[{"id":1}]}`) })
		m := stream("s", "url_base: "+a.URL+"\npath: /s\nhttp_method: POST\nrequest_body: "+tc.body, "[data]", "")
		res := newConnector(t, m, map[string]any{"q": "find"}, "s").read(t)
		reqs := a.requests()
		if res.code != 0 || len(reqs) != 1 {
			t.Fatalf("%s: exit %d, %v", tc.body, res.code, res.stdout)
		}
		if got := reqs[0].Header.Get("Content-Type") + " " + reqs[0].Body; got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.body, got, tc.want)
		}
	}
}

func TestQueryPropertiesInRequestParameters(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) { fmt.Fprint(w, `{"data":[{"id":1}]}`) })
	m := stream("s", "url_base: "+a.URL+"\npath: /s\nrequest_parameters:\n  properties: {type: QueryProperties, property_list: [id, name, created_at]}", "[data]", "")
	res := newConnector(t, m, nil, "s").read(t)
	equalLists(t, "requests", a.lines(), []string{"GET /s?properties=id%2Cname%2Ccreated_at"})
	if res.code != 0 {
		t.Fatalf("exit %d", res.code)
	}
}

func TestUnknownFieldsWarnedByEveryCommand(t *testing.T) {
	a := dataAPI(t)
	m := stream("s", "url_base: "+a.URL+"\npath: /s\nauthenticatr: {type: BearerAuthenticator, api_token: x}", "[data]", "")
	c := newConnector(t, m, nil, "s")
	want := []string{`streams[0].retriever.requester.authenticatr: HttpRequester has no field "authenticatr" (did you mean authenticator?); it is ignored`}
	for _, args := range [][]string{
		{"spec", "--manifest", c.manifest},
		{"check", "--manifest", c.manifest, "--config", c.config},
		{"discover", "--manifest", c.manifest, "--config", c.config},
		{"read", "--manifest", c.manifest, "--config", c.config, "--catalog", c.catalog},
	} {
		res := runCLI(t, args...)
		if res.code != 0 {
			t.Fatalf("%s: exit %d", args[0], res.code)
		}
		equalLists(t, args[0]+" warnings", res.logs("WARN"), want)
	}
	// Without a misspelling, no warning.
	res := newConnector(t, stream("s", "url_base: "+a.URL+"\npath: /s", "[data]", ""), nil, "s").read(t)
	equalLists(t, "warnings", res.logs("WARN"), nil)
}

func TestDebugLogsEveryRequestAndResponseMasked(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, body string) {
		w.Header().Set("X-Request-Id", "r1")
		fmt.Fprint(w, `{"data":[{"id":1}]}`)
	})
	m := stream("s", "url_base: "+a.URL+"\npath: /s\nhttp_method: POST\nrequest_body_json: {q: '{{ config.q }}'}\nauthenticator: {type: BearerAuthenticator, api_token: \"{{ config['api_key'] }}\"}", "[data]", "")
	m = strings.Replace(m, "check: {type: CheckStream, stream_names: [s]}", `check: {type: CheckStream, stream_names: [s]}
spec:
  type: Spec
  connection_specification:
    type: object
    properties:
      api_key: {type: string, airbyte_secret: true}
      q: {type: string}`, 1)
	c := newConnector(t, m, map[string]any{"api_key": "key-0123456789", "q": "key-0123456789 and more"}, "s")
	res := c.read(t, "--debug")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	want := []string{
		fmt.Sprintf(`Request POST %s/s headers {"Authorization":"Bearer ****","Content-Type":"application/json","User-Agent":"airbyte-source-declarative-go"} body {"q":"**** and more"}`, a.URL),
		fmt.Sprintf(`Response HTTP 200 to POST %s/s: 19 bytes, headers {"Content-Length":"19","Content-Type":"application/json","Date":"%s","X-Request-Id":"r1"}, body {"data":[{"id":1}]}`, a.URL, "DATE"),
	}
	got := res.logs("DEBUG")
	if len(got) == 2 {
		date := got[1][strings.Index(got[1], `"Date":"`)+8:]
		got[1] = strings.Replace(got[1], date[:strings.Index(date, `"`)], "DATE", 1)
	}
	equalLists(t, "debug logs", got, want)
	if strings.Contains(res.stdout, "key-0123456789") {
		t.Errorf("secret in output: %s", res.stdout)
	}
	// Without --debug, no DEBUG message.
	equalLists(t, "debug logs without --debug", c.read(t).logs("DEBUG"), nil)
}

func TestHeadersVariableIsTheSameForPaginatorAndErrorHandler(t *testing.T) {
	n := 0
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		n++
		w.Header().Set("X-RateLimit-Remaining", "5")
		w.Header().Set("Link", fmt.Sprintf(`<%s?page=2>; rel="next"`, "http://"+r.Host+"/s"))
		if n == 1 {
			w.Header().Set("X-Busy", "yes")
			fmt.Fprint(w, `{"data":[]}`)
			return
		}
		if r.URL.Query().Get("page") == "2" {
			w.Header().Del("Link")
		}
		fmt.Fprintf(w, `{"data":[{"id":%d}]}`, n)
	})
	predicate := `{{ headers['x-busy'] == 'yes' and headers['X-Busy'] == 'yes' and headers['X-RateLimit-Remaining'] == '5' and 'next' in headers['link'] and headers['x-ratelimit-remaining'] == '5' }}`
	m := stream("s", "url_base: "+a.URL+"\npath: /s\nerror_handler:\n  type: DefaultErrorHandler\n  backoff_strategies: [{type: ConstantBackoffStrategy, backoff_time_in_seconds: 0}]\n  response_filters: [{type: HttpResponseFilter, action: RETRY, predicate: \""+predicate+"\"}]", "[data]", `paginator:
  type: DefaultPaginator
  page_token_option: {type: RequestPath}
  pagination_strategy:
    type: CursorPagination
    cursor_value: "{{ headers['link']['next']['url'] }}"
    stop_condition: "{{ 'next' not in headers['link'] or headers['X-Ratelimit-Remaining'] != headers['x-ratelimit-remaining'] }}"`)
	res := newConnector(t, m, nil, "s").read(t)
	equalLists(t, "requests", a.lines(), []string{"GET /s", "GET /s", "GET /s?page=2"})
	equalLists(t, "records", res.records("s"), []string{`{"id":2}`, `{"id":3}`})
}

func TestRefreshTokenThenRetryGetsANewToken(t *testing.T) {
	te := newTokenEndpoint(t, "json", unsupportedMediaType)
	inner := te.api.Server.Config.Handler
	te.api.Server.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The first token expires at once; the API says so with HTTP 200.
		if r.URL.Path == "/s" && r.Header.Get("Authorization") == "Bearer access-1" {
			fmt.Fprint(w, `{"error":"token expired"}`)
			return
		}
		inner.ServeHTTP(w, r)
	})
	m := strings.Replace(oauthManifest(te.URL, refreshLine, ""), "path: /s\n", `path: /s
        error_handler:
          type: DefaultErrorHandler
          backoff_strategies: [{type: ConstantBackoffStrategy, backoff_time_in_seconds: 0}]
          response_filters: [{type: HttpResponseFilter, action: REFRESH_TOKEN_THEN_RETRY, error_message_contains: token expired}]
`, 1)
	res := newConnector(t, m, oauthConfig, "s").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "token requests", te.tokenReqs, []string{jsonTokenBody, jsonTokenBody})
	equalLists(t, "records", res.records("s"), ids(1, 3))
}

// A 403 that the error handler maps to SUCCESS ends the stream with no
// record from its body, as the reference's retriever reads a response that
// is not OK (yahoo-finance-price ends its pages this way); a 2xx page before
// it is read as usual.
func TestClientErrorMappedToSuccessEndsThePages(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		if r.URL.Query().Get("page") == "0" {
			fmt.Fprint(w, `{"id":1}`)
			return
		}
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, `<html>Forbidden</html>`)
	})
	m := stream("s", "url_base: "+a.URL+`
path: /s
error_handler:
  type: DefaultErrorHandler
  response_filters: [{type: HttpResponseFilter, action: SUCCESS, http_codes: [403]}]`, "[]", `paginator:
  type: DefaultPaginator
  page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}
  pagination_strategy: {type: PageIncrement, start_from_page: 0}`)
	res := newConnector(t, m, nil, "s").read(t)
	equalLists(t, "requests", a.lines(), []string{"GET /s?page=0", "GET /s?page=1"})
	equalLists(t, "records", res.records("s"), []string{`{"id":1}`})
	if res.code != 0 || len(res.errors()) != 0 {
		t.Fatalf("exit %d, errors %v", res.code, res.errors())
	}
}

// A variable a template of the requester cannot see (last_page_size is the
// paginator's) is named once, with the template's path, in a single line.
func TestUndeclaredVariableIsNamedOnce(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) { fmt.Fprint(w, `{"data":[]}`) })
	m := stream("s", "url_base: "+a.URL+"\npath: /s\nrequest_headers: {X-LPS: \"{{ last_page_size }}\"}", "[data]", "")
	res := newConnector(t, m, nil, "s").check(t)
	st := res.ofType("CONNECTION_STATUS")
	want := `stream s: streams[0].retriever.requester.request_headers.X-LPS: template "{{ last_page_size }}": uses undeclared variables: last_page_size`
	if res.code != 0 || len(st) != 1 || st[0]["connectionStatus"].(map[string]any)["message"] != want {
		t.Fatalf("exit %d, status %v; want %q", res.code, st, want)
	}
	if n := len(a.requests()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}
