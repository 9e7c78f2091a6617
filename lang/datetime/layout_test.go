package datetime

import (
	"strings"
	"testing"
	"time"
)

// Every format of the cursor schema, read and written back.
func TestLayoutRoundTrip(t *testing.T) {
	at := time.Date(2024, 3, 5, 7, 8, 9, 123456000, time.UTC)
	cases := []struct{ format, text string }{
		{"%Y-%m-%d", "2024-03-05"},
		{"%Y-%m-%d %H:%M:%S", "2024-03-05 07:08:09"},
		{"%Y-%m-%dT%H:%M:%S", "2024-03-05T07:08:09"},
		{"%Y-%m-%dT%H:%M:%SZ", "2024-03-05T07:08:09Z"},
		{"%Y-%m-%dT%H:%M:%S%z", "2024-03-05T07:08:09+0000"},
		{"%Y-%m-%dT%H:%M:%S.%fZ", "2024-03-05T07:08:09.123456Z"},
		{"%Y-%m-%dT%H:%M:%S.%f%z", "2024-03-05T07:08:09.123456+0000"},
		{"%Y-%m-%d %H:%M:%S.%f+00:00", "2024-03-05 07:08:09.123456+00:00"},
		{"%Y-%m-%dT%H:%M:%S.%_msZ", "2024-03-05T07:08:09.123Z"},
		{"%s", "1709622489"},
		{"%ms", "1709622489123"},
		{"%s_as_float", "1709622489.123456"},
		{"%epoch_microseconds", "1709622489123456"},
		{"%d/%m/%Y %I:%M %p", "05/03/2024 07:08 AM"},
		{"%a %d %b %Y", "Tue 05 Mar 2024"},
		{"%A %d %B %y", "Tuesday 05 March 24"},
		{"%j %Y", "065 2024"},
		{"%c", "Tue Mar  5 07:08:09 2024"},
		{"%x %X", "03/05/24 07:08:09"},
		{"%Y week %U/%W day %w", "2024 week 09/10 day 2"},
		{"%Y-%m-%d %H:%M:%S %Z", "2024-03-05 07:08:09 UTC"},
		{"100%% %Y", "100% 2024"},
	}
	for _, c := range cases {
		l, err := Compile(c.format)
		if err != nil {
			t.Fatalf("%s: %v", c.format, err)
		}
		if got := l.Format(at); got != c.text {
			t.Errorf("format %s: got %q, want %q", c.format, got, c.text)
		}
		back, err := l.Parse(c.text)
		if err != nil {
			t.Errorf("parse %s %q: %v", c.format, c.text, err)
			continue
		}
		if l.Format(back.UTC()) != c.text {
			t.Errorf("round trip %s: %q -> %v -> %q", c.format, c.text, back, l.Format(back.UTC()))
		}
	}
}

func TestParseEdges(t *testing.T) {
	utc := func(s string) time.Time { t, _ := time.Parse(time.RFC3339Nano, s); return t.UTC() }
	cases := []struct {
		format, text string
		want         time.Time
	}{
		{"%Y-%m-%dT%H:%M:%S%z", "2024-01-01T10:00:00-0800", utc("2024-01-01T18:00:00Z")},
		{"%Y-%m-%dT%H:%M:%S%z", "2024-01-01T10:00:00+05:30", utc("2024-01-01T04:30:00Z")},
		{"%Y-%m-%dT%H:%M:%S%z", "2024-01-01T10:00:00Z", utc("2024-01-01T10:00:00Z")},
		{"%Y-%m-%dT%H:%M:%S.%f", "2024-01-01T10:00:00.5", utc("2024-01-01T10:00:00.5Z")},
		{"%Y-%m-%dT%H:%M:%S.%f", "2024-01-01T10:00:00.123456789", utc("2024-01-01T10:00:00.123456Z")},
		{"%Y-%m-%d", "2024-1-5", utc("2024-01-05T00:00:00Z")},
		{"%Y-%m-%dT%H:%M:%SZ", "2024-01-05t01:02:03z", utc("2024-01-05T01:02:03Z")},
		{"%Y-%m-%d %H:%M", "2024-01-05   01:02", utc("2024-01-05T01:02:00Z")},
		{"%s", "-86400", utc("1969-12-31T00:00:00Z")},
		{"%s", "1704067200.9", utc("2024-01-01T00:00:00Z")},
		{"%ms", "1704067200123", utc("2024-01-01T00:00:00.123Z")},
		{"%s_as_float", "1704067200", utc("2024-01-01T00:00:00Z")},
		{"%j/%Y", "366/2024", utc("2024-12-31T00:00:00Z")},
		// A number gives digits back to what follows, as Python's regular
		// expression backtracks: seven fractional digits, .NET style.
		{"%Y-%m-%dT%H:%M:%S.%f0", "2024-01-01T10:00:00.1234560", utc("2024-01-01T10:00:00.123456Z")},
		{"%Y-%m-%dT%H:%M:%S.%f0Z", "2024-01-01T10:00:00.0000000Z", utc("2024-01-01T10:00:00Z")},
		{"%Y%m%d%H%M", "202401051002", utc("2024-01-05T10:02:00Z")},
		{"%d%m%Y", "1112024", utc("2024-01-11T00:00:00Z")},
	}
	for _, c := range cases {
		got, err := Strptime(c.text, c.format)
		if err != nil || !got.Equal(c.want) {
			t.Errorf("%s %q: got %v %v, want %v", c.format, c.text, got, err, c.want)
		}
	}
	for _, c := range []struct{ format, text, want string }{
		{"%Y-%m-%d", "2024-02-30", "day is out of range for month"},
		{"%Y-%m-%d", "2024-13-01", "month out of range"},
		{"%Y-%m-%d", "2024-01-01T00:00:00Z", `does not match format "%Y-%m-%d"`},
		{"%Y-%m-%dT%H:%M:%SZ", "2024-01-01", "does not match"},
		{"%s", "1.5e400", "does not match"},
		{"%s", "1704067200000", "out of the range of dates"},
		{"%ms", "abc", "does not match"},
		{"%j/%Y", "366/2023", "day of the year out of range"},
		{"%Y %Z", "2024 EST", "does not match"},
		{"%Y-%m-%dT%H:%M:%S.%f0", "2024-01-01T10:00:00.1234567", "does not match"},
	} {
		_, err := Strptime(c.text, c.format)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %q: error %v, want %q", c.format, c.text, err, c.want)
		}
	}
	if _, err := Compile("%Y-%Q"); err == nil || err.Error() != `format "%Y-%Q": unsupported directive %Q` {
		t.Errorf("unknown directive: %v", err)
	}
}

func TestFormatWritesPythonText(t *testing.T) {
	at := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for format, want := range map[string]string{
		"%s_as_float": "1704067200.0",
		"%s":          "1704067200",
		"%ms":         "1704067200000",
		"%z":          "+0000",
		"%e":          " 1",
	} {
		if got := Strftime(at, format); got != want {
			t.Errorf("%s: %q, want %q", format, got, want)
		}
	}
	// t's own zone is written: converting to UTC is the caller's choice.
	la := time.Date(2024, 1, 1, 10, 0, 0, 0, time.FixedZone("", -8*3600))
	if got := Strftime(la, "%H:%M%z"); got != "10:00-0800" {
		t.Errorf("offset: %q", got)
	}
}

func TestDurationCalendar(t *testing.T) {
	d, err := ParseDuration("P1M")
	if err != nil {
		t.Fatal(err)
	}
	jan31 := time.Date(2024, 1, 31, 12, 0, 0, 0, time.UTC)
	if got := d.AddTo(jan31); !got.Equal(time.Date(2024, 2, 29, 12, 0, 0, 0, time.UTC)) {
		t.Errorf("Jan 31 + P1M = %v", got)
	}
	if got := d.SubFrom(time.Date(2024, 3, 31, 0, 0, 0, 0, time.UTC)); !got.Equal(time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("Mar 31 - P1M = %v", got)
	}
	ms, _ := ParseDuration("PT0.001S")
	if ms.Fixed != time.Millisecond {
		t.Errorf("PT0.001S = %v", ms.Fixed)
	}
	for _, bad := range []string{"P", "PT", "P1.5M", "1D"} {
		if _, err := ParseDuration(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestInferFormats(t *testing.T) {
	var in Inferrer
	in.Add(map[string]any{"id": int64(1), "day": "2024-01-05", "at": "2024-01-05T10:00:00Z", "ts": int64(1704067200),
		"ms": int64(1704067200123), "name": "x", "mixed": "2024-01-05", "nested": map[string]any{}})
	in.Add(map[string]any{"id": int64(2), "day": "2024-01-06", "at": "2024-01-06T10:00:00.5Z", "ts": "1704067201",
		"ms": int64(1704067200124), "name": "y", "mixed": "later"})
	got := in.Formats()
	want := map[string]string{"day": "%Y-%m-%d", "ts": "%s", "ms": "%ms"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
}

func BenchmarkParseMicros(b *testing.B) {
	l, _ := Compile("%Y-%m-%dT%H:%M:%SZ")
	for i := 0; i < b.N; i++ {
		if _, err := l.ParseMicros("2024-01-01T01:00:00Z"); err != nil {
			b.Fatal(err)
		}
	}
}
