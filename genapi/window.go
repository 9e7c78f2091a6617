package genapi

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The API places a page's cursor values inside the time window its request
// asks for, as a real API filters by the window: the window is the earliest
// and the latest date or time the request carries (path, query, body).

// window is the time range a request asks for; ok is false when it names no
// time.
type window struct {
	start, end time.Time
	ok         bool
}

// windowOf reads the window of a request's values.
func windowOf(values []string) window {
	var w window
	var times []time.Time
	for _, v := range values {
		if t, ok := parseTime(v); ok {
			times = append(times, t)
			continue
		}
		for _, s := range isoTime.FindAllString(v, -1) {
			if t, ok := parseTime(s); ok {
				times = append(times, t)
			}
		}
	}
	for _, t := range times {
		if !w.ok || t.Before(w.start) {
			w.start = t
		}
		if !w.ok || t.After(w.end) {
			w.end = t
		}
		w.ok = true
	}
	return w
}

// cursorTimes are the first record's cursor time and the time between two
// records of a page of n: inside the window, an hour apart or closer; the
// day before today at noon, a minute apart, without a window. The window's
// length is first cut down to whole hours (whole minutes under an hour), so
// that a window ending now gives the same records to two runs a few seconds
// apart.
func (w window) cursorTimes(n int, today time.Time) (time.Time, time.Duration) {
	if !w.ok {
		return today.AddDate(0, 0, -1).Add(12 * time.Hour), time.Minute
	}
	span := w.end.Sub(w.start)
	if span >= time.Hour {
		span = span.Truncate(time.Hour)
	} else {
		span = span.Truncate(time.Minute)
	}
	step := time.Hour
	if span > 0 && span/time.Duration(n+1) < step {
		step = span / time.Duration(n+1)
	}
	if span <= 0 {
		step = time.Minute
	}
	if step < time.Second {
		step = time.Second
	}
	return w.start.Add(step), step
}

// isoTime finds ISO 8601 times inside a text (a query's filter expression,
// `updated_at:[2024-01-01T00:00:00Z TO 2024-01-02T00:00:00Z]`).
var isoTime = regexp.MustCompile(`\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?`)

// epochTime finds epoch seconds (2001 to 2096) or milliseconds inside a
// value ("[1796342400, 1796619999]"), as parseTime reads a whole one.
var epochTime = regexp.MustCompile(`\b[1-3]\d{9}(\d{3})?\b`)

// timeLayouts are the shapes of dates and times requests carry.
var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999Z0700",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02",
	"02-01-2006",
	"20060102T150405Z",
}

// parseTime reads a date or time in one of timeLayouts, or unix seconds or
// milliseconds of the years 2001 to 2096.
func parseTime(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if len(s) < 8 || len(s) > 40 {
		return time.Time{}, false
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		switch {
		case n >= 1e9 && n < 4e9:
			return time.Unix(n, 0).UTC(), true
		case n >= 1e12 && n < 4e12:
			return time.UnixMilli(n).UTC(), true
		}
		return time.Time{}, false
	}
	for _, l := range timeLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// strftime formats t as Python's strftime does for the directives manifests
// use, with Airbyte's epoch formats (%s, %ms, %s_as_float,
// %epoch_microseconds); another directive is written as it is.
func strftime(t time.Time, format string) string {
	switch format {
	case "%s":
		return strconv.FormatInt(t.Unix(), 10)
	case "%ms":
		return strconv.FormatInt(t.UnixMilli(), 10)
	case "%s_as_float":
		return strconv.FormatFloat(float64(t.UnixMicro())/1e6, 'f', -1, 64)
	case "%epoch_microseconds":
		return strconv.FormatInt(t.UnixMicro(), 10)
	}
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' || i+1 == len(format) {
			b.WriteByte(c)
			continue
		}
		i++
		switch format[i] {
		case 'Y':
			fmt.Fprintf(&b, "%04d", t.Year())
		case 'y':
			fmt.Fprintf(&b, "%02d", t.Year()%100)
		case 'm':
			fmt.Fprintf(&b, "%02d", int(t.Month()))
		case 'd':
			fmt.Fprintf(&b, "%02d", t.Day())
		case 'H':
			fmt.Fprintf(&b, "%02d", t.Hour())
		case 'I':
			fmt.Fprintf(&b, "%02d", (t.Hour()+11)%12+1)
		case 'p':
			b.WriteString(t.Format("PM"))
		case 'M':
			fmt.Fprintf(&b, "%02d", t.Minute())
		case 'S':
			fmt.Fprintf(&b, "%02d", t.Second())
		case 'f':
			fmt.Fprintf(&b, "%06d", t.Nanosecond()/1000)
		case 'j':
			fmt.Fprintf(&b, "%03d", t.YearDay())
		case 'z':
			b.WriteString(t.Format("-0700"))
		case 'Z':
			b.WriteString(t.Format("MST"))
		case 'b':
			b.WriteString(t.Format("Jan"))
		case 'B':
			b.WriteString(t.Format("January"))
		case 'a':
			b.WriteString(t.Format("Mon"))
		case 'A':
			b.WriteString(t.Format("Monday"))
		case '%':
			b.WriteByte('%')
		default:
			b.WriteByte('%')
			b.WriteByte(format[i])
		}
	}
	return b.String()
}
