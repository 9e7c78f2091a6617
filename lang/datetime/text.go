// Package datetime reads and writes dates and times as the reference does:
// Python strftime/strptime formats with Airbyte's epoch formats, ISO 8601
// dates and durations, and Python's text forms of datetimes and timedeltas.
package datetime

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ParseDatetime reads a date or date-time the way Airbyte does: ISO 8601 with
// or without zone (UTC when absent), a date alone, or unix seconds.
func ParseDatetime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, fmt.Errorf("empty date")
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil && len(s) <= 10 && n >= 0 {
		return time.Unix(n, 0).UTC(), nil
	}
	layouts := []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999Z0700", "2006-01-02T15:04:05.999999999",
		"2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999Z0700", "2006-01-02 15:04:05.999999999",
		"2006-01-02T15:04Z07:00", "2006-01-02T15:04", "2006-01-02", time.RFC1123Z, time.RFC1123}
	for _, l := range layouts {
		if t, err := time.Parse(l, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a date", s)
}

// PythonString renders a time as Python's str(datetime) does.
func PythonString(t time.Time) string {
	s := t.Format("2006-01-02 15:04:05")
	if us := t.Nanosecond() / 1000; us != 0 {
		s += fmt.Sprintf(".%06d", us)
	}
	return s + t.Format("-07:00")
}

// PythonDuration renders a duration as Python's str(timedelta) does: whole
// days (negative for a negative duration), then a positive time of day.
func PythonDuration(d time.Duration) string {
	const day = int64(24 * time.Hour / time.Microsecond)
	us := int64(d / time.Microsecond)
	days, rem := us/day, us%day
	if rem < 0 {
		rem += day
		days--
	}
	out := fmt.Sprintf("%d:%02d:%02d", rem/3600e6, rem/60e6%60, rem/1e6%60)
	if frac := rem % 1e6; frac != 0 {
		out += fmt.Sprintf(".%06d", frac)
	}
	if days != 0 {
		unit := "days"
		if days == 1 || days == -1 {
			unit = "day"
		}
		out = fmt.Sprintf("%d %s, %s", days, unit, out)
	}
	return out
}
