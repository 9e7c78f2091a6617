package genapi

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/airbyte-go/source-declarative/manifest"
)

// plan starts an API serving a manifest (a YAML text whose URLs name
// "API"), read with config.
func plan(t *testing.T, yamlText string, config map[string]any) *API {
	t.Helper()
	if err := CheckJinja(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	a := Start()
	t.Cleanup(a.Close)
	raw, err := manifest.Parse([]byte(strings.ReplaceAll(yamlText, "API", a.URL)))
	if err != nil {
		t.Fatal(err)
	}
	resolved, err := manifest.ResolveOnly(raw)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPlan(resolved, config, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Problems) > 0 {
		t.Fatalf("problems: %v", p.Problems)
	}
	a.SetPlan(p)
	return a
}

func get(t *testing.T, url string) (int, http.Header, map[string]any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var body map[string]any
	json.Unmarshal(b, &body)
	return resp.StatusCode, resp.Header, body
}

const cursorManifest = `
streams:
  - type: DeclarativeStream
    name: events
    primary_key: [id]
    schema_loader: {type: InlineSchemaLoader, schema: {type: object, properties: {id: {type: integer}}}}
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: API/v1, path: /events}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
      paginator:
        type: DefaultPaginator
        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: cursor}
        pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.meta.next }}", stop_condition: "{{ not response.meta.has_more }}"}
`

// A cursor stream's pages chain by the marker token Jinja2 found for the
// manifest's cursor_value, and the last page makes its stop condition hold;
// the same request gets the same page.
func TestCursorPagesChain(t *testing.T) {
	a := plan(t, cursorManifest, map[string]any{})
	_, _, first := get(t, a.URL+"/v1/events")
	meta, _ := first["meta"].(map[string]any)
	if meta["next"] != "mockcursor1z" || meta["has_more"] == false || len(first["data"].([]any)) != 3 {
		t.Fatalf("first page: %v", first)
	}
	_, _, second := get(t, a.URL+"/v1/events?cursor=mockcursor1z")
	if next := second["meta"].(map[string]any)["next"]; next != "mockcursor2z" {
		t.Fatalf("second page: %v", second)
	}
	_, _, last := get(t, a.URL+"/v1/events?cursor=mockcursor2z")
	if m, _ := last["meta"].(map[string]any); m != nil && m["has_more"] == true {
		t.Fatalf("last page goes on: %v", last)
	}
	_, _, again := get(t, a.URL+"/v1/events?cursor=mockcursor1z")
	if b1, b2 := jsonOf(second), jsonOf(again); b1 != b2 {
		t.Errorf("the same request got another page:\n%s\n%s", b1, b2)
	}
	if jsonOf(first["data"]) == jsonOf(second["data"]) {
		t.Errorf("two pages hold the same records: %s", jsonOf(first["data"]))
	}
	ex := a.Exchanges()
	if len(ex) != 4 || ex[0].Endpoint != "events" || ex[2].Page != 2 || len(ex[2].Records) != 1 {
		t.Errorf("exchanges: %+v", ex)
	}
}

// A boolean asked in Python's spelling (True, as Airbyte's runtime renders
// a config boolean) or JSON's (true) gets the same records: the two
// runtimes asking the same thing are served alike.
func TestBooleansInEitherSpellingAskTheSame(t *testing.T) {
	a := plan(t, cursorManifest, map[string]any{})
	_, _, python := get(t, a.URL+"/v1/events?exact=False&over_18=True")
	_, _, json := get(t, a.URL+"/v1/events?exact=false&over_18=true")
	_, _, other := get(t, a.URL+"/v1/events?exact=true&over_18=true")
	if jsonOf(python["data"]) != jsonOf(json["data"]) {
		t.Errorf("False and false got other records:\n%s\n%s", jsonOf(python["data"]), jsonOf(json["data"]))
	}
	if jsonOf(json["data"]) == jsonOf(other["data"]) {
		t.Errorf("false and true got the same records: %s", jsonOf(json["data"]))
	}
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// An offset stream serves two full pages and a short one, read from the
// offset the request carries; an unknown path is 404 and the API's root
// 403.
func TestOffsetPagesAndUnknownPaths(t *testing.T) {
	a := plan(t, `
streams:
  - type: DeclarativeStream
    name: users
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: API/api, path: users}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [users]}}
      paginator:
        type: DefaultPaginator
        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: offset}
        pagination_strategy: {type: OffsetIncrement, page_size: 5}
`, map[string]any{})
	for _, c := range []struct {
		query string
		n     int
	}{{"", 5}, {"?offset=0", 5}, {"?offset=5", 5}, {"?offset=10", 1}, {"?offset=15", 0}} {
		_, _, body := get(t, a.URL+"/api/users"+c.query)
		if got := len(body["users"].([]any)); got != c.n {
			t.Errorf("%q: %d records, want %d", c.query, got, c.n)
		}
	}
	if status, _, _ := get(t, a.URL+"/api/teams"); status != http.StatusNotFound {
		t.Errorf("unknown path: %d", status)
	}
	if status, _, _ := get(t, a.URL+"/api"); status != http.StatusForbidden {
		t.Errorf("the API's root: %d", status)
	}
}

// A parameter holding Python's text None (a null Airbyte's runtime sends as
// "None", and ours leaves out) does not change a page's records, as a page
// token does not.
func TestNoneParameterKeepsRecords(t *testing.T) {
	a := plan(t, cursorManifest, map[string]any{})
	_, _, without := get(t, a.URL+"/v1/events?cursor=mockcursor1z&q=x")
	_, _, with := get(t, a.URL+"/v1/events?category=None&cursor=mockcursor1z&q=x")
	if jsonOf(without["data"]) != jsonOf(with["data"]) {
		t.Errorf("category=None changed the records:\n%s\n%s", jsonOf(without["data"]), jsonOf(with["data"]))
	}
	_, _, other := get(t, a.URL+"/v1/events?category=news&cursor=mockcursor1z&q=x")
	if jsonOf(without["data"]) == jsonOf(other["data"]) {
		t.Errorf("category=news did not change the records: %s", jsonOf(other["data"]))
	}
}

// Streams of a GraphQL API share one path (POST /graphql) and differ by
// the query in their JSON body: each request is answered by its own
// stream's endpoint, its records where that stream's selector finds them.
func TestEndpointsToldApartByTheirBody(t *testing.T) {
	a := plan(t, `
definitions:
  stream:
    type: DeclarativeStream
    retriever:
      type: SimpleRetriever
      requester:
        type: HttpRequester
        url_base: API
        path: /graphql
        http_method: POST
        request_body_json:
          query: "{ {{ parameters.name }} { nodes { id } } }"
          variables: "{{ next_page_token }}"
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data, "{{ parameters.name }}", nodes]}}
streams:
  - {$ref: "#/definitions/stream", name: users, $parameters: {name: users}}
  - {$ref: "#/definitions/stream", name: teams, $parameters: {name: teams}}
`, map[string]any{})
	for _, name := range []string{"teams", "users"} {
		resp, err := http.Post(a.URL+"/graphql", "application/json", strings.NewReader(`{"query": "{ `+name+` { nodes { id } } }", "variables": ""}`))
		if err != nil {
			t.Fatal(err)
		}
		var body map[string]any
		json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		data, _ := body["data"].(map[string]any)
		if _, ok := data[name].(map[string]any); !ok {
			t.Errorf("%s: %v", name, body)
		}
	}
	ex := a.Exchanges()
	if len(ex) != 2 || ex[0].Endpoint != "teams" || ex[1].Endpoint != "users" {
		t.Errorf("exchanges: %+v", ex)
	}
}

// Records carry a cursor inside the time window the request asks for, in
// the cursor's format.
func TestRecordsInTheRequestedWindow(t *testing.T) {
	a := plan(t, `
streams:
  - type: DeclarativeStream
    name: activities
    schema_loader: {type: InlineSchemaLoader, schema: {type: object, properties: {updated_at: {type: string}}}}
    incremental_sync:
      type: DatetimeBasedCursor
      cursor_field: updated_at
      datetime_format: "%Y-%m-%dT%H:%M:%SZ"
      start_datetime: "2024-01-01T00:00:00Z"
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: API, path: /activities}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [items]}}
`, map[string]any{})
	_, _, body := get(t, a.URL+"/activities?since=2024-01-01T00:00:00Z&until=2024-01-01T04:00:00Z")
	var got []string
	for _, r := range body["items"].([]any) {
		got = append(got, r.(map[string]any)["updated_at"].(string))
	}
	if want := "2024-01-01T01:00:00Z 2024-01-01T02:00:00Z 2024-01-01T03:00:00Z"; strings.Join(got, " ") != want {
		t.Errorf("cursors %v, want %s", got, want)
	}
}
