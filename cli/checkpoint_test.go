package cli

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// pipedRun is a read whose stdout is an OS pipe, read line by line while the
// command runs.
type pipedRun struct {
	lines chan string // stdout, line by line; closed at the end
	code  chan int    // the exit code, once the command returned
}

func startPiped(t *testing.T, args ...string) *pipedRun {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &pipedRun{lines: make(chan string, 1000), code: make(chan int, 1)}
	go func() {
		code := Main(args, w, io.Discard, []byte(`{"connectionSpecification":{"type":"object"}}`), "test")
		w.Close()
		p.code <- code
	}()
	go func() {
		defer r.Close()
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	return p
}

// until collects lines until one contains marker; it fails after 10 s, or
// when the command ends first.
func (p *pipedRun) until(t *testing.T, marker string) []string {
	t.Helper()
	var seen []string
	deadline := time.After(10 * time.Second)
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				t.Fatalf("stdout ended before %s; seen %q", marker, seen)
			}
			seen = append(seen, l)
			if strings.Contains(l, marker) {
				return seen
			}
		case <-deadline:
			t.Fatalf("no %s on stdout after 10 s; seen %q", marker, seen)
		}
	}
}

// gate holds an API's answers until opened.
type gate struct {
	ch   chan struct{}
	once sync.Once
}

// newGate returns a closed gate, opened at the end of the test at the
// latest: call it after newAPI, so that it opens before the API closes (a
// server waits for its handlers).
func newGate(t *testing.T) *gate {
	g := &gate{ch: make(chan struct{})}
	t.Cleanup(g.open)
	return g
}

func (g *gate) open() { g.once.Do(func() { close(g.ch) }) }

// finish opens the gate and waits for the command's exit code.
func (p *pipedRun) finish(t *testing.T, g *gate) int {
	t.Helper()
	g.open()
	for range p.lines {
	}
	select {
	case c := <-p.code:
		return c
	case <-time.After(20 * time.Second):
		t.Fatal("the command did not end")
	}
	return 0
}

// kinds lists the message types (and record data) of stdout lines.
func kinds(lines []string) []string {
	var out []string
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, `{"type":"RECORD"`):
			i := strings.Index(l, `"data":`)
			out = append(out, "RECORD "+l[i+len(`"data":`):strings.Index(l, `,"emitted_at"`)])
		case strings.HasPrefix(l, `{"type":"STATE"`):
			out = append(out, "STATE")
		}
	}
	return out
}

// Issue 23 item 3: a slice's STATE, and the records before it, reach stdout
// while the sync goes on (here: the API holds the next slice's request), not
// when the buffer fills or the process ends; a sync killed then keeps its
// checkpoint.
func TestStateLeavesTheProcessWhenMade(t *testing.T) {
	var release *gate
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		if strings.HasPrefix(r.URL.Query().Get("since"), "2024-01-01") {
			fmt.Fprint(w, `{"data":[{"id":1,"updated_at":"2024-01-01T05:00:00Z"},{"id":2,"updated_at":"2024-01-01T06:00:00Z"}]}`)
			return
		}
		<-release.ch
		fmt.Fprint(w, `{"data":[]}`)
	})
	release = newGate(t)
	c := incrementalConnector(t, incrementalStream(a.URL, dailyCursor, ""), nil, "items")
	p := startPiped(t, "read", "--manifest", c.manifest, "--config", c.config, "--catalog", c.catalog)
	seen := p.until(t, `"type":"STATE"`)
	select {
	case code := <-p.code:
		t.Fatalf("the command ended (exit %d) before the STATE was read", code)
	default:
	}
	equalLists(t, "out while the next slice waits", kinds(seen), []string{
		`RECORD {"id":1,"updated_at":"2024-01-01T05:00:00Z"}`, `RECORD {"id":2,"updated_at":"2024-01-01T06:00:00Z"}`, "STATE"})
	if !strings.Contains(seen[len(seen)-1], `"stream_state":{"updated_at":"2024-01-01T06:00:00Z"}`) {
		t.Errorf("state: %s", seen[len(seen)-1])
	}
	if code := p.finish(t, release); code != 0 {
		t.Errorf("exit %d", code)
	}
}

// Records of a page wait at most about a second in the buffer when the next
// request is slow: a stalled API does not hold back what was read before it.
func TestBufferedRecordsLeaveWhileTheNextPageStalls(t *testing.T) {
	var release *gate
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		if r.URL.Query().Get("page") == "" {
			fmt.Fprint(w, `{"data":[{"id":1},{"id":2}],"next":"2"}`)
			return
		}
		<-release.ch
		fmt.Fprint(w, `{"data":[{"id":3}]}`)
	})
	release = newGate(t)
	m := stream("s", "url_base: "+a.URL+"\npath: /s", "[data]", `paginator:
  type: DefaultPaginator
  page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}
  pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next }}", stop_condition: "{{ not response.next }}"}`)
	c := newConnector(t, m, nil, "s")
	p := startPiped(t, "read", "--manifest", c.manifest, "--config", c.config, "--catalog", c.catalog)
	start := time.Now()
	seen := p.until(t, `{"id":2}`)
	waited := time.Since(start)
	select {
	case code := <-p.code:
		t.Fatalf("the command ended (exit %d) before the records were read", code)
	default:
	}
	equalLists(t, "records out while page 2 stalls", kinds(seen), []string{`RECORD {"id":1}`, `RECORD {"id":2}`})
	if code := p.finish(t, release); code != 0 {
		t.Errorf("exit %d", code)
	}
	t.Logf("records out after %v", waited)
}
