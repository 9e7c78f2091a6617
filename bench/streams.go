package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// catalogBench is -mode streams and -mode parent: a sync bound by the API's
// latency, every answer coming after delay, read by ours and by the
// reference (Airbyte's runtime, refcdk7) in turn, rounds times. -mode
// streams reads n streams of pages pages each; -mode parent reads a parent
// stream of pages pages (10 records each) and two children, each asking once
// per parent record. Each run is measured against the ideal (the fewest
// requests the sync needs × delay / concurrency_level) and the fewest
// requests, with the most requests the API answered at once and the peak
// RSS of the process.
func catalogBench(ours, dir, mode string, n, pages int, delay time.Duration, level, rounds int, reference string) {
	api := &latencyAPI{delay: delay}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(err)
	go http.Serve(ln, api)
	url := "http://" + ln.Addr().String()

	var manifest string
	var streams []string
	var fewest int64
	switch mode {
	case "streams":
		manifest = streamsManifest(url, n, level)
		for i := range n {
			streams = append(streams, fmt.Sprintf("s%d", i))
		}
		fewest = int64(n * pages)
	case "parent":
		manifest = parentManifest(url, level)
		streams = []string{"parents", "c1", "c2"}
		fewest = int64(pages + 2*pages*parentsPerPage)
	}
	api.pages = pages
	files := map[string]string{"manifest.yaml": manifest, "config.json": "{}", "catalog.json": catalogOf(streams)}
	for name, content := range files {
		must(os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600))
	}
	args := []string{"read", "--manifest", filepath.Join(dir, "manifest.yaml"), "--config", filepath.Join(dir, "config.json"), "--catalog", filepath.Join(dir, "catalog.json")}
	programs := []program{{"ours", append([]string{ours}, args...)}}
	if reference != "none" {
		programs = append(programs, program{"reference", append([]string{reference}, args...)})
	}
	runs := make([][]catalogRun, len(programs))
	for range rounds {
		for k, p := range programs {
			api.reset()
			r := measureCommand(p.args[0], p.args[1:]...)
			runs[k] = append(runs[k], catalogRun{run: r, requests: api.requests.Load(), peak: api.peak.Load()})
		}
	}
	ideal := time.Duration(fewest) * delay / time.Duration(level)
	switch mode {
	case "streams":
		fmt.Printf("streams: %d streams × %d pages, each answer after %s, concurrency_level %d, %d rounds\n", n, pages, delay, level, rounds)
	case "parent":
		fmt.Printf("parent: a parent stream of %d pages (%d records each) read as a stream and by two children asking once per parent record, each answer after %s, concurrency_level %d, %d rounds\n",
			pages, parentsPerPage, delay, level, rounds)
	}
	fmt.Printf("ideal: %d requests × %s / %d = %s\n", fewest, delay, level, ideal)
	fmt.Printf("%-10s %9s %8s %9s %16s %10s %9s\n", "", "wall", "/ ideal", "in flight", "requests / fewest", "peak RSS", "records")
	for k, p := range programs {
		r := medianCatalogRun(runs[k])
		fmt.Printf("%-10s %9s %8.2f %9d %11d / %-4d %8.1fMB %9d\n", p.name, r.wall.Round(time.Millisecond), r.wall.Seconds()/ideal.Seconds(),
			r.peak, r.requests, fewest, float64(r.rssKB)/1024, r.records)
	}
	if len(programs) > 1 {
		var ratios []float64
		for i := range runs[0] {
			ratios = append(ratios, runs[0][i].wall.Seconds()/runs[1][i].wall.Seconds())
		}
		fmt.Printf("ours / reference, wall, median of %d rounds: %.2f\n", len(ratios), median(ratios))
	}
}

// catalogRun is one run with what the API saw of it.
type catalogRun struct {
	run
	requests, peak int64
}

func medianCatalogRun(runs []catalogRun) catalogRun {
	s := append([]catalogRun(nil), runs...)
	sort.Slice(s, func(i, j int) bool { return s[i].wall < s[j].wall })
	return s[len(s)/2]
}

// parentsPerPage is how many records a parent page holds.
const parentsPerPage = 10

// latencyAPI answers every request after delay: /<stream>?page=p pages of
// ten records (a next page up to pages), /parents likewise (each record a
// parent), and /<child>/<parent> one record. It counts the requests and the
// most it answered at once.
type latencyAPI struct {
	delay    time.Duration
	pages    int
	requests atomic.Int64
	peak     atomic.Int64
	mu       sync.Mutex
	now      int64
}

func (a *latencyAPI) reset() {
	a.requests.Store(0)
	a.peak.Store(0)
}

func (a *latencyAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.requests.Add(1)
	a.mu.Lock()
	a.now++
	if a.now > a.peak.Load() {
		a.peak.Store(a.now)
	}
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		a.now--
		a.mu.Unlock()
	}()
	time.Sleep(a.delay)
	w.Header().Set("Content-Type", "application/json")
	path := strings.Trim(r.URL.Path, "/")
	if stream, parent, child := strings.Cut(path, "/"); child {
		fmt.Fprintf(w, `{"data":[{"id":"%s-%s","value":"a child record"}]}`, stream, parent)
		return
	}
	page, _ := strconv.Atoi(r.URL.Query().Get("page"))
	page = max(page, 1)
	next := "null"
	if page < a.pages {
		next = strconv.Itoa(page + 1)
	}
	var b strings.Builder
	b.WriteString(`{"data":[`)
	for i := range parentsPerPage {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"%s-%d-%d","name":"record %d of page %d"}`, path, page, i, i, page)
	}
	fmt.Fprintf(&b, `],"next":%s}`, next)
	w.Write([]byte(b.String()))
}

// benchSpec is the spec block the reference needs to read a manifest.
const benchSpec = "spec: {type: Spec, connection_specification: {type: object, properties: {}}}\n"

// pagedStream is a stream reading /<path> page by page while the API gives
// a next page (YAML, under streams or definitions).
const pagedStream = `type: DeclarativeStream
    name: %[1]s
    primary_key: [id]
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: %[2]q, path: /%[1]s}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
      paginator:
        type: DefaultPaginator
        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}
        pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next }}", stop_condition: "{{ not response.next }}"}`

func streamsManifest(url string, n, level int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "version: 6.0.0\ntype: DeclarativeSource\ncheck: {type: CheckStream, stream_names: [s0]}\nconcurrency_level: {type: ConcurrencyLevel, default_concurrency: %d}\nstreams:\n", level)
	for i := range n {
		fmt.Fprintf(&b, "  - "+pagedStream+"\n", fmt.Sprintf("s%d", i), url)
	}
	return b.String() + benchSpec
}

func parentManifest(url string, level int) string {
	return fmt.Sprintf(`version: 6.0.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [parents]}
concurrency_level: {type: ConcurrencyLevel, default_concurrency: %[3]d}
definitions:
  parents:
    %[1]s
  child:
    type: DeclarativeStream
    primary_key: [id]
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: %[2]q, path: "/{{ parameters.name }}/{{ stream_partition.parent }}"}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
      partition_router:
        type: SubstreamPartitionRouter
        parent_stream_configs:
          - {type: ParentStreamConfig, parent_key: id, partition_field: parent, stream: {$ref: "#/definitions/parents"}}
streams:
  - {$ref: "#/definitions/parents"}
  - {$ref: "#/definitions/child", name: c1, $parameters: {name: c1}}
  - {$ref: "#/definitions/child", name: c2, $parameters: {name: c2}}
`, fmt.Sprintf(pagedStream, "parents", url), url, level) + benchSpec
}

func catalogOf(streams []string) string {
	var cs []string
	for _, s := range streams {
		cs = append(cs, fmt.Sprintf(`{"stream":{"name":%q,"json_schema":{},"supported_sync_modes":["full_refresh"]},"sync_mode":"full_refresh","destination_sync_mode":"overwrite"}`, s))
	}
	return `{"streams":[` + strings.Join(cs, ",") + `]}`
}
