package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/airbyte-go/source-declarative/runtime"
)

// Test reads as Airbyte's builder shows them (CDK 7.28's connector builder),
// each StreamRead compared as printed: keys in their order, the Date header
// of each response written DATE.

// rawStreamRead runs a builder test read and returns the StreamRead as
// printed, and the other messages printed beside it.
func rawStreamRead(t *testing.T, manifestYAML string, cfg map[string]any, stream string) (string, []map[string]any) {
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
	res := runCLI(t, "read", "--config", c.config, "--catalog", c.catalog)
	var data string
	var others []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(res.stdout), "\n") {
		var msg struct {
			Type   string
			Record struct{ Data json.RawMessage }
		}
		json.Unmarshal([]byte(line), &msg)
		if msg.Type == "RECORD" && data == "" {
			data = string(msg.Record.Data)
			continue
		}
		var other map[string]any
		json.Unmarshal([]byte(line), &other)
		others = append(others, other)
	}
	if res.code != 0 || data == "" {
		t.Fatalf("want a RECORD and exit 0, got exit %d: %s", res.code, res.stdout)
	}
	return dates.ReplaceAllString(data, `"Date":"DATE"`), others
}

var dates = regexp.MustCompile(`"Date":"[^"]*"`)

// jsonPage is a page of a StreamRead as printed: a GET without headers
// answered 200 with body.
func jsonPage(url, body, records string) string {
	b, _ := json.Marshal(body)
	return `{"records":` + records + `,"request":{"url":"` + url + `","headers":{},"http_method":"GET","body":null},` +
		`"response":{"status":200,"body":` + string(b) + `,"headers":{"Content-Length":"` + fmt.Sprint(len(body)) + `","Content-Type":"application/json","Date":"DATE"}}}`
}

// jsonState is a slice's state as printed.
func jsonState(stream, state string, records int) string {
	return `{"type":"STREAM","stream":{"stream_descriptor":{"name":"` + stream + `","namespace":null},"stream_state":` + state + `},` +
		`"global_":null,"data":null,"sourceStats":{"recordCount":` + fmt.Sprint(records) + `.0},"destinationStats":null}`
}

// A stream without partitions or cursor: one slice whose descriptor is the
// text "{}" (the CDK logs an empty slice as the text of the object), the
// state a full refresh stream writes when it ends, {"__ab_no_cursor_state_
// message": true} with the records of the read, in the shape of the
// builder's state message (every field, null where unset), and no
// latest_config_update without a config update.
func TestTestReadFullRefreshAsTheBuilderPrintsIt(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		if r.URL.Query().Get("page") == "" {
			fmt.Fprint(w, `{"data":[{"id":1},{"id":2}],"next":2}`)
			return
		}
		fmt.Fprint(w, `{"data":[{"id":3}]}`)
	})
	m := stream("s", "url_base: "+a.URL+"\npath: /s", "[data]", "paginator:\n  type: DefaultPaginator\n  page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}\n  pagination_strategy: {type: CursorPagination, cursor_value: \"{{ response.next }}\", stop_condition: \"{{ response.next is none }}\"}")
	got, others := rawStreamRead(t, m, nil, "s")
	want := `{"logs":[],"slices":[{"pages":[` +
		jsonPage(a.URL+"/s", `{"data":[{"id":1},{"id":2}],"next":2}`, `[{"id":1},{"id":2}]`) + `,` +
		jsonPage(a.URL+"/s?page=2", `{"data":[{"id":3}]}`, `[{"id":3}]`) + `],` +
		`"slice_descriptor":"{}","state":[` + jsonState("s", `{"__ab_no_cursor_state_message":true}`, 3) + `],"auxiliary_requests":[]}],` +
		`"test_read_limit_reached":false,"auxiliary_requests":[],` +
		`"inferred_schema":{"$schema":"http://json-schema.org/schema#","type":"object","properties":{"id":{"type":"number"}},"required":["id"]},` +
		`"inferred_datetime_formats":{}}`
	if got != want {
		t.Errorf("StreamRead\n got: %s\nwant: %s", got, want)
	}
	if len(others) != 0 {
		t.Errorf("messages beside the StreamRead: %v", others)
	}
}

// An incremental stream: each slice's descriptor holds its bounds, and its
// state is the one written after it with the records read since the state
// before; when the stream ends the state is written again, with no record
// since, and the last slice shows that one (recordCount 0), as the
// builder's grouping of the read's messages does.
func TestTestReadIncrementalStatesAsTheBuilderGroupsThem(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		day := r.URL.Query().Get("since")[:10]
		fmt.Fprintf(w, `{"data":[{"id":"%[1]s","updated":"%[1]sT05:00:00Z"}]}`, day)
	})
	m := stream("i", "url_base: "+a.URL+"\npath: /inc", "[data]", "") + `    incremental_sync:
      type: DatetimeBasedCursor
      cursor_field: updated
      datetime_format: "%Y-%m-%dT%H:%M:%SZ"
      start_datetime: "2024-01-01T00:00:00Z"
      end_datetime: "2024-01-02T12:00:00Z"
      step: P1D
      cursor_granularity: PT1S
      start_time_option: {type: RequestOption, inject_into: request_parameter, field_name: since}
`
	got, _ := rawStreamRead(t, m, nil, "i")
	page := func(day string) string {
		return jsonPage(a.URL+"/inc?since="+day+"T00%3A00%3A00Z", `{"data":[{"id":"`+day+`","updated":"`+day+`T05:00:00Z"}]}`, `[{"id":"`+day+`","updated":"`+day+`T05:00:00Z"}]`)
	}
	want := `{"logs":[],"slices":[` +
		`{"pages":[` + page("2024-01-01") + `],"slice_descriptor":{"end_time":"2024-01-01T23:59:59Z","start_time":"2024-01-01T00:00:00Z"},` +
		`"state":[` + jsonState("i", `{"updated":"2024-01-01T05:00:00Z"}`, 1) + `],"auxiliary_requests":[]},` +
		`{"pages":[` + page("2024-01-02") + `],"slice_descriptor":{"end_time":"2024-01-02T12:00:00Z","start_time":"2024-01-02T00:00:00Z"},` +
		`"state":[` + jsonState("i", `{"updated":"2024-01-02T05:00:00Z"}`, 0) + `],"auxiliary_requests":[]}],` +
		`"test_read_limit_reached":false,"auxiliary_requests":[],` +
		`"inferred_schema":{"$schema":"http://json-schema.org/schema#","type":"object","properties":{"id":{"type":"string"},"updated":{"type":"string"}},"required":["id","updated"]},` +
		`"inferred_datetime_formats":{"id":"%Y-%m-%d","updated":"%Y-%m-%dT%H:%M:%SZ"}}`
	if got != want {
		t.Errorf("StreamRead\n got: %s\nwant: %s", got, want)
	}
}

// A substream: one slice per parent record, its descriptor the partition; a
// full refresh stream's state shown with the last slice only. Each requester
// has its own authenticator, as in the builder: the parent's token request is
// its own, made while reading the parent, and titled as the parent's
// requests are ("Parent stream: Refresh token", type PARENT_STREAM).
func TestTestReadSubstreamTokenRequestsAsTheBuilderShowsThem(t *testing.T) {
	tokens := 0
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		switch {
		case r.URL.Path == "/oauth/token":
			tokens++
			fmt.Fprintf(w, `{"access_token":"tok-%d","expires_in":3600}`, tokens)
		case r.URL.Path == "/parents":
			fmt.Fprint(w, `{"data":[{"id":"p1"},{"id":"p2"}]}`)
		default:
			fmt.Fprintf(w, `{"data":[{"id":%q}]}`, r.URL.Path)
		}
	})
	auth := `authenticator: {type: OAuthAuthenticator, token_refresh_endpoint: "` + a.URL + `/oauth/token", grant_type: client_credentials, client_id: "{{ config['client_id'] }}", client_secret: "{{ config['client_secret'] }}"}`
	m := stream("c", "url_base: "+a.URL+"\npath: /p/{{ stream_partition.pid }}/c\n"+auth, "[data]", `partition_router:
  type: SubstreamPartitionRouter
  parent_stream_configs:
    - type: ParentStreamConfig
      parent_key: id
      partition_field: pid
      stream:
        type: DeclarativeStream
        name: parent
        primary_key: [id]
        retriever:
          type: SimpleRetriever
          requester: {type: HttpRequester, url_base: `+a.URL+`, path: /parents, `+auth+`}
          record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}`) +
		"spec:\n  type: Spec\n  connection_specification:\n    type: object\n    properties:\n      client_secret: {type: string, airbyte_secret: true}\n"
	got, _ := rawStreamRead(t, m, map[string]any{"client_id": "cid", "client_secret": "csecret"}, "c")
	token := func(title, kind, access string) string {
		body := `{"access_token":"` + access + `","expires_in":3600}`
		return `{"title":"` + title + `","type":"` + kind + `","description":"Obtains access token",` +
			`"request":{"url":"` + a.URL + `/oauth/token","headers":{"Accept":"application/json","Content-Type":"application/json"},"http_method":"POST",` +
			`"body":"{\"client_id\":\"****\",\"client_secret\":\"****\",\"grant_type\":\"client_credentials\"}"},` +
			`"response":{"status":200,"body":` + compactJSON(strings.ReplaceAll(body, access, "****")) + `,"headers":{"Content-Length":"` + fmt.Sprint(len(body)) + `","Content-Type":"application/json","Date":"DATE"}}}`
	}
	parents := `{"data":[{"id":"p1"},{"id":"p2"}]}`
	child := func(pid string) string {
		body := `{"data":[{"id":"/p/` + pid + `/c"}]}`
		return `{"records":[{"id":"/p/` + pid + `/c"}],"request":{"url":"` + a.URL + `/p/` + pid + `/c","headers":{"Authorization":"Bearer ****"},"http_method":"GET","body":null},` +
			`"response":{"status":200,"body":` + compactJSON(body) + `,"headers":{"Content-Length":"` + fmt.Sprint(len(body)) + `","Content-Type":"application/json","Date":"DATE"}}}`
	}
	want := `{"logs":[],"slices":[` +
		`{"pages":[` + child("p1") + `],"slice_descriptor":{"parent_slice":{},"pid":"p1"},"state":[],"auxiliary_requests":[]},` +
		`{"pages":[` + child("p2") + `],"slice_descriptor":{"parent_slice":{},"pid":"p2"},"state":[` + jsonState("c", `{"__ab_no_cursor_state_message":true}`, 2) + `],"auxiliary_requests":[]}],` +
		`"test_read_limit_reached":false,"auxiliary_requests":[` +
		token("Parent stream: Refresh token", "PARENT_STREAM", "tok-1") + `,` +
		`{"title":"Parent stream: Stream 'parent' request","type":"PARENT_STREAM","description":"Request performed in order to extract records for stream 'parent'",` +
		`"request":{"url":"` + a.URL + `/parents","headers":{"Authorization":"Bearer ****"},"http_method":"GET","body":null},` +
		`"response":{"status":200,"body":` + compactJSON(parents) + `,"headers":{"Content-Length":"` + fmt.Sprint(len(parents)) + `","Content-Type":"application/json","Date":"DATE"}}},` +
		token("Refresh token", "AUTH", "tok-2") + `],` +
		`"inferred_schema":{"$schema":"http://json-schema.org/schema#","type":"object","properties":{"id":{"type":"string"}},"required":["id"]},` +
		`"inferred_datetime_formats":{}}`
	if got != want {
		t.Errorf("StreamRead\n got: %s\nwant: %s", got, want)
	}
	equalLists(t, "requests", a.lines(), []string{"POST /oauth/token", "GET /parents", "POST /oauth/token", "GET /p/p1/c", "GET /p/p2/c"})
}

// The inferred schema follows the builder's (genson's SchemaBuilder under
// the CDK's SchemaInferrer): fields in the order the records first show
// them, integers as numbers, an object always empty without properties, an
// array's items merged, a field only ever null left out, a null merged into
// the type list of the one other kind, an anyOf of other kinds left as
// genson writes it, every type nullable with null last, and the primary key
// required and not nullable. A primary key path that does not reach an
// object is reported in the builder's words, the node written as Python
// prints it.
func TestTestReadInferredSchemaAsTheBuilderInfersIt(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		fmt.Fprint(w, `{"data":[`+
			`{"id":1,"addons":{},"tags":[],"meta":{"a":1},"mixed":"x","n":null,"arr":[{"k":1},{"k":"v","z":null}],"name":"it's"},`+
			`{"id":2.5,"addons":{},"tags":["a"],"meta":null,"mixed":{"b":null,"c":"d"},"n":null,"arr":null,"b":true,"name":"b"}]}`)
	})
	m := strings.Replace(stream("s", "url_base: "+a.URL+"\npath: /s", "[data]", ""), "primary_key: [id]", "primary_key: [[id], [name, first]]", 1)
	got, _ := rawStreamRead(t, m, nil, "s")
	schema := got[strings.Index(got, `"inferred_schema":`):]
	want := `"inferred_schema":{"$schema":"http://json-schema.org/schema#","type":"object","properties":{` +
		`"id":{"type":"number"},` +
		`"addons":{"type":["object","null"]},` +
		`"tags":{"type":["array","null"],"items":{"type":["string","null"]}},` +
		`"meta":{"type":["object","null"],"properties":{"a":{"type":["number","null"]}}},` +
		`"mixed":{"anyOf":[{"type":"string"},{"type":"object","properties":{"b":{"type":"null"},"c":{"type":"string"}}}]},` +
		`"arr":{"type":["array","null"],"items":{"type":["object","null"],"properties":{"k":{"type":["number","string","null"]}}}},` +
		`"name":{"type":"string"},` +
		`"b":{"type":["boolean","null"]}},` +
		`"required":["id","name"]},"inferred_datetime_formats":{}}`
	if schema != want {
		t.Errorf("inferred schema\n got: %s\nwant: %s", schema, want)
	}
	logs := got[:strings.Index(got, `,"slices":`)]
	if want := `{"logs":[{"message":"Path ['name'] does not refer to an object but is ` + "`{'type': 'string'}`" + ` and hence ['first'] can't be marked as required.","level":"ERROR","internal_message":null,"stacktrace":null}]`; logs != want {
		t.Errorf("logs\n got: %s\nwant: %s", logs, want)
	}
}

// partitionStates test-reads stream c, one partition per parent p1, p2 and
// p3, each giving one record updated 2024-01-01T05:00:00Z, with a
// DatetimeBasedCursor over 2024-01-01 ending with the given lines (YAML at
// its indentation); it lists each slice as its pid and its states' JSON.
func partitionStates(t *testing.T, cursorLines string) []string {
	t.Helper()
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		if r.URL.Path == "/parents" {
			fmt.Fprint(w, `{"data":[{"id":"p1"},{"id":"p2"},{"id":"p3"}]}`)
			return
		}
		fmt.Fprintf(w, `{"data":[{"id":%q,"updated":"2024-01-01T05:00:00Z"}]}`, r.URL.Path)
	})
	m := stream("c", "url_base: "+a.URL+"\npath: /p/{{ stream_partition.pid }}/c", "[data]", parentRouter(a.URL, "")) + `    incremental_sync:
      type: DatetimeBasedCursor
      cursor_field: updated
      datetime_format: "%Y-%m-%dT%H:%M:%SZ"
      start_datetime: "2024-01-01T00:00:00Z"
      end_datetime: "2024-01-01T12:00:00Z"
` + cursorLines
	got, _ := rawStreamRead(t, m, nil, "c")
	var read struct {
		Slices []struct {
			SliceDescriptor map[string]any  `json:"slice_descriptor"`
			State           json.RawMessage `json:"state"`
		}
	}
	json.Unmarshal([]byte(got), &read)
	var gotSlices []string
	for _, s := range read.Slices {
		gotSlices = append(gotSlices, fmt.Sprint(s.SliceDescriptor["pid"])+" "+string(s.State))
	}
	return gotSlices
}

// A partitioned incremental stream writes a state after its first slice
// only (the CDK's per-partition cursor writes at most one in ten minutes)
// and when it ends: the slices between show the first one again, as the
// builder shows the latest state written when each slice ends. Here the
// first slice is its partition's only one: the state has the partition's
// parent_state.
func TestTestReadPartitionedStatesAsTheBuilderGroupsThem(t *testing.T) {
	gotSlices := partitionStates(t, `      step: P1D
      cursor_granularity: PT1S
`)
	p := func(id string) string {
		return `{"cursor":{"updated":"2024-01-01T05:00:00Z"},"partition":{"parent_slice":{},"pid":"` + id + `"}}`
	}
	start := func(id string) string {
		return `{"cursor":{"updated":"2024-01-01T00:00:00Z"},"partition":{"parent_slice":{},"pid":"` + id + `"}}`
	}
	// Every partition is made before the first is read: the first state
	// lists them all, those not read yet at their start.
	first := `[` + jsonState("c", `{"lookback_window":0,"parent_state":{},"states":[`+p("p1")+`,`+start("p2")+`,`+start("p3")+`],"use_global_cursor":false}`, 1) + `]`
	last := `[` + jsonState("c", `{"lookback_window":1,"parent_state":{},"state":{"updated":"2024-01-01T05:00:00Z"},"states":[`+p("p1")+`,`+p("p2")+`,`+p("p3")+`],"use_global_cursor":false}`, 2) + `]`
	equalLists(t, "slices and their states", gotSlices, []string{"p1 " + first, "p2 " + first, "p3 " + last})
}

// A global substream cursor whose parent state is empty writes no state
// while its partitions are read (the reference skips it: it would hold
// nothing the read moved), only when the stream ends, with every record
// (checked with refcdk7's builder).
func TestTestReadGlobalCursorWithoutParentStateWritesAtTheEnd(t *testing.T) {
	gotSlices := partitionStates(t, "      global_substream_cursor: true\n")
	last := `[` + jsonState("c", `{"lookback_window":1,"parent_state":{},"state":{"updated":"2024-01-01T05:00:00Z"},"use_global_cursor":true}`, 3) + `]`
	equalLists(t, "slices and their states", gotSlices, []string{"p1 []", "p2 []", "p3 " + last})
}

// A refresh token rotated during a test read comes back in
// latest_config_update, the config without the builder's own keys, its
// expiry date written as the CDK writes it (Python's isoformat in UTC, with
// the microseconds of the clock).
func TestTestReadLatestConfigUpdateAsTheCDKWritesIt(t *testing.T) {
	prepareRunner = func(r *runtime.Runner) {
		r.Now = func() time.Time { return time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.UTC) }
	}
	t.Cleanup(func() { prepareRunner = nil })
	o := newOAuthServer(t, true)
	m := oauthManifest(o.URL, "", `refresh_token_updater:
  refresh_token_name: refresh_token
  access_token_config_path: [oauth_access_token]
  refresh_token_config_path: [client_refresh_token]
  token_expiry_date_config_path: [oauth_token_expiry_date]
`)
	got, _ := rawStreamRead(t, m, map[string]any{"client_id": "cid", "client_secret": "csecret", "client_refresh_token": "refresh-0",
		"oauth_access_token": "stale", "oauth_token_expiry_date": "2020-01-01T00:00:00Z"}, "s")
	update := got[strings.Index(got, `"latest_config_update":`):]
	want := `"latest_config_update":{"client_id":"cid","client_refresh_token":"refresh-1","client_secret":"csecret","oauth_access_token":"access-1","oauth_token_expiry_date":"2024-05-06T08:08:09.123456+00:00"}}`
	if update != want {
		t.Errorf("latest_config_update\n got: %s\nwant: %s", update, want)
	}
}

// A response the error handler ignores ends the pages and is shown as a page
// without records, as the builder shows every response.
func TestTestReadShowsAnIgnoredResponse(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		if r.URL.Query().Get("page") != "" {
			w.WriteHeader(403)
			fmt.Fprint(w, `{"error":"no"}`)
			return
		}
		fmt.Fprint(w, `{"data":[{"id":1}],"next":2}`)
	})
	m := stream("s", "url_base: "+a.URL+"\npath: /s\nerror_handler: {type: DefaultErrorHandler, response_filters: [{type: HttpResponseFilter, action: IGNORE, http_codes: [403]}]}", "[data]",
		"paginator:\n  type: DefaultPaginator\n  page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}\n  pagination_strategy: {type: CursorPagination, cursor_value: \"{{ response.next }}\"}")
	got, _ := rawStreamRead(t, m, nil, "s")
	pages := got[strings.Index(got, `"pages":`):strings.Index(got, `,"slice_descriptor"`)]
	want := `"pages":[` + jsonPage(a.URL+"/s", `{"data":[{"id":1}],"next":2}`, `[{"id":1}]`) + `,` +
		strings.Replace(jsonPage(a.URL+"/s?page=2", `{"error":"no"}`, `[]`), `"status":200`, `"status":403`, 1) + `]`
	if pages != want {
		t.Errorf("pages\n got: %s\nwant: %s", pages, want)
	}
	equalLists(t, "requests", a.lines(), []string{"GET /s", "GET /s?page=2"})
}

// A partition that fails is shown with its failed page and its error logged,
// and the partitions made before it are read still, as Airbyte's builder
// reads every partition it made (up to max_slices) before it reads any.
func TestTestReadGoesOnAfterAFailedPartition(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		switch r.URL.Path {
		case "/parents":
			fmt.Fprint(w, `{"data":[{"id":"p1"},{"id":"p2"},{"id":"p3"}]}`)
		case "/p/p2/c":
			w.WriteHeader(500)
			fmt.Fprint(w, `{"error":"boom"}`)
		default:
			fmt.Fprintf(w, `{"data":[{"id":%q}]}`, r.URL.Path)
		}
	})
	m := stream("c", "url_base: "+a.URL+"\npath: /p/{{ stream_partition.pid }}/c", "[data]", parentRouter(a.URL, ""))
	got, _ := rawStreamRead(t, m, nil, "c")
	page := func(pid string) string {
		return jsonPage(a.URL+"/p/"+pid+"/c", `{"data":[{"id":"/p/`+pid+`/c"}]}`, `[{"id":"/p/`+pid+`/c"}]`)
	}
	failed := strings.Replace(jsonPage(a.URL+"/p/p2/c", `{"error":"boom"}`, `[]`), `"status":200`, `"status":500`, 1)
	msg := `stream c: HTTP 500 Internal Server Error from GET ` + a.URL + `/p/p2/c: {\"error\":\"boom\"} (gave up after 1 attempt)`
	want := `{"logs":[{"message":"` + msg + `","level":"ERROR","internal_message":"` + msg + `","stacktrace":null}],"slices":[` +
		`{"pages":[` + page("p1") + `],"slice_descriptor":{"parent_slice":{},"pid":"p1"},"state":[],"auxiliary_requests":[]},` +
		`{"pages":[` + failed + `],"slice_descriptor":{"parent_slice":{},"pid":"p2"},"state":[],"auxiliary_requests":[]},` +
		`{"pages":[` + page("p3") + `],"slice_descriptor":{"parent_slice":{},"pid":"p3"},"state":[` + jsonState("c", `{"__ab_no_cursor_state_message":true}`, 2) + `],"auxiliary_requests":[]}],` +
		`"test_read_limit_reached":false,"auxiliary_requests":[`
	if !strings.HasPrefix(got, want) {
		t.Errorf("StreamRead\n got: %s\nwant: %s...", got, want)
	}
	equalLists(t, "requests", a.lines(), []string{"GET /parents", "GET /p/p1/c", "GET /p/p2/c", "GET /p/p3/c"})
}

// A slice that fails is shown with its failed page and its error logged,
// and the stream's later slices are read still, as Airbyte's builder reads
// every slice. The state does not pass the failed slice: each slice after
// it shows the state of the slices before it (checked with refcdk7's
// builder: the same slices, pages and states).
func TestTestReadGoesOnAfterAFailedSlice(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		day := r.URL.Query().Get("since")[:10]
		if day == "2024-01-02" {
			w.WriteHeader(400)
			fmt.Fprint(w, `{"error":"boom"}`)
			return
		}
		fmt.Fprintf(w, `{"data":[{"id":"%[1]s","updated":"%[1]sT05:00:00Z"}]}`, day)
	})
	m := stream("i", "url_base: "+a.URL+"\npath: /inc", "[data]", "") + `    incremental_sync:
      type: DatetimeBasedCursor
      cursor_field: updated
      datetime_format: "%Y-%m-%dT%H:%M:%SZ"
      start_datetime: "2024-01-01T00:00:00Z"
      end_datetime: "2024-01-03T12:00:00Z"
      step: P1D
      cursor_granularity: PT1S
      start_time_option: {type: RequestOption, inject_into: request_parameter, field_name: since}
`
	got, _ := rawStreamRead(t, m, nil, "i")
	url := func(day string) string { return a.URL + "/inc?since=" + day + "T00%3A00%3A00Z" }
	page := func(day string) string {
		return jsonPage(url(day), `{"data":[{"id":"`+day+`","updated":"`+day+`T05:00:00Z"}]}`, `[{"id":"`+day+`","updated":"`+day+`T05:00:00Z"}]`)
	}
	failed := strings.Replace(jsonPage(url("2024-01-02"), `{"error":"boom"}`, `[]`), `"status":200`, `"status":400`, 1)
	msg := `stream i: HTTP 400 Bad Request from GET ` + url("2024-01-02") + `: {\"error\":\"boom\"}`
	first := jsonState("i", `{"updated":"2024-01-01T05:00:00Z"}`, 1)
	want := `{"logs":[{"message":"` + msg + `","level":"ERROR","internal_message":"` + msg + `","stacktrace":null}],"slices":[` +
		`{"pages":[` + page("2024-01-01") + `],"slice_descriptor":{"end_time":"2024-01-01T23:59:59Z","start_time":"2024-01-01T00:00:00Z"},"state":[` + first + `],"auxiliary_requests":[]},` +
		`{"pages":[` + failed + `],"slice_descriptor":{"end_time":"2024-01-02T23:59:59Z","start_time":"2024-01-02T00:00:00Z"},"state":[` + first + `],"auxiliary_requests":[]},` +
		`{"pages":[` + page("2024-01-03") + `],"slice_descriptor":{"end_time":"2024-01-03T12:00:00Z","start_time":"2024-01-03T00:00:00Z"},` +
		`"state":[` + jsonState("i", `{"updated":"2024-01-01T05:00:00Z"}`, 0) + `],"auxiliary_requests":[]}],` +
		`"test_read_limit_reached":false,"auxiliary_requests":[`
	if !strings.HasPrefix(got, want) {
		t.Errorf("StreamRead\n got: %s\nwant: %s...", got, want)
	}
	equalLists(t, "requests", a.lines(), []string{"GET " + strings.TrimPrefix(url("2024-01-01"), a.URL),
		"GET " + strings.TrimPrefix(url("2024-01-02"), a.URL), "GET " + strings.TrimPrefix(url("2024-01-03"), a.URL)})
}

// A slice whose request gets no answer (its host cannot be reached) has no
// page, and Airbyte's builder, which groups a test read's slices by the
// pages it logged, shows no such slice: its error is logged, the slices
// around it are shown, and a stream that reads nothing shows no slice at all
// (found on source-pennylane, whose plan_items' host is not the mock's).
func TestTestReadShowsNoSliceWithoutAPage(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		fmt.Fprintf(w, `{"data":[{"id":%q}]}`, r.URL.Path)
	})
	const closed = "http://127.0.0.1:9"
	router := func(urls ...string) string {
		return "partition_router:\n  type: ListPartitionRouter\n  cursor_field: u\n  values: [" + strings.Join(urls, ", ") + "]"
	}
	msg := func(path string) string {
		read := testReadData(t, newConnector(t, stream("s", "url_base: "+a.URL+"\npath: \"{{ stream_partition.u }}\"", "[data]", router(a.URL+"/x", closed+path, a.URL+"/y")), nil, "s"), "s")
		slices := read["slices"].([]any)
		var shown []string
		for _, sl := range slices {
			shown = append(shown, compactJSON(sl.(map[string]any)["slice_descriptor"]))
		}
		equalLists(t, "slices shown", shown, []string{`{"u":"` + a.URL + `/x"}`, `{"u":"` + a.URL + `/y"}`})
		last := compactJSON(slices[1].(map[string]any)["state"])
		if !strings.Contains(last, `{"__ab_no_cursor_state_message":true}`) {
			t.Errorf("the last slice's state: %s", last)
		}
		logs := read["logs"].([]any)
		if len(logs) != 1 {
			t.Fatalf("logs %v", logs)
		}
		return logs[0].(map[string]any)["message"].(string)
	}
	if got := msg("/z"); !strings.Contains(got, "GET "+closed+"/z failed") {
		t.Errorf("the error logged: %s", got)
	}
	read := testReadData(t, newConnector(t, stream("s", "url_base: "+closed+"\npath: /s", "[data]", ""), nil, "s"), "s")
	if got := compactJSON(read["slices"]); got != "[]" {
		t.Errorf("slices %s, want none", got)
	}
	if logs := read["logs"].([]any); len(logs) != 1 {
		t.Errorf("logs %v", logs)
	}
	equalLists(t, "requests", a.lines(), []string{"GET /x", "GET /y"})
}

// test_read_limit_reached is told from the slices shown, as Airbyte's
// builder tells it: max_slices of them reach it, failed ones too (found on
// source-metricool, whose every partition failed on a record).
func TestTestReadFailedSlicesCountForTheLimit(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"error":"no"}`)
	})
	m := routed(a.URL, "/items/{{ stream_partition.p }}", "type: ListPartitionRouter\ncursor_field: p\nvalues: [a, b]", "", "", 1)
	read := testReadData(t, newConnector(t, m, nil, "items"), "items", "--max-slices", "2")
	if n := len(read["slices"].([]any)); n != 2 || read["test_read_limit_reached"] != true {
		t.Errorf("%d slices, test_read_limit_reached %v", n, read["test_read_limit_reached"])
	}
	equalLists(t, "requests", a.lines(), []string{"GET /items/a", "GET /items/b"})
}

// A substream's partitions are made before any is read, at most max_slices
// of them, as in Airbyte's builder: the parent's pages come first, and a
// parent page past the partitions needed is not requested.
func TestTestReadMakesThePartitionsFirst(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		switch r.URL.Path {
		case "/parents":
			page := r.URL.Query().Get("page")
			if page == "" {
				fmt.Fprint(w, `{"data":[{"id":"p1"},{"id":"p2"}],"next":2}`)
				return
			}
			fmt.Fprintf(w, `{"data":[{"id":"p%[1]s1"},{"id":"p%[1]s2"}],"next":%[1]s1}`, page)
		default:
			fmt.Fprint(w, `{"data":[{"id":1}]}`)
		}
	})
	m := stream("c", "url_base: "+a.URL+"\npath: /p/{{ stream_partition.pid }}/c", "[data]", pagedParentRouter(a.URL))
	rawStreamRead(t, m, map[string]any{"__test_read_config": map[string]any{"max_slices": 3}}, "c")
	equalLists(t, "requests", a.lines(), []string{"GET /parents", "GET /parents?page=2", "GET /p/p1/c", "GET /p/p2/c", "GET /p/p21/c"})
}

// A partitioned incremental stream's cursor looks one partition ahead, as the
// CDK's per-partition cursor does, and the substream router one parent
// record ahead, as the CDK's router does: with one parent record a page, the
// two parent pages after the last partition read (max_slices) are requested
// too (Airbyte's runtime requests the same four parent pages).
func TestTestReadPartitionedStreamLooksOnePartitionAhead(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		if r.URL.Path == "/parents" {
			page := r.URL.Query().Get("page")
			if page == "" {
				page = "1"
			}
			fmt.Fprintf(w, `{"data":[{"id":"p%[1]s"}],"next":%[1]s1}`, page)
			return
		}
		fmt.Fprint(w, `{"data":[{"id":1,"updated":"2024-01-01T05:00:00Z"}]}`)
	})
	m := stream("c", "url_base: "+a.URL+"\npath: /p/{{ stream_partition.pid }}/c", "[data]", pagedParentRouter(a.URL)) + `    incremental_sync:
      type: DatetimeBasedCursor
      cursor_field: updated
      datetime_format: "%Y-%m-%dT%H:%M:%SZ"
      start_datetime: "2024-01-01T00:00:00Z"
      end_datetime: "2024-01-01T12:00:00Z"
      step: P1D
      cursor_granularity: PT1S
`
	rawStreamRead(t, m, map[string]any{"__test_read_config": map[string]any{"max_slices": 2}}, "c")
	equalLists(t, "requests", a.lines(), []string{"GET /parents", "GET /parents?page=11", "GET /parents?page=111", "GET /parents?page=1111", "GET /p/p1/c", "GET /p/p11/c"})
}

// parentRouter is a substream router over a parent at /parents (its
// records under data), with the parent's paginator YAML ("" for none).
func parentRouter(url, paginator string) string {
	return `partition_router:
  type: SubstreamPartitionRouter
  parent_stream_configs:
    - type: ParentStreamConfig
      parent_key: id
      partition_field: pid
      stream:
        type: DeclarativeStream
        name: parent
        primary_key: [id]
        retriever:
          type: SimpleRetriever
          requester: {type: HttpRequester, url_base: ` + url + `, path: /parents}
          record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}` + paginator
}

// pagedParentRouter is parentRouter with the parent's pages following the
// answer's next cursor, given as the page parameter.
func pagedParentRouter(url string) string {
	return parentRouter(url, `
          paginator:
            type: DefaultPaginator
            page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}
            pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next }}"}`)
}

// A parent's record that ends its parent partition is handed on as soon as
// that partition is read, before the parent's next partition is made, as
// the CDK's router yields it (one record ahead within a partition): with one
// slice wanted, the grandparent's second page, which only the partition
// after the next would need, is never requested (Airbyte's builder requests
// the same three pages; in a four-level chain the parents' pages came in
// another order: clickup-api's task).
func TestTestReadHandsOnAParentPartitionsLastRecordBeforeReadingTheNext(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		switch {
		case r.URL.Path == "/grands" && r.URL.Query().Get("page") == "2":
			fmt.Fprint(w, `{"data":[{"id":"g4"}]}`)
		case r.URL.Path == "/grands":
			fmt.Fprint(w, `{"data":[{"id":"g1"},{"id":"g2"},{"id":"g3"}],"next":2}`)
		case strings.HasPrefix(r.URL.Path, "/grands/"):
			fmt.Fprintf(w, `{"data":[{"id":"%s-p1"}]}`, strings.Split(r.URL.Path, "/")[2])
		default:
			fmt.Fprint(w, `{"data":[{"id":1}]}`)
		}
	})
	m := grandparentChain(a.URL)
	data, _ := rawStreamRead(t, m, map[string]any{"__test_read_config": map[string]any{"max_slices": 1}}, "c")
	equalLists(t, "requests", a.lines(), []string{"GET /grands", "GET /grands/g1/parents", "GET /p/g1-p1/c"})
	var read runtime.StreamRead
	if err := json.Unmarshal([]byte(data), &read); err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, r := range read.AuxiliaryRequests {
		titles = append(titles, r.Title)
	}
	equalLists(t, "auxiliary requests", titles, []string{"Parent stream: Stream 'grand' request", "Parent stream: Stream 'parent' request"})
}

// Every stream of a test read is bounded as the stream read is, its parents
// too, as Airbyte's builder makes every stream with the limits: a parent
// reads at most max_slices slices (the partitions after them are not made)
// of at most max_pages_per_slice pages each. Here the grandparent stops at
// its fifth page and the parent at its fifth partition, so the parent
// records of the sixth and seventh are never read and the stream has no
// slice (Airbyte's builder makes the same ten requests, in this order:
// mention's mention_tasks read 36 parent pages where it read 22).
func TestTestReadBoundsTheParentsAsTheStream(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		switch {
		case r.URL.Path == "/grands":
			page, _ := strconv.Atoi(r.URL.Query().Get("page"))
			page = max(page, 1)
			next := page + 1
			if page == 7 {
				next = 0
			}
			fmt.Fprintf(w, `{"data":[{"id":"g%d"}],"next":%d}`, page, next)
		case r.URL.Path == "/grands/g6/parents" || r.URL.Path == "/grands/g7/parents":
			fmt.Fprint(w, `{"data":[{"id":"p"}]}`)
		default:
			fmt.Fprint(w, `{"data":[]}`)
		}
	})
	m := grandparentChain(a.URL)
	data, _ := rawStreamRead(t, m, nil, "c")
	equalLists(t, "requests", a.lines(), []string{"GET /grands", "GET /grands?page=2", "GET /grands?page=3",
		"GET /grands/g1/parents", "GET /grands?page=4", "GET /grands/g2/parents", "GET /grands?page=5",
		"GET /grands/g3/parents", "GET /grands/g4/parents", "GET /grands/g5/parents"})
	if !strings.Contains(data, `"slices":[]`) || !strings.Contains(data, `"test_read_limit_reached":false`) {
		t.Errorf("want no slice and the limit not reached, got %.300s", data)
	}
}

// grandparentChain is a stream c whose partitions are the records of a
// stream parent at /grands/{gid}/parents, whose partitions are the records
// of a stream grand at /grands, paginated by its answers' next, given as
// the page parameter (records under data).
func grandparentChain(url string) string {
	return `version: 6.0.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [c]}
definitions:
  grand:
    type: DeclarativeStream
    name: grand
    primary_key: [id]
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: "` + url + `", path: /grands}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
      paginator:
        type: DefaultPaginator
        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}
        pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next }}", stop_condition: "{{ not response.next }}"}
  parent:
    type: DeclarativeStream
    name: parent
    primary_key: [id]
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: "` + url + `", path: "/grands/{{ stream_partition.gid }}/parents"}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
      partition_router:
        type: SubstreamPartitionRouter
        parent_stream_configs:
          - {type: ParentStreamConfig, parent_key: id, partition_field: gid, stream: {$ref: "#/definitions/grand"}}
streams:
  - type: DeclarativeStream
    name: c
    primary_key: [id]
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: "` + url + `", path: "/p/{{ stream_partition.pid }}/c"}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
      partition_router:
        type: SubstreamPartitionRouter
        parent_stream_configs:
          - {type: ParentStreamConfig, parent_key: id, partition_field: pid, stream: {$ref: "#/definitions/parent"}}
`
}

// Under a refresh token updater the access token lives in the config, which
// every authenticator of the connector reads, as the CDK's do: the token the
// parent's authenticator obtained and wrote there is the child's too while it
// has not expired, so a test read obtains one token (Airbyte's builder makes
// the same four requests; convertkit's substreams showed a second refresh).
func TestTestReadRotatedTokenServesEveryAuthenticator(t *testing.T) {
	tokens := 0
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		switch r.URL.Path {
		case "/oauth/token":
			tokens++
			fmt.Fprintf(w, `{"access_token":"tok-%d","refresh_token":"r%d","expires_in":3600}`, tokens, tokens)
		case "/parents":
			fmt.Fprint(w, `{"data":[{"id":"p1"},{"id":"p2"}]}`)
		default:
			fmt.Fprint(w, `{"data":[{"id":1}]}`)
		}
	})
	auth := `authenticator:
  type: OAuthAuthenticator
  token_refresh_endpoint: "` + a.URL + `/oauth/token"
  client_id: "{{ config.credentials.client_id }}"
  client_secret: "{{ config.credentials.client_secret }}"
  refresh_token: "{{ config.credentials.refresh_token }}"
  refresh_token_updater:
    access_token_config_path: [credentials, access_token]
    refresh_token_config_path: [credentials, refresh_token]
    token_expiry_date_config_path: [credentials, expires_at]`
	m := stream("c", "url_base: "+a.URL+"\npath: /p/{{ stream_partition.pid }}/c\n"+auth, "[data]", `partition_router:
  type: SubstreamPartitionRouter
  parent_stream_configs:
    - type: ParentStreamConfig
      parent_key: id
      partition_field: pid
      stream:
        type: DeclarativeStream
        name: parent
        primary_key: [id]
        retriever:
          type: SimpleRetriever
          requester:
            type: HttpRequester
            url_base: `+a.URL+`
            path: /parents
`+indent(auth, 12)+`
          record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}`)
	cfg := map[string]any{"credentials": map[string]any{"client_id": "cid", "client_secret": "cs", "refresh_token": "r0",
		"access_token": "old", "expires_at": "2020-01-01T00:00:00Z"}}
	rawStreamRead(t, m, cfg, "c")
	equalLists(t, "requests", a.lines(), []string{"POST /oauth/token", "GET /parents", "GET /p/p1/c", "GET /p/p2/c"})
	for _, r := range a.requests()[1:] {
		if got := r.Header.Get("Authorization"); got != "Bearer tok-1" {
			t.Errorf("%s: Authorization %q, want the rotated token", r.Path, got)
		}
	}
}

// A test read shows a record without fields as any other, with the state
// the stream writes at its end and the schema inferred from it (Airbyte's
// builder ends the read at such a record: no record, no state, no schema).
func TestTestReadShowsAnEmptyRecord(t *testing.T) {
	a := fixedAPI(t, `{"data":[{}]}`)
	m := `version: 6.0.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [items]}
streams:
  - type: DeclarativeStream
    name: items
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: "` + a.URL + `", path: /items}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
`
	got, _ := rawStreamRead(t, m, nil, "items")
	want := `{"logs":[],"slices":[{"pages":[` + jsonPage(a.URL+"/items", `{"data":[{}]}`, `[{}]`) + `],"slice_descriptor":"{}",` +
		`"state":[` + jsonState("items", `{"__ab_no_cursor_state_message":true}`, 1) + `],"auxiliary_requests":[]}],` +
		`"test_read_limit_reached":false,"auxiliary_requests":[],` +
		`"inferred_schema":{"$schema":"http://json-schema.org/schema#","type":"object"},"inferred_datetime_formats":{}}`
	if got != want {
		t.Errorf("StreamRead\n got: %s\nwant: %s", got, want)
	}
}

// A partition of several slices writes the stream's first state when its
// first slice is read, as the CDK's per-partition cursor tries to write one
// whenever a slice closes (at most one in ten minutes): the partition's
// cursor at its first slice, and no parent_state, which only a partition
// read to its end commits (checked with refcdk7's builder).
func TestTestReadPartitionOfSlicesStatesAfterItsFirstSlice(t *testing.T) {
	gotSlices := partitionStates(t, `      step: PT6H
      cursor_granularity: PT1S
`)
	cursor := func(id, at string) string {
		return `{"cursor":{"updated":"2024-01-01T` + at + `:00:00Z"},"partition":{"parent_slice":{},"pid":"` + id + `"}}`
	}
	first := `[` + jsonState("c", `{"lookback_window":0,"states":[`+cursor("p1", "05")+`,`+cursor("p2", "00")+`,`+cursor("p3", "00")+`],"use_global_cursor":false}`, 1) + `]`
	last := `[` + jsonState("c", `{"lookback_window":1,"parent_state":{},"state":{"updated":"2024-01-01T05:00:00Z"},"states":[`+cursor("p1", "05")+`,`+cursor("p2", "05")+`,`+cursor("p3", "05")+`],"use_global_cursor":false}`, 4) + `]`
	// The builder reads five slices: two of p1, two of p2, one of p3.
	equalLists(t, "slices and their states", gotSlices, []string{"p1 " + first, "p1 " + first, "p2 " + first, "p2 " + first, "p3 " + last})
}
