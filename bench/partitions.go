package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// partitionsBench is -mode partitions: a parent stream of parents records
// (pages of 1,000) and a child stream reading one request per parent record,
// each answered after delay. It reads the child with concurrency_level
// workers and with one, against the ideal parents × delay / workers, then
// measures peak memory from 1,000 to memParents partitions (no delay).
func partitionsBench(ours string, dir string, parents, workers int, delay time.Duration, memParents int) {
	var requests atomic.Int64
	var wait atomic.Int64
	wait.Store(int64(delay))
	mux := http.NewServeMux()
	mux.HandleFunc("/parents", func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		total, _ := strconv.Atoi(r.URL.Query().Get("total"))
		from, _ := strconv.Atoi(r.URL.Query().Get("offset"))
		w.Header().Set("Content-Type", "application/json")
		var b strings.Builder
		b.WriteString(`{"data":[`)
		for i := from; i < min(from+1000, total); i++ {
			if i > from {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"id":%d,"name":"parent %d"}`, i, i)
		}
		b.WriteString("]}")
		w.Write([]byte(b.String()))
	})
	mux.HandleFunc("/children/", func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		time.Sleep(time.Duration(wait.Load()))
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"data":[{"id":%q,"value":"a child record"}]}`, strings.TrimPrefix(r.URL.Path, "/children/"))
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(err)
	go http.Serve(ln, mux)
	url := "http://" + ln.Addr().String()
	catalog := filepath.Join(dir, "catalog.json")
	must(os.WriteFile(catalog, []byte(`{"streams":[{"stream":{"name":"children","json_schema":{},"supported_sync_modes":["full_refresh"]},"sync_mode":"full_refresh","destination_sync_mode":"overwrite"}]}`), 0o600))
	read := func(n, level int) run {
		manifest := filepath.Join(dir, fmt.Sprintf("partitions-%d-%d.yaml", n, level))
		must(os.WriteFile(manifest, []byte(partitionsManifest(url, n, level)), 0o600))
		before := requests.Load()
		r := measureCommand(ours, "read", "--manifest", manifest, "--config", filepath.Join(dir, "config.json"), "--catalog", catalog)
		r.requests = requests.Load() - before
		if r.records != int64(n) {
			fmt.Fprintf(os.Stderr, "%d records, want %d\n", r.records, n)
			os.Exit(1)
		}
		return r
	}
	must(os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{}`), 0o600))
	ideal := time.Duration(parents) * delay / time.Duration(workers)
	concurrent := read(parents, workers)
	sequential := read(parents, 1)
	fmt.Printf("partitions: a parent of %d records, one child request per record answered after %s\n", parents, delay)
	fmt.Printf("%-22s %10s %10s %9s\n", "", "wall", "peak RSS", "requests")
	for _, x := range []struct {
		name string
		r    run
	}{{fmt.Sprintf("concurrency_level %d", workers), concurrent}, {"concurrency_level 1", sequential}} {
		fmt.Printf("%-22s %10s %8.1fMB %9d\n", x.name, x.r.wall.Round(time.Millisecond), float64(x.r.rssKB)/1024, x.r.requests)
	}
	fmt.Printf("ideal (%d × %s / %d): %s; concurrency_level %d / ideal: %.2f; sequential / concurrent: %.1f\n",
		parents, delay, workers, ideal, workers, concurrent.wall.Seconds()/ideal.Seconds(), sequential.wall.Seconds()/concurrent.wall.Seconds())
	wait.Store(0)
	for n := 1000; n <= memParents; n *= 10 {
		r := read(n, workers)
		fmt.Printf("memory: %7d partitions, no delay: peak RSS %5.1fMB, wall %s\n", n, float64(r.rssKB)/1024, r.wall.Round(time.Millisecond))
	}
}

func partitionsManifest(url string, parents, level int) string {
	return fmt.Sprintf(`version: 6.0.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [children]}
concurrency_level: {type: ConcurrencyLevel, default_concurrency: %d}
definitions:
  selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
streams:
  - type: DeclarativeStream
    name: children
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: %q, path: "/children/{{ stream_partition.parent_id }}"}
      record_selector: {$ref: "#/definitions/selector"}
      partition_router:
        type: SubstreamPartitionRouter
        parent_stream_configs:
          - type: ParentStreamConfig
            parent_key: id
            partition_field: parent_id
            stream:
              type: DeclarativeStream
              name: parents
              retriever:
                type: SimpleRetriever
                requester: {type: HttpRequester, url_base: %q, path: /parents, request_parameters: {total: "%d"}}
                record_selector: {$ref: "#/definitions/selector"}
                paginator:
                  type: DefaultPaginator
                  page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: offset}
                  pagination_strategy: {type: OffsetIncrement, page_size: 1000}
`, level, url, url, parents)
}
