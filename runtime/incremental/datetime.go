package incremental

import (
	"bytes"
	"fmt"
	"iter"
	"strings"
	"sync/atomic"
	"time"

	"github.com/airbyte-go/source-declarative/lang/datetime"
	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/manifest"
)

// DatetimeSpec is a DatetimeBasedCursor rendered over the config: everything
// but the position, so that one spec makes the cursor of a stream or one per
// partition. Values are microseconds since the Unix epoch.
type DatetimeSpec struct {
	stream      string
	field       string
	out         *datetime.Layout   // datetime_format: slice bounds and state
	inputs      []*datetime.Layout // cursor_datetime_formats, then datetime_format
	shape       []byte             // the first input's shape when its texts sort as dates (see datetime.Layout.Shape)
	start       int64
	end         *int64 // nil: the clock's now (the sync's start in a sync), when slices are made or records checked
	step        *datetime.Duration
	granularity datetime.Duration
	lookback    datetime.Duration
	clamp       *clamper
	startKey    string
	endKey      string
	startOption *manifest.RequestOption
	endOption   *manifest.RequestOption
	strict      bool // is_compare_strictly: no window whose start is its end
	now         func() time.Time
}

// NewDatetimeSpec renders a DatetimeBasedCursor with vars (config and
// parameters); now is the clock of its date macros (now_utc() in
// end_datetime) and the end of its windows when it has no end_datetime.
// catalogField, when allowed by the manifest, replaces cursor_field.
func NewDatetimeSpec(stream string, m *manifest.DatetimeCursor, vars interp.Vars, now func() time.Time, catalogField []string) (*DatetimeSpec, error) {
	vars = interp.WithClock(vars, now)
	s := &DatetimeSpec{stream: stream, out: m.DatetimeFormat, now: now, startOption: m.StartOption, endOption: m.EndOption, strict: m.CompareStrictly}
	s.inputs = append(append([]*datetime.Layout{}, m.CursorDatetimeFormats...), m.DatetimeFormat)
	if shape, ok := s.inputs[0].Shape(); ok {
		s.shape = shape
	}
	var err error
	if s.field, err = cursorField(m.Path, m.CursorField, vars, m.CatalogCursorField, catalogField); err != nil {
		return nil, err
	}
	if s.start, err = s.bound(m.Start, vars); err != nil {
		return nil, err
	}
	if m.End != nil {
		end, err := s.bound(m.End, vars)
		if err != nil {
			return nil, err
		}
		s.end = &end
	}
	for _, d := range []struct {
		t    *interp.Template
		path string
		dst  *datetime.Duration
	}{{m.Step, m.Path + ".step", nil}, {m.Granularity, m.Path + ".cursor_granularity", &s.granularity}, {m.Lookback, m.Path + ".lookback_window", &s.lookback}} {
		v, err := renderDuration(d.t, d.path, vars)
		if err != nil {
			return nil, err
		}
		if d.dst == nil {
			if v != nil && !v.IsZero() {
				s.step = v
			}
		} else if v != nil {
			*d.dst = *v
		}
	}
	if s.startKey, err = renderKey(m.PartitionFieldStart, vars, "start_time"); err != nil {
		return nil, err
	}
	if s.endKey, err = renderKey(m.PartitionFieldEnd, vars, "end_time"); err != nil {
		return nil, err
	}
	if m.Clamping != nil {
		if s.clamp, err = newClamper(m.Clamping, vars, s.granularity); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// cursorField renders cursor_field, or takes the catalog's when the manifest allows it.
func cursorField(path string, t *interp.Template, vars interp.Vars, allowCatalog bool, catalog []string) (string, error) {
	if allowCatalog && len(catalog) > 0 {
		if len(catalog) > 1 {
			return "", fmt.Errorf("%s: the catalog's cursor_field %v is a nested path; only a top-level field can be a cursor", path, catalog)
		}
		return catalog[0], nil
	}
	f, err := t.Render(vars)
	if err != nil {
		return "", err
	}
	if f == "" {
		return "", fmt.Errorf("%s.cursor_field: renders empty; check the config", path)
	}
	return f, nil
}

func renderKey(t *interp.Template, vars interp.Vars, def string) (string, error) {
	if t == nil {
		return def, nil
	}
	k, err := t.Render(vars)
	if err != nil || k == "" {
		return def, err
	}
	return k, nil
}

func renderDuration(t *interp.Template, path string, vars interp.Vars) (*datetime.Duration, error) {
	if t == nil {
		return nil, nil
	}
	text, err := t.Render(vars)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	d, err := datetime.ParseDuration(strings.TrimSpace(text))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return &d, nil
}

// bound renders start_datetime or end_datetime: its format (the cursor's
// datetime_format when it has none) first, then ISO 8601 or epoch seconds,
// held between min_datetime and max_datetime.
func (s *DatetimeSpec) bound(m *manifest.MinMaxDatetime, vars interp.Vars) (int64, error) {
	layout := m.Format
	if layout == nil {
		layout = s.out
	}
	read := func(t *interp.Template, path string) (int64, bool, error) {
		text, err := t.Render(vars)
		if err != nil {
			return 0, false, err
		}
		if strings.TrimSpace(text) == "" {
			return 0, false, nil
		}
		if us, err := layout.ParseMicros(text); err == nil {
			return us, true, nil
		}
		if t, err := datetime.ParseDatetime(text); err == nil {
			return t.UnixMicro(), true, nil
		}
		return 0, false, fmt.Errorf("%s: %q is not a date in the format %s (nor ISO 8601)", path, text, layout)
	}
	v, ok, err := read(m.Datetime, m.Path)
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, fmt.Errorf("%s: renders empty; check the config", m.Path)
	}
	if m.Min != nil {
		lo, ok, err := read(m.Min, m.Path+".min_datetime")
		if err != nil {
			return 0, err
		}
		if ok {
			v = max(v, lo)
		}
	}
	if m.Max != nil {
		hi, ok, err := read(m.Max, m.Path+".max_datetime")
		if err != nil {
			return 0, err
		}
		if ok {
			v = min(v, hi)
		}
	}
	return v, nil
}

// Field is the record key holding the cursor value.
func (s *DatetimeSpec) Field() string { return s.field }

// formats lists the formats a value is read with, for messages.
func (s *DatetimeSpec) formats() string {
	names := make([]string, len(s.inputs))
	for i, l := range s.inputs {
		names[i] = l.String()
	}
	return strings.Join(names, ", ")
}

// parse reads a cursor value with the input formats, first match wins.
func (s *DatetimeSpec) parse(text string) (int64, bool) {
	for _, l := range s.inputs {
		if us, err := l.ParseMicros(text); err == nil {
			return us, true
		}
	}
	return 0, false
}

// parseState reads a state's value: with datetime_format first, the format
// states are written in, then with the input formats. The reference tries
// cursor_datetime_formats first, which may read the text otherwise: a
// datetime_format ending in a literal offset ("%Y-%m-%dT%H:%M:%S-12:00", as
// source-pardot's) writes the time in UTC, and "%Y-%m-%dT%H:%M:%S%z" read it
// back 12 hours later, so that each sync skipped 12 hours.
func (s *DatetimeSpec) parseState(text string) (int64, bool) {
	if us, err := s.out.ParseMicros(text); err == nil {
		return us, true
	}
	return s.parse(text)
}

// endNow is the upper bound of the sync: end_datetime, or now.
func (s *DatetimeSpec) endNow() int64 {
	if s.end != nil {
		return *s.end
	}
	return s.now().UnixMicro()
}

// newCursor makes a cursor starting from a stream (or partition) state: the
// flat form {cursor_field: value, ...} or the concurrent form
// {"state_type": "date-range", "slices": [...]}. nil or {} is no state.
func (s *DatetimeSpec) newCursor(state map[string]any) (*DatetimeCursor, error) {
	c := &DatetimeCursor{spec: s}
	gap := s.granularity.Fixed.Microseconds()
	if s.granularity.Years != 0 || s.granularity.Months != 0 || gap == 0 {
		gap = 1000 // 1 ms, the CDK's default
	}
	if isConcurrentState(state) {
		intervals, err := s.concurrentState(state)
		if err != nil {
			return nil, err
		}
		c.history = newHistory(gap, intervals...)
		c.syncStart = c.history.complete(s.start)
		return c, nil
	}
	c.syncStart = s.start
	var value any
	c.legacy, value = splitState(state, s.field)
	if value != nil {
		us, err := s.stateValue(value)
		if err != nil {
			return nil, err
		}
		c.syncStart = max(us, s.start)
	}
	c.history = newHistory(gap, interval{lo: s.start, hi: c.syncStart, max: c.syncStart, hasMax: true})
	return c, nil
}

func (s *DatetimeSpec) stateValue(v any) (int64, error) {
	text := interp.String(v)
	switch v.(type) {
	case string, int64, float64:
	default:
		return 0, fmt.Errorf("stream %s: the state's %s is %s, not a date", s.stream, s.field, describe(v))
	}
	us, ok := s.parseState(text)
	if !ok {
		return 0, fmt.Errorf("stream %s: the state's %s value %q matches none of the formats %s", s.stream, s.field, text, s.formats())
	}
	return us, nil
}

func isConcurrentState(state map[string]any) bool {
	t, _ := state["state_type"].(string)
	return t == "date-range" || t == "integer"
}

// concurrentState reads the intervals of a {"state_type", "slices"} state.
func (s *DatetimeSpec) concurrentState(state map[string]any) ([]interval, error) {
	list, ok := state["slices"].([]any)
	if !ok {
		return nil, fmt.Errorf("stream %s: the state's slices must be a list of {start, end} objects", s.stream)
	}
	var out []interval
	for i, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("stream %s: the state's slices[%d] must be an object with start and end", s.stream, i)
		}
		var iv interval
		for _, f := range []struct {
			key      string
			dst      *int64
			required bool
		}{{"start", &iv.lo, true}, {"end", &iv.hi, true}, {"most_recent_cursor_value", &iv.max, false}} {
			v, has := m[f.key]
			if !has || v == nil {
				if f.required {
					return nil, fmt.Errorf("stream %s: the state's slices[%d] has no %s", s.stream, i, f.key)
				}
				continue
			}
			text := interp.String(v)
			us, ok := s.parseState(text)
			if !ok {
				return nil, fmt.Errorf("stream %s: the state's slices[%d].%s value %q matches none of the formats %s", s.stream, i, f.key, text, s.formats())
			}
			*f.dst = us
			iv.hasMax = iv.hasMax || f.key == "most_recent_cursor_value"
		}
		if !iv.hasMax {
			// read completely up to its end
			iv.max, iv.hasMax = iv.hi, true
		}
		out = append(out, iv)
	}
	return out, nil
}

// DatetimeCursor is the position of a datetime-based stream or partition.
type DatetimeCursor struct {
	spec      *DatetimeSpec
	syncStart int64          // the state's value, or start_datetime
	legacy    map[string]any // other keys of the incoming flat state, written back as they came
	history   *history
	synced    atomic.Bool // a closed slice had a record's cursor value
}

// Field is the record key holding the cursor value.
func (c *DatetimeCursor) Field() string { return c.spec.field }

// Slices cuts the ranges not read yet, up to the end, into windows.
func (c *DatetimeCursor) Slices() iter.Seq[*Slice] {
	s := c.spec
	return func(yield func(*Slice) bool) {
		end := s.endNow()
		if s.clamp != nil {
			end = s.clamp.end(end)
		}
		read := c.history.snapshot()
		if len(read) > 0 && s.start < read[0].lo {
			if !c.windows(s.start, read[0].lo, false, yield) {
				return
			}
		}
		for i := 0; i+1 < len(read); i++ {
			lo := read[i].hi
			if !s.granularity.IsZero() {
				lo = s.granularity.AddMicros(lo)
			}
			if !c.windows(lo, read[i+1].lo, false, yield) {
				return
			}
		}
		lower := s.start
		if len(read) > 0 {
			lower = read[len(read)-1].hi
		}
		c.windows(s.lookback.SubMicros(lower), end, true, yield)
	}
}

// windows cuts [lower, upper] by step, each window ending one granularity
// before the next starts (the last window of the sync ends at upper
// itself), as the CDK's _split_per_slice_range does.
func (c *DatetimeCursor) windows(lower, upper int64, upperIsEnd bool, yield func(*Slice) bool) bool {
	s := c.spec
	if lower >= upper || upper < s.start {
		return true
	}
	lower = max(lower, s.start)
	clamp := func(v int64) int64 {
		if s.clamp == nil {
			return v
		}
		return s.clamp.ceil(v)
	}
	gran := func(v int64) int64 {
		if s.granularity.IsZero() {
			return v
		}
		return s.granularity.SubMicros(v)
	}
	if s.step == nil || s.step.AddMicros(lower) >= upper {
		lo, hi := clamp(lower), clamp(upper)
		if !upperIsEnd {
			hi = gran(hi)
		}
		return lo > hi || c.emit(lo, hi, yield)
	}
	for current := lower; ; {
		next := min(s.step.AddMicros(current), upper)
		reached := next >= upper
		hi := next
		if next != upper {
			hi = clamp(next)
		}
		lo := clamp(current)
		if lo >= hi {
			return true
		}
		end := hi
		if !upperIsEnd || !reached {
			end = gran(hi)
		}
		if !c.emit(lo, end, yield) {
			return false
		}
		if reached {
			return true
		}
		current = hi
	}
}

// emit makes the slice [lo, hi]: its bounds written in datetime_format and
// read back, as the API receives them.
func (c *DatetimeCursor) emit(lo, hi int64, yield func(*Slice) bool) bool {
	s := c.spec
	start, end := s.out.FormatMicros(lo), s.out.FormatMicros(hi)
	if s.strict && start == end {
		// The API refuses a window whose start is its end: it is not
		// requested, and counts as read so that the state can move past it.
		c.history.add(interval{lo: lo, hi: hi})
		return true
	}
	sl := &Slice{Cursor: map[string]any{s.startKey: start, s.endKey: end}, lower: lo, upper: hi}
	if v, err := s.out.ParseMicros(start); err == nil {
		sl.lower = v
	}
	if v, err := s.out.ParseMicros(end); err == nil {
		sl.upper = v
	}
	if s.startOption != nil {
		sl.Options = append(sl.Options, Option{Where: s.startOption, Value: start})
	}
	if s.endOption != nil {
		sl.Options = append(sl.Options, Option{Where: s.endOption, Value: end})
	}
	return yield(sl)
}

// Observe keeps the record's cursor value as the slice's highest. A text in
// the first format's sortable shape is only compared as bytes; the highest
// one is read when the slice closes (or is narrowed: the first value after
// that is read, to compare it with the highest).
func (c *DatetimeCursor) Observe(sl *Slice, raw []byte) error {
	if shape := c.spec.shape; shape != nil && len(raw) == len(shape)+2 && raw[0] == '"' && fits(raw[1:len(raw)-1], shape) && (sl.pending != nil || !sl.seen) {
		text := raw[1 : len(raw)-1]
		switch cmp := bytes.Compare(text, sl.pending); {
		case sl.pending == nil || cmp > 0:
			sl.pending = append(sl.pending[:0], text...)
		case cmp < 0:
			sl.descending = true
		}
		return nil
	}
	us, err := c.value(raw)
	if err != nil {
		return err
	}
	sl.observe(us)
	return nil
}

// fits tells whether text has the shape: digits where the pattern has 0,
// the pattern's byte elsewhere.
func fits(text, shape []byte) bool {
	for i, p := range shape {
		if c := text[i]; (p == 0 && (c < '0' || c > '9')) || (p != 0 && c != p) {
			return false
		}
	}
	return true
}

// settle reads the pending highest text of a slice. One that is no date
// after all (a month 13) is left out: the state then stays lower, which
// reads more next time but loses nothing.
func (c *DatetimeCursor) settle(sl *Slice) {
	if sl.pending == nil {
		return
	}
	if us, err := c.spec.inputs[0].ParseMicros(string(sl.pending)); err == nil {
		sl.observe(us)
	}
	sl.pending = nil
}

func (c *DatetimeCursor) value(raw []byte) (int64, error) {
	s := c.spec
	text, ok := valueText(raw)
	if !ok {
		if len(raw) == 0 || string(raw) == "null" {
			return 0, fmt.Errorf("stream %s: a record has no %s; such records are emitted but do not move the state", s.stream, s.field)
		}
		return 0, fmt.Errorf("stream %s: a record's %s is %s, not a date; such records are emitted but do not move the state", s.stream, s.field, truncate(raw))
	}
	us, ok := s.parse(text)
	if !ok {
		return 0, fmt.Errorf("stream %s: a record's %s value %q matches none of the formats %s; such records are emitted but do not move the state", s.stream, s.field, text, s.formats())
	}
	return us, nil
}

// Keep tells whether a value is inside the sync's window: from the state (or
// start) minus lookback_window, never before the start, to the end (or now),
// both included. The records the lookback reads again are kept, as the CDK's
// client-side filter keeps them.
func (c *DatetimeCursor) Keep(raw []byte) bool {
	us, err := c.value(raw)
	if err != nil {
		return true
	}
	return us >= max(c.spec.lookback.SubMicros(c.syncStart), c.spec.start) && us <= c.spec.endNow()
}

// Close adds the slice to the history. Its highest value counts no further
// than its end: a record the API returned from after the slice cannot vouch
// for the slices after it, which may not have been read.
func (c *DatetimeCursor) Close(sl *Slice) {
	c.settle(sl)
	iv := interval{lo: sl.lower, hi: sl.upper}
	if sl.seen {
		iv.max, iv.hasMax = min(sl.max, sl.upper), true
		c.synced.Store(true)
	}
	c.history.add(iv)
}

// observed tells whether a closed slice had a record's cursor value.
func (c *DatetimeCursor) observed() bool { return c.synced.Load() }

// State is {cursor_field: value} in datetime_format (in UTC), with the other
// keys of the incoming state.
func (c *DatetimeCursor) State() map[string]any {
	return flatState(c.legacy, c.spec.field, c.spec.out.FormatMicros(c.history.complete(c.spec.start)))
}

func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return fmt.Sprintf("the string %q", x)
	case int64, float64:
		return fmt.Sprintf("the number %v", x)
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func truncate(b []byte) string {
	if len(b) > 60 {
		return string(b[:60]) + "..."
	}
	return string(b)
}
