package corpus

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/airbyte-go/source-declarative/manifest"
)

// planManifest is a manifest of one stream per pagination style the mock
// must end, with OAuth and session logins; MOCK is the mock's URL.
const planManifest = `
definitions:
  base:
    type: HttpRequester
    url_base: MOCK/api.x.com/v1
    authenticator:
      type: OAuthAuthenticator
      token_refresh_endpoint: MOCK/auth.x.com/oauth/token
      client_id: a
      client_secret: b
      refresh_token: c
      access_token_name: tok
      refresh_token_updater: {}
  schema:
    type: object
    properties:
      id: {type: integer}
      num: {type: [integer, "null"]}
      name: {type: string}
      updated_at: {type: string, format: date-time}
streams:
  - type: DeclarativeStream
    name: users
    primary_key: id
    incremental_sync:
      type: DatetimeBasedCursor
      cursor_field: updated_at
      datetime_format: "%Y-%m-%dT%H:%M:%SZ"
      start_datetime: "{{ config.start }}"
    schema_loader: {type: InlineSchemaLoader, schema: {$ref: "#/definitions/schema"}}
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/base", path: users}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
      paginator:
        type: DefaultPaginator
        page_token_option: {type: RequestPath}
        pagination_strategy:
          type: CursorPagination
          cursor_value: "{{ response.paging.next }}"
          stop_condition: "{{ response.paging.next is none }}"
  - type: DeclarativeStream
    name: events
    schema_loader: {type: InlineSchemaLoader, schema: {$ref: "#/definitions/schema"}}
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/base", path: events}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}
      paginator:
        type: DefaultPaginator
        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: cursor}
        pagination_strategy:
          type: CursorPagination
          cursor_value: "{{ headers['link'].get('next', {}).get('cursor', {}) }}"
          stop_condition: "{{ headers['link']['next']['results'] == 'false' }}"
  - type: DeclarativeStream
    name: comics
    primary_key: num
    schema_loader: {type: InlineSchemaLoader, schema: {$ref: "#/definitions/schema"}}
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/base", path: "{{ config.comic }}/info.json"}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}
      paginator:
        type: DefaultPaginator
        page_token_option: {type: RequestPath}
        pagination_strategy:
          type: CursorPagination
          cursor_value: '{{ response["num"] + 1 }}/info.json'
          stop_condition: '{{ "num" not in response }}'
  - type: DeclarativeStream
    name: prices
    schema_loader: {type: InlineSchemaLoader, schema: {type: object, properties: {id: {type: integer}}}}
    retriever:
      type: SimpleRetriever
      requester:
        $ref: "#/definitions/base"
        path: "{% if (next_page_token['next_page_token'] or 0) < 1 %}/chart/{{ config.comic }}{% endif %}"
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}
      paginator: {type: DefaultPaginator, pagination_strategy: {type: PageIncrement}}
  - type: DeclarativeStream
    name: daily
    schema_loader: {type: InlineSchemaLoader, schema: {$ref: "#/definitions/schema"}}
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/base", path: counts, request_parameters: {interval: day}}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [entries]}}
      paginator:
        type: DefaultPaginator
        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}
        pagination_strategy: {type: PageIncrement, page_size: 2}
  - type: DeclarativeStream
    name: weekly
    schema_loader: {type: InlineSchemaLoader, schema: {$ref: "#/definitions/schema"}}
    retriever:
      type: SimpleRetriever
      requester:
        type: HttpRequester
        url_base: MOCK/api.x.com/v1
        path: counts
        request_parameters: {interval: week}
        authenticator:
          type: SessionTokenAuthenticator
          login_requester: {type: HttpRequester, url_base: "{{ config.base }}", path: login, http_method: POST}
          session_token_path: [auth, token]
          request_authentication: {type: Bearer}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [weeks]}}
  - type: DeclarativeStream
    name: quotes
    schema_loader: {type: InlineSchemaLoader, schema: {type: object, properties: {id: {type: integer}}}}
    retriever:
      type: SimpleRetriever
      requester:
        type: HttpRequester
        url_base: MOCK/quotes.x.com/
        path: "v8/{{ config.comic }}"
        error_handler:
          type: CompositeErrorHandler
          error_handlers:
            - type: DefaultErrorHandler
              response_filters:
                - {type: HttpResponseFilter, action: IGNORE, http_codes: [401], predicate: "{{ 'x' in response }}"}
                - {type: HttpResponseFilter, action: SUCCESS, http_codes: [500, 403]}
                - {type: HttpResponseFilter, action: IGNORE, http_codes: [404]}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}
`

func TestPlan(t *testing.T) {
	m := NewMock()
	defer m.Close()
	raw, err := manifest.Parse([]byte(strings.ReplaceAll(planManifest, "MOCK", m.URL)))
	if err != nil {
		t.Fatal(err)
	}
	resolved, err := manifest.ResolveOnly(raw)
	if err != nil {
		t.Fatal(err)
	}
	config := map[string]any{"comic": "40", "base": m.URL + "/login.x.com", "start": "2024-05-07T00:00:00Z"}
	plan := NewPlan(resolved, config, m.URL, time.Date(2024, 5, 10, 15, 30, 0, 0, time.UTC))
	if len(plan.Problems) > 0 {
		t.Fatalf("problems: %v", plan.Problems)
	}
	m.SetPlan(plan)
	get := func(method, path, body string) (string, http.Header) {
		t.Helper()
		req, _ := http.NewRequest(method, m.URL+path, strings.NewReader(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b), resp.Header
	}
	for _, c := range []struct {
		method, path string
		want         string
		link         string
	}{
		{"POST", "/auth.x.com/oauth/token", `{"expires_in":3600,"refresh_token":"mock-refresh-token-2","tok":"mock-access-token"}`, ""},
		{"POST", "/login.x.com/login", `{"auth":{"token":"mock-session-token"}}`, ""},
		// the stop condition holds once paging.next is there and null (an
		// undefined next is not none, as in Jinja)
		{"GET", "/api.x.com/v1/users", `{"data":[` +
			`{"id":1,"name":"name-1","num":1,"updated_at":"2024-05-09T12:01:00Z"},` +
			`{"id":2,"name":"name-2","num":2,"updated_at":"2024-05-09T12:02:00Z"},` +
			`{"id":3,"name":"name-3","num":3,"updated_at":"2024-05-09T12:03:00Z"}],"paging":{"next":null}}`, ""},
		// the stop condition holds with a Link header saying no results
		{"GET", "/api.x.com/v1/events", `[` +
			`{"id":1,"name":"name-1","num":1,"updated_at":"2000-01-01T12:01:00Z"},` +
			`{"id":2,"name":"name-2","num":2,"updated_at":"2000-01-01T12:02:00Z"},` +
			`{"id":3,"name":"name-3","num":3,"updated_at":"2000-01-01T12:03:00Z"}]`, `<http://mock.invalid/next>; rel="next"; results="false"`},
		// the body is the record: its key keeps pagination going, so the
		// page it points at is empty
		{"GET", "/api.x.com/v1/40/info.json", `{"id":1,"name":"name-1","num":1,"updated_at":"2000-01-01T12:01:00Z"}`, ""},
		{"GET", "/api.x.com/v1/2/info.json", `{}`, ""},
		// a path that reads the page token: the first page's path has
		// records, any other is a later page
		{"GET", "/api.x.com/v1/chart/40", `[{"id":1},{"id":2},{"id":3}]`, ""},
		{"GET", "/api.x.com/v1/", `[]`, ""},
		// two streams on one path told apart by their static parameters;
		// a page as long as the page size is followed by an empty one
		{"GET", "/api.x.com/v1/counts?interval=day&page=0", `{"entries":[` +
			`{"id":1,"name":"name-1","num":1,"updated_at":"2000-01-01T12:01:00Z"},` +
			`{"id":2,"name":"name-2","num":2,"updated_at":"2000-01-01T12:02:00Z"},` +
			`{"id":3,"name":"name-3","num":3,"updated_at":"2000-01-01T12:03:00Z"}]}`, ""},
		{"GET", "/api.x.com/v1/counts?interval=day&page=1", `{"entries":[]}`, ""},
		{"GET", "/api.x.com/v1/counts?interval=week", `{"weeks":[` +
			`{"id":1,"name":"name-1","num":1,"updated_at":"2000-01-01T12:01:00Z"},` +
			`{"id":2,"name":"name-2","num":2,"updated_at":"2000-01-01T12:02:00Z"},` +
			`{"id":3,"name":"name-3","num":3,"updated_at":"2000-01-01T12:03:00Z"}]}`, ""},
	} {
		body, h := get(c.method, c.path, "")
		if body != c.want || h.Get("Link") != c.link {
			t.Errorf("%s %s:\n got %s (Link %q)\nwant %s (Link %q)", c.method, c.path, body, h.Get("Link"), c.want, c.link)
		}
	}
	// under a url_base whose error handler ends fine on a client error, a
	// path no route matches gets the lowest such status
	for path, want := range map[string]string{"/quotes.x.com": "403 " + `{"error":"Forbidden"}`,
		"/quotes.x.com/v9": "403 " + `{"error":"Forbidden"}`, "/quotes.x.com/v8/40": "200 " + `[{"id":1},{"id":2},{"id":3}]`,
		"/quotes.x.community": "404 " + `{"error":"the mock has no route for this path"}` + "\n"} {
		resp, err := http.Get(m.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if got := fmt.Sprintf("%d %s", resp.StatusCode, b); got != want {
			t.Errorf("GET %s: %s, want %s", path, got, want)
		}
	}
	if body, _ := get("GET", "/elsewhere.com/x", ""); !strings.Contains(body, "no route") {
		t.Errorf("an unknown path: %s", body)
	}
	if want := []string{"GET /quotes.x.community", "GET /elsewhere.com/x"}; !reflect.DeepEqual(m.Misses(), want) {
		t.Errorf("misses %v, want %v", m.Misses(), want)
	}
}

func TestPlanProblems(t *testing.T) {
	raw, _ := manifest.Parse([]byte(`
streams:
  - type: DeclarativeStream
    name: s
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: "https://api.x.com", path: s}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}
      decoder: {type: CustomDecoder}
`))
	resolved, _ := manifest.ResolveOnly(raw)
	plan := NewPlan(resolved, nil, "http://127.0.0.1:9", time.Now())
	b, _ := json.Marshal(plan.Problems)
	if want := `["stream s: URL \"https://api.x.com/s\" does not point at the mock (renders \"https://api.x.com/s\")"]`; string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
}

func TestRecordReads(t *testing.T) {
	var stream map[string]any
	json.Unmarshal([]byte(`{"name": "events",
	  "schema_loader": {"schema": {"description": "{{ record['in_schema'] }}"}},
	  "retriever": {"record_selector": {"record_filter": {"condition": "{{ record.status.code == 'x' }}"}},
	    "partition_router": {"type": "SubstreamPartitionRouter", "parent_stream_configs": [
	      {"stream": {"transformations": [{"value": "{{ record['parent_only'] }}"}]}}]}},
	  "transformations": [{"type": "AddFields", "fields": [
	    {"path": ["name"], "value": "{{ record[\"scheduler\"][\"display_name\"] }}"},
	    {"path": ["n"], "value": "{{ records | length }} {{ record.get('a', {}).get('b') }}"},
    {"path": ["id"], "value": "{{ record['uri'] | regex_search(\"\\\\/([a-zA-Z0-9-]*)$\") }}"}]}]}`), &stream)
	got, patterns := RecordReads(stream)
	if want := []PatternRead{{Path: []string{"uri"}, Pattern: `\/([a-zA-Z0-9-]*)$`}}; !reflect.DeepEqual(patterns, want) {
		t.Errorf("patterns %q, want %q", patterns, want)
	}
	want := map[string]bool{"status/code": true, "scheduler/display_name": true, "a/b": true, "uri": true}
	if len(got) != len(want) {
		t.Fatalf("got %q, want the keys of %v", got, want)
	}
	for _, path := range got {
		if !want[strings.Join(path, "/")] {
			t.Errorf("got %q, want the keys of %v", got, want)
		}
	}
}
