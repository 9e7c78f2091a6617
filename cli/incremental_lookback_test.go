package cli

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// lookbackCursor filters client side and looks one day back, as the CDK's
// client-side lookback tests set it up.
const lookbackCursor = `type: DatetimeBasedCursor
cursor_field: updated_at
datetime_format: "%Y-%m-%dT%H:%M:%SZ"
start_datetime: "2024-01-01T00:00:00Z"
end_datetime: "2024-01-11T00:00:00Z"
lookback_window: P1D
is_client_side_incremental: true`

// lookbackRecords are one record in the lookback of the state
// 2024-01-10T00:00:00Z, one older than the lookback, one before the start and
// one newer than the state.
const lookbackRecords = `{"data":[{"id":"in_lookback","updated_at":"2024-01-09T23:00:00Z"},{"id":"older_than_lookback","updated_at":"2024-01-08T00:00:00Z"},{"id":"before_start","updated_at":"2023-12-31T23:00:00Z"},{"id":"newer","updated_at":"2024-01-10T00:00:10Z"}]}`

func TestClientSideIncrementalKeepsTheLookback(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) { fmt.Fprint(w, lookbackRecords) })
	c := incrementalConnector(t, incrementalStream(a.URL, lookbackCursor, ""), nil, "items")
	res := c.read(t, "--state", writeFile(t, c.dir, "state.json", `[{"type":"STREAM","stream":{"stream_descriptor":{"name":"items"},"stream_state":{"updated_at":"2024-01-10T00:00:00Z"}}}]`))
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	// The window starts a lookback before the state, as the slice does.
	equalLists(t, "records from a state", res.records("items"), []string{
		`{"id":"in_lookback","updated_at":"2024-01-09T23:00:00Z"}`, `{"id":"newer","updated_at":"2024-01-10T00:00:10Z"}`})
	equalLists(t, "state from a state", res.states(), []string{itemState(`{"updated_at":"2024-01-10T00:00:10Z"}`, 2)})

	// Without state the lookback reaches no further back than the start.
	res = c.read(t)
	equalLists(t, "records without state", res.records("items"), []string{
		`{"id":"in_lookback","updated_at":"2024-01-09T23:00:00Z"}`, `{"id":"older_than_lookback","updated_at":"2024-01-08T00:00:00Z"}`, `{"id":"newer","updated_at":"2024-01-10T00:00:10Z"}`})
	equalLists(t, "requests", a.lines(), []string{"GET /items", "GET /items"})
}

func TestClientSideIncrementalKeepsTheLookbackOfEachPartition(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) { fmt.Fprint(w, lookbackRecords) })
	list := "type: ListPartitionRouter\ncursor_field: p\nvalues: [a]"
	c := incrementalConnector(t, routed(a.URL, "/items/{{ stream_partition.p }}", list, "", "incremental_sync:\n"+indent(lookbackCursor, 2), 1), nil, "items")
	state := `{"use_global_cursor":false,"states":[{"partition":{"p":"a"},"cursor":{"updated_at":"2024-01-10T00:00:00Z"}}],"state":{"updated_at":"2024-01-10T00:00:00Z"},"lookback_window":60}`
	res := c.read(t, "--state", writeFile(t, c.dir, "state.json", `[{"type":"STREAM","stream":{"stream_descriptor":{"name":"items"},"stream_state":`+state+`}}]`))
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{"GET /items/a"})
	equalLists(t, "records", res.records("items"), []string{
		`{"id":"in_lookback","updated_at":"2024-01-09T23:00:00Z"}`, `{"id":"newer","updated_at":"2024-01-10T00:00:10Z"}`})
	equalLists(t, "states", res.states(), []string{
		itemState(`{"lookback_window":60,"state":{"updated_at":"2024-01-10T00:00:00Z"},"states":[{"cursor":{"updated_at":"2024-01-10T00:00:10Z"},"partition":{"p":"a"}}],"use_global_cursor":false}`, 2),
		itemState(`{"lookback_window":1,"state":{"updated_at":"2024-01-10T00:00:10Z"},"states":[{"cursor":{"updated_at":"2024-01-10T00:00:10Z"},"partition":{"p":"a"}}],"use_global_cursor":false}`, 0)})
}

func TestClientSideIncrementalParentKeepsItsLookback(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		switch r.URL.Path {
		case "/projects":
			fmt.Fprint(w, `{"data":[{"id":1,"updated_at":"2024-01-09T23:00:00Z"},{"id":2,"updated_at":"2024-01-08T00:00:00Z"}]}`)
		default:
			fmt.Fprintf(w, `{"data":[{"id":%q,"updated_at":"2024-01-10T00:00:10Z"}]}`, r.URL.Path)
		}
	})
	parent := projectsParent(a.URL, "incremental_sync:\n"+indent(lookbackCursor, 2))
	child := strings.Replace(dependentChild(a.URL, parent), `end_datetime: "2024-01-03T00:00:00Z"`, `end_datetime: "2024-01-11T00:00:00Z"`, 1)
	c := incrementalConnector(t, child, nil, "items")
	state := `{"use_global_cursor":false,"states":[],"state":{"updated_at":"2024-01-10T00:00:00Z"},"lookback_window":0,"parent_state":{"projects":{"updated_at":"2024-01-10T00:00:00Z"}}}`
	res := c.read(t, "--state", writeFile(t, c.dir, "state.json", `[{"type":"STREAM","stream":{"stream_descriptor":{"name":"items"},"stream_state":`+state+`}}]`))
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	// The parent in its lookback makes a partition; the older one does not.
	equalLists(t, "requests", a.lines(), []string{"GET /projects", "GET /items/1?since=" + q("2024-01-10T00:00:00Z")})
	last := res.states()[len(res.states())-1]
	if !strings.Contains(last, `"parent_state":{"projects":{"updated_at":"2024-01-10T00:00:00Z"}}`) || !strings.Contains(last, `"state":{"updated_at":"2024-01-10T00:00:10Z"}`) {
		t.Errorf("last state %s", last)
	}
}

func TestIncrementingCountStateNeverGoesBack(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		fmt.Fprint(w, `{"data":[{"id":1,"seq":5},{"id":2}]}`)
	})
	cursor := `type: IncrementingCountCursor
cursor_field: seq
start_value_option: {type: RequestOption, inject_into: body_json, field_path: [filter, after]}`
	m := strings.Replace(incrementalStream(a.URL, cursor, ""), "path: /items}", "path: /items, http_method: POST}", 1)
	c := incrementalConnector(t, m, nil, "items")
	stateFile := func(v string) string {
		return writeFile(t, c.dir, "state.json", `[{"type":"STREAM","stream":{"stream_descriptor":{"name":"items"},"stream_state":{"seq":`+v+`}}}]`)
	}
	for _, tc := range []struct{ state, body, out string }{
		{"", `{"filter":{"after":0}}`, `{"seq":5}`},
		// A record below the state does not take the state back (the
		// reference's merge of intervals would write 5).
		{"10", `{"filter":{"after":10}}`, `{"seq":10}`},
		// A state kept as text is read as the integer it spells.
		{`"3"`, `{"filter":{"after":3}}`, `{"seq":5}`},
	} {
		before := len(a.requests())
		var res result
		if tc.state == "" {
			res = c.read(t)
		} else {
			res = c.read(t, "--state", stateFile(tc.state))
		}
		if res.code != 0 {
			t.Fatalf("state %s: exit %d: %s", tc.state, res.code, res.stdout)
		}
		reqs := a.requests()[before:]
		if len(reqs) != 1 || reqs[0].Method != "POST" || reqs[0].Path != "/items" || reqs[0].Query != "" || reqs[0].Body != tc.body {
			t.Errorf("state %s: requests %+v, want one POST /items with %s", tc.state, reqs, tc.body)
		}
		equalLists(t, "state after "+tc.state, res.states(), []string{itemState(tc.out, 2)})
	}
}

func TestDataFeedStopsBeforeTheLookback(t *testing.T) {
	pages := map[string]string{
		"":   `{"data":[{"id":9,"updated_at":"2024-01-09T00:00:00Z"},{"id":8,"updated_at":"2024-01-08T00:00:00Z"}],"next":"p2"}`,
		"p2": `{"data":[{"id":5,"updated_at":"2024-01-05T12:00:00Z"},{"id":4,"updated_at":"2024-01-04T00:00:00Z"}],"next":"p3"}`,
		"p3": `{"data":[{"id":3,"updated_at":"2024-01-04T00:00:00Z"},{"id":2,"updated_at":"2024-01-03T23:59:59Z"}],"next":"p4"}`,
		"p4": `{"data":[{"id":1,"updated_at":"2024-01-02T00:00:00Z"}],"next":null}`,
	}
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		fmt.Fprint(w, pages[r.URL.Query().Get("cursor")])
	})
	cursor := `type: DatetimeBasedCursor
cursor_field: updated_at
datetime_format: "%Y-%m-%dT%H:%M:%SZ"
start_datetime: "2024-01-01T00:00:00Z"
end_datetime: "2024-01-10T00:00:00Z"
lookback_window: P1D
is_data_feed: true`
	paginator := `paginator:
  type: DefaultPaginator
  page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: cursor}
  pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next }}", stop_condition: "{{ response.next is none }}"}`
	c := incrementalConnector(t, incrementalStream(a.URL, cursor, paginator), nil, "items")
	res := c.read(t, "--state", writeFile(t, c.dir, "state.json", `[{"type":"STREAM","stream":{"stream_descriptor":{"name":"items"},"stream_state":{"updated_at":"2024-01-05T00:00:00Z"}}}]`))
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	// The window starts at the state minus one day: a page ending on that
	// instant is not the last; the next one, ending before it, is.
	equalLists(t, "requests", a.lines(), []string{"GET /items", "GET /items?cursor=p2", "GET /items?cursor=p3"})
	equalLists(t, "records", res.records("items"), []string{
		`{"id":9,"updated_at":"2024-01-09T00:00:00Z"}`, `{"id":8,"updated_at":"2024-01-08T00:00:00Z"}`,
		`{"id":5,"updated_at":"2024-01-05T12:00:00Z"}`, `{"id":4,"updated_at":"2024-01-04T00:00:00Z"}`,
		`{"id":3,"updated_at":"2024-01-04T00:00:00Z"}`,
	})
	equalLists(t, "states", res.states(), []string{itemState(`{"updated_at":"2024-01-09T00:00:00Z"}`, 5)})
}
