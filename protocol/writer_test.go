package protocol

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"
)

type upper struct{}

func (upper) Mask(s string) string { return strings.ReplaceAll(s, "secret", "****") }

func TestMessagesExactJSON(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b)
	w.now = func() time.Time { return time.UnixMilli(1714521600000) }
	w.SetMasker(upper{})
	w.WriteRecord("users", []byte(`{"id":1}`), 1714521600000)
	w.WriteRecords("files", [][]byte{[]byte(`{"id":2}`)}, []FileReference{{StagingFileURL: "/staging/files/files/2.pdf", SourceFileRelativePath: "files/2.pdf", FileSizeBytes: 12}}, 1714521600000)
	w.StreamState("users", map[string]any{"__ab_no_cursor_state_message": true}, 42)
	w.StreamState("users", map[string]any{"updated_at": "2024-01-05T00:00:00Z"}, 0)
	w.Write(&Message{Type: TypeState, State: &State{Type: "GLOBAL", Global: &GlobalState{SharedState: map[string]any{"lsn": "1"},
		StreamStates: []StreamState{{StreamDescriptor: StreamDescriptor{Name: "users"}, StreamState: map[string]any{"pk": 1}}}}, SourceStats: &StateStats{RecordCount: 10}}})
	w.Log("INFO", "the secret is out")
	w.ConnectionStatus(false, "401 with secret")
	w.Write(&Message{Type: TypeCatalog, Catalog: &Catalog{Streams: []Stream{{Name: "users", JSONSchema: map[string]any{}, SupportedSyncModes: []string{"full_refresh"}}}}})
	w.Write(&Message{Type: TypeSpec, Spec: json.RawMessage(`{"connectionSpecification":{}}`)})
	w.Error(ConfigError, "bad secret", "", "users")
	w.Status("users", StatusRunning)
	w.Write(&Message{Type: TypeTrace, Trace: &Trace{Type: "ESTIMATE", EmittedAt: 1, Estimate: &Estimate{Name: "users", Type: "STREAM", RowEstimate: 5}}})
	w.ControlConfig(map[string]any{"refresh_token": "new"})
	w.Flush()
	want := []string{
		`{"type":"RECORD","record":{"stream":"users","data":{"id":1},"emitted_at":1714521600000}}`,
		`{"type":"RECORD","record":{"stream":"files","data":{"id":2},"emitted_at":1714521600000,"file_reference":{"staging_file_url":"/staging/files/files/2.pdf","source_file_relative_path":"files/2.pdf","file_size_bytes":12}}}`,
		`{"type":"STATE","state":{"type":"STREAM","stream":{"stream_descriptor":{"name":"users"},"stream_state":{"__ab_no_cursor_state_message":true}},"sourceStats":{"recordCount":42.0}}}`,
		`{"type":"STATE","state":{"type":"STREAM","stream":{"stream_descriptor":{"name":"users"},"stream_state":{"updated_at":"2024-01-05T00:00:00Z"}},"sourceStats":{"recordCount":0.0}}}`,
		`{"type":"STATE","state":{"type":"GLOBAL","global":{"shared_state":{"lsn":"1"},"stream_states":[{"stream_descriptor":{"name":"users"},"stream_state":{"pk":1}}]},"sourceStats":{"recordCount":10.0}}}`,
		`{"type":"LOG","log":{"level":"INFO","message":"the **** is out"}}`,
		`{"type":"CONNECTION_STATUS","connectionStatus":{"status":"FAILED","message":"401 with ****"}}`,
		`{"type":"CATALOG","catalog":{"streams":[{"name":"users","json_schema":{},"supported_sync_modes":["full_refresh"]}]}}`,
		`{"type":"SPEC","spec":{"connectionSpecification":{}}}`,
		`{"type":"TRACE","trace":{"type":"ERROR","emitted_at":1714521600000,"error":{"message":"bad ****","failure_type":"config_error","stream_descriptor":{"name":"users"}}}}`,
		`{"type":"TRACE","trace":{"type":"STREAM_STATUS","emitted_at":1714521600000,"stream_status":{"stream_descriptor":{"name":"users"},"status":"RUNNING"}}}`,
		`{"type":"TRACE","trace":{"type":"ESTIMATE","emitted_at":1,"estimate":{"name":"users","type":"STREAM","row_estimate":5}}}`,
		`{"type":"CONTROL","control":{"type":"CONNECTOR_CONFIG","emitted_at":1714521600000,"connectorConfig":{"config":{"refresh_token":"new"}}}}`,
	}
	got := strings.Split(strings.TrimSpace(b.String()), "\n")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestWriterIsSafeFromSeveralGoroutines(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 500; i++ {
				w.WriteRecord("s", []byte(`{"x":"`+strings.Repeat("y", 100)+`"}`), 1)
				w.Log("INFO", "m")
			}
		}()
	}
	wg.Wait()
	w.Flush()
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 8000 {
		t.Fatalf("%d lines", len(lines))
	}
	for _, l := range lines {
		if !json.Valid([]byte(l)) {
			t.Fatalf("interleaved line %q", l)
		}
	}
}

var benchRecord = []byte(`{"id":12345,"name":"user-12345","email":"user12345@example.com","created_at":"2024-01-01T00:00:00Z","padding":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}`)

// BenchmarkWriteRecords writes pages of 1,000 records without re-encoding them.
func BenchmarkWriteRecords(b *testing.B) {
	w := NewWriter(discard{})
	page := make([][]byte, 1000)
	for i := range page {
		page[i] = benchRecord
	}
	b.SetBytes(int64(len(benchRecord) * 1000))
	for i := 0; i < b.N; i++ {
		w.WriteRecords("users", page, nil, 1714521600000)
	}
}

// BenchmarkWriteRecordsMarshal is the baseline: json.Marshal of each message.
func BenchmarkWriteRecordsMarshal(b *testing.B) {
	w := NewWriter(discard{})
	b.SetBytes(int64(len(benchRecord) * 1000))
	for i := 0; i < b.N; i++ {
		for j := 0; j < 1000; j++ {
			w.Write(&Message{Type: TypeRecord, Record: &Record{Stream: "users", Data: benchRecord, EmittedAt: 1714521600000}})
		}
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

func TestDebugLogsOnlyWhenAsked(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b)
	w.Log(LevelDebug, "hidden")
	w.Log(LevelInfo, "shown")
	w.SetDebug(true)
	w.Log(LevelDebug, "now shown")
	w.Flush()
	want := `{"type":"LOG","log":{"level":"INFO","message":"shown"}}` + "\n" + `{"type":"LOG","log":{"level":"DEBUG","message":"now shown"}}` + "\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// Messages are encoded as json.Marshal encodes them, payload by payload.
func TestMarshalMessageAsEncodingJSON(t *testing.T) {
	for _, m := range []*Message{
		{Type: TypeSpec, Spec: json.RawMessage(` {"a": "<b>"} `)},
		{Type: TypeLog, Log: &Log{Level: "INFO", Message: "a & b"}},
		{Type: TypeConnectionStatus, ConnectionStatus: &ConnectionStatus{Status: "SUCCEEDED"}},
		{Type: TypeCatalog, Catalog: &Catalog{Streams: []Stream{{Name: "s", JSONSchema: map[string]any{"type": "object"}}}}},
		{Type: TypeRecord, Record: &Record{Stream: "s", Data: json.RawMessage(`{"id":1}`), EmittedAt: 3}},
		{Type: "NONE"},
		{Type: TypeLog, Log: &Log{Level: "INFO", Message: "both"}, ConnectionStatus: &ConnectionStatus{Status: "FAILED"}},
	} {
		want, _ := json.Marshal(m)
		got, err := marshalMessage(m)
		if err != nil || string(got) != string(want) {
			t.Errorf("got %s (%v), want %s", got, err, want)
		}
	}
}

// writes is an io.Writer that hands each write over on a channel, from
// whichever goroutine writes (the writer's deferred flush has its own).
type writes chan string

func (c writes) Write(p []byte) (int, error) {
	c <- string(p)
	return len(p), nil
}

// taken is everything written so far, without waiting.
func (c writes) taken() string {
	var s string
	for {
		select {
		case w := <-c:
			s += w
		default:
			return s
		}
	}
}

// A STATE, a TRACE and a CONTROL leave the buffer at once, with the records
// before them; records alone are batched.
func TestCheckpointsAndTracesAreFlushedAtOnce(t *testing.T) {
	for name, write := range map[string]func(*Writer){
		"state":   func(w *Writer) { w.StreamState("s", map[string]any{"c": 1}, 1) },
		"error":   func(w *Writer) { w.Error(ConfigError, "bad", "", "s") },
		"status":  func(w *Writer) { w.Status("s", StatusRunning) },
		"control": func(w *Writer) { w.ControlConfig(map[string]any{"k": "v"}) },
	} {
		out := make(writes, 16)
		w := NewWriter(out)
		w.WriteRecords("s", [][]byte{[]byte(`{"id":1}`), []byte(`{"id":2}`)}, nil, 1)
		if got := out.taken(); got != "" {
			t.Fatalf("%s: records were not batched: %q", name, got)
		}
		write(w)
		lines := strings.Split(strings.TrimSpace(out.taken()), "\n")
		if len(lines) != 3 || !strings.Contains(lines[0], `{"id":1}`) || !strings.Contains(lines[1], `{"id":2}`) {
			t.Errorf("%s: out at once: %q", name, lines)
		}
	}
}

// Records buffered when nothing else comes (the next page is slow) leave
// within FlushEvery, without a call to Flush; the next record after that
// arms the deferred flush again.
func TestBufferedRecordsLeaveWithinASecond(t *testing.T) {
	out := make(writes, 16)
	w := NewWriter(out)
	w.WriteRecord("s", []byte(`{"id":1}`), 1)
	w.Log(LevelInfo, "then nothing")
	want := `{"type":"RECORD","record":{"stream":"s","data":{"id":1},"emitted_at":1}}` + "\n" + `{"type":"LOG","log":{"level":"INFO","message":"then nothing"}}` + "\n"
	select {
	case got := <-out:
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	case <-time.After(5 * FlushEvery):
		t.Fatal("the records are still buffered")
	}
	w.WriteRecord("s", []byte(`{"id":2}`), 1)
	select {
	case got := <-out:
		if !strings.Contains(got, `{"id":2}`) {
			t.Errorf("got %q", got)
		}
	case <-time.After(5 * FlushEvery):
		t.Fatal("the second record is still buffered")
	}
}
