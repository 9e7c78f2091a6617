package interp

import (
	"fmt"
	"strings"
	"time"

	"github.com/airbyte-go/source-declarative/lang/datetime"
)

// Methods of Python's datetime, date and timedelta.

func strftimeMethod(t func(any) time.Time) methodFunc {
	return func(s *state, recv any, a *args) (any, error) {
		if err := a.check("strftime", 1, "format"); err != nil {
			return nil, err
		}
		f, ok, err := argStr(a, 0, "format", "strftime")
		if err != nil || !ok {
			return nil, orTypeErr(err, "strftime() missing required argument 'format'")
		}
		return strftime(t(recv), f)
	}
}

// strftime is Python's strftime of a template's format, bounded by
// MaxOutput as it is written.
func strftime(t time.Time, format string) (string, error) {
	out, ok := datetime.PythonStrftimeMax(t, format, MaxOutput)
	if !ok {
		return "", valueErr("a string longer than %d bytes", MaxOutput)
	}
	return out, nil
}

func asTime(v any) time.Time { return v.(time.Time) }
func asDate(v any) time.Time { return v.(date).t }

func datetimeMethods() map[string]methodFunc {
	return map[string]methodFunc{
		"strftime": strftimeMethod(asTime),
		"isoformat": func(_ *state, recv any, a *args) (any, error) {
			if err := a.check("isoformat", 2, "sep", "timespec"); err != nil {
				return nil, err
			}
			sep, ok, err := argStr(a, 0, "sep", "isoformat")
			if err != nil {
				return nil, err
			}
			if !ok {
				sep = "T"
			}
			spec, ok, err := argStr(a, 1, "timespec", "isoformat")
			if err != nil {
				return nil, err
			}
			if !ok {
				spec = "auto"
			}
			out, err := datetime.PythonISOFormat(asTime(recv), sep, spec)
			if err != nil {
				return nil, valueErr("%s", err.Error())
			}
			return out, nil
		},
		"timestamp": func(_ *state, recv any, a *args) (any, error) {
			return float64(asTime(recv).UnixMicro()) / 1e6, nil
		},
		"date": func(_ *state, recv any, a *args) (any, error) {
			t := asTime(recv)
			return date{time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)}, nil
		},
		"weekday":    func(_ *state, recv any, a *args) (any, error) { return weekday(asTime(recv), 0), nil },
		"isoweekday": func(_ *state, recv any, a *args) (any, error) { return weekday(asTime(recv), 1), nil },
		"replace":    replaceTime(asTime, func(t time.Time) any { return t }),
		"utcoffset": func(_ *state, recv any, a *args) (any, error) {
			_, off := asTime(recv).Zone()
			return time.Duration(off) * time.Second, nil
		},
		"tzname": func(_ *state, recv any, a *args) (any, error) {
			return datetime.PythonStrftime(asTime(recv), "%Z"), nil
		},
		"ctime": func(_ *state, recv any, a *args) (any, error) {
			return datetime.PythonStrftime(asTime(recv), "%a %b %e %H:%M:%S %Y"), nil
		},
	}
}

func dateMethods() map[string]methodFunc {
	return map[string]methodFunc{
		"strftime": strftimeMethod(asDate),
		"isoformat": func(_ *state, recv any, a *args) (any, error) {
			return asDate(recv).Format("2006-01-02"), nil
		},
		"weekday":    func(_ *state, recv any, a *args) (any, error) { return weekday(asDate(recv), 0), nil },
		"isoweekday": func(_ *state, recv any, a *args) (any, error) { return weekday(asDate(recv), 1), nil },
		"replace":    replaceTime(asDate, func(t time.Time) any { return date{t} }),
		"ctime": func(_ *state, recv any, a *args) (any, error) {
			return datetime.PythonStrftime(asDate(recv), "%a %b %e %H:%M:%S %Y"), nil
		},
	}
}

func timedeltaMethods() map[string]methodFunc {
	return map[string]methodFunc{
		"total_seconds": func(_ *state, recv any, a *args) (any, error) {
			return float64(recv.(time.Duration)/time.Microsecond) / 1e6, nil
		},
	}
}

// weekday is Monday 0 (or 1 with from=1).
func weekday(t time.Time, from int) int64 {
	return int64((int(t.Weekday())+6)%7 + from)
}

// replaceTime is datetime.replace(year=, month=, ...) and date.replace.
func replaceTime(get func(any) time.Time, wrap func(time.Time) any) methodFunc {
	return func(_ *state, recv any, a *args) (any, error) {
		t := get(recv)
		fields := []string{"year", "month", "day", "hour", "minute", "second", "microsecond"}
		if _, isDate := recv.(date); isDate {
			fields = fields[:3]
		}
		if err := a.check("replace", len(fields), fields...); err != nil {
			return nil, err
		}
		vals := []int64{int64(t.Year()), int64(t.Month()), int64(t.Day()), int64(t.Hour()), int64(t.Minute()), int64(t.Second()), int64(t.Nanosecond() / 1000)}
		for i, f := range fields {
			n, err := argInt(a, i, f, "replace", vals[i])
			if err != nil {
				return nil, err
			}
			vals[i] = n
		}
		y, mo, d := vals[0], vals[1], vals[2]
		if y < 1 || y > 9999 || mo < 1 || mo > 12 || d < 1 || d > int64(daysIn(int(y), time.Month(mo))) ||
			vals[3] > 23 || vals[4] > 59 || vals[5] > 59 || vals[6] > 999999 || vals[3] < 0 || vals[4] < 0 || vals[5] < 0 || vals[6] < 0 {
			return nil, valueErr("replace(): a field is out of range")
		}
		return wrap(time.Date(int(y), time.Month(mo), int(d), int(vals[3]), int(vals[4]), int(vals[5]), int(vals[6])*1000, t.Location())), nil
	}
}

// fmtDatetimeRepr is repr() of an aware datetime.
func fmtDatetimeRepr(t time.Time) string {
	parts := []string{fmt.Sprint(t.Year()), fmt.Sprint(int(t.Month())), fmt.Sprint(t.Day()), fmt.Sprint(t.Hour()), fmt.Sprint(t.Minute())}
	us := t.Nanosecond() / 1000
	if t.Second() != 0 || us != 0 {
		parts = append(parts, fmt.Sprint(t.Second()))
	}
	if us != 0 {
		parts = append(parts, fmt.Sprint(us))
	}
	tz := "datetime.timezone.utc"
	if _, off := t.Zone(); off != 0 {
		tz = "datetime.timezone(" + timedeltaRepr(time.Duration(off)*time.Second) + ")"
	}
	return "datetime.datetime(" + strings.Join(parts, ", ") + ", tzinfo=" + tz + ")"
}

// timedeltaRepr is repr() of a timedelta.
func timedeltaRepr(d time.Duration) string {
	days := floorDays(d)
	rest := d - time.Duration(days)*24*time.Hour
	var parts []string
	if days != 0 {
		parts = append(parts, fmt.Sprintf("days=%d", days))
	}
	if s := int64(rest / time.Second); s != 0 {
		parts = append(parts, fmt.Sprintf("seconds=%d", s))
	}
	if us := int64(rest % time.Second / time.Microsecond); us != 0 {
		parts = append(parts, fmt.Sprintf("microseconds=%d", us))
	}
	if len(parts) == 0 {
		return "datetime.timedelta(0)"
	}
	return "datetime.timedelta(" + strings.Join(parts, ", ") + ")"
}

// monthDurationString is str() of an isodate Duration.
func monthDurationString(d datetime.Duration) string {
	var parts []string
	if d.Years != 0 {
		parts = append(parts, fmt.Sprintf("%d years", d.Years))
	}
	if d.Months != 0 {
		unit := "months"
		if d.Months <= 1 {
			unit = "month"
		}
		parts = append(parts, fmt.Sprintf("%d %s", d.Months, unit))
	}
	parts = append(parts, datetime.PythonDuration(d.Fixed))
	return strings.Join(parts, ", ")
}
