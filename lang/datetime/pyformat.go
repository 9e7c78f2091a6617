package datetime

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// PythonStrftime formats t as Python's datetime.strftime does on Linux: the
// C library's directives (with the GNU flags -, _, 0 and ^ and a width), plus
// Python's %f, %z and %Z. Unlike Strftime it knows no Airbyte extension: %ms
// is the month followed by "s". An unknown directive is written as it is.
func PythonStrftime(t time.Time, format string) string {
	out, _ := PythonStrftimeMax(t, format, math.MaxInt)
	return out
}

// PythonStrftimeMax is PythonStrftime for a format from an untrusted
// template: it stops once the text is longer than limit bytes (ok false),
// a format of a million %c never making its 24 MB, nor a width of a
// billion its padding.
func PythonStrftimeMax(t time.Time, format string, limit int) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		if b.Len() > limit {
			return "", false
		}
		c := format[i]
		if c != '%' || i+1 >= len(format) {
			b.WriteByte(c)
			continue
		}
		j := i + 1
		flag := byte(0)
		if strings.IndexByte("-_0^#", format[j]) >= 0 {
			flag = format[j]
			j++
		}
		width := 0
		for j < len(format) && format[j] >= '0' && format[j] <= '9' {
			width = min(width*10+int(format[j]-'0'), limit+1) // a wider one is too long anyway
			j++
		}
		if j >= len(format) {
			b.WriteString(format[i:])
			break
		}
		out, ok := directive(t, format[j], flag, width)
		if !ok {
			b.WriteString(format[i : j+1])
		} else {
			b.WriteString(out)
		}
		i = j
	}
	if b.Len() > limit {
		return "", false
	}
	return b.String(), true
}

// directive formats one conversion; ok is false for an unknown one.
func directive(t time.Time, c, flag byte, width int) (string, bool) {
	num := func(n, w int, padding byte) string {
		if flag == '-' {
			return strconv.Itoa(n)
		}
		if flag == '_' {
			padding = ' '
		} else if flag == '0' {
			padding = '0'
		}
		if width > 0 {
			w = width
		}
		s := strconv.Itoa(n)
		neg := n < 0
		if neg {
			s = s[1:]
		}
		if pad := w - boolInt(neg) - len(s); pad > 0 {
			s = strings.Repeat(string(padding), pad) + s
		}
		if neg {
			s = "-" + s
		}
		return s
	}
	text := func(s string) string {
		if flag == '^' || flag == '#' {
			s = strings.ToUpper(s)
		}
		if pad := width - len(s); pad > 0 {
			s = strings.Repeat(" ", pad) + s
		}
		return s
	}
	hour12 := t.Hour() % 12
	if hour12 == 0 {
		hour12 = 12
	}
	isoYear, isoWeek := t.ISOWeek()
	switch c {
	case 'a':
		return text(t.Format("Mon")), true
	case 'A':
		return text(t.Format("Monday")), true
	case 'b', 'h':
		return text(t.Format("Jan")), true
	case 'B':
		return text(t.Format("January")), true
	case 'c':
		return text(PythonStrftime(t, "%a %b %e %H:%M:%S %Y")), true
	case 'C':
		return num(t.Year()/100, 2, '0'), true
	case 'd':
		return num(t.Day(), 2, '0'), true
	case 'D', 'x':
		return text(PythonStrftime(t, "%m/%d/%y")), true
	case 'e':
		return num(t.Day(), 2, ' '), true
	case 'F':
		return text(PythonStrftime(t, "%Y-%m-%d")), true
	case 'f':
		return num(t.Nanosecond()/1000, 6, '0'), true
	case 'g':
		return num(isoYear%100, 2, '0'), true
	case 'G':
		return num(isoYear, 1, '0'), true
	case 'H':
		return num(t.Hour(), 2, '0'), true
	case 'I':
		return num(hour12, 2, '0'), true
	case 'j':
		return num(t.YearDay(), 3, '0'), true
	case 'k':
		return num(t.Hour(), 2, ' '), true
	case 'l':
		return num(hour12, 2, ' '), true
	case 'm':
		return num(int(t.Month()), 2, '0'), true
	case 'M':
		return num(t.Minute(), 2, '0'), true
	case 'n':
		return "\n", true
	case 'p':
		if t.Hour() < 12 {
			return text("AM"), true
		}
		return text("PM"), true
	case 'P':
		if t.Hour() < 12 {
			return "am", true
		}
		return "pm", true
	case 'r':
		return text(PythonStrftime(t, "%I:%M:%S %p")), true
	case 'R':
		return text(PythonStrftime(t, "%H:%M")), true
	case 's':
		wall := time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), 0, time.UTC)
		return strconv.FormatInt(wall.Unix(), 10), true
	case 'S':
		return num(t.Second(), 2, '0'), true
	case 't':
		return "\t", true
	case 'T', 'X':
		return text(PythonStrftime(t, "%H:%M:%S")), true
	case 'u':
		return num((int(t.Weekday())+6)%7+1, 1, '0'), true
	case 'U':
		return num((t.YearDay()+6-int(t.Weekday()))/7, 2, '0'), true
	case 'V':
		return num(isoWeek, 2, '0'), true
	case 'w':
		return num(int(t.Weekday()), 1, '0'), true
	case 'W':
		return num((t.YearDay()+6-(int(t.Weekday())+6)%7)/7, 2, '0'), true
	case 'y':
		return num(t.Year()%100, 2, '0'), true
	case 'Y':
		return num(t.Year(), 1, '0'), true
	case 'z':
		return pythonOffset(t, ""), true
	case 'Z':
		return text(zoneName(t)), true
	case '%':
		return "%", true
	}
	return "", false
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// pythonOffset writes the UTC offset as +HHMM (with sep between hours and
// minutes, and seconds when there are any).
func pythonOffset(t time.Time, sep string) string {
	_, off := t.Zone()
	sign := "+"
	if off < 0 {
		sign, off = "-", -off
	}
	s := fmt.Sprintf("%s%02d%s%02d", sign, off/3600, sep, off%3600/60)
	if off%60 != 0 {
		s += fmt.Sprintf("%s%02d", sep, off%60)
	}
	return s
}

// zoneName is Python's tzname(): UTC for UTC, empty for an unnamed offset.
func zoneName(t time.Time) string {
	name, off := t.Zone()
	if t.Location() == time.UTC || (name == "UTC" && off == 0) {
		return "UTC"
	}
	if name == "" || strings.HasPrefix(name, "+") || strings.HasPrefix(name, "-") {
		return ""
	}
	return name
}

// PythonISOFormat is datetime.isoformat(sep, timespec) of an aware datetime.
func PythonISOFormat(t time.Time, sep, timespec string) (string, error) {
	layout := "2006-01-02" + sep
	switch timespec {
	case "auto":
		if t.Nanosecond()/1000 != 0 {
			layout += "15:04:05.000000"
		} else {
			layout += "15:04:05"
		}
	case "hours":
		layout += "15"
	case "minutes":
		layout += "15:04"
	case "seconds":
		layout += "15:04:05"
	case "milliseconds":
		layout += "15:04:05.000"
	case "microseconds":
		layout += "15:04:05.000000"
	default:
		return "", fmt.Errorf("unknown timespec value")
	}
	return t.Format(layout) + pythonOffset(t, ":"), nil
}

// IsoParse reads a date or date-time as dateutil's isoparse does: YYYY,
// YYYY-MM, YYYY-MM-DD or YYYYMMDD (or an ISO week date), then optionally any
// one separator character and HH[:MM[:SS[.ffffff]]] with an optional Z or
// ±HH[:MM] offset. naive tells that no offset was given (the time is then
// in UTC).
func IsoParse(s string) (t time.Time, naive bool, err error) {
	fail := func() (time.Time, bool, error) {
		return time.Time{}, false, fmt.Errorf("%q is not an ISO 8601 date", s)
	}
	year, month, day, pos, ok := isoDate(s)
	if !ok {
		return fail()
	}
	hour, minute, sec, nsec := 0, 0, 0, 0
	loc := time.UTC
	naive = true
	if pos < len(s) {
		if pos+1 >= len(s) {
			return fail()
		}
		rest := s[pos+1:]
		var tz string
		if i := strings.IndexAny(rest, "Z+-"); i >= 0 {
			rest, tz = rest[:i], rest[i:]
		}
		if hour, minute, sec, nsec, ok = isoTime(rest); !ok {
			return fail()
		}
		if tz != "" {
			if loc, ok = isoZone(tz); !ok {
				return fail()
			}
			naive = false
		}
	}
	extra := time.Duration(0)
	if hour == 24 {
		if minute != 0 || sec != 0 || nsec != 0 {
			return fail()
		}
		hour, extra = 0, 24*time.Hour
	}
	if month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) || hour > 23 || minute > 59 || sec > 59 {
		return fail()
	}
	return time.Date(year, time.Month(month), day, hour, minute, sec, nsec, loc).Add(extra), naive, nil
}

func daysInMonth(year, month int) int {
	return time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

func digits(s string, n int) (int, bool) {
	if len(s) < n {
		return 0, false
	}
	v := 0
	for i := 0; i < n; i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		v = v*10 + int(s[i]-'0')
	}
	return v, true
}

func isoDate(s string) (year, month, day, pos int, ok bool) {
	if year, ok = digits(s, 4); !ok {
		return
	}
	pos, month, day = 4, 1, 1
	if pos >= len(s) {
		return year, month, day, pos, true
	}
	dash := s[pos] == '-'
	if dash {
		pos++
	}
	if pos < len(s) && s[pos] == 'W' {
		week, ok2 := digits(s[pos+1:], 2)
		if !ok2 {
			return 0, 0, 0, 0, false
		}
		pos += 3
		weekday := 1
		if pos < len(s) && ((dash && s[pos] == '-') || (!dash && s[pos] >= '0' && s[pos] <= '9')) {
			if dash {
				pos++
			}
			if weekday, ok2 = digits(s[pos:], 1); !ok2 || weekday < 1 || weekday > 7 {
				return 0, 0, 0, 0, false
			}
			pos++
		}
		jan4 := time.Date(year, 1, 4, 0, 0, 0, 0, time.UTC)
		monday := jan4.AddDate(0, 0, -((int(jan4.Weekday()) + 6) % 7))
		d := monday.AddDate(0, 0, (week-1)*7+weekday-1)
		return d.Year(), int(d.Month()), d.Day(), pos, true
	}
	if month, ok = digits(s[pos:], 2); !ok {
		return 0, 0, 0, 0, false
	}
	pos += 2
	if pos >= len(s) {
		return year, month, day, pos, dash
	}
	if dash {
		if s[pos] != '-' {
			return year, month, day, pos, true
		}
		pos++
	}
	if day, ok = digits(s[pos:], 2); !ok {
		if dash {
			return 0, 0, 0, 0, false
		}
		return year, month, 1, pos, false
	}
	return year, month, day, pos + 2, true
}

func isoTime(s string) (hour, minute, sec, nsec int, ok bool) {
	if hour, ok = digits(s, 2); !ok {
		return
	}
	s = s[2:]
	colon := strings.HasPrefix(s, ":")
	if colon {
		s = s[1:]
	}
	if s == "" {
		return hour, 0, 0, 0, !colon
	}
	if minute, ok = digits(s, 2); !ok {
		return
	}
	s = s[2:]
	if s == "" {
		return hour, minute, 0, 0, true
	}
	if colon {
		if s[0] != ':' {
			return 0, 0, 0, 0, false
		}
		s = s[1:]
	}
	if sec, ok = digits(s, 2); !ok {
		return
	}
	s = s[2:]
	if s == "" {
		return hour, minute, sec, 0, true
	}
	if s[0] != '.' && s[0] != ',' {
		return 0, 0, 0, 0, false
	}
	s = s[1:]
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	if n == 0 || n != len(s) {
		return 0, 0, 0, 0, false
	}
	frac := s[:min(n, 6)]
	us, _ := strconv.Atoi(frac)
	for i := len(frac); i < 6; i++ {
		us *= 10
	}
	return hour, minute, sec, us * 1000, true
}

func isoZone(tz string) (*time.Location, bool) {
	if tz == "Z" {
		return time.UTC, true
	}
	sign := 1
	if tz[0] == '-' {
		sign = -1
	}
	tz = tz[1:]
	h, ok := digits(tz, 2)
	if !ok {
		return nil, false
	}
	tz = tz[2:]
	m := 0
	if tz != "" {
		tz = strings.TrimPrefix(tz, ":")
		if m, ok = digits(tz, 2); !ok || len(tz) != 2 {
			return nil, false
		}
	}
	if h > 23 || m > 59 {
		return nil, false
	}
	off := sign * (h*3600 + m*60)
	if off == 0 {
		return time.UTC, true
	}
	return time.FixedZone("", off), true
}
