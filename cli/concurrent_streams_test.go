package cli

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// pagedStreams is a manifest of streams s0, s1, ... each reading /<name>
// page by page (?page=2, ...) while the API gives a next page, with the
// given concurrency_level (0: none) and extra top-level YAML.
func pagedStreams(url string, n, level int, extra string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "version: 6.0.0\ntype: DeclarativeSource\ncheck: {type: CheckStream, stream_names: [s0]}\n%s\n", extra)
	if level > 0 {
		fmt.Fprintf(&b, "concurrency_level: {type: ConcurrencyLevel, default_concurrency: %d}\n", level)
	}
	b.WriteString(`definitions:
  stream:
    type: DeclarativeStream
    primary_key: [id]
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: "` + url + `", path: "/{{ parameters.name }}"}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
      paginator:
        type: DefaultPaginator
        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}
        pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next }}", stop_condition: "{{ not response.next }}"}
streams:
`)
	for i := range n {
		fmt.Fprintf(&b, "  - {$ref: \"#/definitions/stream\", name: s%[1]d, $parameters: {name: s%[1]d}}\n", i)
	}
	return b.String()
}

// inFlight counts the requests an API is answering at once, and the most
// it answered at once.
type inFlight struct {
	mu        sync.Mutex
	now, peak int
}

func (f *inFlight) enter() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now++
	f.peak = max(f.peak, f.now)
}

func (f *inFlight) leave() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now--
}

func (f *inFlight) highest() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.peak
}

// pagedAPI serves pages pages of one record to every stream, each answered
// after delay, and refuses the streams named in failing with a 404.
func pagedAPI(t *testing.T, pages int, delay time.Duration, flight *inFlight, failing ...string) *api {
	return newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		flight.enter()
		defer flight.leave()
		time.Sleep(delay)
		name := strings.TrimPrefix(r.URL.Path, "/")
		for _, f := range failing {
			if name == f {
				w.WriteHeader(http.StatusNotFound)
				fmt.Fprint(w, `{"error":"no such stream"}`)
				return
			}
		}
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		page = max(page, 1)
		next := "null"
		if page < pages {
			next = strconv.Itoa(page + 1)
		}
		fmt.Fprintf(w, `{"data":[{"id":"%s-%d"}],"next":%s}`, name, page, next)
	})
}

// TestConcurrentStreamsShareWorkers: the streams of a catalog are read at
// the same time by concurrency_level workers (two without it, as in
// Airbyte): the API sees that many requests in flight, never more. Each
// stream's messages keep the protocol's order (STARTED, RUNNING, its
// records page by page, its STATE, COMPLETE), the streams start in catalog
// order, and a stream the API refuses fails alone: the others are read to
// their end and the read's error names it.
func TestConcurrentStreamsShareWorkers(t *testing.T) {
	for _, tc := range []struct {
		name         string
		level, peak  int
		streams      int
		failing      []string
		wantFailures string
	}{
		{"concurrency_level 4", 4, 4, 8, nil, ""},
		{"without concurrency_level", 0, 2, 4, nil, ""},
		{"a stream fails", 3, 3, 6, []string{"s1"}, "s1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var flight inFlight
			const pages = 3
			a := pagedAPI(t, pages, 30*time.Millisecond, &flight, tc.failing...)
			var names []string
			for i := range tc.streams {
				names = append(names, fmt.Sprintf("s%d", i))
			}
			res := newConnector(t, pagedStreams(a.URL, tc.streams, tc.level, ""), nil, names...).read(t)
			if got := flight.highest(); got != tc.peak {
				t.Errorf("peak requests in flight %d, want %d", got, tc.peak)
			}
			var started []string
			for _, l := range res.transcript() {
				if strings.HasSuffix(l, " STARTED") {
					started = append(started, strings.Fields(l)[1])
				}
			}
			equalLists(t, "streams started", started, names)
			for _, s := range names {
				if s == tc.wantFailures {
					got := res.streamTranscript(s)
					if len(got) != 5 || got[0] != "STATUS "+s+" STARTED" || got[1] != "STATUS "+s+" RUNNING" ||
						got[2] != fmt.Sprintf(`STATE %s {"__ab_no_cursor_state_message":true} count 0`, s) ||
						!strings.Contains(got[3], `HTTP 404 Not Found from GET `+a.URL+`/`+s) || got[4] != "STATUS "+s+" INCOMPLETE" {
						t.Errorf("messages of %s: %q", s, got)
					}
					continue
				}
				want := []string{"STATUS " + s + " STARTED", "STATUS " + s + " RUNNING"}
				for p := 1; p <= pages; p++ {
					want = append(want, fmt.Sprintf(`RECORD %s {"id":"%s-%d"}`, s, s, p))
				}
				want = append(want, fmt.Sprintf(`STATE %s {"__ab_no_cursor_state_message":true} count %d`, s, pages),
					fmt.Sprintf("LOG INFO Read %d records from stream %s", pages, s), "STATUS "+s+" COMPLETE")
				equalLists(t, "messages of "+s, res.streamTranscript(s), want)
			}
			if tc.wantFailures == "" {
				if res.code != 0 {
					t.Fatalf("exit %d: %v", res.code, res.errors())
				}
				return
			}
			errs := res.errors()
			last := errs[len(errs)-1]
			if res.code != 1 || last["message"] != "During the sync, the following streams did not sync successfully: "+tc.wantFailures {
				t.Errorf("exit %d, last error %v", res.code, last)
			}
		})
	}
}

// TestConcurrentSlicesStateCoversUnbrokenRun: the datetime slices of a
// stream are read at the same time, as partitions; a state written when a
// later slice ends before an earlier one still covers only the slices read
// in an unbroken run from the start, so that every record a state covers
// was printed before it.
func TestConcurrentSlicesStateCoversUnbrokenRun(t *testing.T) {
	stamps := []string{"2024-01-01T05:00:00Z", "2024-01-02T05:00:00Z", "2024-01-03T05:00:00Z", "2024-01-04T05:00:00Z"}
	var flight inFlight
	inner := datedAPI(t, stamps...)
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		flight.enter()
		defer flight.leave()
		if strings.HasPrefix(r.URL.Query().Get("since"), "2024-01-01") {
			time.Sleep(300 * time.Millisecond) // the first slice ends last
		} else {
			time.Sleep(30 * time.Millisecond)
		}
		resp, err := http.Get(inner.URL + r.URL.RequestURI())
		if err != nil {
			t.Error(err)
			return
		}
		defer resp.Body.Close()
		io.Copy(w, resp.Body)
	})
	cursor := strings.Replace(dailyCursor, `end_datetime: "2024-01-03T12:00:00Z"`, `end_datetime: "2024-01-04T23:59:59Z"`, 1)
	m := strings.Replace(incrementalStream(a.URL, cursor, ""), "default_concurrency: 1", "default_concurrency: 4", 1)
	res := incrementalConnector(t, m, nil, "items").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	if got := flight.highest(); got != 4 {
		t.Errorf("peak requests in flight %d, want 4 (one per slice)", got)
	}
	printed := map[string]bool{}
	var states []string
	for _, l := range res.streamTranscript("items") {
		switch {
		case strings.HasPrefix(l, "RECORD "):
			printed[l[strings.Index(l, `"updated_at":"`)+14:][:20]] = true
		case strings.HasPrefix(l, "STATE "):
			v := l[strings.Index(l, `"updated_at":"`)+14:][:20]
			states = append(states, v)
			for _, s := range stamps {
				if s <= v && !printed[s] {
					t.Errorf("state %s printed before the record of %s it covers", v, s)
				}
			}
		}
	}
	if len(states) == 0 || states[len(states)-1] != stamps[3] {
		t.Errorf("states %q, want the last to be %s", states, stamps[3])
	}
	if states[0] != "2024-01-01T00:00:00Z" {
		t.Errorf("first state %s: the first slice ends last, so a state before it stays at the start", states[0])
	}
}

// parentAndChildren is a manifest of a stream "parents" (/parents, two
// pages) whose requester has the given use_cache line, and two streams
// "c1" and "c2" reading /c1/<id> and /c2/<id> per parent record.
func parentAndChildren(url, useCache string, level int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `version: 6.0.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [parents]}
`)
	if level > 0 {
		fmt.Fprintf(&b, "concurrency_level: {type: ConcurrencyLevel, default_concurrency: %d}\n", level)
	}
	fmt.Fprintf(&b, `definitions:
  selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
  parents:
    type: DeclarativeStream
    name: parents
    primary_key: [id]
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: %[1]q, path: /parents%[2]s}
      record_selector: {$ref: "#/definitions/selector"}
      paginator:
        type: DefaultPaginator
        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}
        pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next }}", stop_condition: "{{ not response.next }}"}
  child:
    type: DeclarativeStream
    primary_key: [id]
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: %[1]q, path: "/{{ parameters.name }}/{{ stream_partition.parent }}"}
      record_selector: {$ref: "#/definitions/selector"}
      partition_router:
        type: SubstreamPartitionRouter
        parent_stream_configs:
          - {type: ParentStreamConfig, parent_key: id, partition_field: parent, stream: {$ref: "#/definitions/parents"}}
streams:
  - {$ref: "#/definitions/parents"}
  - {$ref: "#/definitions/child", name: c1, $parameters: {name: c1}}
  - {$ref: "#/definitions/child", name: c2, $parameters: {name: c2}}
`, url, useCache)
	return b.String()
}

// parentsAPI serves two pages of two parents and a record per child
// request. With hold, a /parents request waits (up to holdFor) until the
// same request came a second time: two reads at the same time each get
// their answer then, and one that waits for the other's answer costs
// holdFor.
func parentsAPI(t *testing.T, hold bool) *api {
	const holdFor = 500 * time.Millisecond
	var mu sync.Mutex
	second := map[string]chan struct{}{}
	return newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		if r.URL.Path != "/parents" {
			fmt.Fprintf(w, `{"data":[{"id":%q}]}`, strings.ReplaceAll(strings.TrimPrefix(r.URL.Path, "/"), "/", "-"))
			return
		}
		if hold {
			mu.Lock()
			ch, waiting := second[r.URL.RawQuery]
			if waiting {
				delete(second, r.URL.RawQuery)
			} else {
				ch = make(chan struct{})
				second[r.URL.RawQuery] = ch
			}
			mu.Unlock()
			if waiting {
				close(ch)
			} else {
				select {
				case <-ch:
				case <-time.After(holdFor):
				}
			}
		}
		if r.URL.Query().Get("page") == "2" {
			fmt.Fprint(w, `{"data":[{"id":"p3"},{"id":"p4"}],"next":null}`)
			return
		}
		fmt.Fprint(w, `{"data":[{"id":"p1"},{"id":"p2"}],"next":2}`)
	})
}

// requestCounts counts the API's requests by path and query.
func requestCounts(a *api) map[string]int {
	out := map[string]int{}
	for _, l := range a.lines() {
		out[strings.TrimPrefix(l, "GET ")]++
	}
	return out
}

func equalCounts(t *testing.T, got map[string]int, want map[string]int) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("requests:\n got: %v\nwant: %v", got, want)
	}
}

// childRequests are the requests of c1 and c2, once each.
func childRequests(counts map[string]int) map[string]int {
	for _, c := range []string{"c1", "c2"} {
		for _, p := range []string{"p1", "p2", "p3", "p4"} {
			counts["/"+c+"/"+p] = 1
		}
	}
	return counts
}

// TestConcurrentSubstreamParentReadOnce: a parent stream read as a stream
// of the catalog and by two children, all at the same time, is requested
// once per page (as Airbyte's use_cache, on by default for parents; where
// Airbyte asks again for a page another stream is still fetching, we wait
// for its answer). Every stream prints its records.
func TestConcurrentSubstreamParentReadOnce(t *testing.T) {
	for _, level := range []int{0, 4} {
		t.Run(fmt.Sprintf("concurrency_level %d", level), func(t *testing.T) {
			a := parentsAPI(t, level > 0)
			res := newConnector(t, parentAndChildren(a.URL, "", level), nil, "parents", "c1", "c2").read(t)
			if res.code != 0 {
				t.Fatalf("exit %d: %v", res.code, res.errors())
			}
			equalCounts(t, requestCounts(a), childRequests(map[string]int{"/parents": 1, "/parents?page=2": 1}))
			equalLists(t, "parents", res.records("parents"), []string{`{"id":"p1"}`, `{"id":"p2"}`, `{"id":"p3"}`, `{"id":"p4"}`})
			for _, c := range []string{"c1", "c2"} {
				equalSorted(t, c, res.records(c), []string{`{"id":"` + c + `-p1"}`, `{"id":"` + c + `-p2"}`, `{"id":"` + c + `-p3"}`, `{"id":"` + c + `-p4"}`})
			}
		})
	}
}

// TestConcurrentSubstreamUseCacheFalse: use_cache: false on a parent is
// respected while no read of it went to its end (two reads at the same
// time each ask, as Airbyte does), but a parent read in full in this sync
// is not asked again by a child (Airbyte asks again: the allow-list's
// parent-read-once).
func TestConcurrentSubstreamUseCacheFalse(t *testing.T) {
	t.Run("read at the same time", func(t *testing.T) {
		a := parentsAPI(t, true)
		res := newConnector(t, parentAndChildren(a.URL, ", use_cache: false", 4), nil, "parents", "c1").read(t)
		if res.code != 0 {
			t.Fatalf("exit %d: %v", res.code, res.errors())
		}
		want := childRequests(map[string]int{"/parents": 2, "/parents?page=2": 2})
		for _, p := range []string{"p1", "p2", "p3", "p4"} {
			delete(want, "/c2/"+p)
		}
		equalCounts(t, requestCounts(a), want)
	})
	t.Run("read in full before", func(t *testing.T) {
		// One stream makes partitions at a time: c1 reads the parent to its
		// end before c2 starts.
		a := parentsAPI(t, false)
		res := newConnector(t, parentAndChildren(a.URL, ", use_cache: false", 0), nil, "c1", "c2").read(t)
		if res.code != 0 {
			t.Fatalf("exit %d: %v", res.code, res.errors())
		}
		equalCounts(t, requestCounts(a), childRequests(map[string]int{"/parents": 1, "/parents?page=2": 1}))
		equalSorted(t, "c2", res.records("c2"), []string{`{"id":"c2-p1"}`, `{"id":"c2-p2"}`, `{"id":"c2-p3"}`, `{"id":"c2-p4"}`})
	})
}

// TestParentWindowEndingNowIsReadOnce: a parent stream whose window ends
// now (now_utc() in end_datetime, or no end_datetime), read as a stream and
// as the parent of another, asks one window ending when the sync began: the
// child's read of the parent is served by the first read, not asked again
// with a later end (each read taking its own clock, the ends differ by the
// microseconds between them).
func TestParentWindowEndingNowIsReadOnce(t *testing.T) {
	for name, end := range map[string]string{
		"end_datetime now_utc()": `end_datetime: {type: MinMaxDatetime, datetime: "{{ now_utc().strftime('%Y-%m-%dT%H:%M:%S.%fZ') }}"}`,
		"no end_datetime":        "",
	} {
		t.Run(name, func(t *testing.T) {
			a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
				if r.URL.Path == "/events" {
					fmt.Fprint(w, `{"data":[{"id":"e1","updated":"2024-02-01T00:00:00.000000Z"},{"id":"e2","updated":"2024-03-01T00:00:00.000000Z"}]}`)
					return
				}
				fmt.Fprintf(w, `{"data":[{"id":%q}]}`, strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/events/"), "/items"))
			})
			manifest := fmt.Sprintf(`version: 6.0.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [events]}
definitions:
  selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
  events:
    type: DeclarativeStream
    name: events
    primary_key: [id]
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: %q, path: /events}
      record_selector: {$ref: "#/definitions/selector"}
    incremental_sync:
      type: DatetimeBasedCursor
      cursor_field: updated
      datetime_format: "%%Y-%%m-%%dT%%H:%%M:%%S.%%fZ"
      start_datetime: {type: MinMaxDatetime, datetime: "2024-01-01T00:00:00.000000Z"}
      %s
      start_time_option: {type: RequestOption, inject_into: request_parameter, field_name: since}
      end_time_option: {type: RequestOption, inject_into: request_parameter, field_name: until}
streams:
  - {$ref: "#/definitions/events"}
  - type: DeclarativeStream
    name: items
    primary_key: [id]
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: %[1]q, path: "/events/{{ stream_partition.event }}/items"}
      record_selector: {$ref: "#/definitions/selector"}
      partition_router:
        type: SubstreamPartitionRouter
        parent_stream_configs:
          - {type: ParentStreamConfig, parent_key: id, partition_field: event, stream: {$ref: "#/definitions/events"}}
`, a.URL, end)
			before := time.Now().UTC()
			res := newConnector(t, manifest, nil, "events", "items").read(t)
			after := time.Now().UTC()
			if res.code != 0 {
				t.Fatalf("exit %d: %v", res.code, res.errors())
			}
			reqs := a.lines()
			if len(reqs) != 3 {
				t.Fatalf("requests %q: want /events once, then /events/e1/items and /events/e2/items", reqs)
			}
			q, err := url.ParseQuery(strings.TrimPrefix(reqs[0], "GET /events?"))
			until, perr := time.Parse("2006-01-02T15:04:05.000000Z", q.Get("until"))
			if err != nil || perr != nil || until.Before(before.Truncate(time.Microsecond)) || until.After(after) {
				t.Fatalf("first request %s: want until= a time of the run (%s to %s)", reqs[0], before.Format(time.RFC3339Nano), after.Format(time.RFC3339Nano))
			}
			equalLists(t, "first request", reqs[:1], []string{"GET /events?since=2024-01-01T00%3A00%3A00.000000Z&until=" + url.QueryEscape(q.Get("until"))})
			equalSorted(t, "the child's requests", reqs[1:], []string{"GET /events/e1/items", "GET /events/e2/items"})
			equalLists(t, "events", res.records("events"), []string{
				`{"id":"e1","updated":"2024-02-01T00:00:00.000000Z"}`, `{"id":"e2","updated":"2024-03-01T00:00:00.000000Z"}`})
			equalSorted(t, "items", res.records("items"), []string{`{"id":"e1"}`, `{"id":"e2"}`})
		})
	}
}

// TestConcurrentSubstreamCacheSpillsToTempFile: past its memory limit the
// cache writes answers to a temporary file, deleted as soon as it is made:
// the answers read back from it serve the second child, and nothing is
// left in the temporary directory.
func TestConcurrentSubstreamCacheSpillsToTempFile(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	t.Setenv("SOURCE_DECLARATIVE_CACHE_MEMORY", "10")
	a := parentsAPI(t, false)
	res := newConnector(t, parentAndChildren(a.URL, "", 0), nil, "c1", "c2").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %v", res.code, res.errors())
	}
	equalCounts(t, requestCounts(a), childRequests(map[string]int{"/parents": 1, "/parents?page=2": 1}))
	equalSorted(t, "c2", res.records("c2"), []string{`{"id":"c2-p1"}`, `{"id":"c2-p2"}`, `{"id":"c2-p3"}`, `{"id":"c2-p4"}`})
	equalLists(t, "cache log", filterPrefix(res.logs("INFO"), "Response cache"), []string{
		"Response cache: more than 10 bytes of answers kept in memory; the next ones go to a temporary file, already deleted (its space is freed when the sync ends)"})
	left, err := os.ReadDir(tmp)
	if err != nil || len(left) != 0 {
		t.Errorf("left in the temporary directory: %v %v", left, err)
	}
}

func filterPrefix(l []string, prefix string) []string {
	var out []string
	for _, s := range l {
		if strings.HasPrefix(s, prefix) {
			out = append(out, s)
		}
	}
	return out
}

// TestConcurrentAsyncJobsLimit: max_concurrent_async_job_count jobs run at
// once in the whole sync (one without it, as Airbyte's JobTracker), however
// many workers read the stream's partitions: a job holds its place from its
// creation until it is done.
func TestConcurrentAsyncJobsLimit(t *testing.T) {
	fastJobs(t)
	for _, tc := range []struct {
		limit string
		peak  int
	}{{"", 1}, {"max_concurrent_async_job_count: 2", 2}, {`max_concurrent_async_job_count: "{{ config['jobs'] }}"`, 3}} {
		t.Run(tc.limit, func(t *testing.T) {
			var mu sync.Mutex
			created := map[string]time.Time{}
			alive, peak := 0, 0
			var a *api
			a = newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
				mu.Lock()
				defer mu.Unlock()
				switch {
				case r.Method == http.MethodPost && r.URL.Path == "/jobs":
					id := fmt.Sprintf("j%d", len(created)+1)
					created[id] = time.Now()
					alive++
					peak = max(peak, alive)
					fmt.Fprintf(w, `{"id":%q}`, id)
				case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/jobs/"):
					id := strings.TrimPrefix(r.URL.Path, "/jobs/")
					if time.Since(created[id]) < 60*time.Millisecond {
						fmt.Fprint(w, `{"status":"pending"}`)
						return
					}
					alive--
					fmt.Fprintf(w, `{"status":"done","files":["%s/files/%s"]}`, a.URL, id)
				case strings.HasPrefix(r.URL.Path, "/files/"):
					fmt.Fprintf(w, `{"rows":[{"id":%q,"n":1}]}`, strings.TrimPrefix(r.URL.Path, "/files/"))
				default: // a job deleted
					w.WriteHeader(http.StatusNoContent)
				}
			})
			m := asyncManifest(a.URL, "")
			m = strings.Replace(m, "default_concurrency: 1", "default_concurrency: 4", 1)
			m = strings.Replace(m, "values: [a1, a2]", "values: [a1, a2, a3, a4]", 1)
			m = strings.Replace(m, "streams:", tc.limit+"\nstreams:", 1)
			res := newConnector(t, m, map[string]any{"key": "k1", "jobs": 3}, "reports").read(t)
			if res.code != 0 {
				t.Fatalf("exit %d: %v", res.code, res.errors())
			}
			if len(res.records("reports")) != 4 {
				t.Errorf("records %q", res.records("reports"))
			}
			if peak != tc.peak {
				t.Errorf("peak jobs running at once %d, want %d", peak, tc.peak)
			}
		})
	}
}

// TestConcurrentRateLimitHoldsBackEveryWorker: a 429 with Retry-After
// holds back every request to the API for its wait, not only the one
// answered: the worker reading the other stream waits too.
func TestConcurrentRateLimitHoldsBackEveryWorker(t *testing.T) {
	var mu sync.Mutex
	var limitedAt time.Time
	after := map[string]time.Duration{} // when each later request came, after the 429
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		mu.Lock()
		if !limitedAt.IsZero() {
			after[r.URL.RequestURI()] = time.Since(limitedAt)
		}
		if r.URL.Path == "/s0" && limitedAt.IsZero() {
			limitedAt = time.Now()
			mu.Unlock()
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		mu.Unlock()
		time.Sleep(100 * time.Millisecond)
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		next := "null"
		if page < 2 {
			next = "2"
		}
		fmt.Fprintf(w, `{"data":[{"id":%d}],"next":%s}`, max(page, 1), next)
	})
	res := newConnector(t, pagedStreams(a.URL, 2, 2, ""), nil, "s0", "s1").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %v", res.code, res.errors())
	}
	mu.Lock()
	defer mu.Unlock()
	// s1's first page may have been on its way; its second page would come
	// 100 ms after it, and waits, as s0's retry does.
	if _, ok := after["/s1?page=2"]; !ok || len(after) < 3 {
		t.Fatalf("requests after the 429: %v", after)
	}
	for uri, d := range after {
		if uri != "/s1" && d < 900*time.Millisecond {
			t.Errorf("%s came %s after the 429, inside its Retry-After of 1 s", uri, d)
		}
	}
}
