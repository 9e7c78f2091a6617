package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// routed is a one-stream manifest whose stream "items" reads path with the
// given partition_router (YAML, unindented) and extra requester and stream
// lines, one partition at a time unless concurrency says otherwise.
func routed(url, path, router, requester, extra string, concurrency int) string {
	return fmt.Sprintf(`version: 6.0.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [items]}
concurrency_level: {type: ConcurrencyLevel, default_concurrency: %d}
streams:
  - type: DeclarativeStream
    name: items
    primary_key: [id]
    retriever:
      type: SimpleRetriever
      requester:
        type: HttpRequester
        url_base: %q
        path: %q
%s
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
      partition_router:
%s
%s
`, concurrency, url, path, indent(requester, 8), indent(router, 8), indent(extra, 4))
}

// echoAPI answers each request with one record whose id is the request's
// path and query.
func echoAPI(t *testing.T) *api {
	return newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		id := r.URL.Path
		if r.URL.RawQuery != "" {
			id += "?" + r.URL.RawQuery
		}
		fmt.Fprintf(w, `{"data":[{"id":%q}]}`, id)
	})
}

func TestListRouterInjectsIntoEachPlace(t *testing.T) {
	for _, tc := range []struct {
		into  string
		check func(seen) string // what the request carried
		want  []string
	}{
		{"request_parameter", func(s seen) string { return s.Query }, []string{"region=eu", "region=us"}},
		{"header", func(s seen) string { return s.Header.Get("Region") }, []string{"eu", "us"}},
		{"body_json", func(s seen) string { return s.Body }, []string{`{"region":"eu"}`, `{"region":"us"}`}},
		{"body_data", func(s seen) string { return s.Body }, []string{"region=eu", "region=us"}},
	} {
		t.Run(tc.into, func(t *testing.T) {
			a := echoAPI(t)
			m := routed(a.URL, "/items/{{ stream_partition.region }}", `type: ListPartitionRouter
cursor_field: region
values: "{{ config['regions'] }}"
request_option: {type: RequestOption, inject_into: `+tc.into+`, field_name: region}`,
				"http_method: POST\nrequest_headers: {X-Slice: \"{{ stream_slice.region }}\"}", "", 1)
			c := newConnector(t, m, map[string]any{"regions": []any{"eu", "us"}}, "items")
			res := c.read(t)
			if res.code != 0 {
				t.Fatalf("exit %d: %s", res.code, res.stdout)
			}
			var got, paths, slices []string
			for _, s := range a.requests() {
				got = append(got, tc.check(s))
				paths = append(paths, s.Method+" "+s.Path)
				slices = append(slices, s.Header.Get("X-Slice"))
			}
			equalLists(t, "injected", got, tc.want)
			equalLists(t, "requests", paths, []string{"POST /items/eu", "POST /items/us"})
			equalLists(t, "stream_slice in templates", slices, []string{"eu", "us"})
			equalLists(t, "states", res.states(), []string{itemState(`{"__ab_no_cursor_state_message":true}`, 2)})
		})
	}
}

// projectsParent is a parent stream "projects" reading /projects page by
// page (the page number in "page"), with the given extra lines.
func projectsParent(url, extra string) string {
	return fmt.Sprintf(`type: DeclarativeStream
name: projects
primary_key: [id]
retriever:
  type: SimpleRetriever
  requester: {type: HttpRequester, url_base: %q, path: /projects}
  record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
  paginator:
    type: DefaultPaginator
    page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}
    pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next }}", stop_condition: "{{ not response.next }}"}
%s`, url, extra)
}

func TestSubstreamReadsAPaginatedParentByNestedKey(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		switch {
		case r.URL.Path == "/projects" && r.URL.Query().Get("page") == "":
			fmt.Fprint(w, `{"data":[{"id":1,"owner":{"id":"o1"}},{"id":2,"owner":{}}],"next":2}`)
		case r.URL.Path == "/projects":
			fmt.Fprint(w, `{"data":[{"id":3,"owner":{"id":7},"meta":{"region":"eu"}},{"id":4,"owner":{"id":null}}]}`)
		default:
			fmt.Fprintf(w, `{"data":[{"id":%q}]}`, r.URL.Path+"?"+r.URL.RawQuery)
		}
	})
	router := `type: SubstreamPartitionRouter
parent_stream_configs:
  - type: ParentStreamConfig
    parent_key: owner/id
    partition_field: owner_id
    extra_fields: [[meta, region]]
    request_option: {type: RequestOption, inject_into: header, field_name: X-Owner}
    stream:
` + indent(projectsParent(a.URL, ""), 6)
	m := routed(a.URL, "/owners/{{ stream_partition.owner_id }}/tasks", router,
		`request_parameters: {region: "{{ stream_slice.extra_fields['meta.region'] }}"}`, "", 1)
	c := newConnector(t, m, nil, "items")
	res := c.read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	// The parent's second page may be read while the first child request
	// is sent: the parent's pages in order, the child's in order.
	var parent, child, owners []string
	for _, r := range a.requests() {
		if r.Path == "/projects" {
			parent = append(parent, r.Method+" "+r.Path+"?"+r.Query)
			continue
		}
		child = append(child, r.Method+" "+r.Path+"?"+r.Query)
		owners = append(owners, r.Header.Get("X-Owner"))
	}
	equalLists(t, "parent requests", parent, []string{"GET /projects?", "GET /projects?page=2"})
	equalLists(t, "child requests", child, []string{"GET /owners/o1/tasks?", "GET /owners/7/tasks?region=eu"})
	equalLists(t, "injected parent keys", owners, []string{"o1", "7"})
	equalLists(t, "records (the parent's are not emitted)", res.records("items"), []string{`{"id":"/owners/o1/tasks?"}`, `{"id":"/owners/7/tasks?region=eu"}`})
	var warns []string
	for _, m := range res.ofType("LOG") {
		if l := m["log"].(map[string]any); l["level"] == "WARN" {
			warns = append(warns, l["message"].(string))
		}
	}
	// A null key is skipped as a missing one is: no /owners//tasks, which
	// the URL join would collapse into /owners/tasks.
	skipped := `Stream items: a record of parent stream projects has no "owner/id", or a null one (streams[0].retriever.partition_router.parent_stream_configs[0].parent_key); it is skipped`
	equalLists(t, "warnings", warns, []string{skipped, skipped})
}

func TestParentWithoutRecordsMakesNoChildRequest(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) { fmt.Fprint(w, `{"data":[]}`) })
	router := `type: SubstreamPartitionRouter
parent_stream_configs:
  - {type: ParentStreamConfig, parent_key: id, partition_field: pid, stream: {$ref: "#/definitions/projects"}}`
	m := routed(a.URL, "/p/{{ stream_partition.pid }}", router, "", "", 1) + "definitions:\n  projects:\n" + indent(projectsParent(a.URL, ""), 4) + "\n"
	res := newConnector(t, m, nil, "items").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{"GET /projects"})
	equalLists(t, "statuses", res.statuses("items"), []string{"STARTED", "RUNNING", "COMPLETE"})
}

func TestCartesianProductAndGrouping(t *testing.T) {
	a := echoAPI(t)
	product := `- {type: ListPartitionRouter, cursor_field: x, values: [a, b], request_option: {type: RequestOption, inject_into: request_parameter, field_name: x}}
- {type: ListPartitionRouter, cursor_field: "y", values: ["1", "2"], request_option: {type: RequestOption, inject_into: request_parameter, field_name: "y"}}`
	m := strings.Replace(routed(a.URL, "/c", "ROUTER", "", "", 1), "      partition_router:\n        ROUTER", "      partition_router:\n"+indent(product, 8), 1)
	res := newConnector(t, m, nil, "items").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "product requests", a.lines(), []string{"GET /c?x=a&y=1", "GET /c?x=a&y=2", "GET /c?x=b&y=1", "GET /c?x=b&y=2"})

	g := echoAPI(t)
	grouping := `type: GroupingPartitionRouter
group_size: 2
underlying_partition_router: {type: ListPartitionRouter, cursor_field: id, values: ["1", "2", "3", "2", "4"]}`
	m = routed(g.URL, "/g", grouping, `request_parameters: {ids: "{{ stream_partition.id | join(',') }}"}`, "", 1)
	res = newConnector(t, m, nil, "items").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "grouped requests (deduplicated)", g.lines(), []string{"GET /g?ids=1%2C2", "GET /g?ids=3%2C4"})
}

// TestCartesianProductReadsEveryRouterFirst: a list of substream routers
// reads every router's parents, the first router's included, before the
// first child request, as the CDK's itertools.product takes every
// iterable whole before its first tuple (a test read shows the parents'
// requests in that order).
func TestCartesianProductReadsEveryRouterFirst(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		switch {
		case (r.URL.Path == "/projects" || r.URL.Path == "/teams") && r.URL.Query().Get("page") == "":
			fmt.Fprint(w, `{"data":[{"id":1},{"id":2}],"next":2}`)
		case r.URL.Path == "/projects" || r.URL.Path == "/teams":
			fmt.Fprint(w, `{"data":[{"id":3}]}`)
		default:
			fmt.Fprint(w, `{"data":[{"id":"x"}]}`)
		}
	})
	parent := func(field, stream string) string {
		return fmt.Sprintf(`- type: SubstreamPartitionRouter
  parent_stream_configs:
    - type: ParentStreamConfig
      parent_key: id
      partition_field: %s
      stream: {$ref: "#/definitions/%s"}`, field, stream)
	}
	m := strings.Replace(routed(a.URL, "/c/{{ stream_partition.a }}/{{ stream_partition.b }}", "ROUTER", "", "", 1), "      partition_router:\n        ROUTER", "      partition_router:\n"+indent(parent("a", "projects")+"\n"+parent("b", "teams"), 8), 1)
	teams := strings.NewReplacer("name: projects", "name: teams", "path: /projects", "path: /teams").Replace(projectsParent(a.URL, ""))
	m += "definitions:\n  projects:\n" + indent(projectsParent(a.URL, ""), 4) + "\n  teams:\n" + indent(teams, 4) + "\n"
	res := newConnector(t, m, nil, "items").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{
		"GET /projects", "GET /projects?page=2", // the first router's parent, whole
		"GET /teams", "GET /teams?page=2", // the second's
		"GET /c/1/1", "GET /c/1/2", "GET /c/1/3", "GET /c/2/1", "GET /c/2/2", "GET /c/2/3", "GET /c/3/1", "GET /c/3/2", "GET /c/3/3",
	})
}

// partitionedDates serves /items/<p> with the records of partition p at or
// after the since parameter; a partition in failing answers 403.
func partitionedDates(t *testing.T, records map[string][]string, failing ...string) *api {
	return newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		p := strings.TrimPrefix(r.URL.Path, "/items/")
		for _, f := range failing {
			if f == p {
				w.WriteHeader(403)
				fmt.Fprint(w, `{"error":"forbidden"}`)
				return
			}
		}
		var out []string
		for i, stamp := range records[p] {
			if stamp >= r.URL.Query().Get("since") {
				out = append(out, fmt.Sprintf(`{"id":"%s%d","updated_at":%q}`, p, i+1, stamp))
			}
		}
		fmt.Fprintf(w, `{"data":[%s]}`, strings.Join(out, ","))
	})
}

const stepless = `incremental_sync:
  type: DatetimeBasedCursor
  cursor_field: updated_at
  datetime_format: "%Y-%m-%dT%H:%M:%SZ"
  start_datetime: "2024-01-01T00:00:00Z"
  end_datetime: "2024-01-03T00:00:00Z"
  start_time_option: {type: RequestOption, inject_into: request_parameter, field_name: since}`

func TestPerPartitionStateResumesAfterAFailureMidPartitions(t *testing.T) {
	records := map[string][]string{"a": {"2024-01-01T10:00:00Z"}, "b": {"2024-01-02T10:00:00Z"}, "c": {"2024-01-02T20:00:00Z"}}
	list := "type: ListPartitionRouter\ncursor_field: p\nvalues: [a, b, c]"
	first := partitionedDates(t, records, "c")
	c := incrementalConnector(t, routed(first.URL, "/items/{{ stream_partition.p }}", list, "", stepless, 1), nil, "items")
	res := c.read(t)
	if res.code == 0 {
		t.Fatal("the read of a failing partition succeeded")
	}
	equalLists(t, "first requests", first.lines(), []string{"GET /items/a?since=" + q("2024-01-01T00:00:00Z"), "GET /items/b?since=" + q("2024-01-01T00:00:00Z"), "GET /items/c?since=" + q("2024-01-01T00:00:00Z")})
	// Every partition opened is in states, as in the reference's
	// ConcurrentPerPartitionCursor: one not read yet with its start. The
	// partitions are opened one ahead of those read (c once a is handed over).
	stateA := `{"cursor":{"updated_at":"2024-01-01T10:00:00Z"},"partition":{"p":"a"}}`
	stateB := `{"cursor":{"updated_at":"2024-01-02T10:00:00Z"},"partition":{"p":"b"}}`
	startB := `{"cursor":{"updated_at":"2024-01-01T00:00:00Z"},"partition":{"p":"b"}}`
	startC := `{"cursor":{"updated_at":"2024-01-01T00:00:00Z"},"partition":{"p":"c"}}`
	failed := `{"lookback_window":0,"states":[` + stateA + `,` + stateB + `,` + startC + `],"use_global_cursor":false}`
	equalLists(t, "first states", res.states(), []string{
		itemState(`{"lookback_window":0,"states":[`+stateA+`,`+startB+`,`+startC+`],"use_global_cursor":false}`, 1),
		itemState(failed, 1),
	})
	equalLists(t, "statuses", res.statuses("items"), []string{"STARTED", "RUNNING", "INCOMPLETE"})

	second := partitionedDates(t, records)
	c2 := incrementalConnector(t, routed(second.URL, "/items/{{ stream_partition.p }}", list, "", stepless, 1), nil, "items")
	stateFile := writeFile(t, c2.dir, "state.json", `[{"type":"STREAM","stream":{"stream_descriptor":{"name":"items"},"stream_state":`+failed+`}}]`)
	res = c2.read(t, "--state", stateFile)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "resumed requests", second.lines(), []string{"GET /items/a?since=" + q("2024-01-01T10:00:00Z"), "GET /items/b?since=" + q("2024-01-02T10:00:00Z"), "GET /items/c?since=" + q("2024-01-01T00:00:00Z")})
	equalLists(t, "resumed records", res.records("items"), []string{
		`{"id":"a1","updated_at":"2024-01-01T10:00:00Z"}`, `{"id":"b1","updated_at":"2024-01-02T10:00:00Z"}`, `{"id":"c1","updated_at":"2024-01-02T20:00:00Z"}`})
	stateC := `{"cursor":{"updated_at":"2024-01-02T20:00:00Z"},"partition":{"p":"c"}}`
	equalLists(t, "resumed states", res.states(), []string{
		itemState(failed, 1),
		itemState(`{"lookback_window":1,"state":{"updated_at":"2024-01-02T20:00:00Z"},"states":[`+stateA+`,`+stateB+`,`+stateC+`],"use_global_cursor":false}`, 2),
	})
}

// A partition that fails does not stop its stream: the partitions after it
// are read, and each failed one has its own TRACE ERROR, as Airbyte's
// concurrent source reports each partition's exception (found on
// source-metricool, whose every metric partition failed); a partition that
// keeps failing then does not keep the others from being read sync after
// sync. The state covers every partition read (the failed ones from their
// start).
func TestFailedPartitionsDoNotStopTheOthers(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		if r.URL.Path == "/items/b" || r.URL.Path == "/items/d" {
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `{"error":"no"}`)
			return
		}
		fmt.Fprintf(w, `{"data":[{"id":%q,"updated_at":"2024-01-02T10:00:00Z"}]}`, r.URL.Path)
	})
	list := "type: ListPartitionRouter\ncursor_field: p\nvalues: [a, b, c, d]"
	res := incrementalConnector(t, routed(a.URL, "/items/{{ stream_partition.p }}", list, "", stepless, 1), nil, "items").read(t)
	since := "?since=" + q("2024-01-01T00:00:00Z")
	equalLists(t, "requests", a.lines(), []string{"GET /items/a" + since, "GET /items/b" + since, "GET /items/c" + since, "GET /items/d" + since})
	equalLists(t, "records", res.records("items"), []string{`{"id":"/items/a","updated_at":"2024-01-02T10:00:00Z"}`, `{"id":"/items/c","updated_at":"2024-01-02T10:00:00Z"}`})
	var failed []string
	for _, e := range res.errors() {
		failed = append(failed, fmt.Sprint(e["failure_type"], " ", e["message"]))
	}
	equalLists(t, "errors", failed, []string{
		"config_error stream items: HTTP 403 Forbidden from GET " + a.URL + "/items/b" + since + `: {"error":"no"}`,
		"config_error stream items: HTTP 403 Forbidden from GET " + a.URL + "/items/d" + since + `: {"error":"no"}`,
		"config_error During the sync, the following streams did not sync successfully: items",
	})
	read := func(p string) string {
		return `{"cursor":{"updated_at":"2024-01-02T10:00:00Z"},"partition":{"p":"` + p + `"}}`
	}
	start := func(p string) string {
		return `{"cursor":{"updated_at":"2024-01-01T00:00:00Z"},"partition":{"p":"` + p + `"}}`
	}
	states := res.states()
	if len(states) == 0 || states[len(states)-1] != itemState(`{"lookback_window":0,"states":[`+read("a")+`,`+start("b")+`,`+read("c")+`,`+start("d")+`],"use_global_cursor":false}`, 1) {
		t.Errorf("states %v", states)
	}
	equalLists(t, "statuses", res.statuses("items"), []string{"STARTED", "RUNNING", "INCOMPLETE"})
}

func TestGlobalStateStartsEveryPartitionWithItsLookback(t *testing.T) {
	records := map[string][]string{"a": {"2024-01-01T10:00:00Z", "2024-01-02T10:00:00Z"}, "b": {}}
	a := partitionedDates(t, records)
	list := "type: ListPartitionRouter\ncursor_field: p\nvalues: [a, b]"
	c := incrementalConnector(t, routed(a.URL, "/items/{{ stream_partition.p }}", list, "", stepless, 1), nil, "items")
	stateFile := writeFile(t, c.dir, "state.json", `[{"type":"STREAM","stream":{"stream_descriptor":{"name":"items"},"stream_state":{"use_global_cursor":true,"state":{"updated_at":"2024-01-02T10:00:00Z"},"lookback_window":3600}}}]`)
	res := c.read(t, "--state", stateFile)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{"GET /items/a?since=" + q("2024-01-02T09:00:00Z"), "GET /items/b?since=" + q("2024-01-02T09:00:00Z")})
	// No state while the partitions are read: a global state without
	// parent_state would only repeat the incoming one, and the reference's
	// _emit_state_message skips it.
	equalLists(t, "states", res.states(), []string{
		itemState(`{"lookback_window":1,"state":{"updated_at":"2024-01-02T10:00:00Z"},"use_global_cursor":true}`, 1),
	})
}

// dependentChild is the manifest of an incremental stream items reading
// /items/<pid> for each record of parent, read with incremental_dependency.
func dependentChild(url, parent string) string {
	return routed(url, "/items/{{ stream_partition.pid }}", dependentRouter(parent), "", stepless, 1)
}

// dependentRouter is the router of a partition pid per record of parent,
// read with incremental_dependency.
func dependentRouter(parent string) string {
	return `type: SubstreamPartitionRouter
parent_stream_configs:
  - type: ParentStreamConfig
    parent_key: id
    partition_field: pid
    incremental_dependency: true
    stream:
` + indent(parent, 6)
}

func TestIncrementalDependencyReadsTheParentFromItsState(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		if r.URL.Path == "/projects" {
			fmt.Fprint(w, `{"data":[{"id":1,"updated_at":"2024-01-02T05:00:00Z"},{"id":2,"updated_at":"2024-01-02T08:00:00Z"}]}`)
			return
		}
		fmt.Fprintf(w, `{"data":[{"id":%q,"updated_at":"2024-01-02T12:00:00Z"}]}`, r.URL.Path)
	})
	parent := projectsParent(a.URL, strings.ReplaceAll(stepless, "start_time_option", "end_time_option: {type: RequestOption, inject_into: request_parameter, field_name: until}\n  start_time_option"))
	c := incrementalConnector(t, dependentChild(a.URL, parent), nil, "items")
	stateFile := writeFile(t, c.dir, "state.json", `[{"type":"STREAM","stream":{"stream_descriptor":{"name":"items"},"stream_state":{"use_global_cursor":false,"states":[],"state":{"updated_at":"2024-01-01T00:00:00Z"},"lookback_window":0,"parent_state":{"projects":{"updated_at":"2024-01-02T00:00:00Z"}}}}}]`)
	res := c.read(t, "--state", stateFile)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{
		"GET /projects?since=" + q("2024-01-02T00:00:00Z") + "&until=" + q("2024-01-03T00:00:00Z"),
		"GET /items/1?since=" + q("2024-01-01T00:00:00Z"),
		"GET /items/2?since=" + q("2024-01-01T00:00:00Z"),
	})
	p1 := `{"cursor":{"updated_at":"2024-01-02T12:00:00Z"},"partition":{"parent_slice":{},"pid":1}}`
	p2 := `{"cursor":{"updated_at":"2024-01-02T12:00:00Z"},"partition":{"parent_slice":{},"pid":2}}`
	// The first state, once pid 1 is read: pid 2 (made before pid 1 is
	// handed over) from the global state, and the parent state kept with
	// pid 1: the parent's before its slice closed (pid 1 is not its last
	// record), which is the incoming one.
	start2 := `{"cursor":{"updated_at":"2024-01-01T00:00:00Z"},"partition":{"parent_slice":{},"pid":2}}`
	equalLists(t, "states", res.states(), []string{
		itemState(`{"lookback_window":0,"parent_state":{"projects":{"updated_at":"2024-01-02T00:00:00Z"}},"state":{"updated_at":"2024-01-01T00:00:00Z"},"states":[`+p1+`,`+start2+`],"use_global_cursor":false}`, 1),
		itemState(`{"lookback_window":1,"parent_state":{"projects":{"updated_at":"2024-01-02T08:00:00Z"}},"state":{"updated_at":"2024-01-02T12:00:00Z"},"states":[`+p1+`,`+p2+`],"use_global_cursor":false}`, 1),
	})
}

// Without parent_state, a parent read with incremental_dependency starts as
// the reference's _instantiate_parent_stream_state_manager says: from the
// child's global state as it is (keyed by the child's cursor field, so a
// parent with another cursor field reads it not and starts from its start),
// or from a lone legacy value put under the parent's own cursor field.
func TestIncrementalDependencyWithoutParentStateStartsTheParentFromTheChildsCursor(t *testing.T) {
	global := `{"use_global_cursor":false,"states":[],"state":{"updated_at":"2024-01-02T00:00:00Z"},"lookback_window":0}`
	for _, tc := range []struct{ name, field, state, since, childSince, parent string }{
		{"global state, same field", "updated_at", global, "2024-01-02T00:00:00Z", "2024-01-02T00:00:00Z", `{"updated_at":"2024-01-02T05:00:00Z"}`},
		{"global state, another field", "modified", global, "2024-01-01T00:00:00Z", "2024-01-02T00:00:00Z", `{"modified":"2024-01-02T05:00:00Z","updated_at":"2024-01-02T00:00:00Z"}`},
		{"legacy value", "modified", `{"updated_at":"2024-01-02T03:00:00Z"}`, "2024-01-02T03:00:00Z", "2024-01-02T03:00:00Z", `{"modified":"2024-01-02T05:00:00Z"}`},
		{"parent_state without the parent", "updated_at", `{"states":[],"state":{"updated_at":"2024-01-02T00:00:00Z"},"parent_state":{"other":{}}}`, "2024-01-02T00:00:00Z", "2024-01-02T00:00:00Z", `{"updated_at":"2024-01-02T05:00:00Z"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
				if r.URL.Path == "/projects" {
					fmt.Fprintf(w, `{"data":[{"id":1,%q:"2024-01-02T05:00:00Z"}]}`, tc.field)
					return
				}
				fmt.Fprintf(w, `{"data":[{"id":%q,"updated_at":"2024-01-02T12:00:00Z"}]}`, r.URL.Path)
			})
			parent := projectsParent(a.URL, strings.ReplaceAll(stepless, "cursor_field: updated_at", "cursor_field: "+tc.field))
			c := incrementalConnector(t, dependentChild(a.URL, parent), nil, "items")
			stateFile := writeFile(t, c.dir, "state.json", `[{"type":"STREAM","stream":{"stream_descriptor":{"name":"items"},"stream_state":`+tc.state+`}}]`)
			res := c.read(t, "--state", stateFile)
			if res.code != 0 {
				t.Fatalf("exit %d: %s", res.code, res.stdout)
			}
			equalLists(t, "requests", a.lines(), []string{"GET /projects?since=" + q(tc.since), "GET /items/1?since=" + q(tc.childSince)})
			states := res.states()
			last := states[len(states)-1]
			// The parent's state keeps the other keys it started with, as the
			// reference's state converter keeps them ("legacy").
			if !strings.Contains(last, `"parent_state":{"projects":`+tc.parent+`}`) {
				t.Errorf("last state %s, want parent_state {\"projects\":%s}", last, tc.parent)
			}
		})
	}
}

func TestConcurrentPartitionsKeepTheirOrder(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		p, page := strings.TrimPrefix(r.URL.Path, "/items/"), r.URL.Query().Get("page")
		if page == "" {
			fmt.Fprintf(w, `{"data":[{"id":"%s-1"},{"id":"%s-2"}],"next":2}`, p, p)
			return
		}
		fmt.Fprintf(w, `{"data":[{"id":"%s-3"},{"id":"%s-4"}]}`, p, p)
	})
	values := "[p0, p1, p2, p3, p4, p5, p6, p7]"
	m := routed(a.URL, "/items/{{ stream_partition.p }}", "type: ListPartitionRouter\ncursor_field: p\nvalues: "+values, "", "", 3)
	m = strings.Replace(m, "      partition_router:", `      paginator:
        type: DefaultPaginator
        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}
        pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next }}", stop_condition: "{{ not response.next }}"}
      partition_router:`, 1)
	res := newConnector(t, m, nil, "items").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	if len(a.requests()) != 16 {
		t.Fatalf("%d requests, want 16: %q", len(a.requests()), a.lines())
	}
	byPartition := map[string][]string{}
	for _, rec := range res.records("items") {
		var v struct{ ID string }
		json.Unmarshal([]byte(rec), &v)
		p, _, _ := strings.Cut(v.ID, "-")
		byPartition[p] = append(byPartition[p], v.ID)
	}
	for i := range 8 {
		p := fmt.Sprintf("p%d", i)
		equalLists(t, "records of "+p, byPartition[p], []string{p + "-1", p + "-2", p + "-3", p + "-4"})
	}
	equalLists(t, "statuses", res.statuses("items"), []string{"STARTED", "RUNNING", "COMPLETE"})
	if first := res.msgs[0]; first["type"] != "TRACE" {
		t.Errorf("the first message is %v, not STARTED", first)
	}
	last := res.msgs[len(res.msgs)-1]
	if b, _ := json.Marshal(last); !strings.Contains(string(b), `"status":"COMPLETE"`) {
		t.Errorf("the last message is %s, not COMPLETE", b)
	}
	equalLists(t, "states", res.states(), []string{itemState(`{"__ab_no_cursor_state_message":true}`, 32)})
}

func TestRouterValuesThatAreNotAListAreAConfigError(t *testing.T) {
	a := echoAPI(t)
	m := routed(a.URL, "/x", "type: ListPartitionRouter\ncursor_field: id\nvalues: \"{{ config['ids'] }}\"", "", "", 1)
	res := newConnector(t, m, map[string]any{"ids": 5}, "items").read(t)
	if res.code == 0 || len(a.requests()) != 0 {
		t.Fatalf("exit %d, %d requests", res.code, len(a.requests()))
	}
	errs := res.errors()
	if len(errs) < 1 || errs[0]["failure_type"] != "config_error" ||
		errs[0]["message"] != `streams[0].retriever.partition_router.values: "{{ config['ids'] }}" must give a list of values (or a comma-separated string), got the number 5` {
		t.Errorf("errors: %v", errs)
	}
}

func TestFailingParentFailsTheChildNamingBoth(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		w.WriteHeader(403)
		fmt.Fprint(w, `{"error":"forbidden"}`)
	})
	router := `type: SubstreamPartitionRouter
parent_stream_configs:
  - type: ParentStreamConfig
    parent_key: id
    partition_field: pid
    stream:
` + indent(projectsParent(a.URL, ""), 6)
	res := newConnector(t, routed(a.URL, "/p/{{ stream_partition.pid }}", router, "", "", 1), nil, "items").read(t)
	if res.code == 0 {
		t.Fatal("the read succeeded")
	}
	equalLists(t, "requests", a.lines(), []string{"GET /projects"})
	errs := res.errors()
	if len(errs) < 1 || !strings.HasPrefix(errs[0]["message"].(string), "stream items: reading its parent stream projects failed: stream projects: ") {
		t.Errorf("errors: %v", errs)
	}
	equalLists(t, "statuses", res.statuses("items"), []string{"STARTED", "RUNNING", "INCOMPLETE"})
}

func TestTestReadSlicesCarryThePartitionAndParentRequests(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		if r.URL.Path == "/projects" {
			fmt.Fprint(w, `{"data":[{"id":1},{"id":2},{"id":3}]}`)
			return
		}
		fmt.Fprintf(w, `{"data":[{"id":%q}]}`, r.URL.Path)
	})
	router := `type: SubstreamPartitionRouter
parent_stream_configs:
  - {type: ParentStreamConfig, parent_key: id, partition_field: pid, stream: {$ref: "#/definitions/projects"}}`
	m := routed(a.URL, "/p/{{ stream_partition.pid }}", router, "", "", 1) + "definitions:\n  projects:\n" + indent(projectsParent(a.URL, ""), 4) + "\n"
	c := newConnector(t, m, nil)
	var out, errb bytes.Buffer
	if code := Main([]string{"test-read", "--manifest", c.manifest, "--config", c.config, "--stream", "items", "--max-slices", "2"}, &out, &errb, nil, "test"); code != 0 {
		t.Fatalf("exit %d: %s %s", code, out.String(), errb.String())
	}
	var msg struct {
		Record struct {
			Data struct {
				Slices []struct {
					SliceDescriptor map[string]any `json:"slice_descriptor"`
					Pages           []struct {
						Request struct{ URL string }
					}
				}
				Aux []struct {
					Title   string
					Request struct{ URL string }
				} `json:"auxiliary_requests"`
				Limit bool `json:"test_read_limit_reached"`
			}
		}
	}
	if err := json.Unmarshal(out.Bytes(), &msg); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	d := msg.Record.Data
	var got []string
	for _, s := range d.Slices {
		b, _ := json.Marshal(s.SliceDescriptor)
		got = append(got, string(b)+" "+s.Pages[0].Request.URL)
	}
	equalLists(t, "slices", got, []string{`{"parent_slice":{},"pid":1} ` + a.URL + "/p/1", `{"parent_slice":{},"pid":2} ` + a.URL + "/p/2"})
	if len(d.Aux) != 1 || d.Aux[0].Title != "Parent stream: Stream 'projects' request" || d.Aux[0].Request.URL != a.URL+"/projects" || !d.Limit {
		t.Errorf("auxiliary requests %+v, limit reached %v", d.Aux, d.Limit)
	}
}

// lazyAPI answers the parent with records embedding their first page of
// children under "items" (the third embeds none), and a child page request
// with one record named after its path and query.
func lazyAPI(t *testing.T) *api {
	return newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		if r.URL.Path == "/projects" {
			fmt.Fprint(w, `{"data":[{"id":1,"items":{"data":[{"id":"a","updated_at":"2024-01-01T10:00:00Z"},{"id":"b","updated_at":"2024-01-01T11:00:00Z"}],"next":"c2"}},`+
				`{"id":2,"items":{"data":[{"id":"x","updated_at":"2024-01-01T12:00:00Z"}]}},{"id":3}]}`)
			return
		}
		fmt.Fprintf(w, `{"data":[{"id":%q,"updated_at":"2024-01-02T10:00:00Z"}]}`, r.URL.Path+"?"+r.URL.RawQuery)
	})
}

// lazyRouter is a substream router over projects reading each child's
// first page at lazy_read_pointer [items].
func lazyRouter(url string) string {
	return `type: SubstreamPartitionRouter
parent_stream_configs:
  - type: ParentStreamConfig
    parent_key: id
    partition_field: pid
    lazy_read_pointer: ["{{ parameters.pointer }}"]
    $parameters: {pointer: items}
    stream:
` + indent(projectsParent(url, ""), 6)
}

// paginated gives the stream of a routed manifest a cursor paginator.
func paginated(m string) string {
	return strings.Replace(m, "      partition_router:", `      paginator:
        type: DefaultPaginator
        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: cursor}
        pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next }}", stop_condition: "{{ not response.next }}"}
      partition_router:`, 1)
}

func TestLazyReadPointerReadsTheFirstPageFromTheParent(t *testing.T) {
	a := lazyAPI(t)
	m := paginated(routed(a.URL, "/p/{{ stream_partition.pid }}", lazyRouter(a.URL), "", "", 1))
	res := newConnector(t, m, nil, "items").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	// Only the first partition's embedded page says there is a next page.
	equalLists(t, "requests", a.lines(), []string{"GET /projects", "GET /p/1?cursor=c2"})
	equalLists(t, "records", res.records("items"), []string{
		`{"id":"a","updated_at":"2024-01-01T10:00:00Z"}`, `{"id":"b","updated_at":"2024-01-01T11:00:00Z"}`,
		`{"id":"/p/1?cursor=c2","updated_at":"2024-01-02T10:00:00Z"}`, `{"id":"x","updated_at":"2024-01-01T12:00:00Z"}`})
}

func TestLazyReadPointerRequestsEveryPageWhenTheStreamHasState(t *testing.T) {
	a := lazyAPI(t)
	c := incrementalConnector(t, paginated(routed(a.URL, "/p/{{ stream_partition.pid }}", lazyRouter(a.URL), "", stepless, 1)), nil, "items")
	stateFile := writeFile(t, c.dir, "state.json", `[{"type":"STREAM","stream":{"stream_descriptor":{"name":"items"},"stream_state":{"use_global_cursor":true,"state":{"updated_at":"2024-01-02T00:00:00Z"},"lookback_window":0}}}]`)
	res := c.read(t, "--state", stateFile)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	since := "since=" + q("2024-01-02T00:00:00Z")
	equalLists(t, "requests", a.lines(), []string{"GET /projects", "GET /p/1?" + since, "GET /p/2?" + since, "GET /p/3?" + since})
}

func TestLazyReadPointerRefusesWhatTheReferenceRefuses(t *testing.T) {
	path := "invalid manifest: streams[0].retriever.partition_router.parent_stream_configs[0].lazy_read_pointer: "
	for _, tc := range []struct {
		name, requester, extra, want string
	}{
		{"a decoder other than JSON", "", "", ""},
		{"a count cursor", "", "incremental_sync: {type: IncrementingCountCursor, cursor_field: n}",
			path + "needs the stream's incremental_sync (streams[0].incremental_sync) to be a DatetimeBasedCursor (as in Airbyte's runtime); " +
				"streams[0].incremental_sync: an IncrementingCountCursor cannot be used with a partition_router (streams[0].retriever.partition_router), as in Airbyte's runtime " +
				"(\"does not currently support usage of a PartitionRouter and an IncrementingCountCursor at the same time\"): use a DatetimeBasedCursor or read without a router"},
		{"a cursor with step", "", strings.Replace(stepless, "cursor_field:", "step: P1D\n  cursor_granularity: PT1S\n  cursor_field:", 1),
			path + "needs one slice per parent record: the stream's incremental_sync (streams[0].incremental_sync) may not have step or cursor_granularity (as in Airbyte's runtime)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := lazyAPI(t)
			m := routed(a.URL, "/p", lazyRouter(a.URL), tc.requester, tc.extra, 1)
			if tc.want == "" {
				m = strings.Replace(m, "      record_selector:", "      decoder: {type: JsonlDecoder}\n      record_selector:", 1)
				tc.want = path + "needs the stream's decoder to be a JsonDecoder (as in Airbyte's runtime), not JsonlDecoder"
			}
			res := newConnector(t, m, nil, "items").read(t)
			errs := res.errors()
			if res.code == 0 || len(a.requests()) != 0 || len(errs) != 1 || errs[0]["message"] != tc.want {
				t.Errorf("exit %d, %d requests, errors %v", res.code, len(a.requests()), errs)
			}
		})
	}
}

func TestLazyReadPointerInsideAProductIsRefused(t *testing.T) {
	a := lazyAPI(t)
	m := routed(a.URL, "/p", "", "", "", 1)
	m = strings.Replace(m, "      partition_router:\n", "      partition_router:\n        - {type: ListPartitionRouter, cursor_field: r, values: [eu]}\n        -\n"+indent(lazyRouter(a.URL), 10)+"\n", 1)
	res := newConnector(t, m, nil, "items").read(t)
	errs := res.errors()
	want := "invalid manifest: streams[0].retriever.partition_router[1].parent_stream_configs[0].lazy_read_pointer: is used by Airbyte's runtime only when its SubstreamPartitionRouter is the stream's partition_router itself, not inside a grouping, list or union of routers"
	if res.code == 0 || len(a.requests()) != 0 || len(errs) != 1 || errs[0]["message"] != want {
		t.Errorf("exit %d, %d requests, errors %v", res.code, len(a.requests()), errs)
	}
}

func TestCheckReadsTheFirstPartitionOnly(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		if r.URL.Path == "/projects" {
			fmt.Fprint(w, `{"data":[{"id":1},{"id":2}]}`)
			return
		}
		fmt.Fprint(w, `{"data":[]}`)
	})
	router := `type: SubstreamPartitionRouter
parent_stream_configs:
  - {type: ParentStreamConfig, parent_key: id, partition_field: pid, stream: {$ref: "#/definitions/projects"}}`
	m := routed(a.URL, "/p/{{ stream_partition.pid }}", router, "", "", 1) + "definitions:\n  projects:\n" + indent(projectsParent(a.URL, ""), 4) + "\n"
	res := newConnector(t, m, nil).check(t)
	st := res.ofType("CONNECTION_STATUS")
	if res.code != 0 || len(st) != 1 || st[0]["connectionStatus"].(map[string]any)["status"] != "SUCCEEDED" {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{"GET /projects", "GET /p/1"})
}
