package incremental

import (
	"container/list"
	"encoding/json"
	"fmt"
	"iter"
	"maps"
	"math"
	"sync"
	"time"
)

// GlobalCursorLimit is the number of partitions past which a stream's state
// turns global, as the CDK's ConcurrentPerPartitionCursor does
// (SWITCH_TO_GLOBAL_LIMIT).
const GlobalCursorLimit = 10_000

// maxPartitionCursors is the number of partition cursors kept; past it the
// oldest one not being read is dropped (the CDK's DEFAULT_MAX_PARTITIONS_NUMBER).
const maxPartitionCursors = 25_000

// noCursorKey marks the state of a full refresh.
const noCursorKey = "__ab_no_cursor_state_message"

// Partitioned keeps the cursors of a stream with a partition router: one
// per partition, each starting from its own state or from the global one,
// and the state in the reference's form:
//
//	{"use_global_cursor": false, "states": [{"partition": {...}, "cursor": {...}}],
//	 "state": {...}, "lookback_window": 12, "parent_state": {...}}
//
// It is safe for concurrent use: partitions are opened by the goroutine
// producing them and finished by the workers that read them.
type Partitioned struct {
	spec    positioned
	stream  string
	now     func() time.Time
	warn    func(string)
	parents bool // the router keeps its parents' states (PartitionedOptions.ParentState)
	legacy  string
	// incoming is the state the sync started from, which parents read with
	// incremental_dependency start from (ParentStart).
	incoming map[string]any

	mu       sync.Mutex
	started  time.Time      // when the first partition was opened
	global   bool           // use_global_cursor
	state    map[string]any // the global state written: the incoming one until the sync is done
	newState *int64         // the highest cursor value of the partitions done
	synced   bool           // a record's cursor value was read
	lookback int64          // seconds: the incoming lookback_window, applied to partitions started from state
	cursors  map[string]*list.Element
	order    *list.List     // of *partitionCursor, in the order the partitions were first seen
	created  int            // partitions given a cursor, from the incoming state or opened
	reading  map[string]int // the partitions opened and not done: their sequence numbers
	warned   bool           // of a partition opened while being read

	parentState map[string]any // committed: every partition opened before it is done
	// pending are the parents' states of the partitions opened and not all
	// done (see Open).
	pending []pendingParent
	nextSeq int
}

// positioned is a Spec whose state values can be compared and written.
type positioned interface {
	Spec
	position(v any) (int64, error)
	format(pos int64) any
	// back is pos moved back by seconds of lookback.
	back(pos, seconds int64) int64
}

type partitionCursor struct {
	key    string
	keys   map[string]any
	cursor Cursor
}

type pendingParent struct {
	seq   int
	state map[string]any // the parents' state taken when the partition was made
}

// PartitionedOptions say how a Partitioned cursor starts.
type PartitionedOptions struct {
	Stream string
	// Global: one state for all partitions (global_substream_cursor, or a
	// grouping router).
	Global bool
	// ParentState says the router keeps its parents' states, as the
	// reference's get_stream_state: the state then has parent_state (an
	// object, {} without incremental_dependency parents). Without it, the
	// state has none at the end of a sync, whatever came in.
	ParentState bool
	Now         func() time.Time
	// Warn logs a warning.
	Warn func(string)
	// LegacyField, for a state migrated from the legacy per-partition form
	// (which keys partitions by text), is the partition field whose value a
	// partition is also matched by as text: 123 finds the state of "123".
	LegacyField string
}

// NewPartitioned reads a partitioned stream's incoming state (nil: none):
// the reference's form, or a flat state, taken as the global one.
func NewPartitioned(spec Spec, state map[string]any, opts PartitionedOptions) (*Partitioned, error) {
	ps, ok := spec.(positioned)
	if !ok {
		return nil, fmt.Errorf("stream %s: its incremental_sync cannot be kept per partition", opts.Stream)
	}
	p := &Partitioned{spec: ps, stream: opts.Stream, now: opts.Now, warn: opts.Warn, parents: opts.ParentState,
		legacy: opts.LegacyField, incoming: state, global: opts.Global,
		cursors: map[string]*list.Element{}, order: list.New(), reading: map[string]int{}}
	if len(state) == 0 {
		return p, nil
	}
	if ps, ok := state["parent_state"].(map[string]any); ok && len(ps) > 0 {
		p.parentState = ps
	}
	_, hasStates := state["states"]
	g, hasGlobal := state["state"]
	if !hasStates && !hasGlobal {
		return p, p.setGlobal(state)
	}
	// The incoming state says whether it is global, as in the reference:
	// without use_global_cursor it is kept per partition.
	p.global, _ = state["use_global_cursor"].(bool)
	if v, ok := state["lookback_window"]; ok && v != nil {
		lb, ok := integer(v)
		if f, isFloat := v.(float64); isFloat && !ok && math.Abs(f) < 1<<62 {
			lb, ok = int64(f), true // as the reference's int() reads it
		}
		if !ok {
			return nil, fmt.Errorf("stream %s: the state's lookback_window must be a number of seconds, not %s", p.stream, jsonText(v))
		}
		p.lookback = max(lb, 0)
	}
	entries, _ := state["states"].([]any)
	for i, e := range entries {
		m, _ := e.(map[string]any)
		keys, ok1 := m["partition"].(map[string]any)
		cur, ok2 := m["cursor"].(map[string]any)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("stream %s: the state's states[%d] must be an object with partition and cursor objects", p.stream, i)
		}
		c, err := spec.Cursor(cur)
		if err != nil {
			return nil, err
		}
		p.created++
		key := PartitionKey(keys)
		if e, dup := p.cursors[key]; dup {
			e.Value.(*partitionCursor).cursor = c
			continue
		}
		p.cursors[key] = p.order.PushBack(&partitionCursor{key: key, keys: keys, cursor: c})
	}
	if gm, ok := g.(map[string]any); ok {
		return p, p.setGlobal(gm)
	} else if g != nil {
		return nil, fmt.Errorf("stream %s: the state's state must be an object, got %s", p.stream, describe(g))
	}
	return p, nil
}

// setGlobal takes a flat state as the global one.
func (p *Partitioned) setGlobal(state map[string]any) error {
	v, ok := state[p.spec.Field()]
	if !ok || v == nil {
		return nil
	}
	pos, err := p.spec.position(v)
	if err != nil {
		return err
	}
	p.state = map[string]any{p.spec.Field(): p.spec.format(pos)}
	p.newState = &pos
	return nil
}

// Field is the record key holding the cursor value.
func (p *Partitioned) Field() string { return p.spec.Field() }

// ParentStart is the state a parent read with incremental_dependency starts
// from, taken from the incoming state as the reference does: the parent's
// entry in parent_state; else the global state as it is (keyed by the
// child's cursor field, which the parent reads only if it has the same); else
// the value of a state of one key, under the parent's cursor field
// (parentField). Nil: the parent starts from its start.
func (p *Partitioned) ParentStart(parent, parentField string) map[string]any {
	child := p.incoming
	if _, ok := child[noCursorKey]; ok {
		child = maps.Clone(child)
		delete(child, noCursorKey)
	}
	if len(child) == 0 {
		return nil
	}
	if ps, ok := child["parent_state"].(map[string]any); ok {
		if s, ok := ps[parent]; ok {
			m, _ := s.(map[string]any)
			return m
		}
	}
	if g, ok := child["state"]; ok {
		m, _ := g.(map[string]any)
		return m
	}
	if len(child) == 1 {
		for _, v := range child {
			switch v.(type) {
			case map[string]any, []any, nil:
				return nil
			}
			return map[string]any{parentField: v}
		}
	}
	return nil
}

// PartitionKey identifies a partition by its keys: their canonical JSON.
func PartitionKey(keys map[string]any) string {
	b, _ := json.Marshal(keys) // maps marshal with sorted keys
	return string(b)
}

// Open returns the cursor of a partition about to be read; parent is the
// parents' state taken when the partition was made (nil: no
// incremental_dependency parent), kept with it until it is done. Done must
// be called with the returned sequence number once the partition is read.
//
// A partition opened again while it is being read (a parent listing the same
// record twice) is not read twice: its cursor then has no slice, as the
// reference skips it with a warning. One opened again once read is read
// again from its cursor.
func (p *Partitioned) Open(keys map[string]any, parent map[string]any) (Cursor, int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.started.IsZero() {
		p.started = p.now()
	}
	if !p.global && p.created > GlobalCursorLimit {
		// Past the limit, the state turns global for good, as in the
		// reference; the partition cursors are still used while kept.
		p.global = true
	}
	p.limit()
	key := PartitionKey(keys)
	pc := p.find(key, keys)
	if pc == nil {
		c, err := p.fromGlobal()
		if err != nil {
			return nil, 0, err
		}
		pc = &partitionCursor{key: key, keys: keys, cursor: c}
		p.cursors[key] = p.order.PushBack(pc)
		p.created++
	}
	if _, ok := p.reading[key]; ok {
		if !p.warned && p.warn != nil {
			p.warn("Partition duplication detected for stream " + p.stream)
		}
		p.warned = true
		return duplicate{pc.cursor}, -1, nil
	}
	seq := p.nextSeq
	p.nextSeq++
	p.reading[key] = seq
	if p.parents {
		p.keepParent(seq, parent)
	}
	return pc.cursor, seq, nil
}

// keepParent keeps the parents' state taken when the partition of sequence
// number seq was made; one equal to the state before it is not kept twice.
func (p *Partitioned) keepParent(seq int, parent map[string]any) {
	if parent == nil {
		parent = map[string]any{}
	}
	if n := len(p.pending); n > 0 && jsonText(p.pending[n-1].state) == jsonText(parent) {
		return
	}
	p.pending = append(p.pending, pendingParent{seq: seq, state: parent})
}

// fromGlobal is the cursor of a partition without state: from the global
// state moved back by lookback_window, or from the start.
func (p *Partitioned) fromGlobal() (Cursor, error) {
	var start map[string]any
	if p.state != nil {
		pos, err := p.spec.position(p.state[p.spec.Field()])
		if err != nil {
			return nil, err
		}
		start = map[string]any{p.spec.Field(): p.spec.format(p.spec.back(pos, p.lookback))}
	}
	return p.spec.Cursor(start)
}

// limit drops the oldest partition cursor not being read (else the
// oldest) while maxPartitionCursors are kept, before a partition is opened.
func (p *Partitioned) limit() {
	for p.order.Len() >= maxPartitionCursors {
		drop := p.order.Front()
		for e := drop; e != nil; e = e.Next() {
			if _, ok := p.reading[e.Value.(*partitionCursor).key]; !ok {
				drop = e
				break
			}
		}
		delete(p.cursors, drop.Value.(*partitionCursor).key)
		p.order.Remove(drop)
	}
}

// find is the cursor kept for a partition, nil if none.
func (p *Partitioned) find(key string, keys map[string]any) *partitionCursor {
	if e, ok := p.cursors[key]; ok {
		return e.Value.(*partitionCursor)
	}
	return p.legacyCursor(key, keys)
}

// legacyCursor finds the state of a partition migrated from the legacy
// form, where its value is text, and keys it by the partition's own keys from
// then on, so that the state written keeps the value's type.
func (p *Partitioned) legacyCursor(key string, keys map[string]any) *partitionCursor {
	v, ok := keys[p.legacy]
	if p.legacy == "" || !ok {
		return nil
	}
	textual := maps.Clone(keys)
	textual[p.legacy] = fmt.Sprint(v)
	old := PartitionKey(textual)
	e, ok := p.cursors[old]
	if !ok || old == key {
		return nil
	}
	delete(p.cursors, old)
	pc := e.Value.(*partitionCursor)
	pc.key, pc.keys = key, keys
	p.cursors[key] = e
	return pc
}

// duplicate is the cursor of a partition opened while it is being read: it
// has no slice.
type duplicate struct{ Cursor }

// Slices yields nothing: the partition is already being read.
func (duplicate) Slices() iter.Seq[*Slice] { return func(func(*Slice) bool) {} }

// Done records that the partition of sequence number seq was read to its
// end with cursor c: its cursor value counts for the global state, and the
// parent state of the partitions made up to the first one still open is
// committed. It tells whether the partition was read (not a duplicate,
// which moves nothing).
func (p *Partitioned) Done(seq int, c Cursor) bool {
	if seq < 0 {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if o, ok := c.(observer); ok && o.observed() {
		p.synced = true
	}
	if v, ok := c.State()[p.spec.Field()]; ok {
		if pos, err := p.spec.position(v); err == nil && (p.newState == nil || pos > *p.newState) {
			p.newState = &pos
		}
	}
	first := math.MaxInt
	for key, s := range p.reading {
		if s == seq {
			delete(p.reading, key)
		} else {
			first = min(first, s)
		}
	}
	i := 0
	for ; i < len(p.pending) && p.pending[i].seq < first; i++ {
		p.parentState = p.pending[i].state
	}
	p.pending = p.pending[i:]
	return true
}

// Settled tells whether every partition opened was read to its end: none
// is left half read by a failure.
func (p *Partitioned) Settled() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.reading) == 0
}

// observer is a cursor that tells whether it read a record's cursor value.
type observer interface{ observed() bool }

// Finish is called once every partition was read: if a record's cursor
// value was read, the global state becomes the highest value read and
// lookback_window the duration of the sync in seconds, rounded up; otherwise
// both stay as they came, as in the reference.
func (p *Partitioned) Finish(now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.synced {
		return
	}
	if p.newState != nil {
		p.state = map[string]any{p.spec.Field(): p.spec.format(*p.newState)}
	}
	p.lookback = int64(math.Ceil(now.Sub(p.started).Seconds()))
}

// SetParentState sets the parents' states once every partition was read
// (nil: no incremental_dependency parent): parent_state is then the
// router's, {} without such parents, or none for a router without parents.
func (p *Partitioned) SetParentState(s map[string]any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pending = nil
	switch {
	case !p.parents:
		p.parentState = nil
	case s == nil:
		p.parentState = map[string]any{}
	default:
		p.parentState = s
	}
}

// Intermediate tells whether a state is written while partitions are read:
// not a global one without parent_state, which holds nothing the sync has
// moved (the reference skips it).
func (p *Partitioned) Intermediate() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return !p.global || len(p.parentState) > 0
}

// State is the stream state: the cursor state of each partition opened or
// read from the incoming state (none once global), as the reference lists
// every partition it has begun making slices of; the global state,
// lookback_window and parent_state.
func (p *Partitioned) State() map[string]any {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]any{"use_global_cursor": p.global}
	if !p.global {
		states := make([]any, 0, p.order.Len())
		for e := p.order.Front(); e != nil; e = e.Next() {
			pc := e.Value.(*partitionCursor)
			if s := pc.cursor.State(); len(s) > 0 {
				states = append(states, map[string]any{"partition": pc.keys, "cursor": s})
			}
		}
		out["states"] = states
	}
	if p.state != nil {
		out["state"] = p.state
	}
	out["lookback_window"] = p.lookback
	if p.parentState != nil {
		out["parent_state"] = p.parentState
	}
	return out
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// position reads a state value as microseconds.
func (s *DatetimeSpec) position(v any) (int64, error) { return s.stateValue(v) }

// format writes microseconds in datetime_format.
func (s *DatetimeSpec) format(pos int64) any { return s.out.FormatMicros(pos) }

// back moves a position back by seconds, never before start_datetime.
func (s *DatetimeSpec) back(pos, seconds int64) int64 { return max(pos-seconds*1_000_000, s.start) }

// position reads a state value as an integer.
func (s *CountSpec) position(v any) (int64, error) {
	n, ok := integer(v)
	if !ok {
		return 0, fmt.Errorf("stream %s: the state's %s value %v is not an integer", s.stream, s.field, v)
	}
	return n, nil
}

// format writes an integer as it is.
func (s *CountSpec) format(pos int64) any { return pos }

// back does not move a count: a lookback is a duration.
func (s *CountSpec) back(pos, _ int64) int64 { return pos }
