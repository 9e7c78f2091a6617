package datetime

import (
	"fmt"
	"regexp"
	"strconv"
	"time"
)

// Duration is an ISO 8601 duration; years and months are kept apart because
// their length depends on the date they are added to.
type Duration struct {
	Years, Months int
	Fixed         time.Duration
}

var isoDuration = regexp.MustCompile(`^P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)W)?(?:(\d+(?:\.\d+)?)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$`)

// ParseDuration reads an ISO 8601 duration such as PT1H, P1D, P2W, P1M or
// PT0.001S. Years and months must be whole numbers.
func ParseDuration(s string) (Duration, error) {
	m := isoDuration.FindStringSubmatch(s)
	if m == nil || s == "P" || s == "PT" {
		return Duration{}, fmt.Errorf("%q is not an ISO 8601 duration (such as PT1H or P1D)", s)
	}
	f := func(i int) float64 {
		if m[i] == "" {
			return 0
		}
		v, _ := strconv.ParseFloat(m[i], 64)
		return v
	}
	d := Duration{Years: int(f(1)), Months: int(f(2))}
	secs := f(3)*7*86400 + f(4)*86400 + f(5)*3600 + f(6)*60 + f(7)
	d.Fixed = time.Duration(secs*1e6+0.5) * time.Microsecond
	return d, nil
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
