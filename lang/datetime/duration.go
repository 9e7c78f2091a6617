package datetime

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Duration is an ISO 8601 duration; years and months are kept apart because
// their length depends on the date they are added to.
type Duration struct {
	Years, Months int
	Fixed         time.Duration
}

// ParseDuration reads an ISO 8601 duration such as PT1H, P1D, P2W, P1M or
// PT0.001S: P, then years, months, weeks and days, then T and hours, minutes
// and seconds, each part optional but in that order. Years and months must be
// whole numbers. (A scanner, not a regular expression: one compiled at start-up
// cost every run ~0.5 ms.)
func ParseDuration(s string) (Duration, error) {
	values, ok := durationParts(s)
	if !ok {
		return Duration{}, fmt.Errorf("%q is not an ISO 8601 duration (such as PT1H or P1D)", s)
	}
	d := Duration{Years: int(values[0]), Months: int(values[1])}
	secs := values[2]*7*86400 + values[3]*86400 + values[4]*3600 + values[5]*60 + values[6]
	d.Fixed = time.Duration(secs*1e6+0.5) * time.Microsecond
	return d, nil
}

// durationDesignators are the letters after each part of a duration: the
// date's (years, months, weeks, days), then the time's after T (hours,
// minutes, seconds).
const durationDesignators = "YMWDHMS"

// durationParts reads the value of each part of a duration, in the order of
// durationDesignators.
func durationParts(s string) (values [7]float64, ok bool) {
	rest, isDuration := strings.CutPrefix(s, "P")
	if !isDuration || rest == "" || rest == "T" {
		return values, false
	}
	next, end := 0, 4 // the parts still allowed: durationDesignators[next:end]
	for rest != "" {
		if rest[0] == 'T' {
			if end == 7 {
				return values, false
			}
			next, end, rest = 4, 7, rest[1:]
			continue
		}
		n, whole := numberPrefix(rest)
		if n == 0 || n == len(rest) {
			return values, false
		}
		i := strings.IndexByte(durationDesignators[next:end], rest[n])
		if i < 0 {
			return values, false
		}
		i += next
		if i <= 1 && !whole {
			return values, false // years and months are whole numbers
		}
		values[i], _ = strconv.ParseFloat(rest[:n], 64)
		next, rest = i+1, rest[n+1:]
	}
	return values, true
}

// numberPrefix is the length of the number s starts with (digits, and a
// point and digits), and whether it has no point.
func numberPrefix(s string) (n int, whole bool) {
	digits := func(from int) int {
		i := from
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i
	}
	n = digits(0)
	if n == 0 || n+1 >= len(s) || s[n] != '.' {
		return n, true
	}
	if frac := digits(n + 1); frac > n+1 {
		return frac, false
	}
	return n, true
}

// IsZero tells whether the duration is empty.
func (d Duration) IsZero() bool { return d.Years == 0 && d.Months == 0 && d.Fixed == 0 }

// AddTo returns t plus the duration. Years and months move the calendar date
// and keep the day, brought back to the month's last day when the month is
// shorter (2024-01-31 plus P1M is 2024-02-29), as Python's isodate does.
func (d Duration) AddTo(t time.Time) time.Time {
	return addMonths(t, d.Years*12+d.Months).Add(d.Fixed)
}

// SubFrom returns t minus the duration.
func (d Duration) SubFrom(t time.Time) time.Time {
	return addMonths(t, -(d.Years*12 + d.Months)).Add(-d.Fixed)
}

func addMonths(t time.Time, months int) time.Time {
	if months == 0 {
		return t
	}
	total := t.Year()*12 + int(t.Month()) - 1 + months
	year, month := total/12, time.Month(total%12+1)
	day := min(t.Day(), DaysIn(year, month))
	return time.Date(year, month, day, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), t.Location())
}

// AddMicros adds the duration to an instant in microseconds since the epoch (UTC).
func (d Duration) AddMicros(us int64) int64 {
	if d.Years == 0 && d.Months == 0 {
		return us + d.Fixed.Microseconds()
	}
	return d.AddTo(time.UnixMicro(us).UTC()).UnixMicro()
}

// SubMicros subtracts the duration from an instant in microseconds (UTC).
func (d Duration) SubMicros(us int64) int64 {
	if d.Years == 0 && d.Months == 0 {
		return us - d.Fixed.Microseconds()
	}
	return d.SubFrom(time.UnixMicro(us).UTC()).UnixMicro()
}
