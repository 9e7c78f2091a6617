package runtime

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/airbyte-go/source-declarative/protocol"
	"github.com/airbyte-go/source-declarative/runtime/incremental"
	"github.com/airbyte-go/source-declarative/runtime/schema"
)

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
