package runtime

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

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
	r.configuredSchemas = map[string]any{}
	for _, cs := range catalog.Streams {
		r.configuredSchemas[cs.Stream.Name] = cs.Stream.JSONSchema
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
			r.Out.Error(FailureType(err), OneLine(err), internalMessage(err), p.name)
			r.Out.Status(p.name, protocol.StatusIncomplete)
		}
	}
	if len(failed) > 0 {
		return &Error{Failure: protocol.ConfigError, Message: fmt.Sprintf("During the sync, the following streams did not sync successfully: %s", strings.Join(failed, ", "))}
	}
	return nil
}

// streamPlan is a configured stream ready to read: its run (manifest
// stream and cursors) and how many partitions are read at once, or the
// error that stops it.
type streamPlan struct {
	name    string
	run     *streamRun
	workers int
	err     error
}

// plan prepares a configured stream. A stream missing from the manifest
// fails alone, when its turn comes; a wrong sync mode, state, cursor or
// concurrency level is an error of the whole read.
func (r *Runner) plan(cs protocol.ConfiguredStream, states incremental.States) (*streamPlan, error) {
	p := &streamPlan{name: cs.Stream.Name, workers: 1}
	st := r.Source.Stream(cs.Stream.Name)
	if st == nil {
		p.err = ConfigErr("stream %q of the catalog is not defined in the manifest (streams: %s)", p.name, strings.Join(r.streamNames(), ", "))
		return p, nil
	}
	if cs.SyncMode == "incremental" && !supportsIncremental(st) {
		return nil, ConfigErr("stream %s is configured with sync_mode incremental, but it has no incremental_sync in the manifest: configure it as full_refresh", p.name)
	}
	var state map[string]any
	if cs.SyncMode == "incremental" {
		state = states[p.name]
	}
	var err error
	if p.run, err = r.newRun(st, cs.CursorField, state); err != nil {
		return nil, err
	}
	if st.Retriever != nil && st.Retriever.PartitionRouter != nil {
		if p.workers, err = r.concurrency(); err != nil {
			return nil, err
		}
	}
	return p, nil
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

// partitionStateEvery is the least time between two states of a stream
// with a partition router while it is read (the first and the last are
// always written): each holds every partition's cursor, so writing one per
// partition would grow as their square. The reference waits ten minutes.
const partitionStateEvery = time.Minute

// readOne reads a stream: its partitions with a pool of workers (one
// without partition router), the slices of each partition in order. A
// stream without router writes its state after each slice read to its end;
// one with a router and incremental_sync after a partition is read (at most
// once a partitionStateEvery), and both once at the end, each with the
// number of records emitted since the previous one. A state never covers a
// slice not read to its end; a stream with a router that fails writes the
// state of what it has read.
func (r *Runner) readOne(ctx context.Context, p *streamPlan) error {
	if p.err != nil {
		return p.err
	}
	name, run := p.name, p.run
	r.Out.Status(name, protocol.StatusStarted)
	if err := run.prepare(); err != nil {
		return err
	}
	pg := &progress{r: r, name: name, run: run}
	if run.cleared {
		pg.last = "{}"
		if err := r.Out.StreamState(name, map[string]any{}, 0); err != nil {
			return err
		}
	}
	hooks := func(partitionWork) sliceHooks {
		h := sliceHooks{emit: pg.emit, recycle: true} // emit copies the records out
		switch {
		case run.router == nil:
			h.after = func(*incremental.Slice) error { return pg.checkpoint(false) }
		case run.parts != nil:
			h.done = func() error { return pg.checkpoint(true) }
		}
		return h
	}
	err := run.concurrent(ctx, p.workers, hooks)
	if err != nil {
		if run.parts != nil {
			pg.checkpoint(false)
		}
		return err
	}
	run.finish()
	pg.start()
	if err := pg.checkpoint(false); err != nil {
		return err
	}
	r.log("INFO", fmt.Sprintf("Read %d records from stream %s", pg.total, name))
	return r.Out.Status(name, protocol.StatusComplete)
}

// progress writes the records and states of one stream, from any worker.
type progress struct {
	r       *Runner
	name    string
	run     *streamRun
	mu      sync.Mutex
	running bool
	count   int64 // records since the previous state
	total   int64
	last    string    // the previous state's JSON
	lastAt  time.Time // when it was written
}

// start writes RUNNING, if no record or state did.
func (pg *progress) start() {
	pg.mu.Lock()
	defer pg.mu.Unlock()
	pg.runningLocked()
}

// runningLocked writes the stream's RUNNING status once: before its first
// record, or before its first state when it has none, so that a stream's
// statuses and states come in the protocol's order (STARTED, RUNNING,
// records and states, COMPLETE).
func (pg *progress) runningLocked() {
	if !pg.running {
		pg.running = true
		pg.r.Out.Status(pg.name, protocol.StatusRunning)
	}
}

// emit writes the records of one page, whole, in order.
func (pg *progress) emit(records [][]byte) error {
	pg.mu.Lock()
	defer pg.mu.Unlock()
	pg.runningLocked()
	pg.count += int64(len(records))
	pg.total += int64(len(records))
	return pg.r.Out.WriteRecords(pg.name, records, pg.r.Now().UnixMilli())
}

// checkpoint writes the stream's state unless it is the previous one with
// no record since; throttled, it also waits partitionStateEvery after the
// previous one, and writes no global state without parent state.
func (pg *progress) checkpoint(throttled bool) error {
	pg.mu.Lock()
	defer pg.mu.Unlock()
	if throttled && (!pg.lastAt.IsZero() && time.Since(pg.lastAt) < partitionStateEvery || !pg.run.parts.Intermediate()) {
		return nil
	}
	state := pg.run.state()
	text := jsonText(state)
	if text == pg.last && pg.count == 0 {
		return nil
	}
	pg.last, pg.lastAt = text, time.Now()
	pg.runningLocked()
	err := pg.r.Out.StreamState(pg.name, state, pg.count)
	pg.count = 0
	return err
}

func (r *Runner) streamNames() []string {
	var names []string
	for _, st := range r.Source.Streams {
		names = append(names, st.Name)
	}
	return names
}
