package cli

import (
	"fmt"
	"net/http"
	"testing"
)

// A check stream with nothing to read for the config (a cursor whose start
// is its end, a substream whose parent lists nothing) has tested no
// connection: check fails saying so, as Airbyte's runtime does ("Cannot
// attempt to connect to stream ... - no stream slices were found"); it
// passed before without a request (source-nytimes, a start month equal to
// its end month).
func TestCheckWithoutSlicesFails(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) { fmt.Fprint(w, `{"data":[]}`) })
	failed := func(t *testing.T, res result, stream, path string) {
		t.Helper()
		st := res.ofType("CONNECTION_STATUS")
		if res.code != 0 || len(st) != 1 {
			t.Fatalf("exit %d: %s", res.code, res.stdout)
		}
		want := "Stream " + stream + " is not available: Cannot attempt to connect to stream " + stream + " - no stream slices were found (" + path + ": no partition or slice to read for this config)"
		if cs := st[0]["connectionStatus"].(map[string]any); cs["status"] != "FAILED" || cs["message"] != want {
			t.Errorf("status %v:\n got %v\nwant %s", cs["status"], cs["message"], want)
		}
	}
	t.Run("cursor window empty", func(t *testing.T) {
		c := newConnector(t, incrementalStream(a.URL, `type: DatetimeBasedCursor
cursor_field: updated_at
datetime_format: "%Y-%m-%dT%H:%M:%SZ"
start_datetime: {datetime: "{{ config.start }}", datetime_format: "%Y-%m"}
end_datetime: {datetime: "{{ config.end }}", datetime_format: "%Y-%m"}
step: P1M
cursor_granularity: PT1S`, ""), map[string]any{"start": "2022-08", "end": "2022-08"})
		failed(t, c.check(t), "items", "streams[0]")
		equalLists(t, "requests", a.lines(), nil)
	})
	t.Run("parent lists nothing", func(t *testing.T) {
		c := newConnector(t, `version: 6.0.0
check: {type: CheckStream, stream_names: [children]}
definitions:
  parent:
    type: DeclarativeStream
    name: parents
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: "`+a.URL+`", path: /parents}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
streams:
  - $ref: "#/definitions/parent"
  - type: DeclarativeStream
    name: children
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: "`+a.URL+`", path: "/parents/{{ stream_partition.id }}/children"}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
      partition_router:
        type: SubstreamPartitionRouter
        parent_stream_configs: [{type: ParentStreamConfig, stream: {$ref: "#/definitions/parent"}, parent_key: id, partition_field: id}]
`, nil)
		failed(t, c.check(t), "children", "streams[1]")
		equalLists(t, "requests", a.lines(), []string{"GET /parents"})
	})
}

// A check reads the stream's first record and no further, as the CDK's
// availability check does: pages without records lead on to the next, and
// the paginator is not asked about a page once it gave a record, so a
// cursor template failing on that page (ubidots' regex_search of a `next`
// the answer lacks) does not fail the check; a read of the same stream does.
func TestCheckReadsToTheFirstRecord(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		if r.URL.Query().Get("page") == "" {
			fmt.Fprint(w, `{"data":[],"next":"https://x/items?page=2"}`)
			return
		}
		fmt.Fprint(w, `{"data":[{"id":1},{"id":2}]}`)
	})
	c := newConnector(t, stream("items", "url_base: "+a.URL+"\npath: /items", "[data]", `paginator:
  type: DefaultPaginator
  page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}
  pagination_strategy:
    type: CursorPagination
    cursor_value: '{{ response.next | regex_search("page=(\\d+)") }}'`), nil, "items")
	res := c.check(t)
	st := res.ofType("CONNECTION_STATUS")
	if res.code != 0 || len(st) != 1 || st[0]["connectionStatus"].(map[string]any)["status"] != "SUCCEEDED" {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{"GET /items", "GET /items?page=2"})

	read := c.read(t)
	equalLists(t, "records", read.records("items"), []string{`{"id":1}`, `{"id":2}`})
	if errs := read.errors(); read.code == 0 || len(errs) == 0 || errs[0]["message"] != `streams[0].retriever.paginator.pagination_strategy.cursor_value: template "{{ response.next | regex_search(\"page=(\\\\d+)\") }}": TypeError: filter regex_search: expected string or bytes-like object, got 'Undefined'` || errs[0]["failure_type"] != "system_error" {
		t.Errorf("the read: exit %d, errors %v; want it failed on the cursor template", read.code, errs)
	}
}
