package cli

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// A template whose evaluation raises a TypeError never becomes its own text
// in a value: the read stops with a TRACE error naming the manifest path and
// the TypeError, before any request that would carry it is sent. Airbyte's
// runtime (JinjaInterpolation's `except TypeError: return s`) takes the
// template's text as its value instead. A condition, of which nothing is
// sent, holds on it as in Airbyte, with one WARN.

// microsoft-entra-id's cursor reads the skip token out of @odata.nextLink,
// which the last page does not have: regex_search of None. Run against this
// API, Airbyte's runtime (CDK 7.28.2) emits the three records and then sends
// a third request, GET /users?%24skiptoken=%7B%7B+response.get%28%27%40odata.nextLink%27%29+...,
// the cursor template's own text (its cursor_value is never None here, so the
// pagination does not end), and fails the stream with that request's HTTP 400
// (system_error, exit 1). We emit the same three records and stop with the
// TypeError instead of the third request.
func TestCursorTypeErrorOnLastPageStopsBeforeSending(t *testing.T) {
	var base string
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		switch r.URL.Query().Get("$skiptoken") {
		case "":
			fmt.Fprintf(w, `{"value":[{"id":1},{"id":2}],"@odata.nextLink":"%s/users?$skiptoken=abc"}`, base)
		case "abc":
			fmt.Fprint(w, `{"value":[{"id":3}]}`)
		default:
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":{"code":"BadRequest","message":"bad skiptoken"}}`)
		}
	})
	base = a.URL
	m := stream("s", fmt.Sprintf("url_base: %s\npath: /users", a.URL), "[value]", `paginator:
  type: DefaultPaginator
  page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: "$skiptoken"}
  pagination_strategy:
    type: CursorPagination
    cursor_value: "{{ response.get('@odata.nextLink') | regex_search('skiptoken=([^&]*)') }}"`)
	res := newConnector(t, m, nil, "s").read(t)
	equalLists(t, "requests", a.lines(), []string{"GET /users", "GET /users?%24skiptoken=abc"})
	equalLists(t, "records", res.records("s"), ids(1, 4))
	failedAfterRecords(t, res, "system_error", `streams[0].retriever.paginator.pagination_strategy.cursor_value: template "{{ response.get('@odata.nextLink') | regex_search('skiptoken=([^&]*)') }}": TypeError: filter regex_search: expected string or bytes-like object, got 'NoneType'`)
}

// A stop condition that raises a TypeError holds, with one WARN naming the
// template, as in Airbyte (its InterpolatedBoolean reads the template's own
// text, a non-empty string, as true): `"next" in headers.get('Link')` on the
// last page, which has no Link header, ends the pages COMPLETE (run against
// this API, Airbyte's runtime reads both pages and ends COMPLETE, exit 0).
// Nothing of a condition is sent, so its text never leaves.
func TestStopConditionTypeErrorHolds(t *testing.T) {
	var base string
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		if r.URL.Query().Get("page") == "" {
			w.Header().Set("Link", fmt.Sprintf(`<%s/items?page=2>; rel="next"`, base))
			fmt.Fprint(w, `{"data":[{"id":1}]}`)
			return
		}
		fmt.Fprint(w, `{"data":[{"id":2}]}`)
	})
	base = a.URL
	m := stream("s", fmt.Sprintf("url_base: %s\npath: /items", a.URL), "[data]", `paginator:
  type: DefaultPaginator
  page_token_option: {type: RequestPath}
  pagination_strategy:
    type: CursorPagination
    cursor_value: "{{ headers['link']['next']['url'] }}"
    stop_condition: "{{ not 'next' in headers.get('Link') }}"`)
	res := newConnector(t, m, nil, "s").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{"GET /items", "GET /items?page=2"})
	equalLists(t, "records", res.records("s"), ids(1, 3))
	equalLists(t, "statuses", res.statuses("s"), []string{"STARTED", "RUNNING", "COMPLETE"})
	equalLists(t, "warnings", res.warnings(), []string{`streams[0].retriever.paginator.pagination_strategy.stop_condition: template "{{ not 'next' in headers.get('Link') }}": TypeError: argument of type 'NoneType' is not iterable: the condition holds, as in Airbyte, which reads a template failing with a TypeError as its own text`})
}

// A record filter whose condition raises a TypeError on a record (n is null)
// keeps the record, with one WARN for the template however many records it
// held on, as Airbyte's runtime keeps it (run against this API with this
// manifest, it emits every record it holds on and ends COMPLETE, exit 0).
func TestRecordFilterTypeErrorKeepsTheRecord(t *testing.T) {
	a := fixedAPI(t, `{"data":[{"id":1,"n":5},{"id":2,"n":null},{"id":3,"n":1},{"id":4,"n":null}]}`)
	m := stream("s", fmt.Sprintf("url_base: %s\npath: /items", a.URL), "[data]", "")
	m = strings.Replace(m, "extractor: {type: DpathExtractor, field_path: [data]}}",
		`extractor: {type: DpathExtractor, field_path: [data]}, record_filter: {type: RecordFilter, condition: "{{ record['n'] > 3 }}"}}`, 1)
	res := newConnector(t, m, nil, "s").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{"GET /items"})
	equalLists(t, "records", res.records("s"), []string{`{"id":1,"n":5}`, `{"id":2,"n":null}`, `{"id":4,"n":null}`})
	equalLists(t, "warnings", res.warnings(), []string{`streams[0].retriever.record_selector.record_filter.condition: template "{{ record['n'] > 3 }}": TypeError: '>' not supported between instances of 'NoneType' and 'int': the condition holds, as in Airbyte, which reads a template failing with a TypeError as its own text`})
}

// A request parameter that raises a TypeError (regex_search of a config key
// that is not there) sends nothing: Airbyte's runtime sends the template's
// text, GET /other?since=%7B%7B+config%5B%27start%27%5D+%7C+regex_search...
// (run against a real server: the request goes out and the stream ends
// COMPLETE when the API accepts it).
func TestRequestParameterTypeErrorSendsNothing(t *testing.T) {
	a := fixedAPI(t, `{"data":[{"id":1}]}`)
	m := stream("s", fmt.Sprintf(`url_base: %s
path: /other
request_parameters:
  since: "{{ config.get('start') | regex_search('(\\d+)') }}"`, a.URL), "[data]", "")
	res := newConnector(t, m, map[string]any{"other": 1}, "s").read(t)
	equalLists(t, "requests", a.lines(), nil)
	streamError(t, res, "config_error", `stream s: streams[0].retriever.requester.request_parameters.since: template "{{ config.get('start') | regex_search('(\\d+)') }}": TypeError: filter regex_search: expected string or bytes-like object, got 'NoneType'`)
}

// failedAfterRecords checks that a read failed on stream s, which had emitted
// records, with one TRACE error of that failure type and message, then the
// sync's summary and exit code 1.
func failedAfterRecords(t *testing.T, res result, failureType, message string) {
	t.Helper()
	equalLists(t, "statuses", res.statuses("s"), []string{"STARTED", "RUNNING", "INCOMPLETE"})
	want := []map[string]any{
		{"failure_type": failureType, "message": message, "stream_descriptor": map[string]any{"name": "s"}},
		{"failure_type": "config_error", "message": "During the sync, the following streams did not sync successfully: s"},
	}
	if res.code != 1 || fmt.Sprint(res.errors()) != fmt.Sprint(want) {
		t.Errorf("exit %d, errors:\n got %v\nwant %v", res.code, res.errors(), want)
	}
}

// An error handler's predicate that raises a TypeError on a response ('x' in
// None) holds, with one WARN, as in Airbyte's runtime, which reads the
// template's text as true: its filter (here IGNORE) matches the response,
// whose records are then not read.
func TestErrorHandlerPredicateTypeErrorHolds(t *testing.T) {
	a := fixedAPI(t, `{"data":[{"id":1}],"error":null}`)
	m := stream("s", fmt.Sprintf(`url_base: %s
path: /items
error_handler:
  type: DefaultErrorHandler
  response_filters:
    - {type: HttpResponseFilter, action: IGNORE, predicate: "{{ 'quota' in response.get('error') }}"}`, a.URL), "[data]", "")
	res := newConnector(t, m, nil, "s").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{"GET /items"})
	equalLists(t, "records", res.records("s"), nil)
	equalLists(t, "warnings", res.warnings(), []string{
		`streams[0].retriever.requester.error_handler.response_filters[0].predicate: template "{{ 'quota' in response.get('error') }}": TypeError: argument of type 'NoneType' is not iterable: the condition holds, as in Airbyte, which reads a template failing with a TypeError as its own text`,
		fmt.Sprintf("Ignoring HTTP 200 from GET %s/items", a.URL),
	})
}
