package incremental

import (
	"fmt"
	"iter"
	"math"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/manifest"
)

// CountSpec is an IncrementingCountCursor rendered over the config.
type CountSpec struct {
	stream      string
	field       string
	start       int64
	startOption *manifest.RequestOption
}

// NewCountSpec renders an IncrementingCountCursor with vars.
func NewCountSpec(stream string, m *manifest.CountCursor, vars interp.Vars, catalogField []string) (*CountSpec, error) {
	s := &CountSpec{stream: stream, startOption: m.StartOption}
	var err error
	if s.field, err = cursorField(m.Path, m.CursorField, vars, m.CatalogCursorField, catalogField); err != nil {
		return nil, err
	}
	if m.StartValue != nil {
		v, err := m.StartValue.Eval(vars)
		if err != nil {
			return nil, err
		}
		n, ok := integer(v)
		if !ok {
			return nil, fmt.Errorf("%s.start_value: %q is not an integer", m.Path, interp.String(v))
		}
		s.start = n
	}
	return s, nil
}

// integer reads an integer from a JSON number or a decimal string.
func integer(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case float64:
		return int64(x), x == math.Trunc(x) && math.Abs(x) < 1<<62
	case string:
		n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		return n, err == nil
	}
	return 0, false
}

// Field is the record key holding the cursor value.
func (s *CountSpec) Field() string { return s.field }

// newCursor makes a cursor starting from a flat state {cursor_field: n}.
func (s *CountSpec) newCursor(state map[string]any) (*CountCursor, error) {
	c := &CountCursor{spec: s, syncStart: s.start}
	var value any
	c.legacy, value = splitState(state, s.field)
	if value != nil {
		n, ok := integer(value)
		if !ok {
			return nil, fmt.Errorf("stream %s: the state's %s value %s is not an integer", s.stream, s.field, interp.String(value))
		}
		c.syncStart = max(n, s.start)
	}
	c.history = newHistory(1, interval{lo: s.start, hi: c.syncStart, max: c.syncStart, hasMax: true})
	return c, nil
}

// CountCursor is the position of a stream counted by an increasing integer.
type CountCursor struct {
	spec      *CountSpec
	syncStart int64
	legacy    map[string]any
	history   *history
	synced    atomic.Bool // a closed slice had a record's cursor value
}

// Field is the record key holding the cursor value.
func (c *CountCursor) Field() string { return c.spec.field }

// Slices is one slice from the state (or start_value) on, with no end.
func (c *CountCursor) Slices() iter.Seq[*Slice] {
	return func(yield func(*Slice) bool) {
		sl := &Slice{Cursor: map[string]any{"start": c.syncStart}, lower: c.syncStart, upper: math.MaxInt64}
		if c.spec.startOption != nil {
			sl.Options = append(sl.Options, Option{Where: c.spec.startOption, Value: c.syncStart})
		}
		yield(sl)
	}
}

// Observe keeps the record's value as the slice's highest.
func (c *CountCursor) Observe(sl *Slice, raw []byte) error {
	text, ok := valueText(raw)
	if !ok {
		if len(raw) == 0 || string(raw) == "null" {
			return fmt.Errorf("stream %s: a record has no %s; such records are emitted but do not move the state", c.spec.stream, c.spec.field)
		}
		return fmt.Errorf("stream %s: a record's %s is %s, not an integer; such records are emitted but do not move the state", c.spec.stream, c.spec.field, truncate(raw))
	}
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		f, ferr := strconv.ParseFloat(text, 64)
		if ferr != nil || f != math.Trunc(f) || math.Abs(f) >= 1<<62 {
			return fmt.Errorf("stream %s: a record's %s value %q is not an integer; such records are emitted but do not move the state", c.spec.stream, c.spec.field, text)
		}
		n = int64(f)
	}
	sl.observe(n)
	return nil
}

// Keep keeps every record: a counting cursor does not filter.
func (c *CountCursor) Keep([]byte) bool { return true }

// Close adds what the slice read to the history.
func (c *CountCursor) Close(sl *Slice) {
	if sl.seen {
		c.history.add(interval{lo: sl.lower, hi: sl.max, max: sl.max, hasMax: true})
		c.synced.Store(true)
	}
}

// observed tells whether a closed slice had a record's cursor value.
func (c *CountCursor) observed() bool { return c.synced.Load() }

// State is {cursor_field: n}, with the other keys of the incoming state.
func (c *CountCursor) State() map[string]any {
	return flatState(c.legacy, c.spec.field, c.history.complete(c.spec.start))
}
