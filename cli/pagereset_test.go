package cli

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// cappedAPI serves records 0..total-1 by offset and limit, and answers 400
// "max offset exceeded" to an offset past maxOffset while capped says so.
func cappedAPI(t *testing.T, total, maxOffset int, capped func(call int) bool) *api {
	calls := 0
	return newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		off, _ := strconv.Atoi(r.URL.Query().Get("offset"))
		lim, _ := strconv.Atoi(r.URL.Query().Get("limit"))
		if off > maxOffset {
			calls++
			if capped(calls) {
				w.WriteHeader(http.StatusBadRequest)
				fmt.Fprint(w, `{"error":"max offset exceeded"}`)
				return
			}
		}
		fmt.Fprintf(w, `{"data":%s}`, items(min(off, total), min(off+lim, total)))
	})
}

// offsetLimit2 pages with offset and limit=2 query parameters.
const offsetLimit2 = `paginator:
  type: DefaultPaginator
  page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: offset}
  page_size_option: {type: RequestOption, inject_into: request_parameter, field_name: limit}
  pagination_strategy: {type: OffsetIncrement, page_size: 2}`

// resetOnCap is a requester whose error handler answers the cap with
// RESET_PAGINATION.
func resetOnCap(url string) string {
	return "url_base: " + url + `
path: /items
error_handler:
  type: DefaultErrorHandler
  response_filters:
    - {type: HttpResponseFilter, action: RESET_PAGINATION, error_message_contains: max offset exceeded}`
}

func offsets(offs ...int) []string {
	var out []string
	for _, o := range offs {
		out = append(out, fmt.Sprintf("GET /items?limit=2&offset=%d", o))
	}
	return out
}

func TestResetPaginationRestartsOnceWithoutCursor(t *testing.T) {
	a := cappedAPI(t, 10, 4, func(int) bool { return true })
	m := stream("items", resetOnCap(a.URL), "[data]", offsetLimit2)
	res := newConnector(t, m, nil, "items").read(t)
	if res.code != 1 {
		t.Fatalf("exit %d, want 1: %s", res.code, res.stdout)
	}
	// Pages up to the cap, then from the first page again, then the error:
	// as in Airbyte, a slice without cursor is restarted once.
	equalLists(t, "requests", a.lines(), offsets(0, 2, 4, 6, 0, 2, 4, 6))
	equalLists(t, "records", res.records("items"), append(ids(0, 6), ids(0, 6)...))
	matched := "the error handler's RESET_PAGINATION matched HTTP 400 Bad Request from GET " + a.URL + `/items?limit=2&offset=6: {"error":"max offset exceeded"}`
	equalLists(t, "info logs", res.logs("INFO"), []string{
		"Stream items: pagination reset (" + matched + "); reading from the first page again",
	})
	errs := res.errors()
	want := "stream items: pagination reset (" + matched + ") a second time on the same slice; a slice's pages are restarted at most once"
	if len(errs) != 2 || errs[0]["message"] != want || errs[0]["failure_type"] != "system_error" {
		t.Errorf("errors %v\nwant %q", errs, want)
	}
	equalLists(t, "statuses", res.statuses("items"), []string{"STARTED", "RUNNING", "INCOMPLETE"})
}

func TestResetPaginationThenTheAPIAnswers(t *testing.T) {
	// The cap answers only the first time: the second run reads every page.
	a := cappedAPI(t, 7, 4, func(call int) bool { return call == 1 })
	m := stream("items", resetOnCap(a.URL), "[data]", offsetLimit2+"\npagination_reset: {type: PaginationReset, action: RESET}")
	res := newConnector(t, m, nil, "items").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), offsets(0, 2, 4, 6, 0, 2, 4, 6))
	// Records emitted before the reset stay emitted and come again, as in Airbyte.
	equalLists(t, "records", res.records("items"), append(ids(0, 6), ids(0, 7)...))
	if !strings.Contains(res.stdout, `"sourceStats":{"recordCount":13.0}`) {
		t.Errorf("want a state counting 13 records: %s", res.stdout)
	}
	equalLists(t, "statuses", res.statuses("items"), []string{"STARTED", "RUNNING", "COMPLETE"})
}

// sortedAPI serves records in ascending updated_at, from start_time on when
// it is given (unless ignoreStart), two per page by page number.
func sortedAPI(t *testing.T, ignoreStart bool, stamps ...string) *api {
	return newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		q := r.URL.Query()
		var all []string
		for i, s := range stamps {
			if ignoreStart || q.Get("start_time") == "" || s >= q.Get("start_time") {
				all = append(all, fmt.Sprintf(`{"id":%d,"updated_at":%q}`, i+1, s))
			}
		}
		page, _ := strconv.Atoi(q.Get("page"))
		from, to := min((page-1)*2, len(all)), min(page*2, len(all))
		fmt.Fprintf(w, `{"data":[%s]}`, strings.Join(all[from:to], ","))
	})
}

const splitCursor = `type: DatetimeBasedCursor
cursor_field: updated_at
datetime_format: "%Y-%m-%dT%H:%M:%SZ"
start_datetime: "2024-01-01T00:00:00Z"
end_datetime: "2024-01-31T00:00:00Z"
start_time_option: {type: RequestOption, inject_into: request_parameter, field_name: start_time}
end_time_option: {type: RequestOption, inject_into: request_parameter, field_name: end_time}`

const pagesOf2 = `paginator:
  type: DefaultPaginator
  page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}
  pagination_strategy: {type: PageIncrement, page_size: 2, start_from_page: 1}
pagination_reset:
  type: PaginationReset
  action: SPLIT_USING_CURSOR
  limits: {type: PaginationResetLimits, number_of_records: 3}`

func splitRequest(start string, page int) string {
	return fmt.Sprintf("GET /items?end_time=%s&page=%d&start_time=%s", q("2024-01-31T00:00:00Z"), page, q(start))
}

func TestPaginationResetLimitSplitsUsingTheCursor(t *testing.T) {
	stamps := []string{"2024-01-02T00:00:00Z", "2024-01-03T00:00:00Z", "2024-01-04T00:00:00Z", "2024-01-05T00:00:00Z", "2024-01-06T00:00:00Z"}
	a := sortedAPI(t, false, stamps...)
	c := incrementalConnector(t, incrementalStream(a.URL, splitCursor, pagesOf2), nil, "items")
	res := c.read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	// 4 records read reach the limit of 3: the slice starts again at the
	// newest updated_at read, from the first page.
	equalLists(t, "requests", a.lines(), []string{
		splitRequest("2024-01-01T00:00:00Z", 1), splitRequest("2024-01-01T00:00:00Z", 2),
		splitRequest("2024-01-05T00:00:00Z", 1), splitRequest("2024-01-05T00:00:00Z", 2),
	})
	// The record on the new start comes again, as in Airbyte.
	equalLists(t, "records", res.records("items"), []string{
		`{"id":1,"updated_at":"2024-01-02T00:00:00Z"}`, `{"id":2,"updated_at":"2024-01-03T00:00:00Z"}`,
		`{"id":3,"updated_at":"2024-01-04T00:00:00Z"}`, `{"id":4,"updated_at":"2024-01-05T00:00:00Z"}`,
		`{"id":4,"updated_at":"2024-01-05T00:00:00Z"}`, `{"id":5,"updated_at":"2024-01-06T00:00:00Z"}`,
	})
	equalLists(t, "info logs", res.logs("INFO")[:1], []string{
		`Stream items: pagination reset (4 records read in this run of the slice, streams[0].retriever.pagination_reset.limits.number_of_records is 3); reading from the first page again, ` +
			`the slice going from {"end_time":"2024-01-31T00:00:00Z","start_time":"2024-01-01T00:00:00Z"} to {"end_time":"2024-01-31T00:00:00Z","start_time":"2024-01-05T00:00:00Z"}`,
	})
	equalLists(t, "states", res.states(), []string{itemState(`{"updated_at":"2024-01-06T00:00:00Z"}`, 6)})
	equalLists(t, "statuses", res.statuses("items"), []string{"STARTED", "RUNNING", "COMPLETE"})
}

func TestSplitUsingCursorFailsWhenTheSliceCannotNarrow(t *testing.T) {
	// The API ignores start_time: the second run reads the same records, the
	// newest is the same, and the slice would be read the same way again.
	stamps := []string{"2024-01-02T00:00:00Z", "2024-01-03T00:00:00Z", "2024-01-04T00:00:00Z", "2024-01-05T00:00:00Z"}
	a := sortedAPI(t, true, stamps...)
	c := incrementalConnector(t, incrementalStream(a.URL, splitCursor, pagesOf2), nil, "items")
	res := c.read(t)
	if res.code != 1 {
		t.Fatalf("exit %d, want 1: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{
		splitRequest("2024-01-01T00:00:00Z", 1), splitRequest("2024-01-01T00:00:00Z", 2),
		splitRequest("2024-01-05T00:00:00Z", 1), splitRequest("2024-01-05T00:00:00Z", 2),
	})
	if got := len(res.records("items")); got != 8 {
		t.Errorf("%d records, want 8", got)
	}
	equalLists(t, "warnings", res.logs("WARN"), []string{
		"Stream items: records of the slice did not come in ascending updated_at order; narrowing the slice may skip records",
	})
	errs := res.errors()
	want := `stream items: pagination reset (4 records read in this run of the slice, streams[0].retriever.pagination_reset.limits.number_of_records is 3) but the slice ` +
		`{"end_time":"2024-01-31T00:00:00Z","start_time":"2024-01-05T00:00:00Z"} cannot be narrowed: no record read since the previous start has a newer updated_at (SPLIT_USING_CURSOR needs records in ascending updated_at order)`
	if len(errs) != 2 || errs[0]["message"] != want || errs[0]["failure_type"] != "system_error" {
		t.Errorf("errors %v\nwant %q", errs, want)
	}
	// The slice was not read to its end: the state does not move; the one
	// written with the failure is the start, where a sync resumes (as the
	// reference writes it for a stream that fails).
	equalLists(t, "states", res.states(), []string{itemState(`{"updated_at":"2024-01-01T00:00:00Z"}`, 8)})
}

func TestResetPaginationWithACursorAndNoRecordFails(t *testing.T) {
	// Capped on the first page: nothing was read to narrow the slice with.
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"error":"max offset exceeded"}`)
	})
	m := strings.Replace(incrementalStream(a.URL, splitCursor, pagesOf2), "path: /items}",
		"path: /items, error_handler: {type: DefaultErrorHandler, response_filters: [{type: HttpResponseFilter, action: RESET_PAGINATION, http_codes: [400]}]}}", 1)
	res := incrementalConnector(t, m, nil, "items").read(t)
	equalLists(t, "requests", a.lines(), []string{splitRequest("2024-01-01T00:00:00Z", 1)})
	errs := res.errors()
	if res.code != 1 || len(errs) != 2 || errs[0]["failure_type"] != "system_error" ||
		!strings.HasPrefix(errs[0]["message"].(string), "stream items: pagination reset (the error handler's RESET_PAGINATION matched HTTP 400 Bad Request from GET ") ||
		!strings.HasSuffix(errs[0]["message"].(string), `but the slice {"end_time":"2024-01-31T00:00:00Z","start_time":"2024-01-01T00:00:00Z"} cannot be narrowed: no record read since the previous start has a newer updated_at (SPLIT_USING_CURSOR needs records in ascending updated_at order)`) {
		t.Errorf("exit %d, errors %v", res.code, errs)
	}
}

func TestCheckIgnoresPaginationResetLimits(t *testing.T) {
	// As Airbyte's check, which stops at the first record, the limit of 3 is
	// not reached by the first page's records.
	stamps := []string{"2024-01-02T00:00:00Z", "2024-01-03T00:00:00Z"}
	a := sortedAPI(t, false, stamps...)
	m := strings.Replace(incrementalStream(a.URL, splitCursor, pagesOf2), "number_of_records: 3", "number_of_records: 1", 1)
	res := incrementalConnector(t, m, nil, "items").check(t)
	st := res.ofType("CONNECTION_STATUS")
	if len(st) != 1 || st[0]["connectionStatus"].(map[string]any)["status"] != "SUCCEEDED" {
		t.Fatalf("check: %s", res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{splitRequest("2024-01-01T00:00:00Z", 1)})
}

func TestPaginationResetRefusedAtLoad(t *testing.T) {
	const path = "invalid manifest: streams[0].retriever.pagination_reset"
	plain := stream("items", "url_base: http://127.0.0.1:1\npath: /items", "[data]", offsetLimit2)
	cases := []struct {
		name, manifest, want string
	}{
		{"limits with a record filter",
			strings.Replace(plain, "field_path: [data]}", "field_path: [data]}, record_filter: {type: RecordFilter, condition: \"{{ record.id > 1 }}\"}", 1) +
				"      pagination_reset: {type: PaginationReset, action: RESET, limits: {type: PaginationResetLimits, number_of_records: 5}}\n",
			path + ".limits: cannot be used with a record_selector.record_filter: records the filter drops would not count towards number_of_records (Airbyte refuses it too)"},
		{"a counting cursor to split",
			incrementalStream("http://127.0.0.1:1", "{type: IncrementingCountCursor, cursor_field: id}", pagesOf2),
			path + ".action: SPLIT_USING_CURSOR needs a DatetimeBasedCursor to narrow the slice with; the stream's incremental_sync (streams[0].incremental_sync) is not one: use RESET"},
		{"no limit",
			plain + "      pagination_reset: {type: PaginationReset, action: RESET, limits: {type: PaginationResetLimits, number_of_records: 0}}\n",
			path + ".limits.number_of_records: must be >= 1 but found 0"},
		{"an unknown action",
			plain + "      pagination_reset: {type: PaginationReset, action: RESTART}\n",
			path + ".action: must be SPLIT_USING_CURSOR or RESET"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := incrementalConnector(t, tc.manifest, nil, "items").read(t)
			errs := res.errors()
			if res.code != 1 || len(errs) != 1 || errs[0]["failure_type"] != "config_error" || errs[0]["message"] != tc.want {
				t.Errorf("exit %d, errors %v\nwant %q", res.code, errs, tc.want)
			}
		})
	}
}

func TestSplitUsingCursorWithoutCursorWarnsAndRestarts(t *testing.T) {
	a := cappedAPI(t, 7, 4, func(call int) bool { return call == 1 })
	m := stream("items", resetOnCap(a.URL), "[data]", offsetLimit2+"\npagination_reset: {type: PaginationReset, action: SPLIT_USING_CURSOR}")
	res := newConnector(t, m, nil, "items").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), offsets(0, 2, 4, 6, 0, 2, 4, 6))
	equalLists(t, "warnings", res.logs("WARN"), []string{
		"streams[0].retriever.pagination_reset.action: SPLIT_USING_CURSOR on a stream without incremental_sync restarts the slice from its first page, as RESET does",
	})
}
