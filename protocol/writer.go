package protocol

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
)

// Masker hides secret values inside a text.
type Masker interface {
	Mask(string) string
}

// Writer prints protocol messages as JSON lines. It is buffered and safe for
// use from several goroutines; LOG and TRACE texts pass through the masker.
//
// Records are batched, but nothing waits long in the buffer: a STATE, a
// TRACE (errors, stream statuses) and a CONTROL leave at once with every
// record before them, since the platform acts on them (a checkpoint it
// never saw is lost when a sync is killed); anything else leaves at most
// FlushEvery after it was buffered, even when the next page is slow to come.
type Writer struct {
	mu     sync.Mutex
	out    *bufio.Writer
	masker Masker
	now    func() time.Time
	err    error
	debug  bool
	// flushLater flushes FlushEvery after the first message buffered since
	// the last flush; armed tells it is set.
	flushLater *time.Timer
	armed      bool
	// tap, when set, sees each message Write prints, masked (Tap).
	tap func(*Message)
}

// FlushEvery is the longest time a message waits in the writer's buffer.
const FlushEvery = time.Second

// NewWriter returns a writer on out.
func NewWriter(out io.Writer) *Writer {
	w := &Writer{out: bufio.NewWriterSize(out, 256<<10), now: time.Now}
	w.flushLater = time.AfterFunc(FlushEvery, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.armed = false
		w.flushLocked()
	})
	w.flushLater.Stop()
	return w
}

// SetMasker sets the masker applied to every LOG and TRACE text.
func (w *Writer) SetMasker(m Masker) {
	w.mu.Lock()
	w.masker = m
	w.mu.Unlock()
}

func (w *Writer) mask(s string) string {
	if w.masker == nil || s == "" {
		return s
	}
	return w.masker.Mask(s)
}

// Tap hands f each message Write prints (not the records of WriteRecords),
// its texts masked: a command run in-process (the manifest server's) reads
// its CONNECTION_STATUS, CATALOG and TRACE messages as the platform would.
func (w *Writer) Tap(f func(*Message)) {
	w.mu.Lock()
	w.tap = f
	w.mu.Unlock()
}

// Write prints one message.
func (w *Writer) Write(m *Message) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.writeLocked(m)
}

func (w *Writer) writeLocked(m *Message) error {
	if m.Log != nil {
		m.Log.Message = w.mask(m.Log.Message)
		m.Log.StackTrace = w.mask(m.Log.StackTrace)
	}
	if m.ConnectionStatus != nil {
		m.ConnectionStatus.Message = w.mask(m.ConnectionStatus.Message)
	}
	if m.Trace != nil && m.Trace.Error != nil {
		e := m.Trace.Error
		e.Message = w.mask(e.Message)
		e.InternalMessage = w.mask(e.InternalMessage)
		e.StackTrace = w.mask(e.StackTrace)
	}
	if w.tap != nil {
		w.tap(m)
	}
	b, err := marshalMessage(m)
	if err != nil {
		return err
	}
	w.out.Write(b)
	if err := w.out.WriteByte('\n'); err != nil && w.err == nil {
		w.err = err
	}
	switch m.Type {
	case TypeState, TypeTrace, TypeControl:
		w.flushLocked()
	default:
		w.buffered()
	}
	return w.err
}

// buffered arms the deferred flush when the buffer holds what the last
// flush left out: a batch of records then waits at most FlushEvery, with
// one timer per writer rather than a flush per record.
func (w *Writer) buffered() {
	if !w.armed && w.out.Buffered() > 0 {
		w.armed = true
		w.flushLater.Reset(FlushEvery)
	}
}

func (w *Writer) flushLocked() {
	if err := w.out.Flush(); err != nil && w.err == nil {
		w.err = err
	}
}

// WriteRecord prints a RECORD whose data are compact JSON bytes, without
// re-encoding them.
func (w *Writer) WriteRecord(stream string, data []byte, emittedAt int64) error {
	return w.WriteRecords(stream, [][]byte{data}, nil, emittedAt)
}

// WriteRecords prints a batch of records of one stream under one lock, each
// with its file in files (nil: none; else one per record). Bytes that are
// not UTF-8 (an API's strings in another encoding) become U+FFFD, as
// encoding/json writes them: a line that is not UTF-8 is not JSON.
func (w *Writer) WriteRecords(stream string, records [][]byte, files []FileReference, emittedAt int64) error {
	name, _ := json.Marshal(stream)
	head := append([]byte(`{"type":"RECORD","record":{"stream":`), name...)
	head = append(head, `,"data":`...)
	tail := strconv.AppendInt([]byte(`,"emitted_at":`), emittedAt, 10)
	end := []byte("}}\n")
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, r := range records {
		if !utf8.Valid(r) {
			r = bytes.ToValidUTF8(r, []byte("\uFFFD"))
		}
		w.out.Write(head)
		w.out.Write(r)
		w.out.Write(tail)
		if files != nil {
			ref, _ := json.Marshal(files[i])
			w.out.WriteString(`,"file_reference":`)
			w.out.Write(ref)
		}
		if _, err := w.out.Write(end); err != nil && w.err == nil {
			w.err = err
		}
	}
	w.buffered()
	return w.err
}

// Flush writes out everything buffered.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.flushLocked()
	return w.err
}

// Millis is the current time in epoch milliseconds.
func (w *Writer) Millis() int64 { return w.now().UnixMilli() }

// Error prints a TRACE ERROR. stream may be empty.
func (w *Writer) Error(failureType, message, internal, stream string) error {
	e := &TraceError{Message: message, InternalMessage: internal, FailureType: failureType}
	if stream != "" {
		e.StreamDescriptor = &StreamDescriptor{Name: stream}
	}
	return w.Write(&Message{Type: TypeTrace, Trace: &Trace{Type: "ERROR", EmittedAt: float64(w.Millis()), Error: e}})
}

// Status prints a TRACE STREAM_STATUS.
func (w *Writer) Status(stream, status string) error {
	return w.Write(&Message{Type: TypeTrace, Trace: &Trace{Type: "STREAM_STATUS", EmittedAt: float64(w.Millis()),
		StreamStatus: &StreamStatus{StreamDescriptor: StreamDescriptor{Name: stream}, Status: status}}})
}

// RateLimited prints a TRACE STREAM_STATUS RUNNING with the reason
// RATE_LIMITED: the API asked the stream to wait.
func (w *Writer) RateLimited(stream string) error {
	return w.Write(&Message{Type: TypeTrace, Trace: &Trace{Type: "STREAM_STATUS", EmittedAt: float64(w.Millis()),
		StreamStatus: &StreamStatus{StreamDescriptor: StreamDescriptor{Name: stream}, Status: "RUNNING",
			Reasons: []StreamStatusReason{{Type: "RATE_LIMITED"}}}}})
}

// StreamState prints a STREAM state: the stream's state and the number of
// its records emitted since its previous state.
func (w *Writer) StreamState(stream string, state map[string]any, count int64) error {
	return w.Write(StreamStateMessage(stream, state, count))
}

// StreamStateMessage is the STATE message of one stream.
func StreamStateMessage(stream string, state map[string]any, count int64) *Message {
	return &Message{Type: TypeState, State: &State{Type: "STREAM",
		Stream:      &StreamState{StreamDescriptor: StreamDescriptor{Name: stream}, StreamState: state},
		SourceStats: &StateStats{RecordCount: Count(count)}}}
}

// ConnectionStatus prints the answer of check.
func (w *Writer) ConnectionStatus(ok bool, message string) error {
	status := "SUCCEEDED"
	if !ok {
		status = "FAILED"
	}
	return w.Write(&Message{Type: TypeConnectionStatus, ConnectionStatus: &ConnectionStatus{Status: status, Message: message}})
}

// ControlConfig prints a CONTROL CONNECTOR_CONFIG with the whole config,
// flushed at once (as every CONTROL), so that it is out before anything
// depends on it.
func (w *Writer) ControlConfig(config map[string]any) error {
	return w.Write(&Message{Type: TypeControl, Control: &Control{Type: "CONNECTOR_CONFIG", EmittedAt: float64(w.now().UnixMilli()),
		ConnectorConfig: &ConnectorConfig{Config: config}}})
}

// marshalMessage encodes m as json.Marshal does, but with its payload's type
// only: encoding/json builds the encoders of a type and of every type inside
// it on first use, and building them for all message types at once cost a
// short command (spec, check) ~0.5 ms.
func marshalMessage(m *Message) ([]byte, error) {
	var key string
	var payload any
	set := 0
	for _, p := range []struct {
		key   string
		value any
		isSet bool
	}{
		{"record", m.Record, m.Record != nil}, {"state", m.State, m.State != nil}, {"log", m.Log, m.Log != nil},
		{"spec", m.Spec, len(m.Spec) > 0}, {"connectionStatus", m.ConnectionStatus, m.ConnectionStatus != nil},
		{"catalog", m.Catalog, m.Catalog != nil}, {"trace", m.Trace, m.Trace != nil}, {"control", m.Control, m.Control != nil},
	} {
		if p.isSet {
			key, payload = p.key, p.value
			set++
		}
	}
	if set > 1 {
		return json.Marshal(m)
	}
	typ, err := json.Marshal(m.Type)
	if err != nil {
		return nil, err
	}
	b := append([]byte(`{"type":`), typ...)
	if set == 1 {
		p, err := json.Marshal(payload)
		if err != nil {
			return nil, err
		}
		b = append(append(append(append(b, `,"`...), key...), `":`...), p...)
	}
	return append(b, '}'), nil
}
