package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"strings"
	"sync"

	"github.com/airbyte-go/source-declarative/lang/datetime"
	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/protocol"
	"github.com/airbyte-go/source-declarative/runtime/extract"
	"github.com/airbyte-go/source-declarative/runtime/incremental"
	"github.com/airbyte-go/source-declarative/runtime/plan"
	"github.com/airbyte-go/source-declarative/runtime/request"
	"github.com/airbyte-go/source-declarative/runtime/schema"
)

// TestLimits bound a Connector Builder test read.
type TestLimits struct {
	MaxRecords       int `json:"max_records"`
	MaxPagesPerSlice int `json:"max_pages_per_slice"`
	MaxSlices        int `json:"max_slices"`
	// MaxStreams bounds the streams each dynamic stream shows in a full
	// resolve of the manifest (FullResolvedManifest).
	MaxStreams int `json:"max_streams"`
}

// DefaultTestLimits are the builder's defaults.
var DefaultTestLimits = TestLimits{MaxRecords: 100, MaxPagesPerSlice: 5, MaxSlices: 5, MaxStreams: 100}

// StreamRead is what a test read returns, in the shape of Airbyte's builder backend.
type StreamRead struct {
	Logs                 []TestLog          `json:"logs"`
	Slices               []TestSlice        `json:"slices"`
	TestReadLimitReached bool               `json:"test_read_limit_reached"`
	AuxiliaryRequests    []AuxiliaryRequest `json:"auxiliary_requests"`
	// InferredSchema is left out without records, LatestConfigUpdate
	// without a config update: the builder's serializer leaves out the
	// StreamRead's nulls.
	InferredSchema          *schema.Object    `json:"inferred_schema,omitzero"`
	InferredDatetimeFormats map[string]string `json:"inferred_datetime_formats"`
	LatestConfigUpdate      map[string]any    `json:"latest_config_update,omitzero"`
}

// TestLog is a log line of a test read: a WARN or ERROR logged during the
// read, the error that ended it, or a schema inference error. As in Airbyte's
// builder, internal_message and stacktrace are always there, null when empty.
type TestLog struct {
	Message         string  `json:"message"`
	Level           string  `json:"level"`
	InternalMessage *string `json:"internal_message"`
	Stacktrace      *string `json:"stacktrace"`
}

// TestSlice is one slice (a stream without partitions has one).
type TestSlice struct {
	Pages           []TestPage `json:"pages"`
	SliceDescriptor any        `json:"slice_descriptor"`
	// State is the latest state written when the slice ended: the one
	// written after it, or the one before when none was (a full refresh
	// stream writes one, when it ends; a partitioned one after its first
	// slice and when it ends), as Airbyte's builder groups them.
	State             []*TestState       `json:"state"`
	AuxiliaryRequests []AuxiliaryRequest `json:"auxiliary_requests"`
}

// TestState is a STATE as the builder shows it in a slice: the protocol's
// state message with each of its fields, null where unset.
type TestState struct {
	Type   string `json:"type"`
	Stream struct {
		StreamDescriptor struct {
			Name      string  `json:"name"`
			Namespace *string `json:"namespace"`
		} `json:"stream_descriptor"`
		StreamState map[string]any `json:"stream_state"`
	} `json:"stream"`
	Global           any                 `json:"global_"`
	Data             any                 `json:"data"`
	SourceStats      protocol.StateStats `json:"sourceStats"`
	DestinationStats any                 `json:"destinationStats"`
}

func newTestState(stream string, state map[string]any, records int) *TestState {
	s := &TestState{Type: "STREAM", SourceStats: protocol.StateStats{RecordCount: protocol.Count(records)}}
	s.Stream.StreamDescriptor.Name = stream
	s.Stream.StreamState = state
	return s
}

// sliceDescriptor is a slice as the builder shows it: its partition and
// cursor keys, or "{}" (a JSON string: the CDK logs an empty slice as the
// text of the object) for the one slice of a stream without partitions or
// cursor.
func sliceDescriptor(sl *incremental.Slice) any {
	if len(sl.Partition) == 0 && len(sl.Cursor) == 0 && len(sl.Extra) == 0 {
		return "{}"
	}
	m := make(map[string]any, len(sl.Partition)+len(sl.Cursor))
	for k, v := range sl.Partition {
		m[k] = v
	}
	for k, v := range sl.Cursor {
		m[k] = v
	}
	return m
}

// TestPage is one request, its response and its records.
type TestPage struct {
	Records  []json.RawMessage `json:"records"`
	Request  *HTTPRequest      `json:"request"`
	Response *HTTPResponse     `json:"response"`
	// Decision is what the paginator decided after this page.
	Decision string `json:"-"`
}

// HTTPRequest is a request as the builder shows it.
type HTTPRequest struct {
	URL        string            `json:"url"`
	Headers    map[string]string `json:"headers"`
	HTTPMethod string            `json:"http_method"`
	Body       *string           `json:"body"`
}

// HTTPResponse is a response as the builder shows it.
type HTTPResponse struct {
	Status  int               `json:"status"`
	Body    string            `json:"body"`
	Headers map[string]string `json:"headers"`
}

// AuxiliaryRequest is a token or login request.
type AuxiliaryRequest struct {
	Title       string        `json:"title"`
	Type        string        `json:"type"`
	Description string        `json:"description"`
	Request     *HTTPRequest  `json:"request"`
	Response    *HTTPResponse `json:"response"`
}

// testReader collects the exchanges of a test read, slice by slice.
type testReader struct {
	r       *Runner
	mu      sync.Mutex
	read    *StreamRead
	current *TestSlice // the slice being read
	stream  string     // the stream read (pages of others are its parents')
	path    string     // its manifest path
	field   string     // the cursor field, "" without one
	// latest is the last state written, since the records emitted after it.
	latest *TestState
	since  int
}

// slices reads up to MaxSlices slices (each partition's slices in turn) of
// MaxPagesPerSlice pages each, and stops at MaxRecords records. States are
// written where a read writes them in Airbyte's builder: after each slice of
// an incremental stream (after the first only for a partitioned one, as its
// cursor writes at most one state in ten minutes), and when the stream ends.
func (t *testReader) slices(ctx context.Context, st *manifest.Stream, limits TestLimits, state map[string]any) error {
	run, err := t.r.planner().NewRun(st, nil, state)
	if err != nil {
		return err
	}
	if err := run.Prepare(); err != nil {
		return err
	}
	t.stream, t.path = st.Name, st.Path
	t.field = run.Retriever().Field()
	total, read := 0, 0
	h := plan.Hooks{
		MaxPages: limits.MaxPagesPerSlice,
		Emit: func(records [][]byte) error {
			n := min(len(records), limits.MaxRecords-total)
			total += n
			t.since += n
			if total >= limits.MaxRecords {
				return errLimit
			}
			return nil
		},
		Before: func(sl *incremental.Slice) error {
			if read == limits.MaxSlices {
				t.read.TestReadLimitReached = true
				return errSlicesRead
			}
			read++
			t.current = &TestSlice{Pages: []TestPage{}, SliceDescriptor: sliceDescriptor(sl), State: []*TestState{}, AuxiliaryRequests: []AuxiliaryRequest{}}
			return nil
		},
		After: func(*incremental.Slice) error {
			if len(t.current.Pages) >= limits.MaxPagesPerSlice {
				t.read.TestReadLimitReached = true
			}
			if run.Incremental() && run.Checkpoints() == plan.EachSlice {
				t.write(run.State())
			}
			t.closeSlice()
			if len(t.read.Slices) >= limits.MaxSlices {
				// As the reference counts it: max_slices slices read reach
				// the limit, whether or not another slice would follow.
				t.read.TestReadLimitReached = true
			}
			return nil
		},
	}
	failed, err := t.readPartitions(ctx, run, h, limits.MaxSlices)
	if t.current != nil && len(t.current.Pages) >= limits.MaxPagesPerSlice {
		t.read.TestReadLimitReached = true
	}
	if !failed && err == nil {
		run.Finish()
	}
	// The stream ends with its state, shown with the last slice, whether
	// the read ended, met the record limit or failed.
	t.write(run.State())
	if t.current != nil {
		t.current.State = []*TestState{t.latest}
	} else if n := len(t.read.Slices); n > 0 {
		t.read.Slices[n-1].State = []*TestState{t.latest}
	}
	return err
}

// readPartitions reads the stream's partitions as Airbyte's builder does:
// they are made first (their parents read), at most max of them, then read
// in turn; a partition that fails is shown and its error logged, and the
// others are read still. failed tells that one failed; err is errLimit when
// the record limit stopped the read.
func (t *testReader) readPartitions(ctx context.Context, run *plan.Run, h plan.Hooks, max int) (failed bool, err error) {
	// A partitioned incremental stream's partitions come one behind the
	// router's (run.partitions holds each back until the next is made, as
	// the CDK's per-partition cursor looks one ahead): the parent page of
	// the partition after the last one read is requested too.
	var works []plan.Work
	for w, err := range run.Partitions(ctx) {
		if err != nil {
			t.fail(err)
			failed = true
			break
		}
		works = append(works, w)
		if len(works) == max {
			break
		}
	}
	for _, w := range works {
		err := run.ReadPartition(ctx, w, h)
		switch {
		case errors.Is(err, errSlicesRead):
			return failed, nil
		case errors.Is(err, errLimit):
			return failed, err
		case err == nil:
			t.partitionRead(run)
		case err != nil:
			t.fail(err)
			failed = true
			if t.current != nil {
				t.closeSlice()
			}
		}
	}
	return failed, nil
}

// partitionRead writes a partitioned incremental stream's state once its
// first partition is read (its cursor writes at most one in ten minutes, and
// the last when the stream ends), shown with the partition's last slice.
func (t *testReader) partitionRead(run *plan.Run) {
	if run.Checkpoints() != plan.EachPartition || t.latest != nil {
		return
	}
	t.write(run.State())
	if n := len(t.read.Slices); n > 0 {
		t.read.Slices[n-1].State = []*TestState{t.latest}
	}
}

// closeSlice ends the slice being read: it shows the latest state written.
func (t *testReader) closeSlice() {
	if t.latest != nil {
		t.current.State = []*TestState{t.latest}
	}
	t.read.Slices = append(t.read.Slices, *t.current)
	t.current = nil
}

// fail logs an error that ended a partition or the read, as the builder
// shows an error TRACE: its internal message is the technical detail, or the
// error itself (Airbyte's from_exception).
func (t *testReader) fail(err error) {
	internal := internalMessage(err)
	if internal == "" {
		internal = OneLine(err)
	}
	internal = t.r.Masker.Mask(internal)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.read.Logs = append(t.read.Logs, TestLog{Message: OneLine(err), Level: "ERROR", InternalMessage: &internal})
}

// write writes a state with the records emitted since the one before.
func (t *testReader) write(state map[string]any) {
	t.latest = newTestState(t.stream, state, t.since)
	t.since = 0
}

func (t *testReader) Page(stream string, req *request.Parts, resp *request.Response, records [][]byte, decision string) {
	if stream != t.stream {
		// A parent stream's page, read to make the partitions, titled as
		// Airbyte's builder titles it.
		t.mu.Lock()
		t.read.AuxiliaryRequests = append(t.read.AuxiliaryRequests, AuxiliaryRequest{
			Title: "Parent stream: Stream '" + stream + "' request", Type: "PARENT_STREAM",
			Description: "Request performed in order to extract records for stream '" + stream + "'",
			Request:     t.request(req), Response: t.response(resp)})
		t.mu.Unlock()
		return
	}
	page := TestPage{Request: t.request(req), Response: t.response(resp), Decision: decision, Records: []json.RawMessage{}}
	for _, rec := range records {
		page.Records = append(page.Records, json.RawMessage(rec))
	}
	t.mu.Lock()
	if t.current != nil {
		t.current.Pages = append(t.current.Pages, page)
	}
	t.mu.Unlock()
}

// Auxiliary keeps an auxiliary request as Airbyte's builder shows it: an
// AsyncRetriever's job requests with the slice being read, the others with
// the whole read; one made for a parent stream is titled as the parent's.
func (t *testReader) Auxiliary(kind, path, title, description string, req *request.Parts, resp *request.Response) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if rest, ok := strings.CutPrefix(path, t.path+"."); ok && strings.Contains(rest, "parent_stream_configs[") {
		kind, title = "PARENT_STREAM", "Parent stream: "+title
	}
	a := AuxiliaryRequest{Title: title, Type: kind, Description: description, Request: t.request(req), Response: t.response(resp)}
	if strings.HasPrefix(kind, "ASYNC_") && t.current != nil {
		t.current.AuxiliaryRequests = append(t.current.AuxiliaryRequests, a)
		return
	}
	t.read.AuxiliaryRequests = append(t.read.AuxiliaryRequests, a)
}

func (t *testReader) headers(h http.Header) map[string]string {
	out := map[string]string{}
	for k, v := range h {
		val := strings.Join(v, ", ")
		if strings.EqualFold(k, "Authorization") {
			scheme, _, found := strings.Cut(val, " ")
			if found {
				val = scheme + " ****"
			} else {
				val = "****"
			}
		}
		out[k] = val
	}
	return out
}

func (t *testReader) request(p *request.Parts) *HTTPRequest {
	if p == nil {
		return nil
	}
	full, _ := p.FullURL()
	out := &HTTPRequest{URL: full, Headers: t.headers(p.Headers), HTTPMethod: p.Method}
	if body, ctype, err := p.Body(); err == nil && body != nil {
		s := string(body)
		out.Body = &s
		if p.Headers.Get("Content-Type") == "" {
			out.Headers["Content-Type"] = ctype // as the request sent it (Parts.HTTP)
		}
	}
	return out
}

func (t *testReader) response(r *request.Response) *HTTPResponse {
	if r == nil {
		return nil
	}
	return &HTTPResponse{Status: r.Status, Body: string(r.Body), Headers: t.headers(r.Header)}
}

// mask hides the secrets in every captured exchange. It runs at the end,
// when every token obtained during the read is known as a secret.
func (t *testReader) mask() {
	m := t.r.Masker.Mask
	maskReq := func(r *HTTPRequest) {
		if r == nil {
			return
		}
		r.URL = m(r.URL)
		for k, v := range r.Headers {
			r.Headers[k] = m(v)
		}
		if r.Body != nil {
			b := m(*r.Body)
			r.Body = &b
		}
	}
	maskResp := func(r *HTTPResponse) {
		if r == nil {
			return
		}
		r.Body = m(r.Body)
		for k, v := range r.Headers {
			r.Headers[k] = m(v)
		}
	}
	for i := range t.read.Slices {
		pages := t.read.Slices[i].Pages
		for j := range pages {
			maskReq(pages[j].Request)
			maskResp(pages[j].Response)
			pages[j].Decision = m(pages[j].Decision)
		}
		for _, a := range t.read.Slices[i].AuxiliaryRequests {
			maskReq(a.Request)
			maskResp(a.Response)
		}
	}
	for i := range t.read.AuxiliaryRequests {
		maskReq(t.read.AuxiliaryRequests[i].Request)
		maskResp(t.read.AuxiliaryRequests[i].Response)
	}
	for i := range t.read.Logs {
		t.read.Logs[i].Message = m(t.read.Logs[i].Message)
	}
}

// log keeps a WARN or ERROR logged during the read.
func (t *testReader) log(level, msg string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.read.Logs = append(t.read.Logs, TestLog{Message: msg, Level: level})
}

var errLimit = errors.New("record limit reached")

// TestRead reads the first pages of one stream, from state (nil: from the
// start) as a read does, within the limits and returns what the builder
// shows: pages with their requests and responses, token and login requests,
// logs and an inferred schema.
func (r *Runner) TestRead(ctx context.Context, stream string, limits TestLimits, state map[string]any) *StreamRead {
	if limits.MaxRecords <= 0 {
		limits.MaxRecords = DefaultTestLimits.MaxRecords
	}
	if limits.MaxPagesPerSlice <= 0 {
		limits.MaxPagesPerSlice = DefaultTestLimits.MaxPagesPerSlice
	}
	if limits.MaxSlices <= 0 {
		limits.MaxSlices = DefaultTestLimits.MaxSlices
	}
	read := &StreamRead{Logs: []TestLog{}, Slices: []TestSlice{}, AuxiliaryRequests: []AuxiliaryRequest{}, InferredDatetimeFormats: map[string]string{}}
	tr := &testReader{r: r, read: read}
	r.Observer, r.logSink = tr, tr.log
	defer func() { r.Observer, r.logSink = nil, nil }()
	// As the builder's test reads, retries are off, even a manifest's max_retries.
	prevNoRetries := r.Client.NoRetries
	r.Client.NoRetries = true
	defer func() { r.Client.NoRetries = prevNoRetries }()
	var control map[string]any
	prevSave := r.SaveConfig
	r.SaveConfig = func(cfg map[string]any) error {
		control = cfg
		if prevSave != nil {
			return prevSave(cfg)
		}
		return nil
	}
	err := r.resolveStreams(ctx)
	st := r.Source.Stream(stream)
	if err != nil {
		st = nil
	} else if st == nil {
		err = ConfigErr("stream %q is not defined in the manifest (streams: %s)", stream, strings.Join(r.streamNames(), ", "))
	} else {
		err = tr.slices(ctx, st, limits, state)
	}
	if err != nil && !errors.Is(err, errLimit) {
		tr.fail(err)
	}
	if tr.current != nil { // the slice that failed or met a limit
		read.Slices = append(read.Slices, *tr.current)
	}
	tr.mask()
	// Trim the records past the limit from the last pages.
	left := limits.MaxRecords
	var pages []TestPage
	for i := range read.Slices {
		for j := range read.Slices[i].Pages {
			pg := &read.Slices[i].Pages[j]
			if len(pg.Records) > left {
				pg.Records = pg.Records[:left]
			}
			left -= len(pg.Records)
			pages = append(pages, *pg)
		}
	}
	read.TestReadLimitReached = read.TestReadLimitReached || left <= 0
	read.InferredDatetimeFormats = inferDatetimeFormats(pageRecords(pages))
	var pk [][]string
	if st != nil {
		pk = st.PrimaryKey
	}
	var schemaErrs []string
	read.InferredSchema, schemaErrs = schema.Infer(pageRecords(pages), pk, tr.field)
	for _, e := range schemaErrs {
		read.Logs = append(read.Logs, TestLog{Message: e, Level: "ERROR"})
	}
	if control != nil {
		read.LatestConfigUpdate = map[string]any{}
		for k, v := range control {
			if !strings.HasPrefix(k, "__") {
				read.LatestConfigUpdate[k] = v
			}
		}
	}
	return read
}

// inferDatetimeFormats finds the top-level fields holding dates in one format.
func inferDatetimeFormats(records iter.Seq[[]byte]) map[string]string {
	var in datetime.Inferrer
	for rec := range records {
		if m, ok := extract.DecodeJSON(rec).(map[string]any); ok {
			in.Add(m)
		}
	}
	return in.Formats()
}

// pageRecords yields the records of pages, in order.
func pageRecords(pages []TestPage) iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		for _, p := range pages {
			for _, rec := range p.Records {
				if !yield(rec) {
					return
				}
			}
		}
	}
}

// WritePretty prints a test read for a person: each page's request line,
// status, record count and the paginator's decision.
func (s *StreamRead) WritePretty(w io.Writer, stream string) {
	for _, a := range s.AuxiliaryRequests {
		status := 0
		if a.Response != nil {
			status = a.Response.Status
		}
		fmt.Fprintf(w, "%s (%s): %s %s -> %d\n", a.Title, a.Description, a.Request.HTTPMethod, a.Request.URL, status)
	}
	for n, sl := range s.Slices {
		if _, ok := sl.SliceDescriptor.(map[string]any); ok {
			b, _ := json.Marshal(sl.SliceDescriptor)
			fmt.Fprintf(w, "slice %d: %s\n", n+1, b)
		}
		for i, p := range sl.Pages {
			status := 0
			if p.Response != nil {
				status = p.Response.Status
			}
			fmt.Fprintf(w, "page %d: %s %s -> %d, %d records; %s\n", i+1, p.Request.HTTPMethod, p.Request.URL, status, len(p.Records), p.Decision)
		}
		for _, st := range sl.State {
			if st.Stream.StreamState["__ab_no_cursor_state_message"] != nil {
				continue // a full refresh stream's: nothing to start from
			}
			b, _ := json.Marshal(st.Stream.StreamState)
			fmt.Fprintf(w, "state: %s\n", b)
		}
	}
	for _, l := range s.Logs {
		fmt.Fprintf(w, "%s: %s\n", l.Level, l.Message)
	}
	if s.TestReadLimitReached {
		fmt.Fprintln(w, "test read limit reached")
	}
	n := 0
	for _, sl := range s.Slices {
		for _, p := range sl.Pages {
			n += len(p.Records)
		}
	}
	fmt.Fprintf(w, "%s: %d records\n", stream, n)
}

// RecordMessage wraps a value as the one RECORD a builder command prints.
func RecordMessage(out *protocol.Writer, stream string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return out.WriteRecord(stream, b, out.Millis())
}
