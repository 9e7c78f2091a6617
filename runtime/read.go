package runtime

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/airbyte-go/source-declarative/protocol"
	"github.com/airbyte-go/source-declarative/runtime/incremental"
	"github.com/airbyte-go/source-declarative/runtime/plan"
	"github.com/airbyte-go/source-declarative/runtime/retrieve"
	"github.com/airbyte-go/source-declarative/runtime/schedule"
)

// Read reads every configured stream, each from its state in states when
// its sync mode is incremental, on one pool of concurrency_level workers
// (schedule): the streams start in catalog order, up to half as many as
// workers make their partitions at once, and the slices of every stream's
// partitions are read by the same workers. A sync mode a stream cannot run,
// a state that cannot be read or a cursor the config breaks fails the read
// before anything is requested. A stream that fails while reading is
// INCOMPLETE with a TRACE ERROR and the others still run; the returned
// error then lists the failed streams. Dynamic streams are made first.
func (r *Runner) Read(ctx context.Context, catalog *protocol.ConfiguredCatalog, states incremental.States) error {
	if err := r.resolveStreams(ctx); err != nil {
		return err
	}
	r.configuredSchemas = map[string]any{}
	for _, cs := range catalog.Streams {
		r.configuredSchemas[cs.Stream.Name] = cs.Stream.JSONSchema
	}
	level, err := r.concurrency()
	if err != nil {
		return err
	}
	r.cache = retrieve.StartCache(r.Source.Streams, r.log)
	defer func() {
		r.cache.Close()
		r.cache = nil
	}()
	streams := make([]*syncStream, 0, len(catalog.Streams))
	for _, cs := range catalog.Streams {
		s, err := r.plan(cs, states)
		if err != nil {
			return err
		}
		streams = append(streams, s)
	}
	r.Client.InFlight = make(chan struct{}, level)
	defer func() { r.Client.InFlight = nil }()
	scheduled := make([]schedule.Stream, len(streams))
	for i, s := range streams {
		scheduled[i] = s
	}
	schedule.Run(ctx, scheduled, schedule.ForLevel(level))
	var failed []string
	for _, s := range streams {
		if s.failed {
			failed = append(failed, s.name)
		}
	}
	if len(failed) > 0 {
		return &Error{Failure: protocol.ConfigError, Message: fmt.Sprintf("During the sync, the following streams did not sync successfully: %s", strings.Join(failed, ", "))}
	}
	return nil
}

// plan prepares a configured stream. A stream missing from the manifest
// fails alone, when its turn comes; a wrong sync mode, state or cursor is an
// error of the whole read.
func (r *Runner) plan(cs protocol.ConfiguredStream, states incremental.States) (*syncStream, error) {
	s := &syncStream{r: r, name: cs.Stream.Name}
	st := r.Source.Stream(cs.Stream.Name)
	if st == nil {
		s.err = ConfigErr("stream %q of the catalog is not defined in the manifest (streams: %s)", s.name, strings.Join(r.streamNames(), ", "))
		return s, nil
	}
	if cs.SyncMode == "incremental" && !plan.SupportsIncremental(st) {
		return nil, ConfigErr("stream %s is configured with sync_mode incremental, but it has no incremental_sync in the manifest: configure it as full_refresh", s.name)
	}
	var state map[string]any
	if cs.SyncMode == "incremental" {
		state = states[s.name]
	}
	var err error
	if s.run, err = r.planner().NewRun(st, cs.CursorField, state); err != nil {
		return nil, err
	}
	return s, nil
}

// partitionStateEvery is the least time between two states of a stream
// with a partition router while it is read (the first and the last are
// always written): each holds every partition's cursor, so writing one per
// partition would grow as their square. The reference waits ten minutes.
const partitionStateEvery = time.Minute

// progress writes the records and states of one stream, from any worker.
type progress struct {
	r       *Runner
	name    string
	run     *plan.Run
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
	if throttled && (!pg.lastAt.IsZero() && time.Since(pg.lastAt) < partitionStateEvery || !pg.run.Intermediate()) {
		return nil
	}
	state := pg.run.State()
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
