package incremental

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"sync"
	"time"
)

// GlobalCursorLimit is the number of partitions past which a stream's state
// turns global, as the CDK's ConcurrentPerPartitionCursor does.
const GlobalCursorLimit = 10_000

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
	started time.Time

	mu       sync.Mutex
	global   bool           // use_global_cursor
	state    map[string]any // the global state written: the incoming one until every partition is done
	newState *int64         // the highest cursor value of the partitions done
	lookback int64          // seconds: the incoming lookback_window, applied to partitions started from state
	cursors  map[string]*partitionCursor
	order    []string // partition keys in the order first seen
	legacy   string   // PartitionedOptions.LegacyField

	parentState map[string]any // committed: every partition opened before it is done
	pending     []pendingParent
	open        map[int]bool // sequence numbers of partitions not done
	nextSeq     int
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
	keys   map[string]any
	cursor Cursor
	closed bool // a slice was closed, or the partition came with a state
}

type pendingParent struct {
	seq   int
	state map[string]any
}

// PartitionedOptions say how a Partitioned cursor starts.
type PartitionedOptions struct {
	Stream string
	// Global: one state for all partitions (global_substream_cursor, or a
	// grouping router).
	Global bool
	Now    func() time.Time
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
	p := &Partitioned{spec: ps, stream: opts.Stream, started: opts.Now(), global: opts.Global,
		cursors: map[string]*partitionCursor{}, open: map[int]bool{}, legacy: opts.LegacyField}
	if len(state) == 0 {
		return p, nil
	}
	if ps, ok := state["parent_state"].(map[string]any); ok {
		p.parentState = ps
	}
	_, hasStates := state["states"]
	g, hasGlobal := state["state"]
	if !hasStates && !hasGlobal {
		return p, p.setGlobal(state)
	}
	if b, ok := state["use_global_cursor"].(bool); ok && b {
		p.global = true
	}
	if lb, ok := integer(state["lookback_window"]); ok && lb > 0 {
		p.lookback = lb
	}
	if gm, ok := g.(map[string]any); ok {
		if err := p.setGlobal(gm); err != nil {
			return nil, err
		}
	} else if g != nil {
		return nil, fmt.Errorf("stream %s: the state's state must be an object, got %s", p.stream, describe(g))
	}
	list, _ := state["states"].([]any)
	for i, e := range list {
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
		key := PartitionKey(keys)
		if _, dup := p.cursors[key]; !dup {
			p.order = append(p.order, key)
		}
		p.cursors[key] = &partitionCursor{keys: keys, cursor: c, closed: true}
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

// ParentState is the parent_state of the incoming state (nil: none).
func (p *Partitioned) ParentState() map[string]any {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.parentState
}

// PartitionKey identifies a partition by its keys: their canonical JSON.
func PartitionKey(keys map[string]any) string {
	b, _ := json.Marshal(keys) // maps marshal with sorted keys
	return string(b)
}

// Open returns the cursor of a partition about to be read; parent is the
// parent state at the time the partition was made (nil: none). Done must be
// called with the returned sequence number once the partition is read.
func (p *Partitioned) Open(keys map[string]any, parent map[string]any) (Cursor, int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	seq := p.nextSeq
	p.nextSeq++
	p.open[seq] = true
	if parent != nil && (len(p.pending) == 0 || jsonText(p.pending[len(p.pending)-1].state) != jsonText(parent)) {
		p.pending = append(p.pending, pendingParent{seq: seq, state: parent})
	}
	key := PartitionKey(keys)
	if pc, ok := p.cursors[key]; ok && !p.global {
		return pc.cursor, seq, nil
	}
	if pc := p.legacyCursor(key, keys); pc != nil && !p.global {
		return pc.cursor, seq, nil
	}
	var start map[string]any
	if p.state != nil {
		pos, err := p.spec.position(p.state[p.spec.Field()])
		if err != nil {
			return nil, 0, err
		}
		start = map[string]any{p.spec.Field(): p.spec.format(p.spec.back(pos, p.lookback))}
	}
	c, err := p.spec.Cursor(start)
	if err != nil {
		return nil, 0, err
	}
	if !p.global {
		p.cursors[key] = &partitionCursor{keys: keys, cursor: c}
		p.order = append(p.order, key)
		if len(p.order) > GlobalCursorLimit {
			// Past the limit, the state turns global (for good, as in the
			// reference): the partition cursors are no longer kept.
			p.global = true
			p.cursors, p.order = map[string]*partitionCursor{}, nil
		}
	}
	return c, seq, nil
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
	pc, ok := p.cursors[old]
	if !ok || old == key {
		return nil
	}
	delete(p.cursors, old)
	pc.keys = keys
	p.cursors[key] = pc
	for i, k := range p.order {
		if k == old {
			p.order[i] = key
		}
	}
	return pc
}

// Closed records that a slice of the partition was read to its end (after
// its cursor's Close).
func (p *Partitioned) Closed(keys map[string]any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if pc, ok := p.cursors[PartitionKey(keys)]; ok {
		pc.closed = true
	}
}

// Done records that the partition of sequence number seq was read to its
// end with cursor c: its cursor value counts for the global state, and the
// parent state of the partitions made up to the first one still open is
// committed.
func (p *Partitioned) Done(seq int, c Cursor) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if v, ok := c.State()[p.spec.Field()]; ok {
		if pos, err := p.spec.position(v); err == nil && (p.newState == nil || pos > *p.newState) {
			p.newState = &pos
		}
	}
	delete(p.open, seq)
	first := math.MaxInt
	for s := range p.open {
		first = min(first, s)
	}
	i := 0
	for ; i < len(p.pending) && p.pending[i].seq < first; i++ {
		p.parentState = p.pending[i].state
	}
	p.pending = p.pending[i:]
}

// Finish is called once every partition was read: the global state becomes
// the highest value read, and lookback_window the duration of the sync.
func (p *Partitioned) Finish(now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.newState != nil {
		p.state = map[string]any{p.spec.Field(): p.spec.format(*p.newState)}
	}
	p.lookback = int64(math.Ceil(now.Sub(p.started).Seconds()))
}

// SetParentState sets the parent state written (nil: none), for a sync
// whose partitions were all read.
func (p *Partitioned) SetParentState(s map[string]any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.parentState = s
	p.pending = nil
}

// State is the stream state: each partition's cursor state (none once
// global), the global state, lookback_window and parent_state.
func (p *Partitioned) State() map[string]any {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]any{"use_global_cursor": p.global}
	if !p.global {
		states := make([]any, 0, len(p.order))
		for _, key := range p.order {
			pc := p.cursors[key]
			if pc.closed {
				states = append(states, map[string]any{"partition": pc.keys, "cursor": pc.cursor.State()})
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
