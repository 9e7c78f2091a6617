package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"

	"github.com/airbyte-go/source-declarative/components"
	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/protocol"
	"github.com/airbyte-go/source-declarative/runtime/schedule"
)

// pythonStream is a configured stream Airbyte's CDK reads whole in the
// components host (manifest.Stream.Python): one unit of work on the
// sync's pool, its records and states written through our writer in the
// order the CDK gives them, statuses ours.
type pythonStream struct {
	r      *Runner
	st     *manifest.Stream
	cs     protocol.ConfiguredStream
	state  map[string]any // the incoming state, nil for none
	count  int64          // records since the last state
	total  int64
	failed bool
}

func (s *pythonStream) streamName() string { return s.st.Name }
func (s *pythonStream) hasFailed() bool    { return s.failed }

// Start writes STARTED.
func (s *pythonStream) Start(context.Context) error {
	return s.r.Out.Status(s.st.Name, protocol.StatusStarted)
}

// Partitions is the one read of the whole stream.
func (s *pythonStream) Partitions(context.Context) iter.Seq2[schedule.Partition, error] {
	return func(yield func(schedule.Partition, error) bool) { yield(s, nil) }
}

// Read reads the stream in the host.
func (s *pythonStream) Read(ctx context.Context) error {
	running := false
	return s.r.readPython(ctx, s.st, s.cs, s.state, 0, func(m *pythonMessage, raw json.RawMessage) error {
		switch m.Type {
		case "RECORD":
			if !running {
				running = true
				s.r.Out.Status(s.st.Name, protocol.StatusRunning)
			}
			s.count++
			s.total++
			var files []protocol.FileReference
			if m.Record.FileReference != nil {
				files = []protocol.FileReference{*m.Record.FileReference}
			}
			return s.r.Out.WriteRecords(s.st.Name, [][]byte{m.Record.Data}, files, s.r.Now().UnixMilli())
		case "STATE":
			if m.State == nil || m.State.Stream == nil {
				return nil
			}
			if !running {
				running = true
				s.r.Out.Status(s.st.Name, protocol.StatusRunning)
			}
			err := s.r.Out.StreamState(s.st.Name, m.State.Stream.StreamState, s.count)
			s.count = 0
			return err
		}
		return nil
	})
}

// Finish writes COMPLETE, or the errors and INCOMPLETE.
func (s *pythonStream) Finish(errs []error) {
	if len(errs) == 0 {
		s.r.log("INFO", fmt.Sprintf("Read %d records from stream %s", s.total, s.st.Name))
		s.r.Out.Status(s.st.Name, protocol.StatusComplete)
		return
	}
	s.failed = true
	for _, err := range errs {
		var traced cdkErrors
		if errors.As(err, &traced) {
			for _, e := range traced {
				s.r.Out.Error(FailureType(e), OneLine(e), internalMessage(e), s.st.Name)
			}
			continue
		}
		s.r.Out.Error(FailureType(err), OneLine(err), internalMessage(err), s.st.Name)
	}
	s.r.Out.Status(s.st.Name, protocol.StatusIncomplete)
}

// cdkErrors are the errors the CDK's read of a stream traced, each of its
// own (one per failed partition), in order.
type cdkErrors []error

func (e cdkErrors) Error() string { return e[0].Error() }

// readPython reads a stream in the components host from state (nil: none),
// at most maxRecords records (0: all); each RECORD and STATE goes to
// onMessage, LOG messages to the runner's log. The TRACE ERRORs of the CDK
// are the read's error (cdkErrors), each printed as the CDK printed it.
func (r *Runner) readPython(ctx context.Context, st *manifest.Stream, cs protocol.ConfiguredStream, state map[string]any, maxRecords int, onMessage func(*pythonMessage, json.RawMessage) error) error {
	params := map[string]any{"stream": st.Name, "configured_stream": cs, "go_auth": manifest.AuthNames(st.PythonAuth)}
	if state != nil {
		params["state"] = []any{map[string]any{"type": "STREAM", "stream": map[string]any{
			"stream_descriptor": map[string]any{"name": st.Name}, "stream_state": state}}}
	}
	if maxRecords > 0 {
		params["max_records"] = maxRecords
	}
	var traced cdkErrors
	err := r.components.Stream(ctx, st.Python, "read", params, nil, func(raw json.RawMessage) error {
		var m pythonMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			return err
		}
		switch m.Type {
		case "LOG":
			if m.Log != nil {
				r.log(components.LogLevel(m.Log.Level), m.Log.Message)
			}
			return nil
		case "CONTROL":
			if config, ok := components.ConnectorConfig(raw); ok {
				r.components.TakeConfig(config)
			}
			return nil
		case "TRACE":
			if m.Trace != nil && m.Trace.Type == "ERROR" && m.Trace.Error != nil {
				e := m.Trace.Error
				traced = append(traced, &Error{Failure: orDefault(e.FailureType, protocol.SystemError), Message: e.Message, Internal: e.InternalMessage})
			}
			return nil
		}
		return onMessage(&m, raw)
	})
	if traced != nil {
		return traced
	}
	return err
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// checkPython checks a stream the CDK reads whole with the CDK's own
// availability check (its first partition's first record; a stream with no
// partition is not available), its built-in authenticators Go's.
func (r *Runner) checkPython(ctx context.Context, st *manifest.Stream) error {
	var out struct {
		Available bool   `json:"available"`
		Reason    string `json:"reason"`
	}
	params := map[string]any{"stream": st.Name, "go_auth": manifest.AuthNames(st.PythonAuth)}
	if err := r.components.Stream(ctx, st.Python, "check", params, &out, nil); err != nil {
		return err
	}
	if !out.Available {
		return errors.New(out.Reason)
	}
	return nil
}

// pythonTestRead is the test read of a stream the CDK reads whole: the
// StreamRead of the CDK's own builder, with our masking (every secret and
// obtained token, every Authorization header).
func (r *Runner) pythonTestRead(ctx context.Context, tr *testReader, st *manifest.Stream, limits TestLimits, state map[string]any) *StreamRead {
	params := map[string]any{"stream": st.Name, "limits": limits,
		"configured_stream": protocol.ConfiguredStream{Stream: protocol.Stream{Name: st.Name, JSONSchema: map[string]any{}, SupportedSyncModes: []string{"full_refresh", "incremental"}},
			SyncMode: "incremental", DestinationSyncMode: "append"}}
	if state != nil {
		params["state"] = []any{map[string]any{"type": "STREAM", "stream": map[string]any{
			"stream_descriptor": map[string]any{"name": st.Name}, "stream_state": state}}}
	}
	var out struct {
		Message struct {
			Type   string `json:"type"`
			Record *struct {
				Data json.RawMessage `json:"data"`
			} `json:"record"`
			Trace *struct {
				Error *struct {
					Message string `json:"message"`
				} `json:"error"`
			} `json:"trace"`
		} `json:"message"`
	}
	// A long op, as a read whole is: the builder's limits bound it, not a
	// call's time limit (an API that backs off may take minutes).
	c := st.Python
	if c == nil {
		c = st.PythonTestRead
	}
	err := r.components.Stream(ctx, c, "test_read", params, &out, nil)
	switch {
	case err != nil:
	case out.Message.Record != nil:
		read := &StreamRead{}
		if err = json.Unmarshal(out.Message.Record.Data, read); err == nil {
			tr.read = read
			tr.maskAuthorization()
			tr.mask()
			return read
		}
	case out.Message.Trace != nil && out.Message.Trace.Error != nil:
		err = &Error{Failure: protocol.SystemError, Message: out.Message.Trace.Error.Message}
	default:
		err = fmt.Errorf("the CDK's test read of stream %s gave no StreamRead", st.Name)
	}
	tr.fail(err)
	tr.mask()
	return tr.read
}
