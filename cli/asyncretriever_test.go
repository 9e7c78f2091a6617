package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// reportAPI is a report API: POST /jobs creates job j<n> for the JSON body's
// account, GET /jobs/<id> answers the next of its statuses (the last one
// again once they are used up), with the job's files once "done", GET
// /files/<id>-<i> serves a file's rows, POST /jobs/<id>/delete and
// /jobs/<id>/abort answer 204.
type reportAPI struct {
	*api
	mu       sync.Mutex
	statuses []string // the statuses every job goes through
	polls    map[string]int
	jobs     int
}

func newReportAPI(t *testing.T, statuses ...string) *reportAPI {
	ra := &reportAPI{statuses: statuses, polls: map[string]int{}}
	ra.api = newAPI(t, func(w http.ResponseWriter, r *http.Request, body string) {
		ra.mu.Lock()
		defer ra.mu.Unlock()
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/jobs":
			ra.jobs++
			w.Header().Set("X-Job-Ticket", fmt.Sprintf("t%d", ra.jobs))
			fmt.Fprintf(w, `{"id":"j%d"}`, ra.jobs)
		case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/jobs/"):
			id := strings.TrimPrefix(r.URL.Path, "/jobs/")
			n := min(ra.polls[id], len(ra.statuses)-1)
			ra.polls[id]++
			if ra.statuses[n] != "done" {
				fmt.Fprintf(w, `{"status":%q}`, ra.statuses[n])
				return
			}
			fmt.Fprintf(w, `{"status":"done","files":["%[1]s/files/%[2]s-0","%[1]s/files/%[2]s-1"]}`, ra.URL, id)
		case strings.HasPrefix(r.URL.Path, "/files/"):
			f := strings.TrimPrefix(r.URL.Path, "/files/")
			fmt.Fprintf(w, `{"rows":[{"id":"%[1]s-a","n":1},{"id":"%[1]s-b","n":0}]}`, f)
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	})
	return ra
}

// asyncManifest is a one-stream manifest whose stream "reports" runs the
// report API's jobs, one per account (a1, a2), with the given extra fields
// of the AsyncRetriever (YAML, unindented).
func asyncManifest(url, extra string) string {
	return fmt.Sprintf(`version: 6.0.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [reports]}
concurrency_level: {type: ConcurrencyLevel, default_concurrency: 1}
streams:
  - type: DeclarativeStream
    name: reports
    primary_key: [id]
    retriever:
      type: AsyncRetriever
      partition_router: {type: ListPartitionRouter, cursor_field: account, values: [a1, a2]}
      creation_requester:
        type: HttpRequester
        url_base: %[1]q
        path: /jobs
        http_method: POST
        request_headers: {X-Key: "{{ config.key }}"}
        request_body_json: {account: "{{ stream_partition.account }}"}
      polling_requester:
        type: HttpRequester
        url_base: %[1]q
        path: "/jobs/{{ creation_response.id }}"
        request_parameters: {ticket: "{{ creation_response.headers['x-job-ticket'] }}"}
      download_requester:
        type: HttpRequester
        url_base: "{{ download_target }}"
        request_parameters: {job: "{{ stream_slice.extra_fields.polling_response.status }}-{{ creation_response.id }}"}
      delete_requester:
        type: HttpRequester
        url_base: %[1]q
        path: "/jobs/{{ stream_slice.extra_fields['creation_response']['id'] }}/delete"
        http_method: POST
      status_extractor: {type: DpathExtractor, field_path: [status]}
      status_mapping: {type: AsyncJobStatusMap, running: [pending, processing], completed: [done], failed: [error], timeout: [expired]}
      download_target_extractor: {type: DpathExtractor, field_path: [files]}
      download_extractor: {type: DpathExtractor, field_path: [rows]}
      record_selector:
        type: RecordSelector
        extractor: {type: DpathExtractor, field_path: []}
        record_filter: {type: RecordFilter, condition: "{{ record.n > 0 }}"}
%[2]s
    transformations: [{type: AddFields, fields: [{path: [account], value: "{{ stream_partition.account }}"}]}]
`, url, indent(extra, 6))
}

// fastJobs makes the waits between polls short and a minute of
// polling_job_timeout last 50ms.
func fastJobs(t *testing.T) {
	t.Setenv("SOURCE_DECLARATIVE_ASYNC_POLL_INTERVAL", "1ms")
	t.Setenv("SOURCE_DECLARATIVE_ASYNC_TIMEOUT_MINUTE", "50ms")
}

func TestAsyncRetrieverRunsEachSlicesJob(t *testing.T) {
	fastJobs(t)
	ra := newReportAPI(t, "pending", "processing", "done")
	c := newConnector(t, asyncManifest(ra.URL, ""), map[string]any{"key": "k1"}, "reports")
	res := c.read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	var want []string
	for i, acct := range []string{"a1", "a2"} {
		j := fmt.Sprintf("j%d", i+1)
		want = append(want, "POST /jobs",
			"GET /jobs/"+j+"?ticket=t"+fmt.Sprint(i+1), "GET /jobs/"+j+"?ticket=t"+fmt.Sprint(i+1), "GET /jobs/"+j+"?ticket=t"+fmt.Sprint(i+1),
			"GET /files/"+j+"-0?job=done-"+j, "GET /files/"+j+"-1?job=done-"+j,
			"POST /jobs/"+j+"/delete")
		_ = acct
	}
	equalLists(t, "requests", ra.lines(), want)
	reqs := ra.requests()
	if reqs[0].Body != `{"account":"a1"}` || reqs[0].Header.Get("X-Key") != "k1" || reqs[7].Body != `{"account":"a2"}` {
		t.Errorf("creation requests: %q %q, %q", reqs[0].Body, reqs[0].Header.Get("X-Key"), reqs[7].Body)
	}
	equalLists(t, "records", res.records("reports"), []string{
		`{"account":"a1","id":"j1-0-a","n":1}`, `{"account":"a1","id":"j1-1-a","n":1}`,
		`{"account":"a2","id":"j2-0-a","n":1}`, `{"account":"a2","id":"j2-1-a","n":1}`,
	})
	equalLists(t, "statuses", res.statuses("reports"), []string{"STARTED", "RUNNING", "COMPLETE"})
}

func TestAsyncRetrieverRetriesFailedJobsThenFails(t *testing.T) {
	fastJobs(t)
	ra := newReportAPI(t, "error")
	c := newConnector(t, asyncManifest(ra.URL, ""), map[string]any{"key": "k1"}, "reports")
	res := c.read(t)
	// Each slice's job is tried three times; a slice that fails for good
	// does not keep the next one from being read, as in the CDK.
	equalLists(t, "requests", ra.lines(), []string{
		"POST /jobs", "GET /jobs/j1?ticket=t1",
		"POST /jobs", "GET /jobs/j2?ticket=t2",
		"POST /jobs", "GET /jobs/j3?ticket=t3",
		"POST /jobs", "GET /jobs/j4?ticket=t4",
		"POST /jobs", "GET /jobs/j5?ticket=t5",
		"POST /jobs", "GET /jobs/j6?ticket=t6",
	})
	errs := res.errors()
	if res.code != 1 || len(errs) != 3 || errs[0]["failure_type"] != "config_error" ||
		errs[0]["message"] != `stream reports: the job of slice {"account":"a1"} did not complete: failed after 3 attempt(s)` ||
		errs[1]["message"] != `stream reports: the job of slice {"account":"a2"} did not complete: failed after 3 attempt(s)` {
		t.Fatalf("exit %d, errors %v", res.code, errs)
	}
	if len(res.records("reports")) != 0 {
		t.Errorf("records: %v", res.records("reports"))
	}
	equalLists(t, "statuses", res.statuses("reports"), []string{"STARTED", "RUNNING", "INCOMPLETE"})
}

func TestAsyncRetrieverStartsAFailedJobAgain(t *testing.T) {
	fastJobs(t)
	ra := newReportAPI(t, "error")
	// The third job completes: the statuses depend on the job, not the poll.
	ra.api.Config.Handler = jobsFailingUntil(ra, 3)
	c := newConnector(t, asyncManifest(ra.URL, ""), map[string]any{"key": "k1"}, "reports")
	res := c.read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", ra.lines()[:10], []string{
		"POST /jobs", "GET /jobs/j1?ticket=t1",
		"POST /jobs", "GET /jobs/j2?ticket=t2",
		"POST /jobs", "GET /jobs/j3?ticket=t3",
		"GET /files/j3-0?job=done-j3", "GET /files/j3-1?job=done-j3", "POST /jobs/j3/delete",
		"POST /jobs",
	})
	if got := res.logs("WARN"); len(got) != 2 || got[0] != `Stream reports: the job of slice {"account":"a1"} ended failed; starting it again (attempt 2 of 3)` {
		t.Errorf("warnings: %q", got)
	}
	if len(res.records("reports")) != 4 {
		t.Errorf("records: %v", res.records("reports"))
	}
}

// jobsFailingUntil serves the report API, with jobs before the n-th
// failing and the others done at once.
func jobsFailingUntil(ra *reportAPI, n int) http.Handler {
	inner := ra.api.Config.Handler
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/jobs/") {
			var k int
			fmt.Sscanf(strings.TrimPrefix(r.URL.Path, "/jobs/j"), "%d", &k)
			ra.mu.Lock()
			if k < n {
				ra.statuses = []string{"error"}
			} else {
				ra.statuses = []string{"done"}
			}
			ra.mu.Unlock()
		}
		inner.ServeHTTP(w, r)
	})
}

func TestAsyncRetrieverAbortsTimedOutJobs(t *testing.T) {
	fastJobs(t)
	ra := newReportAPI(t, "expired")
	abort := "abort_requester: {type: HttpRequester, url_base: " + fmt.Sprintf("%q", ra.URL) + `, path: "/jobs/{{ creation_response.id }}/abort", http_method: POST}`
	c := newConnector(t, asyncManifest(ra.URL, abort), map[string]any{"key": "k1"}, "reports")
	res := c.read(t)
	equalLists(t, "requests", ra.lines(), []string{
		"POST /jobs", "GET /jobs/j1?ticket=t1", "POST /jobs/j1/abort",
		"POST /jobs", "GET /jobs/j2?ticket=t2", "POST /jobs/j2/abort",
		"POST /jobs", "GET /jobs/j3?ticket=t3", "POST /jobs/j3/abort",
		"POST /jobs", "GET /jobs/j4?ticket=t4", "POST /jobs/j4/abort",
		"POST /jobs", "GET /jobs/j5?ticket=t5", "POST /jobs/j5/abort",
		"POST /jobs", "GET /jobs/j6?ticket=t6", "POST /jobs/j6/abort",
	})
	if errs := res.errors(); res.code != 1 || len(errs) != 3 || errs[0]["message"] != `stream reports: the job of slice {"account":"a1"} did not complete: timeout after 3 attempt(s)` {
		t.Fatalf("exit %d, errors %v", res.code, errs)
	}
}

func TestAsyncRetrieverPollingJobTimeout(t *testing.T) {
	fastJobs(t) // a minute lasts 50ms: the job never done times out
	ra := newReportAPI(t, "pending")
	abort := "polling_job_timeout: 1\nabort_requester: {type: HttpRequester, url_base: " + fmt.Sprintf("%q", ra.URL) + `, path: "/jobs/{{ creation_response.id }}/abort", http_method: POST}`
	c := newConnector(t, asyncManifest(ra.URL, abort), map[string]any{"key": "k1"}, "reports")
	res := c.read(t)
	var collapsed []string
	for _, l := range ra.lines() {
		if n := len(collapsed); n > 0 && collapsed[n-1] == l {
			continue
		}
		collapsed = append(collapsed, l)
	}
	equalLists(t, "requests, repeated polls once", collapsed, []string{
		"POST /jobs", "GET /jobs/j1?ticket=t1", "POST /jobs/j1/abort",
		"POST /jobs", "GET /jobs/j2?ticket=t2", "POST /jobs/j2/abort",
		"POST /jobs", "GET /jobs/j3?ticket=t3", "POST /jobs/j3/abort",
		"POST /jobs", "GET /jobs/j4?ticket=t4", "POST /jobs/j4/abort",
		"POST /jobs", "GET /jobs/j5?ticket=t5", "POST /jobs/j5/abort",
		"POST /jobs", "GET /jobs/j6?ticket=t6", "POST /jobs/j6/abort",
	})
	if errs := res.errors(); res.code != 1 || len(errs) != 3 || !strings.Contains(errs[0]["message"].(string), "timeout after 3 attempt(s)") {
		t.Fatalf("exit %d, errors %v", res.code, errs)
	}
}

func TestAsyncRetrieverUnknownStatus(t *testing.T) {
	fastJobs(t)
	ra := newReportAPI(t, "queued")
	c := newConnector(t, asyncManifest(ra.URL, ""), map[string]any{"key": "k1"}, "reports")
	res := c.read(t)
	equalLists(t, "requests", ra.lines(), []string{"POST /jobs", "GET /jobs/j1?ticket=t1", "POST /jobs", "GET /jobs/j2?ticket=t2"})
	want := fmt.Sprintf(`stream reports: streams[0].retriever.status_mapping: the API status "queued" (from %s/jobs/j1?ticket=t1) is not in any of its lists; add it where it belongs`, ra.URL)
	if errs := res.errors(); res.code != 1 || len(errs) != 3 || errs[0]["failure_type"] != "config_error" || errs[0]["message"] != want {
		t.Fatalf("exit %d, errors %v", res.code, errs)
	}
}

// datedReportAPI runs one job per POST /jobs, done at the first poll, whose
// one file holds one record updated at 06:00 on the day the job's body
// starts ("from").
func datedReportAPI(t *testing.T) *api {
	var mu sync.Mutex
	days := map[string]string{}
	var a *api
	a = newAPI(t, func(w http.ResponseWriter, r *http.Request, body string) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case r.URL.Path == "/jobs":
			id := fmt.Sprintf("j%d", len(days)+1)
			var from string
			if i := strings.Index(body, `"from":"`); i >= 0 {
				from = body[i+8 : i+18]
			}
			days[id] = from
			fmt.Fprintf(w, `{"id":%q}`, id)
		case strings.HasPrefix(r.URL.Path, "/jobs/"):
			fmt.Fprintf(w, `{"status":"done","files":["%s/files/%s"]}`, a.URL, strings.TrimPrefix(r.URL.Path, "/jobs/"))
		default:
			id := strings.TrimPrefix(r.URL.Path, "/files/")
			fmt.Fprintf(w, `[{"id":%q,"updated_at":"%sT06:00:00Z"}]`, id, days[id])
		}
	})
	return a
}

// datedAsyncManifest is a stream "items" running one job per day, one
// slice at a time so that its states come in the slices' order.
func datedAsyncManifest(url string) string {
	return fmt.Sprintf(`version: 6.0.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [items]}
concurrency_level: {type: ConcurrencyLevel, default_concurrency: 1}
streams:
  - type: DeclarativeStream
    name: items
    primary_key: [id]
    retriever:
      type: AsyncRetriever
      creation_requester:
        type: HttpRequester
        url_base: %[1]q
        path: /jobs
        http_method: POST
        request_body_json: {from: "{{ stream_interval.start_time }}", to: "{{ stream_interval.end_time }}"}
      polling_requester: {type: HttpRequester, url_base: %[1]q, path: "/jobs/{{ creation_response.id }}"}
      download_requester: {type: HttpRequester, url_base: "{{ download_target }}"}
      status_extractor: {type: DpathExtractor, field_path: [status]}
      status_mapping: {type: AsyncJobStatusMap, running: [], completed: [done], failed: [], timeout: []}
      download_target_extractor: {type: DpathExtractor, field_path: [files]}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}
    incremental_sync:
      type: DatetimeBasedCursor
      cursor_field: updated_at
      datetime_format: "%%Y-%%m-%%dT%%H:%%M:%%SZ"
      start_datetime: "2024-01-01T00:00:00Z"
      end_datetime: "2024-01-02T23:59:59Z"
      step: P1D
      cursor_granularity: PT1S
      start_time_option: {type: RequestOption, inject_into: request_parameter, field_name: since}
`, url)
}

func TestAsyncRetrieverIncrementalStateAfterEachSlice(t *testing.T) {
	fastJobs(t)
	a := datedReportAPI(t)
	c := incrementalConnector(t, datedAsyncManifest(a.URL), nil, "items")
	res := c.read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{"POST /jobs", "GET /jobs/j1", "GET /files/j1", "POST /jobs", "GET /jobs/j2", "GET /files/j2"})
	reqs := a.requests()
	if reqs[0].Body != `{"from":"2024-01-01T00:00:00Z","to":"2024-01-01T23:59:59Z"}` || reqs[3].Body != `{"from":"2024-01-02T00:00:00Z","to":"2024-01-02T23:59:59Z"}` {
		t.Errorf("creation bodies: %q, %q", reqs[0].Body, reqs[3].Body)
	}
	equalLists(t, "records", res.records("items"), []string{`{"id":"j1","updated_at":"2024-01-01T06:00:00Z"}`, `{"id":"j2","updated_at":"2024-01-02T06:00:00Z"}`})
	equalLists(t, "states", res.states(), []string{
		itemState(`{"updated_at":"2024-01-01T06:00:00Z"}`, 1),
		itemState(`{"updated_at":"2024-01-02T06:00:00Z"}`, 1),
	})
	if w := res.logs("WARN"); len(w) != 1 || !strings.Contains(w[0], "incremental_sync.start_time_option: is not sent by an AsyncRetriever") {
		t.Errorf("warnings: %q", w)
	}

	// The next sync starts from the state.
	a2 := datedReportAPI(t)
	c2 := incrementalConnector(t, datedAsyncManifest(a2.URL), nil, "items")
	state := writeFile(t, c2.dir, "state.json", `[{"type":"STREAM","stream":{"stream_descriptor":{"name":"items"},"stream_state":{"updated_at":"2024-01-02T06:00:00Z"}}}]`)
	res = c2.read(t, "--state", state)
	equalLists(t, "requests from the state", a2.lines(), []string{"POST /jobs", "GET /jobs/j1", "GET /files/j1"})
	if body := a2.requests()[0].Body; body != `{"from":"2024-01-02T06:00:00Z","to":"2024-01-02T23:59:59Z"}` {
		t.Errorf("creation body: %q", body)
	}
}

func TestAsyncRetrieverDownloadTargetRequesterAndPaginator(t *testing.T) {
	fastJobs(t)
	var a *api
	a = newAPI(t, func(w http.ResponseWriter, r *http.Request, body string) {
		switch {
		case r.URL.Path == "/jobs":
			fmt.Fprint(w, `{"id":"j1"}`)
		case r.URL.Path == "/jobs/j1":
			fmt.Fprint(w, `{"state":{"name":"SUCCESS"},"report":"r9"}`)
		case r.URL.Path == "/reports/r9/urls":
			fmt.Fprintf(w, `{"urls":[{"href":"%s/data/r9"}]}`, a.URL)
		case r.URL.Query().Get("cursor") == "":
			fmt.Fprint(w, `{"rows":[{"id":1}],"next":"c2"}`)
		default:
			fmt.Fprint(w, `{"rows":[{"id":2}],"next":null}`)
		}
	})
	m := fmt.Sprintf(`version: 6.0.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [rows]}
streams:
  - type: DeclarativeStream
    name: rows
    retriever:
      type: AsyncRetriever
      creation_requester: {type: HttpRequester, url_base: %[1]q, path: /jobs, http_method: POST}
      polling_requester: {type: HttpRequester, url_base: %[1]q, path: "/jobs/{{ creation_response.id }}"}
      download_target_requester: {type: HttpRequester, url_base: %[1]q, path: "/reports/{{ polling_response.report }}/urls"}
      download_target_extractor: {type: DpathExtractor, field_path: [urls, "*", href]}
      download_requester: {type: HttpRequester, url_base: "{{ download_target }}"}
      download_extractor: {type: DpathExtractor, field_path: [rows]}
      download_paginator:
        type: DefaultPaginator
        pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next }}", stop_condition: "{{ not response.next }}"}
        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: cursor}
      status_extractor: {type: DpathExtractor, field_path: [state, name]}
      status_mapping: {type: AsyncJobStatusMap, running: [PENDING], completed: [SUCCESS], failed: [FAILURE], timeout: [TIMEOUT]}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}
`, a.URL)
	res := newConnector(t, m, nil, "rows").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{"POST /jobs", "GET /jobs/j1", "GET /reports/r9/urls", "GET /data/r9", "GET /data/r9?cursor=c2"})
	equalLists(t, "records", res.records("rows"), []string{`{"id":1}`, `{"id":2}`})
}

func TestAsyncRetrieverRefusedAtLoad(t *testing.T) {
	base := `type: AsyncRetriever
creation_requester: {type: HttpRequester, url_base: "http://x", http_method: POST}
polling_requester: {type: HttpRequester, url_base: "http://x"}
download_requester: {type: HttpRequester, url_base: "{{ download_target }}"}
status_extractor: {type: DpathExtractor, field_path: [status]}
record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}
`
	mapping := "status_mapping: {type: AsyncJobStatusMap, running: [a], completed: [b], failed: [c], timeout: [d]}\n"
	targets := "download_target_extractor: {type: DpathExtractor, field_path: [urls]}\n"
	for _, tc := range []struct{ name, retriever, want string }{
		{"no download_target_extractor", base + mapping, "streams[0].retriever.download_target_extractor: is required"},
		{"a status in two lists", base + targets + "status_mapping: {type: AsyncJobStatusMap, running: [a], completed: [b, a], failed: [], timeout: []}\n",
			`streams[0].retriever.status_mapping.completed[1]: API status "a" is already mapped to running`},
		{"a status_mapping without timeout", base + targets + "status_mapping: {type: AsyncJobStatusMap, running: [a], completed: [b], failed: [c]}\n",
			"streams[0].retriever.status_mapping"},
		{"job responses read as XML", base + targets + mapping + "decoder: {type: XmlDecoder}\n",
			"streams[0].retriever.decoder: XmlDecoder is not supported for the job's responses"},
		{"a download extractor writing files", base + targets + mapping + "download_extractor: {type: ResponseToFileExtractor}\n",
			"streams[0].retriever.download_extractor: ResponseToFileExtractor is not supported here"},
		{"a schema loader's retriever", base + targets + mapping, "streams[0].schema_loader.retriever: AsyncRetriever is not supported here (supported: SimpleRetriever)"},
		{"query properties in the download", strings.Replace(base, `url_base: "{{ download_target }}"}`, `url_base: "{{ download_target }}", request_parameters: {fields: {type: QueryProperties, property_list: [a, b]}}}`, 1) + targets + mapping,
			"streams[0].retriever.download_requester.request_parameters.fields: QueryProperties are not supported in an AsyncRetriever's requests"},
		{"a lazily read partition", base + targets + mapping + `partition_router:
  type: SubstreamPartitionRouter
  parent_stream_configs:
    - type: ParentStreamConfig
      parent_key: id
      partition_field: pid
      lazy_read_pointer: [items]
      stream: {type: DeclarativeStream, name: p, retriever: {type: SimpleRetriever, requester: {type: HttpRequester, url_base: "http://x"}, record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}}}
`, "streams[0].retriever.partition_router.parent_stream_configs[0].lazy_read_pointer: is not supported with an AsyncRetriever"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := "version: 6.0.0\ntype: DeclarativeSource\ncheck: {type: CheckStream, stream_names: [s]}\nstreams:\n  - type: DeclarativeStream\n    name: s\n    retriever:\n" + indent(tc.retriever, 6)
			if tc.name == "a schema loader's retriever" {
				m = "version: 6.0.0\ntype: DeclarativeSource\ncheck: {type: CheckStream, stream_names: [s]}\nstreams:\n  - type: DeclarativeStream\n    name: s\n    retriever: {type: SimpleRetriever, requester: {type: HttpRequester, url_base: \"http://x\"}, record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}}\n    schema_loader:\n      type: DynamicSchemaLoader\n      schema_type_identifier: {key_pointer: [name]}\n      retriever:\n" + indent(tc.retriever, 8)
			}
			c := newConnector(t, m, nil, "s")
			res := runCLI(t, "discover", "--manifest", c.manifest, "--config", c.config)
			if errs := res.errors(); res.code != 1 || len(errs) != 1 || !strings.Contains(errs[0]["message"].(string), tc.want) {
				t.Errorf("want %q in:\n%s", tc.want, res.stdout)
			}
		})
	}
}

// asyncTestRead runs a Connector Builder test read of the report stream.
func asyncTestRead(t *testing.T, ra *reportAPI) (result, StreamReadView) {
	m, err := yamlToMap(asyncManifest(ra.URL, ""))
	if err != nil {
		t.Fatal(err)
	}
	c := newConnector(t, "", map[string]any{"__command": "test_read", "__injected_declarative_manifest": m, "key": "k1"}, "reports")
	res := runCLI(t, "read", "--config", c.config, "--catalog", c.catalog)
	var view StreamReadView
	if recs := res.ofType("RECORD"); len(recs) == 1 {
		b, _ := json.Marshal(recs[0]["record"].(map[string]any)["data"])
		if err := json.Unmarshal(b, &view); err != nil {
			t.Fatal(err)
		}
	}
	return res, view
}

// StreamReadView is the part of a test read the async tests look at.
type StreamReadView struct {
	Logs   []struct{ Level, Message string }
	Slices []struct {
		SliceDescriptor   map[string]any `json:"slice_descriptor"`
		AuxiliaryRequests []struct {
			Title, Type string
			Request     struct {
				URL        string `json:"url"`
				HTTPMethod string `json:"http_method"`
			}
		} `json:"auxiliary_requests"`
		Pages []struct {
			Request struct {
				URL string `json:"url"`
			}
			Records []map[string]any
		}
	}
}

func TestAsyncRetrieverTestReadShowsJobRequestsPerSlice(t *testing.T) {
	fastJobs(t)
	ra := newReportAPI(t, "pending", "done")
	res, view := asyncTestRead(t, ra)
	if res.code != 0 || len(view.Slices) != 2 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	for i, sl := range view.Slices {
		j := fmt.Sprintf("j%d", i+1)
		var aux, pages []string
		for _, a := range sl.AuxiliaryRequests {
			aux = append(aux, a.Type+" "+a.Title+": "+a.Request.HTTPMethod+" "+strings.TrimPrefix(a.Request.URL, ra.URL))
		}
		for _, p := range sl.Pages {
			pages = append(pages, fmt.Sprintf("%s: %d records", strings.TrimPrefix(p.Request.URL, ra.URL), len(p.Records)))
		}
		tk := fmt.Sprintf("?ticket=t%d", i+1)
		equalLists(t, "auxiliary requests of slice "+j, aux, []string{
			"ASYNC_CREATE Async Job -- Create: POST /jobs",
			"ASYNC_POLL Async Job -- Polling: GET /jobs/" + j + tk,
			"ASYNC_POLL Async Job -- Polling: GET /jobs/" + j + tk,
			"ASYNC_DELETE Async Job -- Delete: POST /jobs/" + j + "/delete",
		})
		equalLists(t, "pages of slice "+j, pages, []string{"/files/" + j + "-0?job=done-" + j + ": 1 records", "/files/" + j + "-1?job=done-" + j + ": 1 records"})
		if sl.SliceDescriptor["account"] != []string{"a1", "a2"}[i] {
			t.Errorf("slice %d descriptor: %v", i, sl.SliceDescriptor)
		}
	}
}

func TestAsyncRetrieverTestReadTriesAJobOnce(t *testing.T) {
	fastJobs(t)
	ra := newReportAPI(t, "error")
	res, _ := asyncTestRead(t, ra)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	// One attempt per job, as Airbyte's builder makes; a failed job does not
	// stop the next slice's (the CDK's job orchestrator keeps such failures
	// as non-breaking until every job ran).
	equalLists(t, "requests: one attempt per slice's job", ra.lines(), []string{"POST /jobs", "GET /jobs/j1?ticket=t1", "POST /jobs", "GET /jobs/j2?ticket=t2"})
	if !strings.Contains(res.stdout, `did not complete: failed after 1 attempt(s)`) {
		t.Errorf("the test read does not say the job failed: %s", res.stdout)
	}
}

func TestAsyncRetrieverCheckAndDiscover(t *testing.T) {
	fastJobs(t)
	ra := newReportAPI(t, "done")
	c := newConnector(t, asyncManifest(ra.URL, ""), map[string]any{"key": "k1"}, "reports")
	res := c.check(t)
	if res.code != 0 || !strings.Contains(res.stdout, `"status":"SUCCEEDED"`) {
		t.Fatalf("check: exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "check requests: up to the first record, then the job is deleted", ra.lines(),
		[]string{"POST /jobs", "GET /jobs/j1?ticket=t1", "GET /files/j1-0?job=done-j1", "POST /jobs/j1/delete"})
	res = runCLI(t, "discover", "--manifest", c.manifest, "--config", c.config)
	if res.code != 0 || !strings.Contains(res.stdout, `"name":"reports"`) || !strings.Contains(res.stdout, `"source_defined_primary_key":[["id"]]`) {
		t.Fatalf("discover: exit %d: %s", res.code, res.stdout)
	}
}

// TestAsyncRetrieverStreamedDownloadsCountForTheJobSlice: downloads read by a
// streaming decoder (JSON lines) count their records for the job's slice, as
// downloads read whole do: each slice's state holds its newest record.
func TestAsyncRetrieverStreamedDownloadsCountForTheJobSlice(t *testing.T) {
	fastJobs(t)
	a := datedReportAPI(t)
	m := strings.Replace(datedAsyncManifest(a.URL), "      download_target_extractor:", "      download_decoder: {type: JsonlDecoder}\n      download_target_extractor:", 1)
	res := incrementalConnector(t, m, nil, "items").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "records", res.records("items"), []string{`{"id":"j1","updated_at":"2024-01-01T06:00:00Z"}`, `{"id":"j2","updated_at":"2024-01-02T06:00:00Z"}`})
	equalLists(t, "states", res.states(), []string{
		itemState(`{"updated_at":"2024-01-01T06:00:00Z"}`, 1),
		itemState(`{"updated_at":"2024-01-02T06:00:00Z"}`, 1),
	})
}
