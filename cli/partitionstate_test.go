package cli

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// The state of a stream with a partition router, as the reference's
// ConcurrentPerPartitionCursor (airbyte_cdk/sources/declarative/incremental/
// concurrent_partition_cursor.py) writes it. Each expected value below is
// reasoned from that code, as the comments say.

// parent_state is what the router's get_stream_state gives: {} for a
// SubstreamPartitionRouter without incremental_dependency parents; nothing
// for a ListPartitionRouter, whose incoming parent_state is written back
// (_set_initial_state keeps it) until the end of the sync, where the state
// takes the router's (ensure_at_least_one_state_emitted), which has none.
func TestParentStateIsTheRoutersOwn(t *testing.T) {
	t.Run("substream without incremental_dependency", func(t *testing.T) {
		a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
			if r.URL.Path == "/projects" {
				fmt.Fprint(w, `{"data":[{"id":1},{"id":2}]}`)
				return
			}
			fmt.Fprintf(w, `{"data":[{"id":%q,"updated_at":"2024-01-02T12:00:00Z"}]}`, r.URL.Path)
		})
		router := "type: SubstreamPartitionRouter\nparent_stream_configs:\n  - type: ParentStreamConfig\n    parent_key: id\n    partition_field: pid\n    stream:\n" + indent(projectsParent(a.URL, ""), 6)
		res := incrementalConnector(t, routed(a.URL, "/items/{{ stream_partition.pid }}", router, "", stepless, 1), nil, "items").read(t)
		if res.code != 0 {
			t.Fatalf("exit %d: %s", res.code, res.stdout)
		}
		// pid 2 is made (and its cursor written with its start) before pid
		// 1 is handed over; the parent state {} of pid 1 is committed once
		// pid 1 is read.
		p1 := `{"cursor":{"updated_at":"2024-01-02T12:00:00Z"},"partition":{"parent_slice":{},"pid":1}}`
		start2 := `{"cursor":{"updated_at":"2024-01-01T00:00:00Z"},"partition":{"parent_slice":{},"pid":2}}`
		p2 := `{"cursor":{"updated_at":"2024-01-02T12:00:00Z"},"partition":{"parent_slice":{},"pid":2}}`
		equalLists(t, "states", res.states(), []string{
			itemState(`{"lookback_window":0,"parent_state":{},"states":[`+p1+`,`+start2+`],"use_global_cursor":false}`, 1),
			itemState(`{"lookback_window":1,"parent_state":{},"state":{"updated_at":"2024-01-02T12:00:00Z"},"states":[`+p1+`,`+p2+`],"use_global_cursor":false}`, 1),
		})
	})
	t.Run("list router with an incoming parent_state", func(t *testing.T) {
		a := partitionedDates(t, map[string][]string{"a": {"2024-01-02T10:00:00Z"}, "b": {}})
		list := "type: ListPartitionRouter\ncursor_field: p\nvalues: [a, b]"
		c := incrementalConnector(t, routed(a.URL, "/items/{{ stream_partition.p }}", list, "", stepless, 1), nil, "items")
		stateFile := writeFile(t, c.dir, "state.json", `[{"type":"STREAM","stream":{"stream_descriptor":{"name":"items"},"stream_state":{"states":[],"parent_state":{"old":{"x":1}}}}}]`)
		res := c.read(t, "--state", stateFile)
		if res.code != 0 {
			t.Fatalf("exit %d: %s", res.code, res.stdout)
		}
		stateA := `{"cursor":{"updated_at":"2024-01-02T10:00:00Z"},"partition":{"p":"a"}}`
		startB := `{"cursor":{"updated_at":"2024-01-01T00:00:00Z"},"partition":{"p":"b"}}`
		equalLists(t, "states", res.states(), []string{
			itemState(`{"lookback_window":0,"parent_state":{"old":{"x":1}},"states":[`+stateA+`,`+startB+`],"use_global_cursor":false}`, 1),
			itemState(`{"lookback_window":1,"state":{"updated_at":"2024-01-02T10:00:00Z"},"states":[`+stateA+`,`+startB+`],"use_global_cursor":false}`, 0),
		})
	})
}

// A sync that reads no record's cursor value leaves the global state and
// lookback_window as they came: ensure_at_least_one_state_emitted moves them
// only when _synced_some_data. Each partition starts from the global state
// less lookback_window (_create_cursor with runtime_lookback_window) and is
// written so.
func TestSyncWithoutRecordsKeepsTheGlobalStateAndLookback(t *testing.T) {
	list := "type: ListPartitionRouter\ncursor_field: p\nvalues: [a, b]"
	for _, tc := range []struct{ name, state, since, want string }{
		{"from a global state", `{"use_global_cursor":false,"states":[],"state":{"updated_at":"2024-01-02T10:00:00Z"},"lookback_window":3600}`, "2024-01-02T09:00:00Z",
			`{"lookback_window":3600,"state":{"updated_at":"2024-01-02T10:00:00Z"},"states":[{"cursor":{"updated_at":"2024-01-02T09:00:00Z"},"partition":{"p":"a"}},{"cursor":{"updated_at":"2024-01-02T09:00:00Z"},"partition":{"p":"b"}}],"use_global_cursor":false}`},
		{"from nothing", "", "2024-01-01T00:00:00Z",
			`{"lookback_window":0,"states":[{"cursor":{"updated_at":"2024-01-01T00:00:00Z"},"partition":{"p":"a"}},{"cursor":{"updated_at":"2024-01-01T00:00:00Z"},"partition":{"p":"b"}}],"use_global_cursor":false}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := partitionedDates(t, map[string][]string{"a": {}, "b": {}})
			c := incrementalConnector(t, routed(a.URL, "/items/{{ stream_partition.p }}", list, "", stepless, 1), nil, "items")
			var args []string
			if tc.state != "" {
				args = []string{"--state", writeFile(t, c.dir, "state.json", `[{"type":"STREAM","stream":{"stream_descriptor":{"name":"items"},"stream_state":`+tc.state+`}}]`)}
			}
			res := c.read(t, args...)
			if res.code != 0 {
				t.Fatalf("exit %d: %s", res.code, res.stdout)
			}
			equalLists(t, "requests", a.lines(), []string{"GET /items/a?since=" + q(tc.since), "GET /items/b?since=" + q(tc.since)})
			states := res.states()
			if last := states[len(states)-1]; last != itemState(tc.want, 0) {
				t.Errorf("last state\n got: %s\nwant: %s", last, itemState(tc.want, 0))
			}
		})
	}
}

// A partition made again while it is being read is skipped with one
// warning, as _generate_slices_from_partition skips a partition whose
// semaphore is still there. Here the second "a" is made before the first
// is handed over (a partition is handed over once the next one is made).
func TestPartitionMadeTwiceIsReadOnce(t *testing.T) {
	a := partitionedDates(t, map[string][]string{"a": {"2024-01-02T10:00:00Z"}, "b": {"2024-01-02T11:00:00Z"}})
	list := "type: ListPartitionRouter\ncursor_field: p\nvalues: [a, a, b, b]"
	res := incrementalConnector(t, routed(a.URL, "/items/{{ stream_partition.p }}", list, "", stepless, 1), nil, "items").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	since := "?since=" + q("2024-01-01T00:00:00Z")
	equalLists(t, "requests", a.lines(), []string{"GET /items/a" + since, "GET /items/b" + since})
	equalLists(t, "records", res.records("items"), []string{`{"id":"a1","updated_at":"2024-01-02T10:00:00Z"}`, `{"id":"b1","updated_at":"2024-01-02T11:00:00Z"}`})
	equalLists(t, "warnings", res.warnings(), []string{"Partition duplication detected for stream items"})
}

// A parent read with incremental_dependency that has a partition router of
// its own: the child keeps the parent's state as the parent's cursor has it
// when each child partition is made, and at the end the parent's final
// state (its global state and lookback_window set as at a stream's end:
// the substream router calls the parent's ensure_at_least_one_state_emitted
// after its last record). The parent's list router gives it no parent_state.
// With one parent record per region, the record is its slice's last: the
// reference closes the parent's slice before making the child's partition,
// so the state kept with the child's first partition already has region
// eu read.
func TestDependentParentWithARouterKeepsItsFinalState(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		switch r.URL.Path {
		case "/projects/eu":
			fmt.Fprint(w, `{"data":[{"id":1,"updated_at":"2024-01-02T05:00:00Z"}]}`)
		case "/projects/us":
			fmt.Fprint(w, `{"data":[{"id":2,"updated_at":"2024-01-02T08:00:00Z"}]}`)
		default:
			fmt.Fprintf(w, `{"data":[{"id":%q,"updated_at":"2024-01-02T12:00:00Z"}]}`, r.URL.Path)
		}
	})
	parent := strings.Replace(projectsParent(a.URL, stepless), "path: /projects}", `path: "/projects/{{ stream_partition.region }}"}
  partition_router: {type: ListPartitionRouter, cursor_field: region, values: [eu, us]}`, 1)
	res := incrementalConnector(t, dependentChild(a.URL, parent), nil, "items").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	since := "?since=" + q("2024-01-01T00:00:00Z")
	equalLists(t, "requests", a.lines(), []string{"GET /projects/eu" + since, "GET /projects/us" + since, "GET /items/1" + since, "GET /items/2" + since})
	eu := `{"cursor":{"updated_at":"2024-01-02T05:00:00Z"},"partition":{"region":"eu"}}`
	usStart := `{"cursor":{"updated_at":"2024-01-01T00:00:00Z"},"partition":{"region":"us"}}`
	us := `{"cursor":{"updated_at":"2024-01-02T08:00:00Z"},"partition":{"region":"us"}}`
	p1 := `{"cursor":{"updated_at":"2024-01-02T12:00:00Z"},"partition":{"parent_slice":{"region":"eu"},"pid":1}}`
	start2 := `{"cursor":{"updated_at":"2024-01-01T00:00:00Z"},"partition":{"parent_slice":{"region":"us"},"pid":2}}`
	p2 := `{"cursor":{"updated_at":"2024-01-02T12:00:00Z"},"partition":{"parent_slice":{"region":"us"},"pid":2}}`
	equalLists(t, "states", res.states(), []string{
		itemState(`{"lookback_window":0,"parent_state":{"projects":{"lookback_window":0,"states":[`+eu+`,`+usStart+`],"use_global_cursor":false}},"states":[`+p1+`,`+start2+`],"use_global_cursor":false}`, 1),
		itemState(`{"lookback_window":1,"parent_state":{"projects":{"lookback_window":1,"state":{"updated_at":"2024-01-02T08:00:00Z"},"states":[`+eu+`,`+us+`],"use_global_cursor":false}},"state":{"updated_at":"2024-01-02T12:00:00Z"},"states":[`+p1+`,`+p2+`],"use_global_cursor":false}`, 1),
	})
}

// A child whose incremental_dependency parent fails before any partition is
// made writes, before its error, the parent's state where the parent
// resumes (its start): the reference's per-partition cursor, done with no
// partition open, takes parent_state from its router, failed or not (found
// on source-shopwired's products_reviews, whose parent products failed).
// A partition left half read keeps it as it was (see
// TestPerPartitionStateResumesAfterAFailureMidPartitions).
func TestFailedParentIsInTheChildsState(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"error":"no"}`)
	})
	res := incrementalConnector(t, dependentChild(a.URL, projectsParent(a.URL, stepless)), nil, "items").read(t)
	if res.code != 1 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{"GET /projects?since=" + q("2024-01-01T00:00:00Z")})
	equalLists(t, "states", res.states(), []string{
		itemState(`{"lookback_window":0,"parent_state":{"projects":{"updated_at":"2024-01-01T00:00:00Z"}},"states":[],"use_global_cursor":false}`, 0),
	})
	equalLists(t, "statuses", res.statuses("items"), []string{"STARTED", "RUNNING", "INCOMPLETE"})
}

// A parent without incremental_sync read with incremental_dependency is in
// parent_state too: get_stream_state takes every such parent's cursor state,
// a full refresh's FinalStateCursor state here.
func TestFullRefreshDependentParentIsInParentState(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		if r.URL.Path == "/projects" {
			fmt.Fprint(w, `{"data":[{"id":1}]}`)
			return
		}
		fmt.Fprintf(w, `{"data":[{"id":%q,"updated_at":"2024-01-02T12:00:00Z"}]}`, r.URL.Path)
	})
	res := incrementalConnector(t, dependentChild(a.URL, projectsParent(a.URL, "")), nil, "items").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	p1 := `{"cursor":{"updated_at":"2024-01-02T12:00:00Z"},"partition":{"parent_slice":{},"pid":1}}`
	parent := `"parent_state":{"projects":{"__ab_no_cursor_state_message":true}}`
	equalLists(t, "states", res.states(), []string{
		itemState(`{"lookback_window":0,`+parent+`,"states":[`+p1+`],"use_global_cursor":false}`, 1),
		itemState(`{"lookback_window":1,`+parent+`,"state":{"updated_at":"2024-01-02T12:00:00Z"},"states":[`+p1+`],"use_global_cursor":false}`, 0),
	})
}

// A union router keeps parents as a substream router does ({} here); a
// grouping router as the router it groups (a list: none), with a global
// state (the factory forces use_global_cursor for it), so that nothing is
// written before the end.
func TestParentStateOfUnionAndGroupingRouters(t *testing.T) {
	records := map[string][]string{"a": {"2024-01-02T10:00:00Z"}, "c": {"2024-01-02T11:00:00Z"}}
	union := `type: UnionPartitionRouter
partition_field: p
partition_routers:
  - {type: ListPartitionRouter, cursor_field: p, values: [a]}
  - {type: ListPartitionRouter, cursor_field: p, values: [c]}`
	a := partitionedDates(t, records)
	res := incrementalConnector(t, routed(a.URL, "/items/{{ stream_partition.p }}", union, "", stepless, 1), nil, "items").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	stateA := `{"cursor":{"updated_at":"2024-01-02T10:00:00Z"},"partition":{"p":"a"}}`
	startC := `{"cursor":{"updated_at":"2024-01-01T00:00:00Z"},"partition":{"p":"c"}}`
	stateC := `{"cursor":{"updated_at":"2024-01-02T11:00:00Z"},"partition":{"p":"c"}}`
	equalLists(t, "union states", res.states(), []string{
		itemState(`{"lookback_window":0,"parent_state":{},"states":[`+stateA+`,`+startC+`],"use_global_cursor":false}`, 1),
		itemState(`{"lookback_window":1,"parent_state":{},"state":{"updated_at":"2024-01-02T11:00:00Z"},"states":[`+stateA+`,`+stateC+`],"use_global_cursor":false}`, 1),
	})

	grouping := "type: GroupingPartitionRouter\ngroup_size: 1\nunderlying_partition_router: {type: ListPartitionRouter, cursor_field: p, values: [a, c]}"
	g := partitionedDates(t, records)
	res = incrementalConnector(t, routed(g.URL, "/items/{{ stream_partition.p[0] }}", grouping, "", stepless, 1), nil, "items").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "grouping states", res.states(), []string{
		itemState(`{"lookback_window":1,"state":{"updated_at":"2024-01-02T11:00:00Z"},"use_global_cursor":true}`, 2),
	})
}

// A lookback_window that is no number of seconds is a broken state: the
// stream fails with a config error naming it before any request (the
// reference's int() raises a ValueError), and the other streams go on.
func TestStateWithoutANumberForLookbackWindowIsRefused(t *testing.T) {
	list := "type: ListPartitionRouter\ncursor_field: p\nvalues: [a, b]"
	a := partitionedDates(t, map[string][]string{"a": {}, "b": {}})
	c := incrementalConnector(t, routed(a.URL, "/items/{{ stream_partition.p }}", list, "", stepless, 1), nil, "items")
	state := writeFile(t, c.dir, "state.json", `[{"type":"STREAM","stream":{"stream_descriptor":{"name":"items"},"stream_state":{"states":[],"state":{"updated_at":"2024-01-02T10:00:00Z"},"lookback_window":"soon"}}}]`)
	res := c.read(t, "--state", state)
	errs := res.errors()
	if res.code != 1 || len(errs) == 0 || errs[0]["failure_type"] != "config_error" ||
		!strings.Contains(fmt.Sprint(errs[0]["message"]), `stream items: the state's lookback_window must be a number of seconds, not "soon"`) {
		t.Fatalf("exit %d, errors %v\n%s", res.code, errs, res.stdout)
	}
	equalLists(t, "requests", a.lines(), nil)
}

// A partition of several slices: the first state comes once its first
// slice is read (the CDK's per-partition cursor tries to write at each
// slice it closes, at most once in ten minutes), with the partition's
// cursor at that slice; the last when the stream ends (checked with
// refcdk7). One partition: whether the next one is opened by then (and
// listed at its start) is a race in both.
func TestFirstPartitionedStateAfterTheFirstSlice(t *testing.T) {
	a := datedAPI(t, "2024-01-01T10:00:00Z", "2024-01-02T10:00:00Z")
	list := "type: ListPartitionRouter\ncursor_field: p\nvalues: [a]"
	cursor := stepless + "\n  end_time_option: {type: RequestOption, inject_into: request_parameter, field_name: until}\n  step: P1D\n  cursor_granularity: PT1S"
	res := incrementalConnector(t, routed(a.URL, "/items/{{ stream_partition.p }}", list, "", cursor, 1), nil, "items").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{
		"GET /items/a?since=" + q("2024-01-01T00:00:00Z") + "&until=" + q("2024-01-01T23:59:59Z"),
		"GET /items/a?since=" + q("2024-01-02T00:00:00Z") + "&until=" + q("2024-01-03T00:00:00Z"),
	})
	at := func(day string) string {
		return `{"cursor":{"updated_at":"2024-01-0` + day + `T10:00:00Z"},"partition":{"p":"a"}}`
	}
	equalLists(t, "states", res.states(), []string{
		itemState(`{"lookback_window":0,"states":[`+at("1")+`],"use_global_cursor":false}`, 1),
		itemState(`{"lookback_window":1,"state":{"updated_at":"2024-01-02T10:00:00Z"},"states":[`+at("2")+`],"use_global_cursor":false}`, 1),
	})
}

// A global cursor without parent state when its first slice is read writes
// no state then, and none until the stream ends: the CDK's throttle is
// spent by the state it skips (its _emit_state_message sets the time before
// it looks at the parent state), so the parent state the first partition
// commits waits ten minutes too (checked with refcdk7).
func TestGlobalCursorSkippedFirstStateStartsTheWait(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		if r.URL.Path == "/projects" {
			fmt.Fprint(w, `{"data":[{"id":1,"updated_at":"2024-01-02T05:00:00Z"},{"id":2,"updated_at":"2024-01-02T08:00:00Z"}]}`)
			return
		}
		fmt.Fprintf(w, `{"data":[{"id":%q,"updated_at":"2024-01-01T12:00:00Z"}]}`, r.URL.Path)
	})
	cursor := stepless + "\n  step: P1D\n  cursor_granularity: PT1S\n  global_substream_cursor: true"
	m := routed(a.URL, "/items/{{ stream_partition.pid }}", dependentRouter(projectsParent(a.URL, stepless)), "", cursor, 1)
	res := incrementalConnector(t, m, nil, "items").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	since := func(day string) string { return "?since=" + q("2024-01-0"+day+"T00:00:00Z") }
	equalLists(t, "requests", a.lines(), []string{"GET /projects" + since("1"), "GET /items/1" + since("1"), "GET /items/1" + since("2"), "GET /items/2" + since("1"), "GET /items/2" + since("2")})
	equalLists(t, "states", res.states(), []string{
		itemState(`{"lookback_window":1,"parent_state":{"projects":{"updated_at":"2024-01-02T08:00:00Z"}},"state":{"updated_at":"2024-01-01T12:00:00Z"},"use_global_cursor":true}`, 4),
	})
}
