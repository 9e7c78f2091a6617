package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// incrementalStream is a one-stream manifest whose stream "items" reads
// /items with the given incremental_sync and paginator (YAML, unindented),
// one slice at a time (concurrency_level 1), so that the states written
// after each slice come in the slices' order.
func incrementalStream(url, incremental, paginator string) string {
	return fmt.Sprintf(`version: 6.0.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [items]}
concurrency_level: {type: ConcurrencyLevel, default_concurrency: 1}
streams:
  - type: DeclarativeStream
    name: items
    primary_key: [id]
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: %q, path: /items}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
%s
    incremental_sync:
%s
`, url, indent(paginator, 6), indent(incremental, 6))
}

// incrementalConnector writes the files of a run whose catalog reads the
// streams incrementally.
func incrementalConnector(t *testing.T, manifestYAML string, config map[string]any, streams ...string) *connector {
	c := newConnector(t, manifestYAML, config)
	var cs []string
	for _, s := range streams {
		cs = append(cs, fmt.Sprintf(`{"stream":{"name":%q,"json_schema":{},"supported_sync_modes":["full_refresh","incremental"]},"sync_mode":"incremental","destination_sync_mode":"append"}`, s))
	}
	c.catalog = writeFile(t, c.dir, "catalog.json", `{"streams":[`+strings.Join(cs, ",")+`]}`)
	return c
}

// states lists the STATE messages printed, as compact JSON.
func (r result) states() []string {
	var out []string
	for _, m := range r.ofType("STATE") {
		b, _ := json.Marshal(m["state"])
		out = append(out, string(b))
	}
	return out
}

// itemState is the STATE message of stream items.
func itemState(state string, count int) string {
	return fmt.Sprintf(`{"sourceStats":{"recordCount":%d},"stream":{"stream_descriptor":{"name":"items"},"stream_state":%s},"type":"STREAM"}`, count, state)
}

// datedAPI serves records stamped updated_at, filtered by the since and
// until query parameters (inclusive) when they are given.
func datedAPI(t *testing.T, stamps ...string) *api {
	return newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		q := r.URL.Query()
		var out []string
		for i, s := range stamps {
			if (q.Get("since") != "" && s < q.Get("since")) || (q.Get("until") != "" && s > q.Get("until")) {
				continue
			}
			out = append(out, fmt.Sprintf(`{"id":%d,"updated_at":%q}`, i+1, s))
		}
		fmt.Fprintf(w, `{"data":[%s]}`, strings.Join(out, ","))
	})
}

const dailyCursor = `type: DatetimeBasedCursor
cursor_field: updated_at
datetime_format: "%Y-%m-%dT%H:%M:%SZ"
start_datetime: "2024-01-01T00:00:00Z"
end_datetime: "2024-01-03T12:00:00Z"
step: P1D
cursor_granularity: PT1S
start_time_option: {type: RequestOption, inject_into: request_parameter, field_name: since}
end_time_option: {type: RequestOption, inject_into: request_parameter, field_name: until}`

func q(s string) string { return url.QueryEscape(s) }

func TestDailySlicesWithSecondGranularity(t *testing.T) {
	a := datedAPI(t, "2024-01-01T10:00:00Z", "2024-01-01T23:59:59Z", "2024-01-02T00:00:00Z", "2024-01-03T11:00:00Z", "2024-01-03T13:00:00Z")
	c := incrementalConnector(t, incrementalStream(a.URL, dailyCursor, ""), nil, "items")
	res := c.read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{
		"GET /items?since=" + q("2024-01-01T00:00:00Z") + "&until=" + q("2024-01-01T23:59:59Z"),
		"GET /items?since=" + q("2024-01-02T00:00:00Z") + "&until=" + q("2024-01-02T23:59:59Z"),
		"GET /items?since=" + q("2024-01-03T00:00:00Z") + "&until=" + q("2024-01-03T12:00:00Z"),
	})
	equalLists(t, "records", res.records("items"), []string{
		`{"id":1,"updated_at":"2024-01-01T10:00:00Z"}`, `{"id":2,"updated_at":"2024-01-01T23:59:59Z"}`,
		`{"id":3,"updated_at":"2024-01-02T00:00:00Z"}`, `{"id":4,"updated_at":"2024-01-03T11:00:00Z"}`,
	})
	equalLists(t, "states", res.states(), []string{
		itemState(`{"updated_at":"2024-01-01T23:59:59Z"}`, 2),
		itemState(`{"updated_at":"2024-01-02T00:00:00Z"}`, 1),
		itemState(`{"updated_at":"2024-01-03T11:00:00Z"}`, 1),
	})
	equalLists(t, "statuses", res.statuses("items"), []string{"STARTED", "RUNNING", "COMPLETE"})
	// The state message follows the records it covers.
	var order []string
	for _, m := range res.msgs {
		if m["type"] == "RECORD" || m["type"] == "STATE" {
			order = append(order, m["type"].(string))
		}
	}
	equalLists(t, "order", order, []string{"RECORD", "RECORD", "STATE", "RECORD", "STATE", "RECORD", "STATE"})
}

func TestWeeklySlicesWithDayGranularity(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) { fmt.Fprint(w, `{"data":[]}`) })
	cursor := `type: DatetimeBasedCursor
cursor_field: day
datetime_format: "%Y-%m-%d"
start_datetime: "2024-01-01"
end_datetime: {type: MinMaxDatetime, datetime: "2024-01-20T12:00:00Z", datetime_format: "%Y-%m-%dT%H:%M:%SZ"}
step: P7D
cursor_granularity: P1D
start_time_option: {type: RequestOption, inject_into: request_parameter, field_name: from}
end_time_option: {type: RequestOption, inject_into: request_parameter, field_name: to}`
	c := incrementalConnector(t, incrementalStream(a.URL, cursor, ""), nil, "items")
	res := c.read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{
		"GET /items?from=2024-01-01&to=2024-01-07",
		"GET /items?from=2024-01-08&to=2024-01-14",
		"GET /items?from=2024-01-15&to=2024-01-20",
	})
	// Nothing found: every state is the start, written once.
	equalLists(t, "states", res.states(), []string{itemState(`{"day":"2024-01-01"}`, 0)})
}

func TestStateResumesWithLookback(t *testing.T) {
	a := datedAPI(t, "2024-01-03T07:00:00Z", "2024-01-05T08:00:00Z")
	cursor := strings.Replace(dailyCursor, `end_datetime: "2024-01-03T12:00:00Z"`, `end_datetime: "2024-01-06T00:00:00Z"`, 1) + "\nlookback_window: P2D"
	c := incrementalConnector(t, incrementalStream(a.URL, cursor, ""), nil, "items")
	state := writeFile(t, c.dir, "state.json", `[{"type":"STREAM","stream":{"stream_descriptor":{"name":"items"},"stream_state":{"updated_at":"2024-01-05T06:00:00Z"}}}]`)
	res := c.read(t, "--state", state)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{
		"GET /items?since=" + q("2024-01-03T06:00:00Z") + "&until=" + q("2024-01-04T05:59:59Z"),
		"GET /items?since=" + q("2024-01-04T06:00:00Z") + "&until=" + q("2024-01-05T05:59:59Z"),
		"GET /items?since=" + q("2024-01-05T06:00:00Z") + "&until=" + q("2024-01-06T00:00:00Z"),
	})
	// The lookback reads the older record again; the state never goes back,
	// and a state unchanged with no record since is not written twice.
	equalLists(t, "states", res.states(), []string{
		itemState(`{"updated_at":"2024-01-05T06:00:00Z"}`, 1),
		itemState(`{"updated_at":"2024-01-05T08:00:00Z"}`, 1),
	})
}

func TestFailureInThirdSliceLeavesTheSecondSliceState(t *testing.T) {
	failing := true
	stamps := []string{"2024-01-01T05:00:00Z", "2024-01-02T05:00:00Z", "2024-01-03T05:00:00Z"}
	inner := datedAPI(t, stamps...)
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		if failing && strings.HasPrefix(r.URL.Query().Get("since"), "2024-01-03") {
			w.WriteHeader(500)
			fmt.Fprint(w, `{"error":"boom"}`)
			return
		}
		resp, err := http.Get(inner.URL + r.URL.RequestURI())
		if err != nil {
			t.Error(err)
			return
		}
		defer resp.Body.Close()
		var body json.RawMessage
		json.NewDecoder(resp.Body).Decode(&body)
		w.Write(body)
	})
	noRetry := strings.Replace(incrementalStream(a.URL, dailyCursor, ""), "path: /items}", "path: /items, error_handler: {type: DefaultErrorHandler, max_retries: 0}}", 1)
	c := incrementalConnector(t, noRetry, nil, "items")
	res := c.read(t)
	if res.code != 1 {
		t.Fatalf("exit %d, want 1: %s", res.code, res.stdout)
	}
	states := res.states()
	equalLists(t, "states", states, []string{
		itemState(`{"updated_at":"2024-01-01T05:00:00Z"}`, 1),
		itemState(`{"updated_at":"2024-01-02T05:00:00Z"}`, 1),
	})
	equalLists(t, "statuses", res.statuses("items"), []string{"STARTED", "RUNNING", "INCOMPLETE"})

	// The next sync starts from the last state and reads the third day.
	failing = false
	var last map[string]any
	json.Unmarshal([]byte(states[len(states)-1]), &last)
	delete(last, "sourceStats")
	b, _ := json.Marshal([]any{last})
	state := writeFile(t, c.dir, "state.json", string(b))
	before := len(a.requests())
	res = c.read(t, "--state", state)
	if res.code != 0 {
		t.Fatalf("resume: exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "resumed requests", a.lines()[before:], []string{
		"GET /items?since=" + q("2024-01-02T05:00:00Z") + "&until=" + q("2024-01-03T04:59:59Z"),
		"GET /items?since=" + q("2024-01-03T05:00:00Z") + "&until=" + q("2024-01-03T12:00:00Z"),
	})
	// The boundary record comes again (both bounds are inclusive); nothing is lost.
	equalLists(t, "resumed records", res.records("items"), []string{
		`{"id":2,"updated_at":"2024-01-02T05:00:00Z"}`, `{"id":3,"updated_at":"2024-01-03T05:00:00Z"}`,
	})
	equalLists(t, "resumed states", res.states(), []string{
		itemState(`{"updated_at":"2024-01-02T05:00:00Z"}`, 1),
		itemState(`{"updated_at":"2024-01-03T05:00:00Z"}`, 1),
	})
}

func TestEmptySyncWritesTheIncomingState(t *testing.T) {
	a := datedAPI(t)
	c := incrementalConnector(t, incrementalStream(a.URL, dailyCursor, ""), nil, "items")
	res := c.read(t)
	equalLists(t, "first read", res.states(), []string{itemState(`{"updated_at":"2024-01-01T00:00:00Z"}`, 0)})
	// A state at the end: no slice, no request, the state again (with its other keys).
	state := writeFile(t, c.dir, "state.json", `[{"type":"STREAM","stream":{"stream_descriptor":{"name":"items"},"stream_state":{"updated_at":"2024-01-03T12:00:00Z","note":"kept"}}}]`)
	before := len(a.requests())
	res = c.read(t, "--state", state)
	if res.code != 0 || len(a.requests()) != before {
		t.Fatalf("exit %d, %d requests: %s", res.code, len(a.requests())-before, res.stdout)
	}
	equalLists(t, "state at the end", res.states(), []string{itemState(`{"note":"kept","updated_at":"2024-01-03T12:00:00Z"}`, 0)})
	equalLists(t, "statuses", res.statuses("items"), []string{"STARTED", "RUNNING", "COMPLETE"})
}

func TestStateFileForms(t *testing.T) {
	a := datedAPI(t)
	first := "GET /items?since=" + q("2024-01-02T10:00:00Z") + "&until=" + q("2024-01-03T09:59:59Z")
	for name, file := range map[string]string{
		"stream":  `[{"type":"STREAM","stream":{"stream_descriptor":{"name":"items"},"stream_state":{"updated_at":"2024-01-02T10:00:00Z"}}},{"type":"STREAM","stream":{"stream_descriptor":{"name":"other"},"stream_state":{"x":1}}}]`,
		"untyped": `[{"stream":{"stream_descriptor":{"name":"items"},"stream_state":{"updated_at":"2024-01-02T10:00:00Z"}}}]`,
		// Matched by name and namespace: a namespaced state is not this stream's.
		"namespaced": `[{"type":"STREAM","stream":{"stream_descriptor":{"name":"items","namespace":"ns"},"stream_state":{"updated_at":"2023-01-01T00:00:00Z","x":1}}},{"type":"STREAM","stream":{"stream_descriptor":{"name":"items"},"stream_state":{"updated_at":"2024-01-02T10:00:00Z"}}}]`,
		"global":     `[{"type":"GLOBAL","global":{"shared_state":{},"stream_states":[{"stream_descriptor":{"name":"items"},"stream_state":{"updated_at":"2024-01-02T10:00:00Z"}}]}}]`,
		"legacy":     `[{"type":"LEGACY","data":{"items":{"updated_at":"2024-01-02T10:00:00Z"}}}]`,
		"dict":       `{"items":{"updated_at":"2024-01-02T10:00:00Z"}}`,
		"date-range": `[{"type":"STREAM","stream":{"stream_descriptor":{"name":"items"},"stream_state":{"state_type":"date-range","slices":[{"start":"2024-01-01T00:00:00Z","end":"2024-01-02T10:00:00Z"}]}}}]`,
	} {
		t.Run(name, func(t *testing.T) {
			c := incrementalConnector(t, incrementalStream(a.URL, dailyCursor, ""), nil, "items")
			before := len(a.requests())
			res := c.read(t, "--state", writeFile(t, c.dir, "state.json", file))
			if res.code != 0 {
				t.Fatalf("exit %d: %s", res.code, res.stdout)
			}
			lines := a.lines()[before:]
			if len(lines) != 2 || lines[0] != first {
				t.Errorf("requests %q, want the first to be %q", lines, first)
			}
			equalLists(t, "states", res.states(), []string{itemState(`{"updated_at":"2024-01-02T10:00:00Z"}`, 0)})
		})
	}
}

func TestBadStateFilesStopBeforeReading(t *testing.T) {
	a := datedAPI(t, "2024-01-01T10:00:00Z")
	for _, tc := range []struct{ file, want string }{
		{``, "the state file is empty: it must hold a JSON array of state messages ([] for none)"},
		{`[{"type":"STREAM"`, "the state file is not valid JSON"},
		{`"items"`, `the state file must hold a JSON array of state messages, got the string "items"`},
		{`{"type":"STREAM","stream":{}}`, "the state file holds one state message: write it inside a JSON array, [{...}]"},
		{`[{"type":"STREAM","stream":{"stream_descriptor":{},"stream_state":{}}}]`, "state file element [0].stream.stream_descriptor.name is required"},
		{`[{"hello":1}]`, "state file element [0] has none of stream, global or data"},
		{`[{"type":"STREAM","stream":{"stream_descriptor":{"name":"items"},"stream_state":[1]}}]`, "the state of stream items must be an object, got a list"},
		{`[{"type":"GLOBAL","global":{"shared_state":{"lsn":1},"stream_states":[]}}]`, "state file element [0].global.shared_state is not empty"},
		{`[{"type":"STREAM","stream":{"stream_descriptor":{"name":"items"},"stream_state":{"updated_at":"yesterday"}}}]`,
			`stream items: the state's updated_at value "yesterday" matches none of the formats %Y-%m-%dT%H:%M:%SZ`},
		{`[{"type":"STREAM","stream":{"stream_descriptor":{"name":"items"},"stream_state":{"updated_at":{"a":1}}}}]`,
			"stream items: the state's updated_at is an object, not a date"},
		{`{"items":{"updated_at":"2024-01-01T00:00:00Z"},"other":3}`, "the state of stream other must be an object, got the number 3"},
	} {
		c := incrementalConnector(t, incrementalStream(a.URL, dailyCursor, ""), nil, "items")
		res := c.read(t, "--state", writeFile(t, c.dir, "state.json", tc.file))
		errs := res.errors()
		if res.code != 1 || len(errs) != 1 || errs[0]["failure_type"] != "config_error" || !strings.Contains(errs[0]["message"].(string), tc.want) {
			t.Errorf("%s: exit %d, errors %v, want %q", tc.file, res.code, errs, tc.want)
		}
		if len(res.ofType("RECORD"))+len(res.ofType("STATE")) > 0 || len(res.statuses("items")) > 0 {
			t.Errorf("%s: something was read: %s", tc.file, res.stdout)
		}
	}
	if n := len(a.requests()); n != 0 {
		t.Errorf("%d requests were sent", n)
	}
}

func TestInjectionPlaces(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) { fmt.Fprint(w, `{"data":[]}`) })
	base := `type: DatetimeBasedCursor
cursor_field: updated_at
datetime_format: "%s"
start_datetime: {type: MinMaxDatetime, datetime: "2024-01-01T00:00:00Z", datetime_format: "%Y-%m-%dT%H:%M:%SZ"}
end_datetime: {type: MinMaxDatetime, datetime: "2024-01-02T00:00:00Z", datetime_format: "%Y-%m-%dT%H:%M:%SZ"}
`
	for _, tc := range []struct {
		options, method, wantQuery, wantBody, wantHeader string
	}{
		{`start_time_option: {type: RequestOption, inject_into: header, field_name: X-Since}
end_time_option: {type: RequestOption, inject_into: header, field_name: X-Until}`, "GET", "", "", "1704067200 1704153600"},
		{`start_time_option: {type: RequestOption, inject_into: body_json, field_path: [filter, range, gte]}
end_time_option: {type: RequestOption, inject_into: body_json, field_path: [filter, range, lte]}`, "POST", "", `{"filter":{"range":{"gte":"1704067200","lte":"1704153600"}}}`, ""},
		{`start_time_option: {type: RequestOption, inject_into: body_data, field_name: from}
end_time_option: {type: RequestOption, inject_into: body_data, field_name: to}`, "POST", "", "from=1704067200&to=1704153600", ""},
		{`start_time_option: {type: RequestOption, inject_into: request_parameter, field_name: from}`, "GET", "from=1704067200", "", ""},
	} {
		m := incrementalStream(a.URL, base+tc.options, "")
		m = strings.Replace(m, "path: /items}", "path: /items, http_method: "+tc.method+"}", 1)
		c := incrementalConnector(t, m, nil, "items")
		before := len(a.requests())
		res := c.read(t)
		reqs := a.requests()[before:]
		if res.code != 0 || len(reqs) != 1 {
			t.Fatalf("%s: exit %d, %d requests: %s", tc.options, res.code, len(reqs), res.stdout)
		}
		r := reqs[0]
		header := strings.TrimSpace(r.Header.Get("X-Since") + " " + r.Header.Get("X-Until"))
		if r.Method != tc.method || r.Query != tc.wantQuery || r.Body != tc.wantBody || header != tc.wantHeader {
			t.Errorf("%s:\n got %s ?%s body %q headers %q\nwant %s ?%s body %q headers %q", tc.options, r.Method, r.Query, r.Body, header, tc.method, tc.wantQuery, tc.wantBody, tc.wantHeader)
		}
		equalLists(t, "state", res.states(), []string{itemState(`{"updated_at":"1704067200"}`, 0)})
	}
}

func TestSliceOptionCollidingWithRequesterIsAnError(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) { fmt.Fprint(w, `{"data":[]}`) })
	m := strings.Replace(incrementalStream(a.URL, dailyCursor, ""), "path: /items}", `path: /items, request_parameters: {since: "x"}}`, 1)
	res := incrementalConnector(t, m, nil, "items").read(t)
	errs := res.errors()
	if res.code != 1 || len(errs) == 0 || !strings.Contains(errs[0]["message"].(string), `streams[0].incremental_sync.start_time_option: query parameter "since" is set twice`) {
		t.Errorf("exit %d: %v", res.code, errs)
	}
	if len(a.requests()) != 0 {
		t.Errorf("a request was sent")
	}
}

func TestSliceInTemplates(t *testing.T) {
	a := datedAPI(t, "2024-01-01T10:00:00Z", "2024-01-02T10:00:00Z", "2024-01-02T11:00:00Z")
	cursor := strings.Replace(dailyCursor, `end_datetime: "2024-01-03T12:00:00Z"`, `end_datetime: "2024-01-02T23:59:59Z"`, 1) + `
partition_field_start: from
partition_field_end: to`
	m := incrementalStream(a.URL, cursor, "")
	m = strings.Replace(m, "path: /items}", `path: "/items", request_headers: {X-Window: "{{ stream_interval.from }}/{{ stream_slice['to'] }}/{{ stream_partition.to }}"}}`, 1)
	m = strings.Replace(m, "field_path: [data]}}", `field_path: [data]}, record_filter: {type: RecordFilter, condition: "{{ record.updated_at != stream_interval.from[:10] ~ 'T11:00:00Z' }}"}}`, 1)
	res := incrementalConnector(t, m, nil, "items").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	var windows []string
	for _, r := range a.requests() {
		windows = append(windows, r.Header.Get("X-Window"))
	}
	equalLists(t, "windows", windows, []string{"2024-01-01T00:00:00Z/2024-01-01T23:59:59Z/2024-01-01T23:59:59Z", "2024-01-02T00:00:00Z/2024-01-02T23:59:59Z/2024-01-02T23:59:59Z"})
	equalLists(t, "records", res.records("items"), []string{`{"id":1,"updated_at":"2024-01-01T10:00:00Z"}`, `{"id":2,"updated_at":"2024-01-02T10:00:00Z"}`})
}

// TestStreamStateIsRefusedWhenEvaluated: a template holding stream_state
// fails where Airbyte's runtime fails it, when it is evaluated (a
// config_error in the CDK's words, before its request is sent): the
// manifest loads, discover lists the stream, check reports it not
// available, and a read fails the stream (open-exchange-rates' path).
func TestStreamStateIsRefusedWhenEvaluated(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) { fmt.Fprint(w, `{"data":[]}`) })
	m := strings.Replace(incrementalStream(a.URL, dailyCursor, ""), "path: /items}", `path: /items, request_parameters: {since: "{{ stream_state.updated_at }}"}}`, 1)
	c := incrementalConnector(t, m, nil, "items")
	const refusal = "streams[0].retriever.requester.request_parameters.since: `stream_state` is no longer supported for interpolation. We recommend using `stream_interval` instead. Please reference the CDK Migration Guide for more information."
	res := runCLI(t, "discover", "--manifest", c.manifest, "--config", c.config)
	if res.code != 0 || len(res.ofType("CATALOG")) != 1 {
		t.Fatalf("discover: exit %d: %s", res.code, res.stdout)
	}
	res = c.check(t)
	statuses := res.ofType("CONNECTION_STATUS")
	if res.code != 0 || len(statuses) != 1 || statuses[0]["connectionStatus"].(map[string]any)["status"] != "FAILED" ||
		!strings.Contains(fmt.Sprint(statuses[0]["connectionStatus"]), refusal) {
		t.Fatalf("check: exit %d: %s", res.code, res.stdout)
	}
	res = c.read(t)
	errs := res.errors()
	if res.code != 1 || len(errs) == 0 || errs[0]["message"] != "stream items: "+refusal || errs[0]["failure_type"] != "config_error" {
		t.Errorf("read: exit %d: %v", res.code, errs)
	}
	equalLists(t, "requests", a.lines(), nil)
}

func TestClientSideIncrementalFilters(t *testing.T) {
	// The API ignores the window and returns everything.
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		fmt.Fprint(w, `{"data":[{"id":1,"updated_at":"2023-12-31T23:59:59Z"},{"id":2,"updated_at":"2024-01-02T10:00:00Z"},{"id":3},{"id":4,"updated_at":"2024-01-03T12:00:00Z"},{"id":5,"updated_at":"2024-01-04T00:00:00Z"}]}`)
	})
	cursor := `type: DatetimeBasedCursor
cursor_field: updated_at
datetime_format: "%Y-%m-%dT%H:%M:%SZ"
start_datetime: "2024-01-01T00:00:00Z"
end_datetime: "2024-01-03T12:00:00Z"
is_client_side_incremental: true`
	c := incrementalConnector(t, incrementalStream(a.URL, cursor, ""), nil, "items")
	state := writeFile(t, c.dir, "state.json", `[{"type":"STREAM","stream":{"stream_descriptor":{"name":"items"},"stream_state":{"updated_at":"2024-01-02T10:00:00Z"}}}]`)
	res := c.read(t, "--state", state)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	// Inside [state, end], both included; a record without cursor is kept.
	equalLists(t, "records", res.records("items"), []string{`{"id":2,"updated_at":"2024-01-02T10:00:00Z"}`, `{"id":3}`, `{"id":4,"updated_at":"2024-01-03T12:00:00Z"}`})
	equalLists(t, "states", res.states(), []string{itemState(`{"updated_at":"2024-01-03T12:00:00Z"}`, 3)})
	warnings := 0
	for _, m := range res.ofType("LOG") {
		if l := m["log"].(map[string]any); l["level"] == "WARN" && l["message"] == "stream items: a record has no updated_at; such records are emitted but do not move the state" {
			warnings++
		}
	}
	if warnings != 1 {
		t.Errorf("%d warnings about the record without cursor, want 1: %s", warnings, res.stdout)
	}
}

func TestDataFeedStopsAtTheFirstOlderPage(t *testing.T) {
	pages := map[string]string{
		"":   `{"data":[{"id":9,"updated_at":"2024-01-09T00:00:00Z"},{"id":8,"updated_at":"2024-01-08T00:00:00Z"}],"next":"p2"}`,
		"p2": `{"data":[{"id":7,"updated_at":"2024-01-07T00:00:00Z"},{"id":6,"updated_at":"2024-01-06T00:00:00Z"}],"next":"p3"}`,
		"p3": `{"data":[{"id":5,"updated_at":"2024-01-05T12:00:00Z"},{"id":4,"updated_at":"2024-01-04T00:00:00Z"}],"next":"p4"}`,
		"p4": `{"data":[{"id":3,"updated_at":"2024-01-03T00:00:00Z"}],"next":null}`,
	}
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		fmt.Fprint(w, pages[r.URL.Query().Get("cursor")])
	})
	cursor := `type: DatetimeBasedCursor
cursor_field: updated_at
datetime_format: "%Y-%m-%dT%H:%M:%SZ"
start_datetime: "2024-01-01T00:00:00Z"
end_datetime: "2024-01-10T00:00:00Z"
is_data_feed: true`
	paginator := `paginator:
  type: DefaultPaginator
  page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: cursor}
  pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next }}", stop_condition: "{{ response.next is none }}"}`
	c := incrementalConnector(t, incrementalStream(a.URL, cursor, paginator), nil, "items")
	state := writeFile(t, c.dir, "state.json", `[{"type":"STREAM","stream":{"stream_descriptor":{"name":"items"},"stream_state":{"updated_at":"2024-01-05T00:00:00Z"}}}]`)
	res := c.read(t, "--state", state)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{"GET /items", "GET /items?cursor=p2", "GET /items?cursor=p3"})
	equalLists(t, "records", res.records("items"), []string{
		`{"id":9,"updated_at":"2024-01-09T00:00:00Z"}`, `{"id":8,"updated_at":"2024-01-08T00:00:00Z"}`,
		`{"id":7,"updated_at":"2024-01-07T00:00:00Z"}`, `{"id":6,"updated_at":"2024-01-06T00:00:00Z"}`,
		`{"id":5,"updated_at":"2024-01-05T12:00:00Z"}`,
	})
	equalLists(t, "states", res.states(), []string{itemState(`{"updated_at":"2024-01-09T00:00:00Z"}`, 5)})
}

func TestIncrementingCountCursor(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		fmt.Fprint(w, `{"data":[{"id":12,"seq":12},{"id":15,"seq":15},{"id":14,"seq":"14"}]}`)
	})
	cursor := `type: IncrementingCountCursor
cursor_field: seq
start_value: "{{ config['first'] }}"
start_value_option: {type: RequestOption, inject_into: request_parameter, field_name: after}`
	c := incrementalConnector(t, incrementalStream(a.URL, cursor, ""), map[string]any{"first": "10"}, "items")
	res := c.read(t)
	equalLists(t, "first read", res.states(), []string{itemState(`{"seq":15}`, 3)})
	res = c.read(t, "--state", writeFile(t, c.dir, "state.json", `[{"type":"STREAM","stream":{"stream_descriptor":{"name":"items"},"stream_state":{"seq":15}}}]`))
	equalLists(t, "requests", a.lines(), []string{"GET /items?after=10", "GET /items?after=15"})
	equalLists(t, "second read", res.states(), []string{itemState(`{"seq":15}`, 3)})
}

func TestSyncModes(t *testing.T) {
	a := datedAPI(t, "2024-01-02T10:00:00Z")
	m := incrementalStream(a.URL, dailyCursor, "")
	m += `  - type: DeclarativeStream
    name: plain
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: "` + a.URL + `", path: /plain}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
`
	c := incrementalConnector(t, m, nil)
	res := runCLI(t, "discover", "--manifest", c.manifest, "--config", c.config)
	want := `{"type":"CATALOG","catalog":{"streams":[` +
		`{"name":"items","json_schema":{},"supported_sync_modes":["full_refresh","incremental"],"source_defined_cursor":true,"default_cursor_field":["updated_at"],"source_defined_primary_key":[["id"]],"is_resumable":true,"is_file_based":false},` +
		`{"name":"plain","json_schema":{},"supported_sync_modes":["full_refresh"],"is_resumable":false,"is_file_based":false}]}}` + "\n"
	if res.code != 0 || res.stdout != want {
		t.Errorf("discover:\n got: %s\nwant: %s", res.stdout, want)
	}

	// incremental for a stream without cursor: refused before anything is read.
	bad := incrementalConnector(t, m, nil, "items", "plain")
	res = bad.read(t)
	errs := res.errors()
	if res.code != 1 || len(errs) != 1 || errs[0]["message"] != "stream plain is configured with sync_mode incremental, but it has no incremental_sync in the manifest: configure it as full_refresh" || len(a.requests()) != 0 {
		t.Errorf("exit %d, %d requests: %v", res.code, len(a.requests()), errs)
	}

	// full_refresh reads an incremental stream from the start, whatever the state.
	full := newConnector(t, m, nil, "items")
	res = full.read(t, "--state", writeFile(t, full.dir, "state.json", `[{"type":"STREAM","stream":{"stream_descriptor":{"name":"items"},"stream_state":{"updated_at":"2024-01-03T00:00:00Z"}}}]`))
	if res.code != 0 || len(a.requests()) != 3 || !strings.HasPrefix(a.lines()[0], "GET /items?since="+q("2024-01-01T00:00:00Z")) {
		t.Errorf("full refresh: exit %d, requests %q", res.code, a.lines())
	}
}

func TestUnreadableRecordCursorWarnsOnce(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		fmt.Fprint(w, `{"data":[{"id":1,"updated_at":"2024-01-01 10:00"},{"id":2,"updated_at":"03/01/2024"},{"id":3,"updated_at":"2024-01-01T09:00:00Z"}]}`)
	})
	cursor := `type: DatetimeBasedCursor
cursor_field: updated_at
datetime_format: "%Y-%m-%dT%H:%M:%SZ"
cursor_datetime_formats: ["%Y-%m-%dT%H:%M:%S.%fZ", "%Y-%m-%d %H:%M"]
start_datetime: "2024-01-01T00:00:00Z"
end_datetime: "2024-01-02T00:00:00Z"`
	res := incrementalConnector(t, incrementalStream(a.URL, cursor, ""), nil, "items").read(t)
	if res.code != 0 || len(res.records("items")) != 3 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	// The second format read "2024-01-01 10:00"; the state is written in datetime_format.
	equalLists(t, "states", res.states(), []string{itemState(`{"updated_at":"2024-01-01T10:00:00Z"}`, 3)})
	var warns []string
	for _, m := range res.ofType("LOG") {
		if l := m["log"].(map[string]any); l["level"] == "WARN" {
			warns = append(warns, l["message"].(string))
		}
	}
	equalLists(t, "warnings", warns, []string{`stream items: a record's updated_at value "03/01/2024" matches none of the formats %Y-%m-%dT%H:%M:%S.%fZ, %Y-%m-%d %H:%M, %Y-%m-%dT%H:%M:%SZ; such records are emitted but do not move the state`})
}

func TestBuilderTestReadGroupsPagesBySlice(t *testing.T) {
	a := datedAPI(t, "2024-01-01T10:00:00Z", "2024-01-02T11:00:00Z", "2024-01-03T11:30:00Z")
	m, _ := yamlToMap(incrementalStream(a.URL, dailyCursor, ""))
	c := newConnector(t, "", map[string]any{"__command": "test_read", "__injected_declarative_manifest": m,
		"__test_read_config": map[string]any{"max_slices": 2}}, "items")
	res := runCLI(t, "read", "--config", c.config, "--catalog", c.catalog)
	recs := res.ofType("RECORD")
	if res.code != 0 || len(recs) != 1 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	data := recs[0]["record"].(map[string]any)["data"].(map[string]any)
	var got []string
	for _, sl := range data["slices"].([]any) {
		s := sl.(map[string]any)
		desc, _ := json.Marshal(s["slice_descriptor"])
		state, _ := json.Marshal(s["state"])
		line := string(desc) + " " + string(state)
		for _, p := range s["pages"].([]any) {
			pg := p.(map[string]any)
			recs, _ := json.Marshal(pg["records"])
			line += " " + pg["request"].(map[string]any)["url"].(string) + " " + string(recs)
		}
		got = append(got, line)
	}
	equalLists(t, "slices", got, []string{
		`{"end_time":"2024-01-01T23:59:59Z","start_time":"2024-01-01T00:00:00Z"} [{"data":null,"destinationStats":null,"global_":null,"sourceStats":{"recordCount":1},"stream":{"stream_descriptor":{"name":"items","namespace":null},"stream_state":{"updated_at":"2024-01-01T10:00:00Z"}},"type":"STREAM"}] ` +
			a.URL + "/items?since=" + q("2024-01-01T00:00:00Z") + "&until=" + q("2024-01-01T23:59:59Z") + ` [{"id":1,"updated_at":"2024-01-01T10:00:00Z"}]`,
		`{"end_time":"2024-01-02T23:59:59Z","start_time":"2024-01-02T00:00:00Z"} [{"data":null,"destinationStats":null,"global_":null,"sourceStats":{"recordCount":0},"stream":{"stream_descriptor":{"name":"items","namespace":null},"stream_state":{"updated_at":"2024-01-02T11:00:00Z"}},"type":"STREAM"}] ` +
			a.URL + "/items?since=" + q("2024-01-02T00:00:00Z") + "&until=" + q("2024-01-02T23:59:59Z") + ` [{"id":2,"updated_at":"2024-01-02T11:00:00Z"}]`,
	})
	if data["test_read_limit_reached"] != true {
		t.Errorf("max_slices reached but not reported")
	}
	formats, _ := json.Marshal(data["inferred_datetime_formats"])
	schema, _ := json.Marshal(data["inferred_schema"])
	if string(formats) != `{"updated_at":"%Y-%m-%dT%H:%M:%SZ"}` || !strings.Contains(string(schema), `"required":["id","updated_at"]`) {
		t.Errorf("inferred formats %s, schema %s", formats, schema)
	}
	if len(a.requests()) != 2 {
		t.Errorf("%d requests, want 2 (max_slices)", len(a.requests()))
	}

	// The subcommand limits slices with --max-slices and shows them.
	file := newConnector(t, incrementalStream(a.URL, dailyCursor, ""), nil)
	var out, errb strings.Builder
	code := Main([]string{"test-read", "--manifest", file.manifest, "--config", file.config, "--stream", "items", "--max-slices", "1", "--pretty"}, &out, &errb, nil, "test")
	want := fmt.Sprintf(`slice 1: {"end_time":"2024-01-01T23:59:59Z","start_time":"2024-01-01T00:00:00Z"}
page 1: GET %s/items?since=2024-01-01T00%%3A00%%3A00Z&until=2024-01-01T23%%3A59%%3A59Z -> 200, 1 records; stop: no next page
state: {"updated_at":"2024-01-01T10:00:00Z"}
test read limit reached
items: 1 records
`, a.URL)
	if code != 0 || out.String() != want {
		t.Errorf("exit %d\n got: %s\nwant: %s", code, out.String(), want)
	}
}

func TestCheckReadsTheFirstSlice(t *testing.T) {
	a := datedAPI(t, "2024-01-01T10:00:00Z")
	res := incrementalConnector(t, incrementalStream(a.URL, dailyCursor, ""), nil, "items").check(t)
	st := res.ofType("CONNECTION_STATUS")
	if res.code != 0 || len(st) != 1 || st[0]["connectionStatus"].(map[string]any)["status"] != "SUCCEEDED" {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{"GET /items?since=" + q("2024-01-01T00:00:00Z") + "&until=" + q("2024-01-01T23:59:59Z")})
}

// Each epoch format, and %f and %z, from the request bounds to the state.
func TestCursorFormatsFromRequestToState(t *testing.T) {
	for _, tc := range []struct {
		format, record, since, state string
	}{
		{"%s", `1704103200`, "1704067200", `"1704103200"`},
		{"%ms", `1704103200123`, "1704067200000", `"1704103200123"`},
		{"%s_as_float", `1704103200.5`, "1704067200.0", `"1704103200.5"`},
		{"%epoch_microseconds", `"1704103200000001"`, "1704067200000000", `"1704103200000001"`},
		{"%Y-%m-%dT%H:%M:%S.%f%z", `"2024-01-01T12:00:00.25+0200"`, "2024-01-01T00:00:00.000000+0000", `"2024-01-01T10:00:00.250000+0000"`},
		{"%Y-%m-%dT%H:%M:%S.%_msZ", `"2024-01-01T10:00:00.125Z"`, "2024-01-01T00:00:00.000Z", `"2024-01-01T10:00:00.125Z"`},
	} {
		a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
			fmt.Fprintf(w, `{"data":[{"id":1,"ts":%s}]}`, tc.record)
		})
		cursor := fmt.Sprintf(`type: DatetimeBasedCursor
cursor_field: ts
datetime_format: %q
start_datetime: {type: MinMaxDatetime, datetime: "2024-01-01T00:00:00Z", datetime_format: "%%Y-%%m-%%dT%%H:%%M:%%SZ"}
end_datetime: {type: MinMaxDatetime, datetime: "2024-01-02T00:00:00Z", datetime_format: "%%Y-%%m-%%dT%%H:%%M:%%SZ"}
start_time_option: {type: RequestOption, inject_into: request_parameter, field_name: since}`, tc.format)
		res := incrementalConnector(t, incrementalStream(a.URL, cursor, ""), nil, "items").read(t)
		if res.code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.format, res.code, res.stdout)
		}
		equalLists(t, tc.format+" request", a.lines(), []string{"GET /items?since=" + q(tc.since)})
		equalLists(t, tc.format+" state", res.states(), []string{itemState(`{"ts":`+tc.state+`}`, 1)})
	}
}

func TestSliceOptionsOnlyOnFirstPageWhenAsked(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		if r.URL.Query().Get("page") == "" {
			fmt.Fprint(w, `{"data":[{"id":1,"updated_at":"2024-01-01T10:00:00Z"}],"next":"2"}`)
			return
		}
		fmt.Fprint(w, `{"data":[{"id":2,"updated_at":"2024-01-01T11:00:00Z"}],"next":null}`)
	})
	cursor := strings.Replace(dailyCursor, `end_datetime: "2024-01-03T12:00:00Z"`, `end_datetime: "2024-01-01T23:00:00Z"`, 1)
	paginator := `paginator:
  type: DefaultPaginator
  page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}
  pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next }}", stop_condition: "{{ response.next is none }}"}
ignore_stream_slicer_parameters_on_paginated_requests: true`
	res := incrementalConnector(t, incrementalStream(a.URL, cursor, paginator), nil, "items").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{"GET /items?since=" + q("2024-01-01T00:00:00Z") + "&until=" + q("2024-01-01T23:00:00Z"), "GET /items?page=2"})
	equalLists(t, "states", res.states(), []string{itemState(`{"updated_at":"2024-01-01T11:00:00Z"}`, 2)})
}

func TestCatalogDefinedCursorField(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		fmt.Fprint(w, `{"data":[{"id":1,"updated_at":"2024-01-01T10:00:00Z","modified":"2024-01-01T12:00:00Z"}]}`)
	})
	cursor := strings.Replace(dailyCursor, `end_datetime: "2024-01-03T12:00:00Z"`, `end_datetime: "2024-01-01T23:00:00Z"`, 1) + "\nallow_catalog_defined_cursor_field: true"
	c := incrementalConnector(t, incrementalStream(a.URL, cursor, ""), nil)
	res := runCLI(t, "discover", "--manifest", c.manifest, "--config", c.config)
	if !strings.Contains(res.stdout, `"supported_sync_modes":["full_refresh","incremental"],"source_defined_cursor":false,"default_cursor_field":["updated_at"]`) {
		t.Errorf("discover: %s", res.stdout)
	}
	c.catalog = writeFile(t, c.dir, "catalog.json", `{"streams":[{"stream":{"name":"items","json_schema":{},"supported_sync_modes":["full_refresh","incremental"]},"sync_mode":"incremental","cursor_field":["modified"],"destination_sync_mode":"append"}]}`)
	res = c.read(t)
	equalLists(t, "states", res.states(), []string{itemState(`{"modified":"2024-01-01T12:00:00Z"}`, 1)})
}

// As Airbyte's test read counts it, max_slices slices read reach the limit
// whether or not another slice would follow; fewer slices than the limit do
// not.
func TestTestReadLimitReachedWhenMaxSlicesAreRead(t *testing.T) {
	a := datedAPI(t, "2024-01-01T10:00:00Z")
	c := newConnector(t, incrementalStream(a.URL, dailyCursor, ""), nil)
	for _, tc := range []struct {
		maxSlices string
		slices    int
		reached   bool
	}{{"2", 2, true}, {"3", 3, true}, {"4", 3, false}} {
		var out, errb strings.Builder
		if code := Main([]string{"test-read", "--manifest", c.manifest, "--config", c.config, "--stream", "items", "--max-slices", tc.maxSlices}, &out, &errb, nil, "test"); code != 0 {
			t.Fatalf("exit %d: %s %s", code, out.String(), errb.String())
		}
		var msg struct {
			Record struct {
				Data struct {
					Slices  []any
					Reached bool `json:"test_read_limit_reached"`
				}
			}
		}
		if err := json.Unmarshal([]byte(out.String()), &msg); err != nil {
			t.Fatalf("%v: %s", err, out.String())
		}
		if d := msg.Record.Data; len(d.Slices) != tc.slices || d.Reached != tc.reached {
			t.Errorf("--max-slices %s: %d slices, limit reached %v; want %d, %v", tc.maxSlices, len(d.Slices), d.Reached, tc.slices, tc.reached)
		}
	}
}

// The Builder tests an incremental stream from a state: Airbyte's builder
// handler reads --state for test_read as a read does. The test-read
// subcommand takes the same file.
func TestBuilderTestReadStartsFromTheState(t *testing.T) {
	a := datedAPI(t, "2024-01-01T10:00:00Z", "2024-01-02T11:00:00Z", "2024-01-03T11:30:00Z")
	m, _ := yamlToMap(incrementalStream(a.URL, dailyCursor, ""))
	c := newConnector(t, "", map[string]any{"__command": "test_read", "__injected_declarative_manifest": m,
		"__test_read_config": map[string]any{"max_slices": 1}}, "items")
	state := writeFile(t, c.dir, "state.json", `[{"type":"STREAM","stream":{"stream_descriptor":{"name":"items"},"stream_state":{"updated_at":"2024-01-02T10:00:00Z"}}}]`)
	res := runCLI(t, "read", "--config", c.config, "--catalog", c.catalog, "--state", state)
	recs := res.ofType("RECORD")
	if res.code != 0 || len(recs) != 1 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	first := "GET /items?since=" + q("2024-01-02T10:00:00Z") + "&until=" + q("2024-01-03T09:59:59Z")
	equalLists(t, "builder requests", a.lines(), []string{first})
	slices := recs[0]["record"].(map[string]any)["data"].(map[string]any)["slices"].([]any)
	got, _ := json.Marshal(slices[0].(map[string]any)["state"])
	if want := `[{"data":null,"destinationStats":null,"global_":null,"sourceStats":{"recordCount":0},"stream":{"stream_descriptor":{"name":"items","namespace":null},"stream_state":{"updated_at":"2024-01-02T11:00:00Z"}},"type":"STREAM"}]`; string(got) != want {
		t.Errorf("slice state\n got: %s\nwant: %s", got, want)
	}

	// A file that is not a list of states is the builder's error; a value
	// the cursor cannot read is the stream's, in the logs of its test read.
	// Neither sends a request.
	bad := writeFile(t, c.dir, "bad.json", `{"type":"STREAM"}`)
	res = runCLI(t, "read", "--config", c.config, "--catalog", c.catalog, "--state", bad)
	errs := res.errors()
	if len(errs) != 1 || errs[0]["message"] != "the state file holds one state message: write it inside a JSON array, [{...}]" {
		t.Errorf("bad state file: exit %d, errors %v", res.code, errs)
	}
	bad = writeFile(t, c.dir, "bad.json", `[{"type":"STREAM","stream":{"stream_descriptor":{"name":"items"},"stream_state":{"updated_at":"yesterday"}}}]`)
	res = runCLI(t, "read", "--config", c.config, "--catalog", c.catalog, "--state", bad)
	if recs := res.ofType("RECORD"); len(recs) != 1 ||
		!strings.Contains(fmt.Sprint(recs[0]["record"].(map[string]any)["data"].(map[string]any)["logs"]), `the state's updated_at value "yesterday" matches none of the formats`) {
		t.Errorf("bad state value: exit %d: %s", res.code, res.stdout)
	}
	if len(a.requests()) != 1 {
		t.Errorf("%d requests", len(a.requests()))
	}

	file := newConnector(t, incrementalStream(a.URL, dailyCursor, ""), nil)
	var out, errb strings.Builder
	code := Main([]string{"test-read", "--manifest", file.manifest, "--config", file.config, "--stream", "items", "--max-slices", "1", "--state", state}, &out, &errb, nil, "test")
	if code != 0 || !strings.Contains(out.String(), `"stream_state":{"updated_at":"2024-01-02T11:00:00Z"}`) {
		t.Errorf("test-read --state: exit %d: %s %s", code, out.String(), errb.String())
	}
	equalLists(t, "test-read requests", a.lines()[1:], []string{first})
}

// A stream with a cursor that fails writes, before its error, the state a
// sync resumes from: the end of the slices read without a gap, or the start
// when none was read; a stream without a cursor writes the full refresh's
// {"__ab_no_cursor_state_message": true}, with or without a router: the
// reference's ConcurrentReadProcessor writes every stream's state when it is
// done, failed or not (found on source-pennylane's plan_items).
func TestFailedStreamWritesWhereASyncResumes(t *testing.T) {
	const daily = `type: DatetimeBasedCursor
cursor_field: updated_at
datetime_format: "%Y-%m-%dT%H:%M:%SZ"
start_datetime: "2024-01-01T00:00:00Z"
end_datetime: "2024-01-02T23:59:59Z"
step: P1D
cursor_granularity: PT1S
start_time_option: {type: RequestOption, inject_into: request_parameter, field_name: since}`
	failing := func(day string) *api {
		return newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
			since := r.URL.Query().Get("since")
			if since == "" || strings.HasPrefix(since, day) {
				w.WriteHeader(http.StatusBadRequest)
				fmt.Fprint(w, `{"error":"no"}`)
				return
			}
			fmt.Fprintf(w, `{"data":[{"id":1,"updated_at":"%sT05:00:00Z"}]}`, since[:10])
		})
	}
	t.Run("second slice fails", func(t *testing.T) {
		a := failing("2024-01-02")
		res := incrementalConnector(t, incrementalStream(a.URL, daily, ""), nil, "items").read(t)
		equalLists(t, "states", res.states(), []string{itemState(`{"updated_at":"2024-01-01T05:00:00Z"}`, 1)})
		equalLists(t, "statuses", res.statuses("items"), []string{"STARTED", "RUNNING", "INCOMPLETE"})
	})
	t.Run("first slice fails", func(t *testing.T) {
		a := failing("2024-01-01")
		res := incrementalConnector(t, incrementalStream(a.URL, daily, ""), nil, "items").read(t)
		if res.code != 1 || len(res.errors()) != 2 {
			t.Fatalf("exit %d, errors %v", res.code, res.errors())
		}
		// The second slice is read still, as the CDK reads every partition
		// of a stream; the state does not pass over the failed slice.
		equalLists(t, "requests", a.lines(), []string{"GET /items?since=2024-01-01T00%3A00%3A00Z", "GET /items?since=2024-01-02T00%3A00%3A00Z"})
		equalLists(t, "states", res.states(), []string{itemState(`{"updated_at":"2024-01-01T00:00:00Z"}`, 1)})
		equalLists(t, "statuses", res.statuses("items"), []string{"STARTED", "RUNNING", "INCOMPLETE"})
		out := res.stdout
		if strings.Index(out, `"type":"STATE"`) > strings.Index(out, `"type":"ERROR"`) {
			t.Errorf("the state comes after the error:\n%s", out)
		}
	})
	t.Run("full refresh fails", func(t *testing.T) {
		a := failing("")
		res := newConnector(t, stream("items", "url_base: "+a.URL+"\npath: /items", "[data]", ""), nil, "items").read(t)
		if res.code != 1 || len(res.errors()) != 2 {
			t.Fatalf("exit %d, errors %v", res.code, res.errors())
		}
		equalLists(t, "requests", a.lines(), []string{"GET /items"})
		equalLists(t, "states", res.states(), []string{itemState(`{"__ab_no_cursor_state_message":true}`, 0)})
		equalLists(t, "statuses", res.statuses("items"), []string{"STARTED", "RUNNING", "INCOMPLETE"})
	})
	t.Run("full refresh with a router fails", func(t *testing.T) {
		a := failing("")
		m := routed(a.URL, "/items/{{ stream_partition.region }}", `type: ListPartitionRouter
cursor_field: region
values: [eu]`, "", "", 1)
		res := newConnector(t, m, nil, "items").read(t)
		if res.code != 1 || len(res.errors()) != 2 {
			t.Fatalf("exit %d, errors %v", res.code, res.errors())
		}
		equalLists(t, "requests", a.lines(), []string{"GET /items/eu"})
		equalLists(t, "states", res.states(), []string{itemState(`{"__ab_no_cursor_state_message":true}`, 0)})
		equalLists(t, "statuses", res.statuses("items"), []string{"STARTED", "RUNNING", "INCOMPLETE"})
	})
}

// A config that breaks a stream's cursor (here a lookback the config fills
// in, missing) fails check and discover, not only the read of that stream,
// as Airbyte's runtime fails them: check reads the check stream only, and
// discover asks nothing.
func TestCheckAndDiscoverFailOnACursorTheConfigBreaks(t *testing.T) {
	a := datedAPI(t, "2024-01-02T00:00:00Z")
	m := incrementalStream(a.URL, `type: DatetimeBasedCursor
cursor_field: updated_at
datetime_format: "%Y-%m-%dT%H:%M:%SZ"
start_datetime: "2024-01-01T00:00:00Z"
lookback_window: "P{{ config.lookback }}D"`, "") + `  - type: DeclarativeStream
    name: plain
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: "` + a.URL + `", path: /plain}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
`
	m = strings.Replace(m, "stream_names: [items]", "stream_names: [plain]", 1)
	const want = `stream items: streams[0].incremental_sync.lookback_window: "PD" is not an ISO 8601 duration (such as PT1H or P1D)`
	c := newConnector(t, m, nil)
	res := c.check(t)
	st := res.ofType("CONNECTION_STATUS")
	if res.code != 0 || len(st) != 1 || fmt.Sprint(st[0]["connectionStatus"]) != fmt.Sprint(map[string]any{"status": "FAILED", "message": want}) {
		t.Errorf("check: exit %d, %v", res.code, st)
	}
	res = discover(c, t)
	errs := res.errors()
	if res.code != 1 || len(errs) != 1 || errs[0]["message"] != want || errs[0]["failure_type"] != "config_error" {
		t.Errorf("discover: exit %d, %v", res.code, errs)
	}
	equalLists(t, "requests", a.lines(), nil)

	c = newConnector(t, m, map[string]any{"lookback": 2})
	if res := c.check(t); res.code != 0 || fmt.Sprint(res.ofType("CONNECTION_STATUS")[0]["connectionStatus"]) != fmt.Sprint(map[string]any{"status": "SUCCEEDED"}) {
		t.Errorf("check with the lookback: exit %d, %s", res.code, res.stdout)
	}
	if res := discover(c, t); res.code != 0 {
		t.Errorf("discover with the lookback: exit %d, %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{"GET /plain"})
}

// A datetime_format whose %f is followed by a digit (`%f0`: seven
// fractional digits, as .NET writes them) reads the records' cursor values
// as Python's strptime does, %f giving a digit back to the literal 0: the
// state moves to the newest record, in the format (run against this API,
// Airbyte's runtime reads the same request and writes the same state).
func TestCursorFormatWithDigitAfterFraction(t *testing.T) {
	a := datedAPI(t, "2024-01-01T10:00:00.1234560", "2024-01-01T12:30:00.5000000")
	m := incrementalStream(a.URL, `type: DatetimeBasedCursor
cursor_field: updated_at
datetime_format: "%Y-%m-%dT%H:%M:%S.%f0"
start_datetime: "2024-01-01T00:00:00.0000000"
end_datetime: "2024-01-01T23:59:59.0000000"
start_time_option: {type: RequestOption, inject_into: request_parameter, field_name: since}`, "")
	res := incrementalConnector(t, m, nil, "items").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{"GET /items?since=" + q("2024-01-01T00:00:00.0000000")})
	equalLists(t, "records", res.records("items"), []string{`{"id":1,"updated_at":"2024-01-01T10:00:00.1234560"}`, `{"id":2,"updated_at":"2024-01-01T12:30:00.5000000"}`})
	equalLists(t, "state", res.states(), []string{itemState(`{"updated_at":"2024-01-01T12:30:00.5000000"}`, 2)})
}

// A state is read in datetime_format first, the format it is written in:
// with a datetime_format ending in a literal offset, as source-pardot's
// "%Y-%m-%dT%H:%M:%S-12:00", and "%Y-%m-%dT%H:%M:%S%z" among the
// cursor_datetime_formats, the state written (the newest record's time in
// UTC) is read back as the same time and the next sync starts there, where
// reading it with %z first (the reference's order) put it 12 hours later,
// skipping them.
func TestStateIsReadInTheFormatItIsWrittenIn(t *testing.T) {
	a := datedAPI(t, "2024-01-02T05:00:00+0000", "2024-01-02T20:00:00+0000")
	inc := `type: DatetimeBasedCursor
cursor_field: updated_at
cursor_datetime_formats: ["%Y-%m-%dT%H:%M:%S%z"]
datetime_format: "%Y-%m-%dT%H:%M:%S-12:00"
start_datetime: {type: MinMaxDatetime, datetime: "2024-01-01T00:00:00Z", datetime_format: "%Y-%m-%dT%H:%M:%SZ"}
end_datetime: {type: MinMaxDatetime, datetime: "2024-01-03T00:00:00Z", datetime_format: "%Y-%m-%dT%H:%M:%SZ"}
start_time_option: {type: RequestOption, inject_into: request_parameter, field_name: from}`
	c := incrementalConnector(t, incrementalStream(a.URL, inc, ""), nil, "items")
	state := writeFile(t, c.dir, "state.json", `[{"type":"STREAM","stream":{"stream_descriptor":{"name":"items"},"stream_state":{"updated_at":"2024-01-02T05:00:00-12:00"}}}]`)
	res := c.read(t, "--state", state)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{"GET /items?from=" + q("2024-01-02T05:00:00-12:00")})
	equalLists(t, "states", res.states(), []string{itemState(`{"updated_at":"2024-01-02T20:00:00-12:00"}`, 2)})
}

// A stream with a partition router whose cursor the config breaks (a
// start_datetime rendering no date) fails alone when its turn comes, STARTED
// then INCOMPLETE with its TRACE, and the other streams are read, as Airbyte
// makes such a stream's cursors when it reads its partitions; it failed the
// whole read before any request here. Without a router, Airbyte makes the
// cursor when it builds the source and fails the whole read, and so do we
// (both checked with refcdk7).
func TestCursorTheConfigBreaksFailsItsStreamAlone(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		fmt.Fprint(w, `{"data":[{"id":1,"updated":"2024-01-01T10:00:00Z"}]}`)
	})
	m := `version: 7.0.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [plain]}
definitions:
  retriever: &retriever
    type: SimpleRetriever
    requester: {type: HttpRequester, url_base: "` + a.URL + `", path: /items}
    record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
streams:
  - type: DeclarativeStream
    name: dated
    schema_loader: {type: InlineSchemaLoader, schema: {type: object}}
    retriever:
      <<: *retriever
      partition_router: {type: ListPartitionRouter, cursor_field: region, values: [eu]}
    incremental_sync:
      type: DatetimeBasedCursor
      cursor_field: updated
      datetime_format: "%Y-%m-%dT%H:%M:%SZ"
      start_datetime: "{{ config['start_date'] }}"
  - type: DeclarativeStream
    name: plain
    schema_loader: {type: InlineSchemaLoader, schema: {type: object}}
    retriever: *retriever
`
	res := newConnector(t, m, map[string]any{}, "dated", "plain").read(t)
	if res.code != 1 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{"GET /items"})
	equalLists(t, "dated statuses", res.statuses("dated"), []string{"STARTED", "INCOMPLETE"})
	equalLists(t, "plain statuses", res.statuses("plain"), []string{"STARTED", "RUNNING", "COMPLETE"})
	equalLists(t, "plain records", res.records("plain"), []string{`{"id":1,"updated":"2024-01-01T10:00:00Z"}`})
	errs := res.errors()
	if len(errs) != 2 || errs[0]["stream_descriptor"] == nil || !strings.HasPrefix(fmt.Sprint(errs[0]["message"]), "stream dated: streams[0].incremental_sync.start_datetime") ||
		errs[1]["message"] != "During the sync, the following streams did not sync successfully: dated" {
		t.Errorf("errors %v", errs)
	}

	unrouted := strings.Replace(m, "      partition_router: {type: ListPartitionRouter, cursor_field: region, values: [eu]}\n", "", 1)
	res = newConnector(t, unrouted, map[string]any{}, "dated", "plain").read(t)
	if errs := res.errors(); res.code != 1 || len(errs) != 1 || errs[0]["stream_descriptor"] != nil || len(res.statuses("plain")) != 0 {
		t.Errorf("without router: exit %d, errors %v, plain statuses %v", res.code, errs, res.statuses("plain"))
	}
	equalLists(t, "requests", a.lines(), []string{"GET /items"})
}
