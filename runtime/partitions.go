package runtime

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strconv"
	"strings"
	"sync"

	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/runtime/incremental"
	"github.com/airbyte-go/source-declarative/runtime/interp"
	"github.com/airbyte-go/source-declarative/runtime/partition"
	"github.com/airbyte-go/source-declarative/runtime/request"
)

// defaultConcurrency is the number of a sync's workers (slices read at
// once, of every stream) without concurrency_level: the reference's pool of
// two threads.
const defaultConcurrency = 2

// concurrency is concurrency_level over the config: default_concurrency,
// capped by max_concurrency.
func (r *Runner) concurrency() (int, error) {
	cl := r.Source.ConcurrencyLevel
	if cl == nil || cl.Default == nil {
		return defaultConcurrency, nil
	}
	v, err := cl.Default.Eval(r.vars(nil, nil))
	if err != nil {
		return 0, ConfigErr("%s.default_concurrency: %v", cl.Path, err)
	}
	var n int64
	switch x := v.(type) {
	case int64:
		n = x
	case float64:
		n = int64(x)
		if float64(n) != x {
			n = 0
		}
	case string:
		n, _ = strconv.ParseInt(strings.TrimSpace(x), 10, 64)
	}
	if n < 1 {
		return 0, ConfigErr("%s.default_concurrency: %s is not a positive integer", cl.Path, interp.String(v))
	}
	if cl.Max > 0 && int(n) > cl.Max {
		n = int64(cl.Max)
	}
	return int(n), nil
}

// streamRun is one read of a stream: its partitions, each read with its own
// cursor. A stream without partition router is one partition.
type streamRun struct {
	r  *Runner
	st *manifest.Stream
	sr *streamReader // made by prepare
	// router yields the partitions (nil: no partition router).
	router partition.Router
	// single is the cursor of a stream without partition router.
	single incremental.Cursor
	// parts keeps a cursor per partition (a router with incremental_sync);
	// nil for a full-refresh stream with a router.
	parts *incremental.Partitioned
	// parents are the incremental_dependency parents being read or read,
	// whose states the child's keeps; only the goroutine ranging over the
	// partitions touches the map.
	parents map[string]*streamRun
	warned  sync.Once // incremental_dependency on a stream without incremental_sync
	// lazy tells whether partitions with a lazy_read_pointer start with the
	// records embedded in their parent record: only when the stream has no
	// incoming state, as in the reference.
	lazy bool
	// cleared tells that the incoming state was dropped as older than a
	// StateDelegatingStream's api_retention_period.
	cleared bool
	// cached is how the stream's requests use the sync's response cache
	// (cache.go); this read's answers are kept under it.
	cached request.CacheUse
}

// partitionWork is one partition to read, with its cursor and its sequence
// number in the per-partition state.
type partitionWork struct {
	part   partition.Partition
	cursor incremental.Cursor
	seq    int
}

// newRun prepares the cursors of a stream from its state (nil: from the
// start); a StateDelegatingStream is read as the stream its state picks. A
// state that cannot be read is an error before any request.
func (r *Runner) newRun(st *manifest.Stream, catalogField []string, state map[string]any) (*streamRun, error) {
	st, state, cleared, err := r.delegate(st, state) // statedelegating.go
	if err != nil {
		return nil, err
	}
	run := &streamRun{r: r, st: st, lazy: len(state) == 0, cleared: cleared, cached: r.cacheUse(st)}
	if st.Retriever == nil || st.Retriever.PartitionRouter == nil {
		run.single, err = r.cursor(st, catalogField, state)
		return run, err
	}
	spec, err := incremental.NewSpec(st, r.Config, r.Now, catalogField)
	if err != nil {
		return nil, ConfigErr("stream %s: %v", st.Name, err)
	}
	if spec == nil {
		return run, nil
	}
	global := st.Incremental.Datetime != nil && st.Incremental.Datetime.GlobalSubstreamCursor ||
		st.Retriever.PartitionRouter.Type == manifest.GroupingRouter
	state, legacyField, err := r.migrateLegacyState(st, spec.Field(), state)
	if err != nil {
		return nil, err
	}
	run.parts, err = incremental.NewPartitioned(spec, state, incremental.PartitionedOptions{Stream: st.Name, Global: global,
		ParentState: partition.KeepsParentState(st.Retriever.PartitionRouter), Now: r.Now, LegacyField: legacyField,
		Warn: func(msg string) { r.log("WARN", msg) }})
	if err != nil {
		return nil, ConfigErr("%v", err)
	}
	return run, nil
}

// prepare makes the stream's reader and router: templates over the config
// are rendered here, so a config that does not fit fails before any request.
func (run *streamRun) prepare() error {
	cursor := run.single
	if cursor == nil {
		cursor = incremental.FullRefresh{} // each partition brings its own
	}
	sr, err := run.r.streamReader(run.st, cursor)
	if err != nil {
		return err
	}
	if run.parts != nil {
		sr.field = run.parts.Field()
	}
	sr.cached = run.cached
	run.sr = sr
	pr := run.st.Retriever.PartitionRouter
	if pr == nil {
		return nil
	}
	env := partition.Env{Stream: run.st.Name, Vars: run.r.vars(run.st.Retriever.Requester.Parameters, nil), ReadParent: run.readParent, Log: run.r.log}
	run.router, err = partition.New(pr, env)
	if err != nil {
		return asError(err)
	}
	return nil
}

// asError keeps an error that carries its failure type, and makes any other
// a config error.
func asError(err error) error {
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	if FailureType(err) != "" && !strings.Contains(FailureType(err), "system") {
		return err
	}
	return ConfigErr("%v", err)
}

// partitions yields the partitions to read, each with its cursor; a stream
// without router yields one. A partition with a cursor per partition is
// opened and yielded once the next one is made (or the router ended), with
// the parents' state taken when it was made, as the reference's
// per-partition cursor looks one partition ahead: the partition made ahead
// has no cursor yet.
func (run *streamRun) partitions(ctx context.Context) iter.Seq2[partitionWork, error] {
	return func(yield func(partitionWork, error) bool) {
		if run.router == nil {
			yield(partitionWork{cursor: run.single}, nil)
			return
		}
		var held *partition.Partition
		var heldParent map[string]any
		open := func() bool {
			w := partitionWork{part: *held}
			var err error
			if w.cursor, w.seq, err = run.parts.Open(held.Keys, heldParent); err != nil {
				yield(partitionWork{}, ConfigErr("%v", err))
				return false
			}
			return yield(w, nil)
		}
		for part, err := range run.router.Partitions(ctx) {
			if err != nil {
				yield(partitionWork{}, asError(err))
				return
			}
			if run.parts == nil {
				if !yield(partitionWork{part: part, cursor: incremental.FullRefresh{}}, nil) {
					return
				}
				continue
			}
			if held != nil && !open() {
				return
			}
			held, heldParent = &part, run.parentSnapshot()
		}
		if held != nil {
			open()
		}
	}
}

// parentSnapshot is the parents' state now, as the reference's
// get_stream_state reads its parents' cursors (nil: no
// incremental_dependency parent).
func (run *streamRun) parentSnapshot() map[string]any {
	if len(run.parents) == 0 {
		return nil
	}
	out := make(map[string]any, len(run.parents))
	for k, p := range run.parents {
		out[k] = p.state()
	}
	return out
}

// sliceHooks are what a read does around each slice: pages at most
// maxPages (0: all), before is told of each slice before it is read and
// after once it is closed; errSlicesRead from before stops the read quietly.
type sliceHooks struct {
	maxPages int
	emit     func([][]byte) error
	before   func(*incremental.Slice) error
	after    func(*incremental.Slice) error
}

// inPartition is a slice of the partition's cursor with the partition's
// keys, extra fields and request options.
func (run *streamRun) inPartition(w partitionWork, sl *incremental.Slice) *incremental.Slice {
	if run.router != nil {
		sl.Partition, sl.Extra = w.part.Keys, w.part.Extra
		if len(w.part.Options) > 0 {
			sl.Inject = w.part.Inject
		}
	}
	return sl
}

// lazyBody is the first page of the partition's slices when it comes from
// the parent record (lazy_read_pointer), nil when it is requested.
func (run *streamRun) lazyBody(w partitionWork) []byte {
	if run.lazy && w.part.Lazy != nil {
		return w.part.Lazy
	}
	return nil
}

// readSlice reads a slice of the partition with sr, then closes it: its
// records count for the state.
func (run *streamRun) readSlice(ctx context.Context, sr *streamReader, w partitionWork, sl *incremental.Slice, maxPages int, emit func([][]byte) error) error {
	if err := sr.read(ctx, sl, maxPages, emit); err != nil {
		return err
	}
	w.cursor.Close(sl)
	return nil
}

// readPartition reads the slices of one partition in order.
func (run *streamRun) readPartition(ctx context.Context, w partitionWork, h sliceHooks) error {
	sr := run.sr.withCursor(w.cursor)
	if lazy := run.lazyBody(w); lazy != nil {
		sr = sr.withLazy(lazy)
	}
	for sl := range w.cursor.Slices() {
		sl = run.inPartition(w, sl)
		if h.before != nil {
			if err := h.before(sl); err != nil {
				return err
			}
		}
		if err := run.readSlice(ctx, sr, w, sl, h.maxPages, h.emit); err != nil {
			return err
		}
		if h.after != nil {
			if err := h.after(sl); err != nil {
				return err
			}
		}
	}
	if run.parts != nil {
		run.parts.Done(w.seq, w.cursor)
	}
	return nil
}

// sequential reads every partition in order, in this goroutine (check,
// test reads, parents, dynamic streams' resolvers).
func (run *streamRun) sequential(ctx context.Context, h sliceHooks) error {
	for w, err := range run.partitions(ctx) {
		if err != nil {
			return err
		}
		if err := run.readPartition(ctx, w, h); err != nil {
			return err
		}
	}
	return nil
}

// sequentialOneAhead reads every partition in order, each once the next one
// was handed over, as the reference's substream router reads a parent's
// partitions (it looks one ahead): the parent's state then lists the
// partition after the one being read.
func (run *streamRun) sequentialOneAhead(ctx context.Context, h sliceHooks) error {
	var held *partitionWork
	for w, err := range run.partitions(ctx) {
		if err != nil {
			return err
		}
		if held != nil {
			if err := run.readPartition(ctx, *held, h); err != nil {
				return err
			}
		}
		held = &w
	}
	if held == nil {
		return nil
	}
	return run.readPartition(ctx, *held, h)
}

// finish is called once every partition was read: the global state and the
// parent state move to what was read.
func (run *streamRun) finish() {
	if run.parts != nil {
		run.parts.SetParentState(run.parentSnapshot())
		run.parts.Finish(run.r.Now())
	}
}

// state is the stream's state now.
func (run *streamRun) state() map[string]any {
	switch {
	case run.parts != nil:
		return run.parts.State()
	case run.single != nil:
		return run.single.State()
	}
	return incremental.FullRefresh{}.State()
}

// incremental tells whether the stream's state moves (a cursor).
func (run *streamRun) incremental() bool {
	if run.parts != nil {
		return true
	}
	_, full := run.single.(incremental.FullRefresh)
	return run.single != nil && !full
}

// readParent reads a parent stream's records through its own retriever,
// page by page, for a substream router. The parent's records are not
// emitted. With incremental_dependency the parent starts from its state kept
// in the child's, and its state is kept in the child's.
func (run *streamRun) readParent(ctx context.Context, pc *manifest.ParentStreamConfig, emit func(partition.ParentRecord) error) error {
	name := pc.Stream.Name
	track := pc.IncrementalDependency && run.parts != nil
	if pc.IncrementalDependency && run.parts == nil {
		run.warned.Do(func() {
			run.r.log("WARN", fmt.Sprintf("Stream %s: %s.incremental_dependency does nothing on a stream without incremental_sync; parent %s is read whole", run.st.Name, pc.Path, name))
		})
	}
	var state map[string]any
	if track {
		var err error
		if state, err = run.parentStart(pc.Stream); err != nil {
			return err
		}
	}
	parent, err := run.r.newRun(pc.Stream, nil, state)
	if err != nil {
		return err
	}
	if err := parent.prepare(); err != nil {
		return err
	}
	// The router gets each record once the next one is read, or once its
	// slice was closed (and, after the parent's last record, once the
	// parent's read was done), as the reference's router looks one record
	// ahead: the parent's state taken with a partition then includes the
	// close of the slice it ends.
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
	h := sliceHooks{
		emit: func(records [][]byte) error {
			for _, rec := range records {
				if err := flush(); err != nil {
					return err
				}
				held = &partition.ParentRecord{Data: rec, Partition: keys}
			}
			return nil
		},
		before: func(sl *incremental.Slice) error {
			keys = sl.Partition
			return flush()
		},
	}
	if track { // a full-refresh parent too: its state marks the full refresh, as in the reference
		if run.parents == nil {
			run.parents = map[string]*streamRun{}
		}
		run.parents[name] = parent
	}
	if err := parent.sequentialOneAhead(ctx, h); err != nil {
		return err
	}
	// Read whole, the parent's state moves as a stream's does at its end
	// (global state, lookback_window, its own parent_state), as the
	// reference's parent cursor does after its last record.
	parent.finish()
	parent.cached.Complete()
	return flush()
}

// parentStart is the state a parent read with incremental_dependency starts
// from (nil: its start), taken from the child's incoming state.
func (run *streamRun) parentStart(parent *manifest.Stream) (map[string]any, error) {
	name := parent.Name
	if parent.Delegation != nil { // its state is read by incremental_stream
		parent = parent.Delegation.Incremental
	}
	if parent.Incremental == nil {
		return nil, nil
	}
	field, err := incremental.CursorField(parent, run.r.Config)
	if err != nil {
		return nil, ConfigErr("%v", err)
	}
	return run.parts.ParentStart(name, field), nil
}

// errSlicesRead stops a read that has read the slices it wanted (check,
// test reads).
var errSlicesRead = errors.New("enough slices read")
