package cli

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// addressSpace is the limit the binary runs under in the memory test: what
// the Go runtime reserves at start fits (it fails to start now and then under
// less), a million goroutines or a queue of a million places do not.
const addressSpace = 2 << 30

// Issue 30: concurrency_level costs memory only for the work in flight. A
// read of 3 pages with concurrency_level 1,000,000 runs the built binary
// under an address-space limit (prlimit --as), so that a regression fails
// this test rather than the machine, and its peak RSS stays under 150 MB;
// a WARN says to what the level was capped.
func TestHugeConcurrencyLevelCostsTheMemoryOfTheWork(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	var tools []string
	for _, tool := range []string{"prlimit", "/usr/bin/time"} { // util-linux and GNU time
		path, err := exec.LookPath(tool)
		if err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is needed", tool)
			}
			t.Skipf("%s is not installed", tool)
		}
		tools = append(tools, path)
	}
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		page := r.URL.Query().Get("page")
		switch page {
		case "", "1":
			fmt.Fprint(w, `{"data":[{"id":1}],"next":2}`)
		case "2":
			fmt.Fprint(w, `{"data":[{"id":2}],"next":3}`)
		default:
			fmt.Fprint(w, `{"data":[{"id":3}]}`)
		}
	})
	m := stream("s", "url_base: "+a.URL+"\npath: /s", "[data]", `paginator:
  type: DefaultPaginator
  page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}
  pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next }}", stop_condition: "{{ not response.next }}"}`) + `concurrency_level:
  type: ConcurrencyLevel
  default_concurrency: 1000000
`
	c := newConnector(t, m, nil, "s")
	bin := filepath.Join(t.TempDir(), "source-declarative")
	if out, err := exec.Command("go", "build", "-o", bin, "..").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	// GNU time forks the binary and reports its peak RSS: this process's
	// own rusage of a child it starts would count this process's memory
	// (Linux records the parent's peak at the exec of a vforked child).
	peak := filepath.Join(t.TempDir(), "peak")
	var stdout, stderr bytes.Buffer
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		stdout.Reset()
		stderr.Reset()
		cmd := exec.Command(tools[1], "-f", "%M", "-o", peak, tools[0], fmt.Sprintf("--as=%d", addressSpace), bin, "read", "--manifest", c.manifest, "--config", c.config, "--catalog", c.catalog)
		cmd.Env = append(os.Environ(), "HTTP_PROXY=http://127.0.0.1:9", "HTTPS_PROXY=http://127.0.0.1:9", "NO_PROXY=127.0.0.1,localhost")
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err = cmd.Run()
		// The Go runtime's reservations at start do not always fit an
		// address-space limit; that is the only failure tried again.
		if !strings.Contains(stderr.String(), "failed to reserve") {
			break
		}
	}
	if err != nil {
		t.Fatalf("read under an address-space limit of %d bytes: %v\n%s\n%s", addressSpace, err, stdout.String(), stderr.String())
	}
	for i := 1; i <= 3; i++ {
		if !strings.Contains(stdout.String(), fmt.Sprintf(`"data":{"id":%d}`, i)) {
			t.Errorf("record %d missing: %s", i, stdout.String())
		}
	}
	warn := `{"type":"LOG","log":{"level":"WARN","message":"concurrency_level: a concurrency level of 1000000 is more than a sync can use: capped at 1024 requests in flight (each holds a connection and a page in memory)"}}`
	if !strings.Contains(stdout.String(), warn) {
		t.Errorf("no WARN %s in:\n%s", warn, stdout.String())
	}
	text, _ := os.ReadFile(peak)
	kb, perr := strconv.ParseInt(strings.TrimSpace(string(text)), 10, 64)
	if perr != nil {
		t.Fatalf("peak RSS %q: %v", text, perr)
	}
	rss := kb * 1024
	t.Logf("peak RSS %.1f MB", float64(rss)/1e6)
	if rss >= 150e6 {
		t.Errorf("peak RSS %d bytes, want less than 150 MB", rss)
	}
}
