// Package plan makes a command's streams into runs: the stream a
// StateDelegatingStream reads, its cursors from the incoming state (legacy
// per-partition states migrated), its partitions (parents read through
// their own runs) times each cursor's slices, and the state they leave.
package plan

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync"
	"time"

	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/protocol"
	"github.com/airbyte-go/source-declarative/runtime/failure"
	"github.com/airbyte-go/source-declarative/runtime/incremental"
	"github.com/airbyte-go/source-declarative/runtime/partition"
	"github.com/airbyte-go/source-declarative/runtime/request"
	"github.com/airbyte-go/source-declarative/runtime/retrieve"
)

// Planner makes the runs of a command's streams.
type Planner struct {
	// Env is what the streams' retrievers take from the command.
	Env *retrieve.Env
	// Cache is the sync's response cache (nil outside a sync).
	Cache *retrieve.ParentCache
	// Start is when the sync began (zero outside a sync): the "now" every
	// cursor of the sync ends at (a window ending now, now_utc() in
	// end_datetime), so that a stream read as a stream and as a parent
	// asks the same windows, and the second read is served by Cache.
	Start time.Time
	// Parents bound the reads of parent streams (a test read's limits;
	// zero outside one).
	Parents Limits
}

// cursorClock is the clock of the streams' cursors: the sync's start, or
// Env.Now outside a sync.
func (p *Planner) cursorClock() func() time.Time {
	if p.Start.IsZero() {
		return p.Env.Now
	}
	start := p.Start
	return func() time.Time { return start }
}

// Run is one read of a stream: its partitions, each read with its own
// cursor. A stream without partition router is one partition.
type Run struct {
	p  *Planner
	st *manifest.Stream
	rt retrieve.Retriever // made by prepare
	// probe reads only to see that the stream answers (check).
	probe bool
	// parts splits the stream into partitions and keeps their cursors.
	parts  partitioning
	warned sync.Once // incremental_dependency on a stream without incremental_sync
	// lazy tells whether partitions with a lazy_read_pointer start with the
	// records embedded in their parent record: only when the stream has no
	// incoming state, as in the reference.
	lazy bool
	// cleared tells that the incoming state was dropped as older than a
	// StateDelegatingStream's api_retention_period.
	cleared bool
	// cached is how the stream's requests use the sync's response cache
	// (retrieve.ParentCache); this read's answers are kept under it.
	cached request.CacheUse
}

// Work is one partition to read, with its cursor and its sequence number
// in the per-partition state.
type Work struct {
	Part   partition.Partition
	Cursor incremental.Cursor
	seq    int
	// slices is how many of its slices are read (0: all), set by
	// FirstSlices.
	slices int
}

// StreamError is a failure of the incremental_sync of a stream with a
// partition router over the config (a template of its cursor that fails):
// a sync fails that stream alone, when its read starts, and reads the
// others, as Airbyte makes such a stream's cursors when it reads its
// partitions. Airbyte makes the cursor of a stream without router when it
// builds the source, so there a cursor the config breaks fails the whole
// read before any request, and so it does here.
type StreamError struct{ Err error }

func (e *StreamError) Error() string { return e.Err.Error() }

// Unwrap gives the failure, with its failure type.
func (e *StreamError) Unwrap() error { return e.Err }

// NewRun prepares the cursors of a stream from its state (nil: from the
// start); a StateDelegatingStream is read as the stream its state picks. A
// state that cannot be read is an error before any request, and so is a
// cursor whose templates fail on the config, but a StreamError for a stream
// with a partition router.
func (p *Planner) NewRun(st *manifest.Stream, catalogField []string, state map[string]any) (*Run, error) {
	st, state, cleared, err := p.delegate(st, state) // statedelegating.go
	if err != nil {
		return nil, err
	}
	if state, err = p.migrateCustomState(st, state); err != nil {
		return nil, err
	}
	run := &Run{p: p, st: st, lazy: len(state) == 0, cleared: cleared, cached: p.Cache.Use(st)}
	if st.Retriever == nil || st.Retriever.PartitionRouter == nil {
		c, err := p.cursor(st, catalogField, state)
		run.parts = &single{cursor: c}
		return run, err
	}
	spec, err := incremental.NewSpec(st, p.Env.Config, p.cursorClock(), catalogField)
	if err != nil {
		return nil, &StreamError{failure.Config("stream %s: %v", st.Name, err)}
	}
	if spec == nil {
		run.parts = &routed{}
		return run, nil
	}
	global := st.Incremental.Datetime != nil && st.Incremental.Datetime.GlobalSubstreamCursor ||
		st.Retriever.PartitionRouter.Type == manifest.GroupingRouter
	state, legacyField, err := p.migrateLegacyState(st, spec.Field(), state)
	if err != nil {
		return nil, err
	}
	cursors, err := incremental.NewPartitioned(spec, state, incremental.PartitionedOptions{Stream: st.Name, Global: global,
		ParentState: partition.KeepsParentState(st.Retriever.PartitionRouter), Now: p.Env.Now, LegacyField: legacyField,
		Warn: func(msg string) { p.Env.Log("WARN", msg) }})
	if err != nil {
		return nil, failure.Config("%v", err)
	}
	run.parts = &perPartition{cursors: cursors, now: p.Env.Now}
	return run, nil
}

// Prepare makes the stream's retriever and router: templates over the config
// are rendered here, so a config that does not fit fails before any request.
func (run *Run) Prepare() error {
	opts := run.parts.options()
	opts.Cached, opts.Probe = run.cached, run.probe
	rt, err := retrieve.New(run.p.Env, run.st, opts)
	if err != nil {
		return err
	}
	run.rt = rt
	return run.parts.prepare(run)
}

// newRouter makes the stream's partition router, whose substream parents
// are read by readParent.
func (run *Run) newRouter() (partition.Router, error) {
	env := partition.Env{Stream: run.st.Name, Vars: run.p.Env.BuildVars(run.st.Retriever.Requester.Parameters), ReadParent: run.readParent, Log: run.p.Env.Log, Host: run.p.Env.Components}
	router, err := partition.New(run.st.Retriever.PartitionRouter, env)
	if err != nil {
		return nil, asError(err)
	}
	return router, nil
}

// asError keeps an error that carries its failure type, and makes any other
// a config error.
func asError(err error) error {
	if failure.As(err) != nil {
		return err // its own type, or a custom component's (system_error unless it said otherwise)
	}
	if failure.Type(err) != "" && !strings.Contains(failure.Type(err), "system") {
		return err
	}
	return failure.Config("%v", err)
}

// Partitions yields the partitions to read, each with its cursor; a stream
// without router yields one. A partition with a cursor per partition is
// yielded once the next one is made (see perPartition.partitions).
func (run *Run) Partitions(ctx context.Context) iter.Seq2[Work, error] {
	return run.parts.partitions(ctx)
}

// Hooks are what a read does around each slice: pages at most MaxPages
// (0: all), Before is told of each slice before it is read and After once
// it is closed; an error of either ends the read with it. Failed, when set,
// is told of a slice that failed: if it returns nil the partition's later
// slices are read still (a test read shows them, as Airbyte's builder
// does), and the partition ends with ErrSliceFailed, not done; otherwise
// the error it returns ends the read.
type Hooks struct {
	MaxPages int
	Emit     retrieve.Emit
	Before   func(*incremental.Slice) error
	After    func(*incremental.Slice) error
	Failed   func(*incremental.Slice, error) error
}

// ErrSliceFailed ends a partition whose failed slices Hooks.Failed was told
// of.
var ErrSliceFailed = errors.New("a slice of the partition failed")

// InPartition is a slice of the partition's cursor with the partition's
// keys, extra fields and request options.
func (run *Run) InPartition(w Work, sl *incremental.Slice) *incremental.Slice {
	return run.parts.inPartition(w, sl)
}

// LazyBody is the first page of the partition's slices when it comes from
// the parent record (lazy_read_pointer), nil when it is requested.
func (run *Run) LazyBody(w Work) []byte {
	if run.lazy && w.Part.Lazy != nil {
		return w.Part.Lazy
	}
	return nil
}

// ReadSlice reads a slice of the partition with rt, then closes it: its
// records count for the state.
func (run *Run) ReadSlice(ctx context.Context, rt retrieve.Retriever, w Work, sl *incremental.Slice, maxPages int, emit retrieve.Emit) error {
	if err := rt.Read(ctx, sl, maxPages, emit); err != nil {
		return err
	}
	w.Cursor.Close(sl)
	return nil
}

// ReadPartition reads the slices of one partition in order.
func (run *Run) ReadPartition(ctx context.Context, w Work, h Hooks) error {
	rt := run.rt.Worker(w.Cursor, false)
	rt.Rebind(w.Cursor, run.LazyBody(w))
	failed := false
	read := 0
	for sl := range w.Cursor.Slices() {
		if read++; w.slices > 0 && read > w.slices {
			break
		}
		sl = run.InPartition(w, sl)
		if h.Before != nil {
			if err := h.Before(sl); err != nil {
				return err
			}
		}
		if err := run.ReadSlice(ctx, rt, w, sl, h.MaxPages, h.Emit); err != nil {
			if h.Failed == nil || ctx.Err() != nil {
				return err
			}
			if err := h.Failed(sl, err); err != nil {
				return err
			}
			failed = true
			continue
		}
		if h.After != nil {
			if err := h.After(sl); err != nil {
				return err
			}
		}
	}
	if failed {
		return ErrSliceFailed
	}
	run.parts.done(w)
	return nil
}

// Sequential reads every partition in order, in this goroutine (check,
// test reads, parents, dynamic streams' resolvers).
func (run *Run) Sequential(ctx context.Context, h Hooks) error {
	for w, err := range run.Partitions(ctx) {
		if err != nil {
			return err
		}
		if err := run.ReadPartition(ctx, w, h); err != nil {
			return err
		}
	}
	return nil
}

// sequentialOneAhead reads every partition in order, each once the next one
// was handed over, as the reference's substream router reads a parent's
// partitions (it looks one ahead): the parent's state then lists the
// partition after the one being read. read is called once each partition
// but the last is read, before the partition after the next one is made, as
// the reference's router has then yielded the partition's last record.
func (run *Run) sequentialOneAhead(ctx context.Context, h Hooks, read func() error) error {
	var held *Work
	for w, err := range run.FirstSlices(ctx, run.p.Parents.Slices) {
		if err != nil {
			return err
		}
		if held != nil {
			if err := run.ReadPartition(ctx, *held, h); err != nil {
				return err
			}
			if err := read(); err != nil {
				return err
			}
		}
		held = &w
	}
	if held == nil {
		return nil
	}
	return run.ReadPartition(ctx, *held, h)
}

// Finish is called once every partition was read, or once a failed read
// ended Settled: the global state and the parent state move to what was
// read, as the reference's per-partition cursor settles them when a stream
// is done, failed or not, with none of its partitions open.
func (run *Run) Finish() { run.parts.finish() }

// Settled tells that no partition opened was left half read: a failed read
// may then Finish.
func (run *Run) Settled() bool { return run.parts.settled() }

// State is the stream's state now.
func (run *Run) State() map[string]any { return run.parts.state() }

// Incremental tells whether the stream's state moves (a cursor).
func (run *Run) Incremental() bool { return run.parts.incremental() }

// readParent reads a parent stream's records through its own retriever,
// page by page, for a substream router. The parent's records are not
// emitted. With incremental_dependency the parent starts from its state kept
// in the child's, and its state is kept in the child's.
func (run *Run) readParent(ctx context.Context, pc *manifest.ParentStreamConfig, emit func(partition.ParentRecord) error) error {
	name := pc.Stream.Name
	track := pc.IncrementalDependency && run.parts.tracksParents()
	if pc.IncrementalDependency && !track {
		run.warned.Do(func() {
			run.p.Env.Log("WARN", fmt.Sprintf("Stream %s: %s.incremental_dependency does nothing on a stream without incremental_sync; parent %s is read whole", run.st.Name, pc.Path, name))
		})
	}
	var state map[string]any
	if track {
		var err error
		if state, err = run.parentStart(pc.Stream); err != nil {
			return err
		}
	}
	parent, err := run.p.NewRun(pc.Stream, nil, state)
	if err != nil {
		return err
	}
	if err := parent.Prepare(); err != nil {
		return err
	}
	// The router gets each record once the next one is read, or once its
	// slice was closed (the next slice begins, or its partition was read;
	// after the parent's last record, once the parent's read was done), as
	// the reference's router looks one record ahead: the parent's state taken
	// with a partition then includes the close of the slice it ends.
	var keys map[string]any
	var held *partition.ParentRecord
	flush := func() error {
		if held == nil {
			return nil
		}
		rec := *held
		held = nil
		return emit(rec)
	}
	h := Hooks{
		MaxPages: run.p.Parents.Pages,
		Emit: func(records [][]byte, _ []protocol.FileReference) error {
			for _, rec := range records {
				if err := flush(); err != nil {
					return err
				}
				held = &partition.ParentRecord{Data: rec, Partition: keys}
			}
			return nil
		},
		Before: func(sl *incremental.Slice) error {
			keys = sl.Partition
			return flush()
		},
	}
	if track { // a full-refresh parent too: its state marks the full refresh, as in the reference
		run.parts.keepParent(name, parent)
	}
	if err := parent.sequentialOneAhead(ctx, h, flush); err != nil {
		return err
	}
	// Read whole, the parent's state moves as a stream's does at its end
	// (global state, lookback_window, its own parent_state), as the
	// reference's parent cursor does after its last record.
	parent.Finish()
	parent.cached.Complete()
	return flush()
}

// parentStart is the state a parent read with incremental_dependency starts
// from (nil: its start), taken from the child's incoming state.
func (run *Run) parentStart(parent *manifest.Stream) (map[string]any, error) {
	name := parent.Name
	if parent.Delegation != nil { // its state is read by incremental_stream
		parent = parent.Delegation.Incremental
	}
	if parent.Incremental == nil {
		return nil, nil
	}
	field, err := incremental.CursorField(parent, run.p.Env.Config)
	if err != nil {
		return nil, failure.Config("%v", err)
	}
	return run.parts.parentStart(name, field), nil
}

// cursor makes the cursor of a stream from its state (nil: from the start);
// a stream without incremental_sync gets the full-refresh cursor.
func (p *Planner) cursor(st *manifest.Stream, catalogField []string, state map[string]any) (incremental.Cursor, error) {
	spec, err := incremental.NewSpec(st, p.Env.Config, p.cursorClock(), catalogField)
	if err != nil {
		return nil, failure.Config("stream %s: %v", st.Name, err)
	}
	if spec == nil {
		return incremental.FullRefresh{}, nil
	}
	c, err := spec.Cursor(state)
	if err != nil {
		return nil, failure.Config("%v", err)
	}
	return c, nil
}

// Probe makes the run read only to see that the stream answers (check);
// before Prepare.
func (run *Run) Probe() { run.probe = true }

// Cleared tells that the incoming state was dropped as older than a
// StateDelegatingStream's api_retention_period.
func (run *Run) Cleared() bool { return run.cleared }

// Checkpoints is when a read writes the stream's state before its end.
func (run *Run) Checkpoints() Checkpoints { return run.parts.checkpoints() }

// Done marks a partition read, its slices all closed; it tells whether the
// stream's state moved with it and is to be written (throttled): a stream
// with a cursor per partition, not a duplicate partition (not read).
func (run *Run) Done(w Work) bool { return run.parts.done(w) }

// Intermediate tells whether a state written while the stream is read
// holds what it should (see incremental.Partitioned.Intermediate).
func (run *Run) Intermediate() bool { return run.parts.intermediate() }

// Retriever is the stream's retriever, made by Prepare.
func (run *Run) Retriever() retrieve.Retriever { return run.rt }

// Complete marks the answers this read kept in the sync's cache as those of
// a read that went to its end.
func (run *Run) Complete() { run.cached.Complete() }
