// Command bench measures the connector against floors: it serves the example
// API from memory and reads it, in rounds, with our binary, with the floor
// (bench/floor: the least work a correct reader can do, cutting records out
// of each page in one pass without validation) and with an idiomatic
// encoding/json reader, in an order drawn per round; it prints records/s,
// MB/s, wall time, peak RSS and requests of each, and our records/s as a
// ratio to each baseline (median of the per-round ratios).
//
//	go run ./bench -records 1000000 -record-size 200 -page-size 1000 -runs 5
//
// -mode incremental compares instead two reads of ours of the same records:
// incremental, in slices of one page each (a STATE after each), against full
// refresh in pages of the same size. -mode partitions reads a child stream of
// one request per parent record with a pool of workers and with one, against
// the ideal time, and its memory as partitions grow (partitions.go). -mode
// streams and -mode parent read a catalog bound by the API's latency, ours
// and Airbyte's runtime in turn, against the ideal time and the fewest
// requests (streams.go). -mode startup times spec, check and discover
// against a bare Go binary and against the reference runtime (startup.go).
// -mode server loads our manifest server and Airbyte's with the builder's
// test reads, from 1 and 16 clients (server.go).
package main

import (
	"flag"
	"fmt"
	"io"
	"math/rand"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/airbyte-go/source-declarative/examples/exampleapi"
)

type run struct {
	wall     time.Duration
	cpu      time.Duration // user + system time of the process
	records  int64
	bytes    int64
	rssKB    int64
	requests int64
	// first and last are when the first and the last record were read,
	// from the command's start.
	first, last time.Duration
}

// running is the records per second between the first record and the
// last: the rate once the command has started (its imports, its set-up and
// the first request behind it).
func (r run) running() float64 {
	if r.records < 2 || r.last <= r.first {
		return 0
	}
	return float64(r.records-1) / (r.last - r.first).Seconds()
}

func main() {
	records := flag.Int("records", 1000000, "records in the data set")
	size := flag.Int("record-size", 200, "approximate bytes per record")
	pageSize := flag.Int("page-size", 1000, "records per page")
	mode := flag.String("mode", "offset", "our manifest: offset, page or cursor pagination; transform (offset with AddFields and RemoveFields); incremental (slices of one page against full refresh); partitions; streams and parent (a catalog bound by the API's latency, ours and the reference); startup (whole processes against a bare Go binary); components (a custom extractor and transformation in the components host, against the same steps done natively and the reference; 200,000 records unless -records); server (the builder's test reads through our manifest server and Airbyte's)")
	auth := flag.String("auth", "apikey", "authentication: apikey or none")
	rounds := flag.Int("runs", 5, "rounds: each program runs once per round")
	parents := flag.Int("parents", 1000, "partitions mode: parent records, one child request each")
	workers := flag.Int("concurrency", 10, "partitions, streams and parent modes: concurrency_level")
	delay := flag.Duration("delay", 20*time.Millisecond, "partitions mode: time the API takes to answer a child request; streams and parent modes: any request (100ms); server mode: any request (10ms)")
	memParents := flag.Int("memory-parents", 100000, "partitions mode: partitions of the largest memory run")
	streams := flag.Int("streams", 20, "streams mode: streams in the catalog")
	pages := flag.Int("pages", 5, "streams and parent modes: pages of each stream (of the parent); server mode: pages of the stream test-read")
	reference := flag.String("reference", defaultReference(), "startup, streams, parent, components and server modes: Airbyte's runtime (refcdk7) to run the same commands with, none to skip")
	referenceRuns := flag.Int("reference-runs", 5, "startup mode: runs of each reference command (it takes ~1.2 s); components mode: reference reads")
	clients := flag.String("clients", "1,16", "server mode: numbers of concurrent clients, comma-separated")
	span := flag.Duration("duration", 10*time.Second, "server mode: how long each server is loaded with each number of clients")
	flag.Parse()
	delaySet, recordsSet := false, false
	flag.Visit(func(f *flag.Flag) {
		delaySet = delaySet || f.Name == "delay"
		recordsSet = recordsSet || f.Name == "records"
	})

	dir, err := os.MkdirTemp("", "bench")
	must(err)
	defer os.RemoveAll(dir)
	ours, floor := filepath.Join(dir, "source-declarative"), filepath.Join(dir, "floor")
	must(exec.Command("go", "build", "-o", ours, ".").Run())
	must(exec.Command("go", "build", "-o", floor, "./bench/floor").Run())
	if *mode == "startup" {
		startupBench(ours, dir, max(*rounds, 21), *reference, max(*referenceRuns, 1))
		return
	}
	if *mode == "components" {
		if !recordsSet {
			*records = 200000
		}
		componentsBench(ours, dir, *records, *size, *pageSize, *rounds, *reference, *referenceRuns)
		return
	}
	if *mode == "partitions" {
		partitionsBench(ours, dir, *parents, *workers, *delay, *memParents)
		return
	}
	if *mode == "server" {
		if !delaySet {
			*delay = 10 * time.Millisecond
		}
		var counts []int
		for _, c := range strings.Split(*clients, ",") {
			var n int
			_, err := fmt.Sscan(c, &n)
			must(err)
			counts = append(counts, n)
		}
		serverBench(ours, counts, *pages, *delay, *span, *reference)
		return
	}
	if *mode == "streams" || *mode == "parent" {
		if !delaySet {
			*delay = 100 * time.Millisecond
		}
		catalogBench(ours, dir, *mode, *streams, *pages, *delay, *workers, *rounds, *reference)
		return
	}

	key := "demo-key"
	if *auth == "none" {
		key = ""
	}
	api := exampleapi.New(exampleapi.Options{APIKey: key, Records: *records, RecordSize: *size, MaxPage: *pageSize})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(err)
	go http.Serve(ln, api)
	url := "http://" + ln.Addr().String()

	manifest := filepath.Join(dir, "manifest.yaml")
	must(os.WriteFile(manifest, []byte(benchManifest(*mode, *pageSize, *auth, "")), 0o600))
	config := filepath.Join(dir, "config.json")
	must(os.WriteFile(config, []byte(fmt.Sprintf(`{"base_url":%q,"api_key":"demo-key"}`, url)), 0o600))
	catalog := filepath.Join(dir, "catalog.json")
	must(os.WriteFile(catalog, []byte(`{"streams":[{"stream":{"name":"users","json_schema":{},"supported_sync_modes":["full_refresh"]},"sync_mode":"full_refresh","destination_sync_mode":"overwrite"}]}`), 0o600))
	// The programs measured: ours first, then its baselines. In incremental
	// mode the baseline is our own full refresh of the same records.
	oursArgs := []string{ours, "read", "--manifest", manifest, "--config", config, "--catalog", catalog}
	floorMode := *mode
	if floorMode == "transform" {
		floorMode = "offset" // the same pages, not transformed
	}
	floorArgs := func(reader string) []string {
		return []string{floor, "-url", url, "-page-size", fmt.Sprint(*pageSize), "-api-key", key, "-mode", floorMode, "-reader", reader}
	}
	programs := []program{{"ours", oursArgs}, {"floor", floorArgs("one-pass")}, {"encoding/json", floorArgs("encoding-json")}}
	if *mode == "incremental" {
		incManifest := filepath.Join(dir, "incremental.yaml")
		must(os.WriteFile(incManifest, []byte(benchManifest(*mode, *pageSize, *auth, sliceCursor(*records, *pageSize))), 0o600))
		incCatalog := filepath.Join(dir, "incremental-catalog.json")
		must(os.WriteFile(incCatalog, []byte(`{"streams":[{"stream":{"name":"users","json_schema":{},"supported_sync_modes":["full_refresh","incremental"]},"sync_mode":"incremental","destination_sync_mode":"append"}]}`), 0o600))
		programs = []program{{"incr", []string{ours, "read", "--manifest", incManifest, "--config", config, "--catalog", incCatalog}}, {"full", oursArgs}}
	}

	measure := func(args []string) run {
		before := api.Requests.Load()
		r := measureCommand(args[0], args[1:]...)
		r.requests = api.Requests.Load() - before
		return r
	}
	// Each round runs every program once, in an order drawn at random: the
	// second run of a pair is systematically faster on a busy machine.
	runs := make([][]run, len(programs))
	for i := 0; i < *rounds; i++ {
		for _, k := range rand.Perm(len(programs)) {
			r := measure(programs[k].args)
			if r.records != int64(*records) {
				fmt.Fprintf(os.Stderr, "%s printed %d records, want %d\n", programs[k].name, r.records, *records)
				os.Exit(1)
			}
			runs[k] = append(runs[k], r)
		}
	}
	fmt.Printf("data set: %d records of ~%d bytes, pages of %d, %s mode, auth %s, %d rounds\n", *records, *size, *pageSize, *mode, *auth, *rounds)
	fmt.Printf("%-14s %12s %9s %10s %10s %9s\n", "", "records/s", "MB/s", "wall", "peak RSS", "requests")
	for k, p := range programs {
		r := medianRun(runs[k])
		fmt.Printf("%-14s %12.0f %9.1f %10s %8.1fMB %9d\n", p.name, float64(r.records)/r.wall.Seconds(), float64(r.bytes)/r.wall.Seconds()/1e6,
			r.wall.Round(time.Millisecond), float64(r.rssKB)/1024, r.requests)
	}
	for k := 1; k < len(programs); k++ {
		var wall, cpu []float64
		for i := range runs[0] {
			wall = append(wall, runs[k][i].wall.Seconds()/runs[0][i].wall.Seconds())
			cpu = append(cpu, runs[k][i].cpu.Seconds()/runs[0][i].cpu.Seconds())
		}
		fmt.Printf("%s / %s, records/s, median of %d rounds: %.2f (per CPU second: %.2f)\n", programs[0].name, programs[k].name, len(wall), median(wall), median(cpu))
	}
}

// defaultReference is Airbyte's runtime where ../shared/refcdk7 builds it
// ($REFCDK7, else ~/.cache/refcdk7), or none.
func defaultReference() string {
	dir := os.Getenv("REFCDK7")
	if dir == "" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".cache", "refcdk7")
	}
	p := filepath.Join(dir, "refcdk7")
	if _, err := os.Stat(p); err != nil {
		return "none"
	}
	return p
}

// program is one command the bench runs: a name and its arguments.
type program struct {
	name string
	args []string
}

// sliceCursor is an incremental_sync whose slices hold one page of records
// each: the example API updates a record every exampleapi.UpdateEvery.
func sliceCursor(records, pageSize int) string {
	format := "%Y-%m-%dT%H:%M:%SZ"
	start := exampleapi.UpdatedAt(1).Format(time.RFC3339)
	end := exampleapi.UpdatedAt(records).Format(time.RFC3339)
	step := time.Duration(pageSize) * exampleapi.UpdateEvery
	return fmt.Sprintf(`
    incremental_sync:
      type: DatetimeBasedCursor
      cursor_field: updated_at
      datetime_format: %q
      start_datetime: %q
      end_datetime: %q
      step: PT%dH
      cursor_granularity: PT1S
      start_time_option: {type: RequestOption, inject_into: request_parameter, field_name: updated_since}
      end_time_option: {type: RequestOption, inject_into: request_parameter, field_name: updated_until}`, format, start, end, int(step.Hours()))
}

func benchManifest(mode string, pageSize int, auth, incremental string) string {
	authenticator := `authenticator: {type: ApiKeyAuthenticator, api_token: "{{ config['api_key'] }}", inject_into: {type: RequestOption, inject_into: header, field_name: X-Api-Key}}`
	if auth == "none" {
		authenticator = ""
	}
	var path, field, paginator, transformations string
	switch mode {
	case "page":
		path, field = "/v1/orders", "orders"
		paginator = fmt.Sprintf(`{type: DefaultPaginator, page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}, page_size_option: {type: RequestOption, inject_into: request_parameter, field_name: per_page}, pagination_strategy: {type: PageIncrement, page_size: %d, start_from_page: 1}}`, pageSize)
	case "incremental":
		path, field = "/v1/activities", "activities"
		paginator = fmt.Sprintf(`{type: DefaultPaginator, page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: cursor}, page_size_option: {type: RequestOption, inject_into: request_parameter, field_name: page_size}, pagination_strategy: {type: CursorPagination, page_size: %d, cursor_value: "{{ response.next_cursor }}", stop_condition: "{{ response.next_cursor is none }}"}}`, pageSize)
	case "cursor":
		path, field = "/v1/events", "events"
		paginator = fmt.Sprintf(`{type: DefaultPaginator, page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: cursor}, page_size_option: {type: RequestOption, inject_into: request_parameter, field_name: page_size}, pagination_strategy: {type: CursorPagination, page_size: %d, cursor_value: "{{ response.next_cursor }}", stop_condition: "{{ response.next_cursor is none }}"}}`, pageSize)
	case "transform":
		// Every record is decoded once, changed and encoded once.
		transformations = `
    transformations:
      - type: AddFields
        fields:
          - {path: [source], value: "example"}
          - {path: [user_key], value: "{{ record['id'] }}-{{ record['name'] }}"}
      - type: RemoveFields
        field_pointers: [[email]]`
		fallthrough
	default:
		path, field = "/v1/users", "data"
		paginator = fmt.Sprintf(`{type: DefaultPaginator, page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: offset}, page_size_option: {type: RequestOption, inject_into: request_parameter, field_name: limit}, pagination_strategy: {type: OffsetIncrement, page_size: %d}}`, pageSize)
	}
	return fmt.Sprintf(`version: 6.0.0
check: {stream_names: [users]}
streams:
  - type: DeclarativeStream
    name: users
    primary_key: [id]
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: "{{ config['base_url'] }}", path: %s, %s}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [%s]}}
      paginator: %s%s%s
spec:
  type: Spec
  connection_specification: {type: object, properties: {base_url: {type: string}, api_key: {type: string, airbyte_secret: true}}}
`, path, authenticator, field, paginator, incremental, transformations)
}

// measureCommand runs a command and measures its wall and CPU time, peak
// memory and the RECORD lines it prints.
func measureCommand(name string, args ...string) run {
	cmd := exec.Command(name, args...)
	stdout, err := cmd.StdoutPipe()
	must(err)
	cmd.Stderr = os.Stderr
	start := time.Now()
	must(cmd.Start())
	peak := watchPeakRSS(cmd.Process.Pid)
	counter := &lineCounter{start: start}
	io.Copy(counter, stdout)
	rss := <-peak
	must(cmd.Wait())
	return run{wall: time.Since(start), cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(),
		records: counter.records, bytes: counter.bytes, rssKB: rss, first: counter.first, last: counter.last}
}

// watchPeakRSS reads the process's VmHWM (its own peak resident set, which
// rusage would blur with this harness's memory at fork) until it exits.
func watchPeakRSS(pid int) <-chan int64 {
	out := make(chan int64, 1)
	go func() {
		var peak int64
		for {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
			if err != nil {
				break
			}
			for _, line := range strings.Split(string(b), "\n") {
				if strings.HasPrefix(line, "VmHWM:") {
					var kb int64
					fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(line, "VmHWM:"), "kB")), &kb)
					peak = max(peak, kb)
				}
			}
			if strings.Contains(string(b), "State:\tZ") {
				break
			}
			time.Sleep(2 * time.Millisecond)
		}
		out <- peak
	}()
	return out
}

// lineCounter counts RECORD lines and bytes of what a connector prints,
// and notes when the first and the last record came (since start).
type lineCounter struct {
	records, bytes int64
	partial        []byte
	start          time.Time
	first, last    time.Duration
}

func (c *lineCounter) Write(p []byte) (int, error) {
	c.bytes += int64(len(p))
	data := append(c.partial, p...)
	for {
		i := indexByte(data, '\n')
		if i < 0 {
			break
		}
		if strings.HasPrefix(string(data[:min(i, 20)]), `{"type":"RECORD"`) {
			c.records++
			c.last = time.Since(c.start)
			if c.records == 1 {
				c.first = c.last
			}
		}
		data = data[i+1:]
	}
	c.partial = append(c.partial[:0], data...)
	return len(p), nil
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

func medianRun(runs []run) run {
	s := append([]run(nil), runs...)
	sort.Slice(s, func(i, j int) bool { return s[i].wall < s[j].wall })
	return s[len(s)/2]
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
