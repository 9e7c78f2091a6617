package incremental

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/airbyte-go/source-declarative/lang/datetime"
	"github.com/airbyte-go/source-declarative/manifest"
)

// spec decodes a DatetimeBasedCursor written in YAML through the manifest
// loader and renders it, with now fixed.
func spec(t *testing.T, cursorYAML string, now time.Time) *DatetimeSpec {
	t.Helper()
	src, err := manifest.Parse([]byte(fmt.Sprintf(`version: 6.0.0
check: {stream_names: [s]}
streams:
  - type: DeclarativeStream
    name: s
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: "https://x"}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}
    incremental_sync:
%s
`, "      "+strings.ReplaceAll(strings.TrimSpace(cursorYAML), "\n", "\n      "))))
	if err != nil {
		t.Fatal(err)
	}
	m, err := manifest.Load(src)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSpec(m.Streams[0], map[string]any{}, func() time.Time { return now }, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s.(*DatetimeSpec)
}

func bounds(c Cursor) []string {
	var out []string
	for sl := range c.Slices() {
		var keys []string
		for k := range sl.Cursor {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		out = append(out, fmt.Sprint(sl.Cursor[keys[1]], " ", sl.Cursor[keys[0]]))
	}
	return out
}

func cursorOf(t *testing.T, s *DatetimeSpec, state map[string]any) *DatetimeCursor {
	t.Helper()
	c, err := s.newCursor(state)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestSlicesEndAtNowWithoutEndDatetime(t *testing.T) {
	s := spec(t, `type: DatetimeBasedCursor
cursor_field: updated_at
datetime_format: "%Y-%m-%dT%H:%M:%SZ"
start_datetime: "2024-01-01T00:00:00Z"`, time.Date(2024, 1, 3, 4, 5, 6, 0, time.UTC))
	got := bounds(cursorOf(t, s, nil))
	want := []string{"2024-01-01T00:00:00Z 2024-01-03T04:05:06Z"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// Slices may close in any order: the state covers the unbroken run only.
func TestStateCoversOnlyTheUnbrokenRun(t *testing.T) {
	s := spec(t, `type: DatetimeBasedCursor
cursor_field: updated_at
datetime_format: "%Y-%m-%dT%H:%M:%SZ"
start_datetime: "2024-01-01T00:00:00Z"
end_datetime: "2024-01-04T00:00:00Z"
step: P1D
cursor_granularity: PT1S`, time.Time{})
	c := cursorOf(t, s, nil)
	var all []*Slice
	for sl := range c.Slices() {
		all = append(all, sl)
	}
	if len(all) != 3 {
		t.Fatalf("%d slices", len(all))
	}
	observe := func(sl *Slice, v string) {
		if err := c.Observe(sl, []byte(`"`+v+`"`)); err != nil {
			t.Fatal(err)
		}
	}
	observe(all[0], "2024-01-01T08:00:00Z")
	observe(all[1], "2024-01-02T09:00:00Z")
	observe(all[1], "2024-01-02T07:00:00Z") // unordered: the highest counts
	observe(all[2], "2024-01-03T10:00:00Z")
	state := func() string { return c.State()["updated_at"].(string) }
	c.Close(all[2])
	if state() != "2024-01-01T00:00:00Z" {
		t.Errorf("after the third slice alone: %s", state())
	}
	c.Close(all[0])
	if state() != "2024-01-01T08:00:00Z" {
		t.Errorf("after the first: %s", state())
	}
	c.Close(all[1])
	if state() != "2024-01-03T10:00:00Z" {
		t.Errorf("after all three: %s", state())
	}
}

// A record the API returns from after its slice moves the state no further
// than the slice's end: the slices after it may not have been read.
func TestRecordAfterItsSliceCountsUpToTheSliceEnd(t *testing.T) {
	s := spec(t, `type: DatetimeBasedCursor
cursor_field: updated_at
datetime_format: "%Y-%m-%dT%H:%M:%SZ"
start_datetime: "2024-01-01T00:00:00Z"
end_datetime: "2024-01-03T00:00:00Z"
step: P1D
cursor_granularity: PT1S`, time.Time{})
	c := cursorOf(t, s, nil)
	for sl := range c.Slices() {
		c.Observe(sl, []byte(`"2024-01-02T20:00:00Z"`))
		c.Close(sl)
		break
	}
	if got := c.State()["updated_at"]; got != "2024-01-01T23:59:59Z" {
		t.Errorf("state %v", got)
	}
}

func TestRecordOffsetIsWrittenInUTC(t *testing.T) {
	s := spec(t, `type: DatetimeBasedCursor
cursor_field: updated_at
datetime_format: "%Y-%m-%dT%H:%M:%SZ"
cursor_datetime_formats: ["%Y-%m-%dT%H:%M:%S%z"]
start_datetime: "2024-01-01T00:00:00Z"
end_datetime: "2024-01-02T00:00:00Z"`, time.Time{})
	c := cursorOf(t, s, nil)
	for sl := range c.Slices() {
		c.Observe(sl, []byte(`"2024-01-01T10:00:00-0800"`))
		c.Close(sl)
	}
	if got := c.State()["updated_at"]; got != "2024-01-01T18:00:00Z" {
		t.Errorf("state %v, want the instant in UTC", got)
	}
}

func TestClamping(t *testing.T) {
	for _, tc := range []struct {
		clamping, start, now string
		want                 []string
	}{
		// Months: the partial first month is skipped, the running one waits.
		{"{target: MONTH}", "2024-01-15T00:00:00Z", "2024-04-10T00:00:00Z",
			[]string{"2024-02-01T00:00:00Z 2024-02-29T00:00:00Z", "2024-03-01T00:00:00Z 2024-03-31T00:00:00Z"}},
		// Days: a start at midnight keeps its day.
		{"{target: DAY}", "2024-01-01T00:00:00Z", "2024-01-03T10:00:00Z",
			[]string{"2024-01-01T00:00:00Z 2024-01-01T23:59:59Z", "2024-01-02T00:00:00Z 2024-01-02T23:59:59Z"}},
		// Weeks on Mondays: the running week waits, the week ending Sunday is read.
		{"{target: WEEK, target_details: {weekday: MONDAY}}", "2024-01-01T00:00:00Z", "2024-01-15T10:00:00Z",
			[]string{"2024-01-01T00:00:00Z 2024-01-07T00:00:00Z", "2024-01-08T00:00:00Z 2024-01-14T00:00:00Z"}},
	} {
		step := "P1M"
		gran := "P1D"
		switch {
		case strings.Contains(tc.clamping, "WEEK"):
			step = "P7D"
		case strings.Contains(tc.clamping, "DAY"):
			step, gran = "P1D", "PT1S"
		}
		now, _ := time.Parse(time.RFC3339, tc.now)
		s := spec(t, fmt.Sprintf(`type: DatetimeBasedCursor
cursor_field: updated_at
datetime_format: "%%Y-%%m-%%dT%%H:%%M:%%SZ"
start_datetime: %q
step: %s
cursor_granularity: %s
clamping: %s`, tc.start, step, gran, tc.clamping), now)
		if got := bounds(cursorOf(t, s, nil)); !slices.Equal(got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.clamping, got, tc.want)
		}
	}
}

func TestCompareStrictlySkipsEmptyWindows(t *testing.T) {
	s := spec(t, `type: DatetimeBasedCursor
cursor_field: day
datetime_format: "%Y-%m-%d"
start_datetime: "2024-01-01"
end_datetime: "2024-01-03"
step: P1D
cursor_granularity: P1D
is_compare_strictly: true`, time.Time{})
	c := cursorOf(t, s, nil)
	var got []string
	for sl := range c.Slices() {
		got = append(got, fmt.Sprint(sl.Cursor["start_time"], " ", sl.Cursor["end_time"]))
		c.Close(sl)
	}
	// [01, 01] is not requested; the last window ends at the end itself.
	if !slices.Equal(got, []string{"2024-01-02 2024-01-03"}) {
		t.Errorf("slices %q", got)
	}
	if got := c.State()["day"]; got != "2024-01-01" {
		t.Errorf("state %v", got)
	}
}

func TestFieldValue(t *testing.T) {
	rec := []byte(`{"id":1, "note":"say \"updated_at\": no", "author":{"updated_at":"nested"}, "tags":["updated_at",{"x":"]"}], "n":-1.5e3,"updated_at" : "2024-01-01T00:00:00Z","z":null}`)
	for key, want := range map[string]string{"updated_at": `"2024-01-01T00:00:00Z"`, "n": "-1.5e3", "z": "null", "id": "1", "tags": `["updated_at",{"x":"]"}]`, "missing": ""} {
		if got := string(FieldValue(rec, key)); got != want {
			t.Errorf("%s: %q, want %q", key, got, want)
		}
	}
	if got := FieldValue([]byte(`{"a\u0062":2}`), "ab"); string(got) != "2" {
		t.Errorf("escaped key: %q", got)
	}
}

func BenchmarkObserve(b *testing.B) {
	rec := []byte(`{"created_at":"2024-01-01T00:01:00Z","email":"user1@example.com","id":1,"name":"user-1","padding":"` + strings.Repeat("x", 120) + `","updated_at":"2024-01-01T01:00:00Z"}`)
	s := &DatetimeSpec{stream: "s", field: "updated_at"}
	s.out, _ = datetime.Compile("%Y-%m-%dT%H:%M:%SZ")
	s.inputs = append(s.inputs, s.out)
	s.shape, _ = s.out.Shape()
	c, _ := s.newCursor(nil)
	sl := &Slice{}
	b.SetBytes(int64(len(rec)))
	for i := 0; i < b.N; i++ {
		if err := c.Observe(sl, FieldValue(rec, "updated_at")); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFieldValue(b *testing.B) {
	rec := []byte(`{"created_at":"2024-01-01T00:01:00Z","email":"user1@example.com","id":1,"name":"user-1","padding":"` + strings.Repeat("x", 120) + `","updated_at":"2024-01-01T01:00:00Z"}`)
	for i := 0; i < b.N; i++ {
		FieldValue(rec, "updated_at")
	}
}
