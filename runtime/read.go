package runtime

import (
	"context"
	"fmt"
	"strings"

	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/protocol"
	"github.com/airbyte-go/source-declarative/runtime/incremental"
)

// Read reads every configured stream in catalog order, each from its state
// in states when its sync mode is incremental. A sync mode a stream cannot
// run, a state that cannot be read or a cursor the config breaks fails the
// read before anything is requested. A stream that fails while reading is
// INCOMPLETE with a TRACE ERROR and the others still run; the returned error
// then lists the failed streams. Dynamic streams are made first.
func (r *Runner) Read(ctx context.Context, catalog *protocol.ConfiguredCatalog, states incremental.States) error {
	if err := r.resolveDynamic(ctx); err != nil { // dynamic.go
		return err
	}
	plans := make([]*streamPlan, 0, len(catalog.Streams))
	for _, cs := range catalog.Streams {
		p, err := r.plan(cs, states)
		if err != nil {
			return err
		}
		plans = append(plans, p)
	}
	var failed []string
	for _, p := range plans {
		if err := r.readOne(ctx, p); err != nil {
			failed = append(failed, p.name)
			r.Out.Error(FailureType(err), OneLine(err), "", p.name)
			r.Out.Status(p.name, protocol.StatusIncomplete)
		}
	}
	if len(failed) > 0 {
		return &Error{Failure: protocol.ConfigError, Message: fmt.Sprintf("During the sync, the following streams did not sync successfully: %s", strings.Join(failed, ", "))}
	}
	return nil
}

// streamPlan is a configured stream ready to read: its manifest stream and
// its cursor, or the error that stops it.
type streamPlan struct {
	name   string
	st     *manifest.Stream
	cursor incremental.Cursor
	err    error
}

// plan prepares a configured stream. A stream missing from the manifest
// fails alone, when its turn comes; a wrong sync mode, state or cursor is an
// error of the whole read.
func (r *Runner) plan(cs protocol.ConfiguredStream, states incremental.States) (*streamPlan, error) {
	p := &streamPlan{name: cs.Stream.Name, st: r.Source.Stream(cs.Stream.Name)}
	if p.st == nil {
		p.err = ConfigErr("stream %q of the catalog is not defined in the manifest (streams: %s)", p.name, strings.Join(r.streamNames(), ", "))
		return p, nil
	}
	if cs.SyncMode == "incremental" && p.st.Incremental == nil {
		return nil, ConfigErr("stream %s is configured with sync_mode incremental, but it has no incremental_sync in the manifest: configure it as full_refresh", p.name)
	}
	var state map[string]any
	if cs.SyncMode == "incremental" {
		state = states[p.name]
	}
	var err error
	p.cursor, err = r.cursor(p.st, cs.CursorField, state)
	return p, err
}

// cursor makes the cursor of a stream from its state (nil: from the start);
// a stream without incremental_sync gets the full-refresh cursor.
func (r *Runner) cursor(st *manifest.Stream, catalogField []string, state map[string]any) (incremental.Cursor, error) {
	spec, err := incremental.NewSpec(st, r.Config, r.Now, catalogField)
	if err != nil {
		return nil, ConfigErr("stream %s: %v", st.Name, err)
	}
	if spec == nil {
		return incremental.FullRefresh{}, nil
	}
	c, err := spec.Cursor(state)
	if err != nil {
		return nil, ConfigErr("%v", err)
	}
	return c, nil
}

// readOne reads the slices of a stream in order. After each slice read to
// its end, and once at the end, it writes the stream's state with the number
// of records emitted since the previous one; a slice that fails leaves the
// state of the slices before it.
func (r *Runner) readOne(ctx context.Context, p *streamPlan) error {
	if p.err != nil {
		return p.err
	}
	name := p.name
	r.Out.Status(name, protocol.StatusStarted)
	sr, err := r.streamReader(p.st, p.cursor)
	if err != nil {
		return err
	}
	running := false
	var count, total int64
	last := ""
	checkpoint := func() error {
		state := p.cursor.State()
		text := jsonText(state)
		if text == last && count == 0 {
			return nil
		}
		last = text
		err := r.Out.StreamState(name, state, count)
		count = 0
		return err
	}
	emit := func(records [][]byte) error {
		if !running {
			running = true
			r.Out.Status(name, protocol.StatusRunning)
		}
		count += int64(len(records))
		total += int64(len(records))
		return r.Out.WriteRecords(name, records, r.Now().UnixMilli())
	}
	for sl := range p.cursor.Slices() {
		if err := sr.read(ctx, sl, 0, emit); err != nil {
			return err
		}
		p.cursor.Close(sl)
		if err := checkpoint(); err != nil {
			return err
		}
	}
	if !running {
		r.Out.Status(name, protocol.StatusRunning)
	}
	if err := checkpoint(); err != nil {
		return err
	}
	r.log("INFO", fmt.Sprintf("Read %d records from stream %s", total, name))
	return r.Out.Status(name, protocol.StatusComplete)
}

func (r *Runner) streamNames() []string {
	var names []string
	for _, st := range r.Source.Streams {
		names = append(names, st.Name)
	}
	return names
}
