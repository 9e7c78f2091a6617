package cli

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// builderRead runs `read` with a builder config (__command: test_read) and
// returns the StreamRead, without the response headers that change between runs.
func builderRead(t *testing.T, manifestYAML string, cfg map[string]any, stream string, extra ...string) map[string]any {
	t.Helper()
	m, err := yamlToMap(manifestYAML)
	if err != nil {
		t.Fatal(err)
	}
	if cfg == nil {
		cfg = map[string]any{}
	}
	cfg["__command"], cfg["__injected_declarative_manifest"] = "test_read", m
	c := newConnector(t, "", cfg, stream)
	res := runCLI(t, append([]string{"read", "--config", c.config, "--catalog", c.catalog}, extra...)...)
	recs := res.ofType("RECORD")
	if res.code != 0 || len(recs) != 1 || len(res.msgs) != 1 {
		t.Fatalf("want one RECORD and exit 0, got exit %d: %s", res.code, res.stdout)
	}
	return stripVolatile(recs[0]["record"].(map[string]any)["data"]).(map[string]any)
}

// A substream's test read, as Airbyte's builder shows it: one slice per
// parent record with the partition as slice_descriptor, each parent page
// under auxiliary_requests titled as the CDK titles a parent's request
// ("Parent stream: Stream '<name>' request", type PARENT_STREAM), and the
// warnings of the read and of the manifest in logs (the builder shows only
// the StreamRead: a LOG beside it would never reach the user).
func TestTestReadSubstreamAsTheBuilderShowsIt(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		if r.URL.Path == "/parents" {
			fmt.Fprint(w, `{"data":[{"id":"p1"},{"name":"no id"}]}`)
			return
		}
		fmt.Fprint(w, `{"data":[{"id":1}]}`)
	})
	m := stream("c", "url_base: "+a.URL+"\npath: /p/{{ stream_partition.pid }}/c\nbogus: 1", "[data]", parentRouter(a.URL, ""))
	data := builderRead(t, m, nil, "c")
	want := `{"auxiliary_requests":[{"description":"Request performed in order to extract records for stream 'parent'",` +
		`"request":{"body":null,"headers":{},"http_method":"GET","url":"` + a.URL + `/parents"},` +
		`"response":{"body":"{\"data\":[{\"id\":\"p1\"},{\"name\":\"no id\"}]}","headers":{"Content-Type":"application/json"},"status":200},` +
		`"title":"Parent stream: Stream 'parent' request","type":"PARENT_STREAM"}],` +
		`"inferred_datetime_formats":{},` +
		`"inferred_schema":{"$schema":"http://json-schema.org/schema#","properties":{"id":{"type":"number"}},"required":["id"],"type":"object"},` +
		`"logs":[` +
		`{"internal_message":null,"level":"WARN","message":"streams[0].retriever.requester.bogus: HttpRequester has no field \"bogus\"; it is ignored","stacktrace":null},` +
		`{"internal_message":null,"level":"WARN","message":"Stream c: a record of parent stream parent has no \"id\", or a null one (streams[0].retriever.partition_router.parent_stream_configs[0].parent_key); it is skipped","stacktrace":null}],` +
		`"slices":[{"auxiliary_requests":[],"pages":[{"records":[{"id":1}],` +
		`"request":{"body":null,"headers":{},"http_method":"GET","url":"` + a.URL + `/p/p1/c"},` +
		`"response":{"body":"{\"data\":[{\"id\":1}]}","headers":{"Content-Type":"application/json"},"status":200}}],` +
		`"slice_descriptor":{"parent_slice":{},"pid":"p1"},"state":[{"data":null,"destinationStats":null,"global_":null,"sourceStats":{"recordCount":1},"stream":{"stream_descriptor":{"name":"c","namespace":null},"stream_state":{"__ab_no_cursor_state_message":true}},"type":"STREAM"}]}],` +
		`"test_read_limit_reached":false}`
	if got := compactJSON(data); got != want {
		t.Errorf("StreamRead\n got: %s\nwant: %s", got, want)
	}
	equalLists(t, "requests", a.lines(), []string{"GET /parents", "GET /p/p1/c"})
}

// An incremental stream's slices each carry the state written after them, as
// the STATE message a read writes: with sourceStats.recordCount, the records
// of that slice (a slice without records leaves the state where it was).
func TestTestReadIncrementalSliceStates(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		if strings.HasPrefix(r.URL.Query().Get("since"), "2024-01-01") {
			fmt.Fprint(w, `{"data":[{"id":1,"updated":"2024-01-01T05:00:00Z"},{"id":2,"updated":"2024-01-01T06:00:00Z"}]}`)
			return
		}
		fmt.Fprint(w, `{"data":[]}`)
	})
	m := stream("c", "url_base: "+a.URL+"\npath: /inc", "[data]", "") + `    incremental_sync:
      type: DatetimeBasedCursor
      cursor_field: updated
      datetime_format: "%Y-%m-%dT%H:%M:%SZ"
      start_datetime: "2024-01-01T00:00:00Z"
      end_datetime: "2024-01-02T12:00:00Z"
      step: P1D
      cursor_granularity: PT1S
      start_time_option: {type: RequestOption, inject_into: request_parameter, field_name: since}
`
	data := builderRead(t, m, nil, "c")
	page := func(since, body string, records string) string {
		return `{"records":` + records + `,"request":{"body":null,"headers":{},"http_method":"GET","url":"` + a.URL + `/inc?since=` + since + `"},` +
			`"response":{"body":` + body + `,"headers":{"Content-Type":"application/json"},"status":200}}`
	}
	want := `[{"auxiliary_requests":[],"pages":[` +
		page("2024-01-01T00%3A00%3A00Z", `"{\"data\":[{\"id\":1,\"updated\":\"2024-01-01T05:00:00Z\"},{\"id\":2,\"updated\":\"2024-01-01T06:00:00Z\"}]}"`,
			`[{"id":1,"updated":"2024-01-01T05:00:00Z"},{"id":2,"updated":"2024-01-01T06:00:00Z"}]`) + `],` +
		`"slice_descriptor":{"end_time":"2024-01-01T23:59:59Z","start_time":"2024-01-01T00:00:00Z"},` +
		`"state":[{"data":null,"destinationStats":null,"global_":null,"sourceStats":{"recordCount":2},"stream":{"stream_descriptor":{"name":"c","namespace":null},"stream_state":{"updated":"2024-01-01T06:00:00Z"}},"type":"STREAM"}]},` +
		`{"auxiliary_requests":[],"pages":[` + page("2024-01-02T00%3A00%3A00Z", `"{\"data\":[]}"`, `[]`) + `],` +
		`"slice_descriptor":{"end_time":"2024-01-02T12:00:00Z","start_time":"2024-01-02T00:00:00Z"},` +
		`"state":[{"data":null,"destinationStats":null,"global_":null,"sourceStats":{"recordCount":0},"stream":{"stream_descriptor":{"name":"c","namespace":null},"stream_state":{"updated":"2024-01-01T06:00:00Z"}},"type":"STREAM"}]}]`
	if got := compactJSON(data["slices"]); got != want {
		t.Errorf("slices\n got: %s\nwant: %s", got, want)
	}
	if got := compactJSON(data["inferred_datetime_formats"]); got != `{"updated":"%Y-%m-%dT%H:%M:%SZ"}` {
		t.Errorf("inferred_datetime_formats: %s", got)
	}
}

// max_records reached in the middle of a page: the page keeps the records up
// to the limit (its response whole), no further page is requested, and the
// limit is reported; a page whose records are all filtered out is shown with
// no records.
func TestTestReadRecordLimitInAPageAndFilteredPages(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		if r.URL.Query().Get("page") == "" {
			fmt.Fprint(w, `{"data":[{"id":1,"k":"no"},{"id":2,"k":"no"}],"next":2}`)
			return
		}
		fmt.Fprint(w, `{"data":[{"id":3,"k":"yes"},{"id":4,"k":"yes"},{"id":5,"k":"yes"}],"next":3}`)
	})
	m := stream("s", "url_base: "+a.URL+"\npath: /s", "[data]", "paginator:\n  type: DefaultPaginator\n  page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}\n  pagination_strategy: {type: CursorPagination, cursor_value: \"{{ response.next }}\"}")
	m = strings.Replace(m, "field_path: [data]}}", "field_path: [data]}, record_filter: {type: RecordFilter, condition: \"{{ record.k == 'yes' }}\"}}", 1)
	data := builderRead(t, m, map[string]any{"__test_read_config": map[string]any{"max_records": 2}}, "s")
	want := `{"auxiliary_requests":[],"inferred_datetime_formats":{},` +
		`"inferred_schema":{"$schema":"http://json-schema.org/schema#","properties":{"id":{"type":"number"},"k":{"type":["string","null"]}},"required":["id"],"type":"object"},` +
		`"logs":[],"slices":[{"auxiliary_requests":[],"pages":[` +
		`{"records":[],"request":{"body":null,"headers":{},"http_method":"GET","url":"` + a.URL + `/s"},` +
		`"response":{"body":"{\"data\":[{\"id\":1,\"k\":\"no\"},{\"id\":2,\"k\":\"no\"}],\"next\":2}","headers":{"Content-Type":"application/json"},"status":200}},` +
		`{"records":[{"id":3,"k":"yes"},{"id":4,"k":"yes"}],"request":{"body":null,"headers":{},"http_method":"GET","url":"` + a.URL + `/s?page=2"},` +
		`"response":{"body":"{\"data\":[{\"id\":3,\"k\":\"yes\"},{\"id\":4,\"k\":\"yes\"},{\"id\":5,\"k\":\"yes\"}],\"next\":3}","headers":{"Content-Type":"application/json"},"status":200}}],` +
		`"slice_descriptor":"{}","state":[{"data":null,"destinationStats":null,"global_":null,"sourceStats":{"recordCount":2},"stream":{"stream_descriptor":{"name":"s","namespace":null},"stream_state":{"__ab_no_cursor_state_message":true}},"type":"STREAM"}]}],"test_read_limit_reached":true}`
	if got := compactJSON(data); got != want {
		t.Errorf("StreamRead\n got: %s\nwant: %s", got, want)
	}
	equalLists(t, "requests", a.lines(), []string{"GET /s", "GET /s?page=2"})
}

// A stream the catalog names but the manifest does not: the builder's
// StreamRead says so in its logs (Airbyte's builder returns an empty one, no
// word why), and nothing is requested.
func TestTestReadUnknownStream(t *testing.T) {
	a := dataAPI(t)
	data := builderRead(t, stream("s", "url_base: "+a.URL+"\npath: /s", "[data]", ""), nil, "nope")
	want := `{"auxiliary_requests":[],"inferred_datetime_formats":{},` +
		`"logs":[{"internal_message":"stream \"nope\" is not defined in the manifest (streams: s)","level":"ERROR","message":"stream \"nope\" is not defined in the manifest (streams: s)","stacktrace":null}],` +
		`"slices":[],"test_read_limit_reached":false}`
	if got := compactJSON(data); got != want {
		t.Errorf("StreamRead\n got: %s\nwant: %s", got, want)
	}
	if len(a.requests()) != 0 {
		t.Errorf("requests: %v", a.lines())
	}
}

// A manifest that cannot load: one TRACE config_error naming the place and
// exit 0, as the builder's answer to a request it cannot run (Airbyte's says
// "Error handling request: ..." as a system_error; the manifest is the user's
// to fix, so config_error), and no request.
func TestTestReadManifestThatCannotLoad(t *testing.T) {
	a := dataAPI(t)
	m, _ := yamlToMap(stream("s", "url_base: "+a.URL+"\npath: /s\nhttp_method: FETCH", "[data]", ""))
	c := newConnector(t, "", map[string]any{"__command": "test_read", "__injected_declarative_manifest": m}, "s")
	res := runCLI(t, "read", "--config", c.config, "--catalog", c.catalog)
	errs := res.errors()
	if res.code != 0 || len(res.msgs) != 1 || len(errs) != 1 || errs[0]["failure_type"] != "config_error" {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	if msg := errs[0]["message"].(string); !strings.HasPrefix(msg, "invalid manifest: streams[0].retriever.requester.http_method") {
		t.Errorf("message: %s", msg)
	}
	if len(a.requests()) != 0 {
		t.Errorf("requests: %v", a.lines())
	}
}
