package acceptance

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// incrementalStream is a stream of the configured catalog read incrementally.
type incrementalStream struct {
	name   string
	cursor string // top-level cursor field
}

// streamState is one STATE message of a read.
type streamState struct {
	stream string
	state  map[string]any
	count  int
	index  int // position among the read's messages
}

// incremental runs the incremental suite as Airbyte's acceptance tests do:
// two sequential reads, the second from the first's last states; a re-read
// from every checkpoint of the first read; the future state.
func (r *Runner) incremental(tc Test) {
	cfg, _, err1 := r.file(tc.ConfigPath)
	_, catBytes, err2 := r.file(tc.ConfiguredCatalogPath)
	if !r.check(err1 == nil && err2 == nil, "incremental: cannot read %s or %s", tc.ConfigPath, tc.ConfiguredCatalogPath) {
		return
	}
	cat, streams, err := r.incrementalCatalog(catBytes)
	if !r.check(err == nil && len(streams) > 0, "incremental: the catalog %s has no incremental stream with a cursor field: %v", tc.ConfiguredCatalogPath, err) {
		return
	}
	first := r.run("incremental read 1", "read", "--config", cfg, "--catalog", cat)
	r.check(first.code == 0, "incremental read 1: exit code %d, want 0", first.code)
	states := r.checkStates(first, streams)
	r.check(len(records(first)) > 0, "incremental read 1: no records")
	r.check(len(states) > 0, "incremental read 1: no STATE message")

	last := map[string]map[string]any{}
	for _, st := range states {
		last[st.stream] = st.state
	}
	second := r.run("incremental read 2", "read", "--config", cfg, "--catalog", cat, "--state", r.stateFile(last))
	r.check(second.code == 0, "incremental read 2: exit code %d, want 0", second.code)
	for _, rec := range records(second) {
		for _, s := range streams {
			if rec.stream != s.name || last[s.name] == nil {
				continue
			}
			var data map[string]any
			json.Unmarshal([]byte(rec.data), &data)
			if c, ok := compareCursor(data[s.cursor], last[s.name][s.cursor]); ok && c < 0 {
				r.check(false, "incremental read 2: a record of %s has %s %v, older than the state it started from (%v)", s.name, s.cursor, data[s.cursor], last[s.name][s.cursor])
			}
		}
	}
	r.check(!sameRecords(records(first), records(second)), "incremental read 2: the same records as read 1, from read 1's state")
	r.sequentialSlices(cfg, cat, first, states)
	if tc.FutureState != nil && tc.FutureState.FutureStatePath != "" {
		future, _, err := r.file(tc.FutureState.FutureStatePath)
		if r.check(err == nil, "incremental: cannot read %s: %v", tc.FutureState.FutureStatePath, err) {
			out := r.run("incremental read from a future state", "read", "--config", cfg, "--catalog", cat, "--state", future)
			r.check(len(records(out)) == 0, "incremental read from a future state: %d records, want none", len(records(out)))
			r.check(len(out.ofType("STATE")) > 0, "incremental read from a future state: no STATE message")
		}
	}
}

// checkStates checks every STATE of a read: a STREAM state of a configured
// stream, an object holding the cursor field, with sourceStats; the cursor
// never goes back. It returns the states of the incremental streams.
func (r *Runner) checkStates(out output, streams []incrementalStream) []streamState {
	cursors := map[string]string{}
	for _, s := range streams {
		cursors[s.name] = s.cursor
	}
	var list []streamState
	previous := map[string]any{}
	for i, m := range out.msgs {
		if m["type"] != "STATE" {
			continue
		}
		st, _ := m["state"].(map[string]any)
		s, _ := st["stream"].(map[string]any)
		if !r.check(st["type"] == "STREAM" && s != nil, "incremental: a STATE message is not a STREAM state: %v", st) {
			continue
		}
		desc, _ := s["stream_descriptor"].(map[string]any)
		name, _ := desc["name"].(string)
		stats, _ := st["sourceStats"].(map[string]any)
		count, ok := stats["recordCount"].(float64)
		r.check(ok, "incremental: the state of %s has no sourceStats.recordCount", name)
		cursor, incremental := cursors[name]
		if !incremental {
			continue
		}
		state, _ := s["stream_state"].(map[string]any)
		if !r.check(state != nil && state[cursor] != nil, "incremental: the state of %s is not an object holding its cursor field %s: %v", name, cursor, s["stream_state"]) {
			continue
		}
		if prev, ok := previous[name]; ok {
			c, comparable := compareCursor(state[cursor], prev)
			r.check(comparable && c >= 0, "incremental: the state of %s went back from %v to %v", name, prev, state[cursor])
		}
		previous[name] = state[cursor]
		list = append(list, streamState{stream: name, state: state, count: int(count), index: i})
	}
	return list
}

// sequentialSlices reads again from each checkpoint of the first read: the
// records after a checkpoint (by its recordCount) must come again, at least.
func (r *Runner) sequentialSlices(cfg, cat string, first output, states []streamState) {
	total := map[string]int{}
	for _, rec := range records(first) {
		total[rec.stream]++
	}
	seen := map[string]int{}
	for i, st := range states {
		seen[st.stream] += st.count
		out := r.run(fmt.Sprintf("incremental read from checkpoint %d", i+1), "read", "--config", cfg, "--catalog", cat,
			"--state", r.stateFile(map[string]map[string]any{st.stream: st.state}))
		got := 0
		for _, rec := range records(out) {
			if rec.stream == st.stream {
				got++
			}
		}
		want := total[st.stream] - seen[st.stream]
		r.check(got >= want, "incremental read from checkpoint %d of %s (%v): %d records, want at least the %d read after it", i+1, st.stream, st.state, got, want)
	}
}

// stateFile writes states as the protocol's list of STREAM states.
func (r *Runner) stateFile(states map[string]map[string]any) string {
	var list []any
	for name, s := range states {
		list = append(list, map[string]any{"type": "STREAM", "stream": map[string]any{"stream_descriptor": map[string]any{"name": name}, "stream_state": s}})
	}
	b, _ := json.Marshal(list)
	path := filepath.Join(r.dir, fmt.Sprintf("%d-state.json", time.Now().UnixNano()))
	os.WriteFile(path, b, 0o600)
	return path
}

// incrementalCatalog writes the catalog of the incremental streams alone, as
// the acceptance tests read them, and lists them with their cursor field
// (configured, or the stream's default).
func (r *Runner) incrementalCatalog(catalog []byte) (string, []incrementalStream, error) {
	var cat struct {
		Streams []json.RawMessage `json:"streams"`
	}
	if err := json.Unmarshal(catalog, &cat); err != nil {
		return "", nil, err
	}
	var kept []json.RawMessage
	var out []incrementalStream
	for _, raw := range cat.Streams {
		var s struct {
			Stream struct {
				Name               string   `json:"name"`
				DefaultCursorField []string `json:"default_cursor_field"`
			} `json:"stream"`
			SyncMode    string   `json:"sync_mode"`
			CursorField []string `json:"cursor_field"`
		}
		json.Unmarshal(raw, &s)
		if s.SyncMode != "incremental" {
			continue
		}
		field := s.CursorField
		if len(field) == 0 {
			field = s.Stream.DefaultCursorField
		}
		if len(field) != 1 {
			return "", nil, fmt.Errorf("stream %s has no top-level cursor field", s.Stream.Name)
		}
		kept = append(kept, raw)
		out = append(out, incrementalStream{name: s.Stream.Name, cursor: field[0]})
	}
	b, _ := json.Marshal(map[string]any{"streams": kept})
	path := filepath.Join(r.dir, fmt.Sprintf("%d-incremental-catalog.json", time.Now().UnixNano()))
	return path, out, os.WriteFile(path, b, 0o600)
}

// compareCursor compares two cursor values: numbers as numbers, dates as
// dates, other text as text. ok is false when they cannot be compared.
func compareCursor(a, b any) (int, bool) {
	na, aNum := number(a)
	nb, bNum := number(b)
	if aNum && bNum {
		return cmpFloat(na, nb), true
	}
	sa, aStr := a.(string)
	sb, bStr := b.(string)
	if !aStr || !bStr {
		return 0, false
	}
	ta, errA := time.Parse(time.RFC3339Nano, sa)
	tb, errB := time.Parse(time.RFC3339Nano, sb)
	if errA == nil && errB == nil {
		return ta.Compare(tb), true
	}
	switch {
	case sa < sb:
		return -1, true
	case sa > sb:
		return 1, true
	}
	return 0, true
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case string:
		f, err := strconv.ParseFloat(x, 64)
		return f, err == nil
	}
	return 0, false
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func sameRecords(a, b []record) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].stream != b[i].stream || a[i].data != b[i].data {
			return false
		}
	}
	return true
}
