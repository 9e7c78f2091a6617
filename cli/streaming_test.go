package cli

import (
	"bytes"
	"fmt"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// recordCounter is a stdout that counts RECORD lines without keeping them,
// and keeps every other line.
type recordCounter struct {
	records int
	lineLen int          // bytes of the current line seen so far
	prefix  bytes.Buffer // its first bytes, until it is known to be a record or not
	record  bool
	others  []string
}

var recordPrefix = []byte(`{"type":"RECORD"`)

func (c *recordCounter) Write(p []byte) (int, error) {
	for _, b := range p {
		if b == '\n' {
			if c.record {
				c.records++
			} else {
				c.others = append(c.others, c.prefix.String())
			}
			c.lineLen, c.record = 0, false
			c.prefix.Reset()
			continue
		}
		if !c.record {
			c.prefix.WriteByte(b)
			c.record = c.lineLen+1 == len(recordPrefix) && bytes.Equal(c.prefix.Bytes(), recordPrefix)
		}
		c.lineLen++
	}
	return len(p), nil
}

// heapPeak samples the heap in use until stop is called, and returns its
// peak above the heap in use when it was called: what earlier tests of the
// package left live (in a full run, 20 to 60 MiB) is not the read's.
func heapPeak() (stop func() uint64) {
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	var peak uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapInuse)
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	return func() uint64 {
		close(done)
		wg.Wait()
		return peak - min(peak, base.HeapInuse)
	}
}

// TestLargeBodiesAreStreamed reads a 200 MB JSON lines body and a 200 MB
// CSV body, generated as they are sent, and checks that the heap stays far
// below the body's size.
func TestLargeBodiesAreStreamed(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 400 MB")
	}
	const size = 200 << 20
	pad := strings.Repeat("x", 120)
	lines := func(w http.ResponseWriter, line func(b []byte, i int) []byte) {
		buf := make([]byte, 0, 128<<10)
		written := 0
		for i := 0; written < size; i++ {
			buf = line(buf, i)
			if len(buf) > 64<<10 {
				w.Write(buf)
				written += len(buf)
				buf = buf[:0]
			}
		}
		w.Write(buf)
	}
	counts := map[string]int{}
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		n := 0
		switch r.URL.Path {
		case "/jsonl":
			lines(w, func(b []byte, i int) []byte {
				n++
				return append(strconv.AppendInt(append(b, `{"id":`...), int64(i), 10), `,"pad":"`+pad+"\"}\n"...)
			})
		case "/csv":
			w.Write([]byte("id,pad\n"))
			lines(w, func(b []byte, i int) []byte {
				n++
				return append(strconv.AppendInt(b, int64(i), 10), ","+pad+"\n"...)
			})
		}
		counts[r.URL.Path] = n
	})
	for _, c := range []struct{ path, decoder string }{{"/jsonl", "{type: JsonlDecoder}"}, {"/csv", "{type: CsvDecoder}"}} {
		t.Run(c.path, func(t *testing.T) {
			conn := newConnector(t, stream("d", "url_base: "+a.URL+"\npath: "+c.path, "[]", "decoder: "+c.decoder), nil, "d")
			runtime.GC()
			stop := heapPeak()
			var out recordCounter
			var errb bytes.Buffer
			code := Main([]string{"read", "--manifest", conn.manifest, "--config", conn.config, "--catalog", conn.catalog}, &out, &errb, []byte(`{}`), "test")
			peak := stop()
			t.Logf("%s: %d records, heap peak %.1f MiB above the start for a %d MiB body", c.path, out.records, float64(peak)/(1<<20), size>>20)
			if code != 0 || out.records != counts[c.path] || out.records < 1_000_000 {
				t.Fatalf("exit %d, %d records of %d: %s %q", code, out.records, counts[c.path], errb.String(), out.others)
			}
			if peak > 96<<20 {
				t.Errorf("heap peak %d MiB: the body was not streamed", peak>>20)
			}
			if last := out.others[len(out.others)-1]; !strings.Contains(last, `"status":"COMPLETE"`) {
				t.Errorf("last message %s", last)
			}
		})
	}
}

// jsonLines writes records from..to-1 as JSON lines of about 200 bytes.
func jsonLines(from, to int) []byte {
	var b []byte
	for i := from; i < to; i++ {
		b = fmt.Appendf(b, `{"id":%d,"pad":"%s"}`+"\n", i, strings.Repeat("y", 180))
	}
	return b
}

// A body that breaks off before anything was emitted is fetched again; the
// records come once.
func TestStreamedBodyBrokenBeforeEmittingIsFetchedAgain(t *testing.T) {
	attempts := 0
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		attempts++
		body := jsonLines(0, 5000)
		if attempts == 1 {
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			w.Write(body[:len(body)/2]) // and the connection closes
			return
		}
		w.Write(body)
	})
	fast := "url_base: " + a.URL + "\npath: /d\nerror_handler: {type: DefaultErrorHandler, backoff_strategies: [{type: ConstantBackoffStrategy, backoff_time_in_seconds: 0.01}]}"
	res := newConnector(t, stream("d", fast, "[]", "decoder: {type: JsonlDecoder}"), nil, "d").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{"GET /d", "GET /d"})
	got := res.records("d")
	if len(got) != 5000 || !strings.HasPrefix(got[0], `{"id":0,`) || !strings.HasPrefix(got[4999], `{"id":4999,`) {
		t.Errorf("%d records", len(got))
	}
	equalLists(t, "warnings", res.logs("WARN"), []string{"GET " + a.URL + "/d failed: reading the body: unexpected EOF; retrying in 10ms (attempt 2 of 6)"})
}

// A body that breaks off after records were emitted fails the stream: read
// again, it would emit them twice.
func TestStreamedBodyBrokenAfterEmittingFailsTheStream(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		w.Header().Set("Content-Length", "1000000000")
		w.Write(jsonLines(0, 120_000)) // 24 MB, more than the first batch
	})
	res := newConnector(t, stream("d", "url_base: "+a.URL+"\npath: /d", "[]", "decoder: {type: JsonlDecoder}"), nil, "d").read(t)
	equalLists(t, "requests", a.lines(), []string{"GET /d"})
	got := res.records("d")
	for i, r := range got {
		if !strings.HasPrefix(r, fmt.Sprintf(`{"id":%d,`, i)) {
			t.Fatalf("record %d is %s", i, r)
		}
	}
	if len(got) == 0 || len(got) >= 120_000 {
		t.Fatalf("%d records emitted", len(got))
	}
	errs := res.errors()
	want := fmt.Sprintf("stream d: the response body from %s/d broke off after %d records were emitted (unexpected EOF); not reading it again, which would emit them twice", a.URL, len(got))
	if res.code == 0 || len(errs) != 2 || errs[0]["message"] != want || errs[0]["failure_type"] != "transient_error" {
		t.Errorf("exit %d, errors %q\nwant %q", res.code, errs, want)
	}
	equalLists(t, "statuses", res.statuses("d"), []string{"STARTED", "RUNNING", "INCOMPLETE"})
}
