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

// Strftime formats t with a Python strftime format, plus Airbyte's %s, %ms,
// %s_as_float, %epoch_microseconds and %_ms.
func Strftime(t time.Time, format string) string {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' || i+1 >= len(format) {
			b.WriteByte(c)
			continue
		}
		rest := format[i+1:]
		switch {
		case strings.HasPrefix(rest, "s_as_float"):
			b.WriteString(strconv.FormatFloat(float64(t.UnixMicro())/1e6, 'f', -1, 64))
			i += len("s_as_float")
			continue
		case strings.HasPrefix(rest, "epoch_microseconds"):
			b.WriteString(strconv.FormatInt(t.UnixMicro(), 10))
			i += len("epoch_microseconds")
			continue
		case strings.HasPrefix(rest, "ms"):
			b.WriteString(strconv.FormatInt(t.UnixMilli(), 10))
			i += 2
			continue
		case strings.HasPrefix(rest, "_ms"):
			fmt.Fprintf(&b, "%03d", t.Nanosecond()/1e6)
			i += 3
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
			h := t.Hour() % 12
			if h == 0 {
				h = 12
			}
			fmt.Fprintf(&b, "%02d", h)
		case 'p':
			if t.Hour() < 12 {
				b.WriteString("AM")
			} else {
				b.WriteString("PM")
			}
		case 'M':
			fmt.Fprintf(&b, "%02d", t.Minute())
		case 'S':
			fmt.Fprintf(&b, "%02d", t.Second())
		case 'f':
			fmt.Fprintf(&b, "%06d", t.Nanosecond()/1000)
		case 'z':
			b.WriteString(t.Format("-0700"))
		case 'Z':
			b.WriteString(t.Format("MST"))
		case 'j':
			fmt.Fprintf(&b, "%03d", t.YearDay())
		case 'a':
			b.WriteString(t.Format("Mon"))
		case 'A':
			b.WriteString(t.Format("Monday"))
		case 'b', 'h':
			b.WriteString(t.Format("Jan"))
		case 'B':
			b.WriteString(t.Format("January"))
		case 's':
			b.WriteString(strconv.FormatInt(t.Unix(), 10))
		case 'T':
			b.WriteString(t.Format("15:04:05"))
		case 'F':
			b.WriteString(t.Format("2006-01-02"))
		case '%':
			b.WriteByte('%')
		default:
			b.WriteByte('%')
			b.WriteByte(format[i])
		}
	}
	return b.String()
}

// Strptime parses s with a Python strptime format (and Airbyte's %s and %ms).
// A value without a zone is UTC.
func Strptime(s, format string) (time.Time, error) {
	year, month, day, hour, min, sec, nsec := 1900, 1, 1, 0, 0, 0, 0
	loc := time.UTC
	pm, hasPM := false, false
	in := s
	fail := func() (time.Time, error) {
		return time.Time{}, fmt.Errorf("%q does not match format %q", s, format)
	}
	num := func(maxDigits int) (int, bool) {
		n := 0
		neg := false
		if maxDigits > 0 && len(in) > 0 && (in[0] == '-' || in[0] == '+') && maxDigits > 4 {
			neg = in[0] == '-'
			in = in[1:]
		}
		i := 0
		for i < len(in) && i < maxDigits && in[i] >= '0' && in[i] <= '9' {
			n = n*10 + int(in[i]-'0')
			i++
		}
		if i == 0 {
			return 0, false
		}
		in = in[i:]
		if neg {
			n = -n
		}
		return n, true
	}
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' || i+1 >= len(format) {
			if len(in) == 0 || in[0] != c {
				return fail()
			}
			in = in[1:]
			continue
		}
		rest := format[i+1:]
		if strings.HasPrefix(rest, "ms") {
			v, ok := num(19)
			if !ok {
				return fail()
			}
			t := time.UnixMilli(int64(v)).UTC()
			year, month, day, hour, min, sec, nsec = t.Year(), int(t.Month()), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond()
			i += 2
			continue
		}
		i++
		var ok bool
		switch format[i] {
		case 'Y':
			year, ok = num(4)
		case 'y':
			year, ok = num(2)
			year += 2000
			if year > 2068 {
				year -= 100
			}
		case 'm':
			month, ok = num(2)
		case 'd':
			day, ok = num(2)
		case 'H', 'I':
			hour, ok = num(2)
		case 'M':
			min, ok = num(2)
		case 'S':
			sec, ok = num(2)
		case 'j':
			var yd int
			yd, ok = num(3)
			month, day = 1, yd
		case 'f':
			start := len(in)
			var f int
			f, ok = num(9)
			digits := start - len(in)
			for ; digits < 9; digits++ {
				f *= 10
			}
			nsec = f
		case 'p':
			hasPM = true
			switch {
			case strings.HasPrefix(strings.ToUpper(in), "AM"):
				in, ok = in[2:], true
			case strings.HasPrefix(strings.ToUpper(in), "PM"):
				in, ok, pm = in[2:], true, true
			}
		case 's':
			var v int
			v, ok = num(19)
			t := time.Unix(int64(v), 0).UTC()
			year, month, day, hour, min, sec = t.Year(), int(t.Month()), t.Day(), t.Hour(), t.Minute(), t.Second()
		case 'z':
			if strings.HasPrefix(in, "Z") {
				in, ok = in[1:], true
				break
			}
			if len(in) < 5 || (in[0] != '+' && in[0] != '-') {
				return fail()
			}
			sign := 1
			if in[0] == '-' {
				sign = -1
			}
			in = in[1:]
			var h, m int
			h, ok = num(2)
			if ok && strings.HasPrefix(in, ":") {
				in = in[1:]
			}
			m, ok2 := num(2)
			ok = ok && ok2
			loc = time.FixedZone("", sign*(h*3600+m*60))
		case 'Z':
			j := 0
			for j < len(in) && ((in[j] >= 'A' && in[j] <= 'Z') || (in[j] >= 'a' && in[j] <= 'z')) {
				j++
			}
			ok = j > 0
			in = in[j:]
		case 'b', 'h', 'B':
			for m := time.January; m <= time.December; m++ {
				for _, name := range []string{m.String(), m.String()[:3]} {
					if strings.HasPrefix(strings.ToLower(in), strings.ToLower(name)) {
						month, in, ok = int(m), in[len(name):], true
						break
					}
				}
				if ok {
					break
				}
			}
		case 'a', 'A':
			for d := time.Sunday; d <= time.Saturday; d++ {
				for _, name := range []string{d.String(), d.String()[:3]} {
					if strings.HasPrefix(strings.ToLower(in), strings.ToLower(name)) {
						in, ok = in[len(name):], true
						break
					}
				}
				if ok {
					break
				}
			}
		case 'T':
			var t time.Time
			t, err := Strptime(in[:min8(len(in))], "%H:%M:%S")
			if err == nil {
				hour, min, sec = t.Hour(), t.Minute(), t.Second()
				in, ok = in[8:], true
			}
		case '%':
			ok = strings.HasPrefix(in, "%")
			if ok {
				in = in[1:]
			}
		default:
			return time.Time{}, fmt.Errorf("unsupported directive %%%c in format %q", format[i], format)
		}
		if !ok {
			return fail()
		}
	}
	if in != "" {
		return fail()
	}
	if hasPM {
		hour %= 12
		if pm {
			hour += 12
		}
	}
	if month < 1 || month > 12 || day < 1 || day > 366 || hour > 23 || min > 59 || sec > 60 {
		return fail()
	}
	return time.Date(year, time.Month(month), day, hour, min, sec, nsec, loc), nil
}

func min8(n int) int {
	if n < 8 {
		return n
	}
	return 8
}

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
