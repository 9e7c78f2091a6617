package incremental

import (
	"fmt"
	"testing"
	"time"
)

const stepless = `type: DatetimeBasedCursor
cursor_field: updated_at
datetime_format: "%Y-%m-%dT%H:%M:%SZ"
start_datetime: "2024-01-01T00:00:00Z"
end_datetime: "2024-01-03T00:00:00Z"`

// readWhole reads every slice of a partition's cursor, one record at value
// (none when value is "") in each, and tells p it is done.
func readWhole(t *testing.T, p *Partitioned, c Cursor, seq int, value string) {
	t.Helper()
	for sl := range c.Slices() {
		if value != "" {
			if err := c.Observe(sl, []byte(`"`+value+`"`)); err != nil {
				t.Fatal(err)
			}
		}
		c.Close(sl)
	}
	p.Done(seq, c)
}

// The reference (ConcurrentPerPartitionCursor._ensure_partition_limit)
// turns the state global when a partition is made while it already has more
// than SWITCH_TO_GLOBAL_LIMIT (10,000) partitions: the 10,002nd.
func TestStateTurnsGlobalPastTenThousandPartitions(t *testing.T) {
	now := time.Date(2024, 1, 5, 0, 0, 0, 0, time.UTC)
	p, err := NewPartitioned(spec(t, stepless, now), nil, PartitionedOptions{Stream: "s", Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	open := func(i int) {
		c, seq, err := p.Open(map[string]any{"id": i}, nil)
		if err != nil {
			t.Fatal(err)
		}
		readWhole(t, p, c, seq, "")
	}
	for i := range GlobalCursorLimit + 1 {
		open(i)
	}
	if s := p.State(); s["use_global_cursor"] != false || len(s["states"].([]any)) != GlobalCursorLimit+1 {
		t.Fatalf("after %d partitions: use_global_cursor %v, %d states", GlobalCursorLimit+1, s["use_global_cursor"], len(s["states"].([]any)))
	}
	open(GlobalCursorLimit + 1)
	if s := p.State(); s["use_global_cursor"] != true || s["states"] != nil {
		t.Fatalf("after %d partitions: %v", GlobalCursorLimit+2, s)
	}
}

// At most DEFAULT_MAX_PARTITIONS_NUMBER (25,000) partition cursors are kept:
// a partition made while as many are kept drops the oldest one not being
// read (_ensure_partition_limit), here its own, which then starts over.
func TestOldestPartitionCursorIsDroppedPastTheCap(t *testing.T) {
	now := time.Date(2024, 1, 5, 0, 0, 0, 0, time.UTC)
	p, err := NewPartitioned(spec(t, stepless, now), nil, PartitionedOptions{Stream: "s", Global: true, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	first, seq, err := p.Open(map[string]any{"id": "first"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	readWhole(t, p, first, seq, "2024-01-02T10:00:00Z")
	again := func() string {
		c, seq, err := p.Open(map[string]any{"id": "first"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		p.Done(seq, c)
		return fmt.Sprint(c.State()["updated_at"])
	}
	if got := again(); got != "2024-01-02T10:00:00Z" {
		t.Fatalf("kept cursor at %s", got)
	}
	for i := range maxPartitionCursors - 1 {
		c, seq, err := p.Open(map[string]any{"id": i}, nil)
		if err != nil {
			t.Fatal(err)
		}
		p.Done(seq, c)
	}
	if got := again(); got != "2024-01-01T00:00:00Z" {
		t.Fatalf("dropped cursor made again at %s, want the start", got)
	}
}

// lookback_window is the time from the first partition opened to the end
// of the sync, in seconds rounded up (the reference's Timer, started by
// stream_slices); a sync without a record's cursor value leaves it as it
// came.
func TestLookbackWindowIsTheSyncsDuration(t *testing.T) {
	start := time.Date(2024, 1, 5, 0, 0, 0, 0, time.UTC)
	clock := start
	now := func() time.Time { return clock }
	for _, tc := range []struct {
		record string
		want   int64
	}{{"2024-01-02T10:00:00Z", 4}, {"", 60}} {
		p, err := NewPartitioned(spec(t, stepless, start), map[string]any{"states": []any{}, "lookback_window": 60.0}, PartitionedOptions{Stream: "s", Now: now})
		if err != nil {
			t.Fatal(err)
		}
		clock = start.Add(100 * time.Second) // other streams read first
		c, seq, err := p.Open(map[string]any{"id": 1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		readWhole(t, p, c, seq, tc.record)
		p.Finish(start.Add(103500 * time.Millisecond))
		if got := p.State()["lookback_window"]; got != tc.want {
			t.Errorf("record %q: lookback_window %v, want %d", tc.record, got, tc.want)
		}
	}
}
