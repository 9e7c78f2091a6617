package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/airbyte-go/source-declarative/differential"
	"github.com/airbyte-go/source-declarative/manifest"
)

// serverBench is -mode server: the Connector Builder's test read through a
// manifest server, ours (`serve`) and Airbyte's (refcdk7's
// airbyte_cdk.manifest_server), each answering test_read requests of a
// stream of pages pages (10 records each) from an API answering every
// request after delay, for each number of concurrent clients, for span
// each. It prints requests/s and the p50 and p99 latency of each, the
// ideal (pages × delay), the errors (any answer but 200) and each
// server's peak RSS, and our p50 and requests/s as ratios to the
// reference's.
func serverBench(ours string, clients []int, pages int, delay, span time.Duration, reference string) {
	api := &latencyAPI{delay: delay, pages: pages}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(err)
	go http.Serve(ln, api)
	raw, err := manifest.Parse([]byte(serverManifest("http://" + ln.Addr().String())))
	must(err)
	body := map[string]any{"manifest": raw, "config": map[string]any{}, "stream_name": "items"}

	var servers []*differential.ManifestServer
	s, err := differential.StartOurServer(ours)
	must(err)
	servers = append(servers, s)
	if reference != "none" {
		s, err := differential.StartReferenceServer(reference)
		must(err)
		servers = append(servers, s)
	}
	defer func() {
		for _, s := range servers {
			s.Stop()
		}
	}()
	fmt.Printf("server: test_read of a stream of %d pages (%d records each), each answer after %s; ideal %s a request; %s for each number of clients\n",
		pages, parentsPerPage, delay, time.Duration(pages)*delay, span)
	fmt.Printf("%-10s %7s %9s %9s %9s %8s %8s\n", "", "clients", "req/s", "p50", "p99", "requests", "errors")
	results := map[string]map[int]serverRun{}
	for _, c := range clients {
		for _, s := range servers {
			load(s, body, 1, 3) // warm: the first requests of a process are its slowest
			r := load(s, body, c, 0, span)
			if results[s.Name] == nil {
				results[s.Name] = map[int]serverRun{}
			}
			results[s.Name][c] = r
			fmt.Printf("%-10s %7d %9.1f %9s %9s %8d %8d\n", s.Name, c, r.perSecond(), r.percentile(50), r.percentile(99), len(r.latencies), r.errors)
		}
	}
	for _, s := range servers {
		fmt.Printf("%-10s peak RSS %.1f MB\n", s.Name, float64(vmHWM(s.Pid()))/1024)
	}
	if len(servers) == 2 {
		for _, c := range clients {
			o, r := results["ours"][c], results["reference"][c]
			fmt.Printf("ours / reference, %d clients: p50 %.3f, requests/s %.1f\n", c,
				o.percentile(50).Seconds()/r.percentile(50).Seconds(), o.perSecond()/r.perSecond())
		}
	}
}

// serverRun is what a load of one server measured.
type serverRun struct {
	latencies []time.Duration
	errors    int
	wall      time.Duration
}

func (r serverRun) perSecond() float64 {
	return float64(len(r.latencies)) / r.wall.Seconds()
}

// percentile is the latency below which p percent of the requests were
// answered (nearest rank).
func (r serverRun) percentile(p int) time.Duration {
	if len(r.latencies) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), r.latencies...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := (p*len(s)+99)/100 - 1
	return s[max(i, 0)].Round(100 * time.Microsecond)
}

// load sends test_read requests from clients at once: each client n
// requests, or as many as it can within span when n is 0.
func load(s *differential.ManifestServer, body map[string]any, clients, n int, span ...time.Duration) serverRun {
	var mu sync.Mutex
	var r serverRun
	var wg sync.WaitGroup
	start := time.Now()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; n == 0 && time.Since(start) < span[0] || n > 0 && i < n; i++ {
				t := time.Now()
				resp, err := s.Post("/v1/manifest/test_read", body)
				d := time.Since(t)
				mu.Lock()
				r.latencies = append(r.latencies, d)
				if err != nil || resp.Status != 200 || !strings.Contains(string(resp.Body), `"records":[{`) {
					if r.errors == 0 {
						fmt.Fprintf(os.Stderr, "%s: %d %v %.300s\n", s.Name, resp.Status, err, resp.Body)
					}
					r.errors++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	r.wall = time.Since(start)
	return r
}

// serverManifest reads /items page by page, as the builder's test read of
// a small stream does.
func serverManifest(url string) string {
	return "version: 6.0.0\ntype: DeclarativeSource\ncheck: {type: CheckStream, stream_names: [items]}\nstreams:\n  - " +
		fmt.Sprintf(pagedStream, "items", url) + "\n" + benchSpec
}
