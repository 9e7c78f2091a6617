package datetime

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Layout is a Python strftime/strptime format compiled once, with Airbyte's
// extensions: the whole-format epochs %s, %s_as_float, %ms and
// %epoch_microseconds, and %_ms (milliseconds, three digits) anywhere.
type Layout struct {
	format string
	epoch  epochKind
	tokens []token
}

type epochKind int

const (
	notEpoch epochKind = iota
	epochSeconds
	epochFloat
	epochMillis
	epochMicros
)

// token is a literal (dir 0) or a directive letter; '_' stands for %_ms.
type token struct {
	dir byte
	lit string
}

// Expansions of the composite directives, as in the C locale.
var composite = map[byte]string{
	'c': "%a %b %e %H:%M:%S %Y",
	'x': "%m/%d/%y",
	'X': "%H:%M:%S",
	'T': "%H:%M:%S",
	'F': "%Y-%m-%d",
	'D': "%m/%d/%y",
	'R': "%H:%M",
}

const directives = "aAwdbhBmyYHIpMSfzZjUWs%e"

// epochFormats are the formats that stand for a whole epoch value.
var epochFormats = map[string]epochKind{"%s": epochSeconds, "%s_as_float": epochFloat, "%ms": epochMillis, "%epoch_microseconds": epochMicros}

// Compile reads a format. An unknown directive is an error.
func Compile(format string) (*Layout, error) {
	l := &Layout{format: format}
	if kind, ok := epochFormats[format]; ok {
		l.epoch = kind
		return l, nil
	}
	if err := l.compile(format, 0); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *Layout) compile(format string, depth int) error {
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			l.tokens = append(l.tokens, token{lit: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' {
			lit.WriteByte(c)
			continue
		}
		if strings.HasPrefix(format[i:], "%_ms") {
			flush()
			l.tokens = append(l.tokens, token{dir: '_'})
			i += 3
			continue
		}
		if i+1 >= len(format) {
			return fmt.Errorf("format %q ends with a lone %%", l.format)
		}
		i++
		d := format[i]
		if exp, ok := composite[d]; ok && depth == 0 {
			flush()
			if err := l.compile(exp, 1); err != nil {
				return err
			}
			continue
		}
		if d == '%' {
			lit.WriteByte('%')
			continue
		}
		if !strings.ContainsRune(directives, rune(d)) {
			return fmt.Errorf("format %q: unsupported directive %%%c", l.format, d)
		}
		flush()
		l.tokens = append(l.tokens, token{dir: d})
	}
	flush()
	return nil
}

// String is the format as written.
func (l *Layout) String() string { return l.format }

// Shape describes the text of a layout whose values sort as their dates do:
// fixed-width fields from the year down (%Y %m %d %H %M %S, then %f or
// %_ms) between literals, with no zone. Pattern holds 0 where a digit goes
// and the literal byte elsewhere; ok is false for any other layout. Two texts
// that fit the pattern compare as bytes as their dates compare.
func (l *Layout) Shape() (pattern []byte, ok bool) {
	if l.epoch != notEpoch {
		return nil, false
	}
	order := "YmdHMS"
	next := 0
	for _, tk := range l.tokens {
		width := 0
		switch tk.dir {
		case 0:
			pattern = append(pattern, tk.lit...)
			continue
		case 'Y':
			width = 4
		case 'm', 'd', 'H', 'M', 'S':
			width = 2
		case 'f':
			width = 6
		case '_':
			width = 3
		default:
			return nil, false
		}
		if tk.dir == 'f' || tk.dir == '_' {
			if next != len(order) {
				return nil, false
			}
			next++
		} else if next >= len(order) || order[next] != tk.dir {
			return nil, false
		} else {
			next++
		}
		for range width {
			pattern = append(pattern, 0)
		}
	}
	return pattern, next > 0
}

// Python's datetime covers years 1 to 9999.
var (
	minMicros = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	maxMicros = time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC).UnixMicro()
)

var errRange = errors.New("out of the range of dates (years 1 to 9999)")

// Parse reads s. A value without a zone is UTC; a value with an offset keeps it.
func (l *Layout) Parse(s string) (time.Time, error) {
	us, offset, err := l.parse(s)
	if err != nil {
		return time.Time{}, err
	}
	t := time.UnixMicro(us).UTC()
	if offset != 0 {
		t = t.In(time.FixedZone("", offset))
	}
	return t, nil
}

// ParseMicros reads s as microseconds since the Unix epoch (the instant,
// whatever the offset written).
func (l *Layout) ParseMicros(s string) (int64, error) {
	us, _, err := l.parse(s)
	return us, err
}

func (l *Layout) mismatch(s string) error {
	return fmt.Errorf("%q does not match format %q", s, l.format)
}

func (l *Layout) parse(s string) (us int64, offset int, err error) {
	if l.epoch != notEpoch {
		us, err = parseEpoch(s, l.epoch)
		if err == nil && (us < minMicros || us > maxMicros) {
			err = errRange
		}
		switch {
		case err == errRange:
			return 0, 0, fmt.Errorf("%q (format %q) is %v", s, l.format, errRange)
		case err != nil:
			return 0, 0, l.mismatch(s)
		}
		return us, 0, nil
	}
	p, ok := parser{in: s, year: 1900, month: 1, day: 1, weekday: -1, week: -1}.run(l.tokens)
	if !ok || p.in != "" {
		return 0, 0, l.mismatch(s)
	}
	us, err = p.micros()
	if err != nil {
		return 0, 0, fmt.Errorf("%q (format %q): %v", s, l.format, err)
	}
	return us, p.offset, nil
}

func parseEpoch(s string, kind epochKind) (int64, error) {
	s = strings.TrimSpace(s)
	switch kind {
	case epochFloat:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || f != f {
			return 0, errors.New("not a number")
		}
		if f*1e6 > float64(maxMicros) || f*1e6 < float64(minMicros) {
			return 0, errRange
		}
		return int64(f * 1e6), nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		// a JSON number written with a fraction or an exponent
		f, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil || f != f || strings.ContainsAny(s, " _") {
			return 0, err
		}
		n = int64(f)
	}
	unit := int64(1)
	switch kind {
	case epochSeconds:
		unit = 1e6
	case epochMillis:
		unit = 1e3
	}
	if n > maxMicros/unit || n < minMicros/unit {
		return 0, errRange
	}
	return n * unit, nil
}

// run reads the tokens in turn, as Python's strptime matches its regular
// expression: a directive reading a number of digits takes as many as it
// can, and gives some back when the tokens after it cannot read what
// follows (`%S.%f0` reads `05.1234560` as 123456 microseconds and a 0).
// What is left after the last token is the caller's to refuse, as Python
// refuses it ("unconverted data remains") without looking for a shorter
// reading.
func (p parser) run(tokens []token) (parser, bool) {
	if len(tokens) == 0 {
		return p, true
	}
	q := p
	if !q.token(tokens[0]) {
		return p, false
	}
	if r, ok := q.run(tokens[1:]); ok {
		return r, true
	}
	if !strings.ContainsRune(variableDigits, rune(tokens[0].dir)) {
		return p, false
	}
	for n := len(p.in) - len(q.in) - 1; n >= 1; n-- {
		q = p
		q.limit = n
		if !q.token(tokens[0]) {
			continue
		}
		if r, ok := q.run(tokens[1:]); ok {
			return r, true
		}
	}
	return p, false
}

// variableDigits are the directives reading a number of digits that may
// give some back (run).
const variableDigits = "mdeHIMSf_jUW"

// parser holds the fields read so far.
type parser struct {
	// limit, when above 0, is the most digits the next number may take.
	limit                       int
	in                          string
	year, month, day            int
	hour, minute, second, micro int
	yday                        int
	weekday, week               int // Monday=0; -1 when not read
	weekStartsMonday            bool
	pm, hasPM                   bool
	offset                      int
	epoch                       *int64
}

func (p *parser) token(tk token) bool {
	if tk.dir == 0 {
		return p.literal(tk.lit)
	}
	var ok bool
	switch tk.dir {
	case 'Y':
		p.year, ok = p.digits(4, 4)
	case 'y':
		var y int
		if y, ok = p.digits(2, 2); ok {
			p.year = 2000 + y
			if y >= 69 {
				p.year = 1900 + y
			}
		}
	case 'm':
		p.month, ok = p.digits(1, 2)
	case 'd', 'e':
		p.in = strings.TrimLeft(p.in, " ")
		p.day, ok = p.digits(1, 2)
	case 'H':
		p.hour, ok = p.digits(1, 2)
	case 'I':
		p.hour, ok = p.digits(1, 2)
		ok = ok && p.hour >= 1 && p.hour <= 12
	case 'M':
		p.minute, ok = p.digits(1, 2)
	case 'S':
		p.second, ok = p.digits(1, 2)
	case 'f', '_':
		ok = p.fraction()
	case 'j':
		p.yday, ok = p.digits(1, 3)
		ok = ok && p.yday >= 1
	case 'w':
		var w int
		w, ok = p.digits(1, 1)
		ok = ok && w <= 6
		p.weekday = (w + 6) % 7
	case 'U', 'W':
		p.week, ok = p.digits(1, 2)
		ok = ok && p.week <= 53
		p.weekStartsMonday = tk.dir == 'W'

	case 'p':
		p.hasPM = true
		switch {
		case hasPrefixFold(p.in, "AM"):
			p.in, ok = p.in[2:], true
		case hasPrefixFold(p.in, "PM"):
			p.in, ok, p.pm = p.in[2:], true, true
		}
	case 'b', 'h', 'B':
		for m := time.January; m <= time.December && !ok; m++ {
			if n := m.String(); hasPrefixFold(p.in, n) {
				p.month, p.in, ok = int(m), p.in[len(n):], true
			} else if hasPrefixFold(p.in, n[:3]) {
				p.month, p.in, ok = int(m), p.in[3:], true
			}
		}
	case 'a', 'A':
		for d := time.Sunday; d <= time.Saturday && !ok; d++ {
			if n := d.String(); hasPrefixFold(p.in, n) {
				p.in, ok = p.in[len(n):], true
			} else if hasPrefixFold(p.in, n[:3]) {
				p.in, ok = p.in[3:], true
			}
			if ok {
				p.weekday = (int(d) + 6) % 7
			}
		}
	case 'z':
		ok = p.zone()
	case 'Z':
		for _, name := range []string{"UTC", "GMT", "Z"} {
			if hasPrefixFold(p.in, name) {
				p.in, ok = p.in[len(name):], true
				break
			}
		}
	case 's':
		i := 0
		if i < len(p.in) && p.in[i] == '-' {
			i++
		}
		for i < len(p.in) && p.in[i] >= '0' && p.in[i] <= '9' {
			i++
		}
		n, err := strconv.ParseInt(p.in[:i], 10, 64)
		if ok = err == nil && n < maxMicros/1e6 && n > minMicros/1e6; ok {
			us := n * 1e6
			p.epoch, p.in = &us, p.in[i:]
		}
	}
	return ok
}

// literal matches format text: ASCII letters without regard to case, and a
// run of spaces matches one or more whitespace characters, as Python does.
func (p *parser) literal(lit string) bool {
	for i := 0; i < len(lit); i++ {
		c := lit[i]
		if c == ' ' {
			for i+1 < len(lit) && lit[i+1] == ' ' {
				i++
			}
			n := len(p.in) - len(strings.TrimLeft(p.in, " \t\n\r\f\v"))
			if n == 0 {
				return false
			}
			p.in = p.in[n:]
			continue
		}
		if len(p.in) == 0 || lower(p.in[0]) != lower(c) {
			return false
		}
		p.in = p.in[1:]
	}
	return true
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// digits reads between min and max decimal digits.
func (p *parser) digits(min, max int) (int, bool) {
	if p.limit > 0 && p.limit < max {
		max = p.limit
	}
	p.limit = 0
	n, i := 0, 0
	for i < len(p.in) && i < max && p.in[i] >= '0' && p.in[i] <= '9' {
		n = n*10 + int(p.in[i]-'0')
		i++
	}
	if i < min {
		return 0, false
	}
	p.in = p.in[i:]
	return n, true
}

// fraction reads 1 to 9 digits of a second, kept to the microsecond.
func (p *parser) fraction() bool {
	start := len(p.in)
	f, ok := p.digits(1, 9)
	if !ok {
		return false
	}
	for n := start - len(p.in); n < 9; n++ {
		f *= 10
	}
	p.micro = f / 1000
	return true
}

// zone reads Z, ±HH, ±HHMM, ±HH:MM, with optional seconds.
func (p *parser) zone() bool {
	if len(p.in) > 0 && (p.in[0] == 'Z' || p.in[0] == 'z') {
		p.in = p.in[1:]
		return true
	}
	if len(p.in) < 3 || (p.in[0] != '+' && p.in[0] != '-') {
		return false
	}
	sign := 1
	if p.in[0] == '-' {
		sign = -1
	}
	p.in = p.in[1:]
	h, ok := p.digits(2, 2)
	if !ok || h > 23 {
		return false
	}
	parts := []int{h}
	for len(parts) < 3 {
		rest := strings.TrimPrefix(p.in, ":")
		if len(rest) < 2 || rest[0] < '0' || rest[0] > '9' || rest[1] < '0' || rest[1] > '9' {
			break
		}
		p.in = rest
		v, _ := p.digits(2, 2)
		if v > 59 {
			return false
		}
		parts = append(parts, v)
	}
	for len(parts) < 3 {
		parts = append(parts, 0)
	}
	p.offset = sign * (parts[0]*3600 + parts[1]*60 + parts[2])
	return true
}

// micros checks the fields and returns the instant.
func (p *parser) micros() (int64, error) {
	if p.epoch != nil {
		return *p.epoch, nil
	}
	if p.hasPM {
		p.hour %= 12
		if p.pm {
			p.hour += 12
		}
	}
	if p.yday == 0 && p.week >= 0 && p.weekday >= 0 {
		p.yday = p.dayOfYearFromWeek()
		if p.yday < 1 {
			return 0, errors.New("week and weekday fall before the year")
		}
	}
	if p.yday > 0 {
		if p.yday > daysInYear(p.year) {
			return 0, errors.New("day of the year out of range")
		}
		t := time.Date(p.year, 1, p.yday, 0, 0, 0, 0, time.UTC)
		p.month, p.day = int(t.Month()), t.Day()
	}
	switch {
	case p.year < 1 || p.year > 9999:
		return 0, errRange
	case p.month < 1 || p.month > 12:
		return 0, errors.New("month out of range")
	case p.day < 1 || p.day > DaysIn(p.year, time.Month(p.month)):
		return 0, errors.New("day is out of range for month")
	case p.hour > 23 || p.minute > 59 || p.second > 59:
		return 0, errors.New("time out of range")
	}
	days := daysFromCivil(p.year, p.month, p.day)
	secs := days*86400 + int64(p.hour*3600+p.minute*60+p.second) - int64(p.offset)
	return secs*1e6 + int64(p.micro), nil
}

// dayOfYearFromWeek turns a week number (%U: weeks start on Sunday, %W: on
// Monday; week 0 is before the first such day) and a weekday into a day of
// the year, as Python's strptime does.
func (p *parser) dayOfYearFromWeek() int {
	first := (int(time.Date(p.year, 1, 1, 0, 0, 0, 0, time.UTC).Weekday()) + 6) % 7
	day := p.weekday
	if !p.weekStartsMonday {
		first = (first + 1) % 7
		day = (day + 1) % 7
	}
	if p.week == 0 {
		return 1 + day - first
	}
	return 1 + (7-first)%7 + 7*(p.week-1) + day
}

// daysFromCivil counts days from 1970-01-01 to a proleptic Gregorian date.
func daysFromCivil(y, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era--
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
}

var monthDays = [13]int{0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}

func isLeap(year int) bool { return year%4 == 0 && (year%100 != 0 || year%400 == 0) }

// DaysIn is the number of days of a month.
func DaysIn(year int, m time.Month) int {
	if m == time.February && isLeap(year) {
		return 29
	}
	return monthDays[m]
}

func daysInYear(year int) int {
	if isLeap(year) {
		return 366
	}
	return 365
}

// Format writes t with the layout, in t's own zone (callers convert to UTC
// first where the reference does).
func (l *Layout) Format(t time.Time) string {
	switch l.epoch {
	case epochSeconds:
		return strconv.FormatInt(t.UnixMicro()/1e6, 10)
	case epochMillis:
		return strconv.FormatInt(t.UnixMicro()/1e3, 10)
	case epochMicros:
		return strconv.FormatInt(t.UnixMicro(), 10)
	case epochFloat:
		return PythonFloat(float64(t.UnixMicro()) / 1e6)
	}
	var b []byte
	for _, tk := range l.tokens {
		if tk.dir == 0 {
			b = append(b, tk.lit...)
			continue
		}
		b = appendDirective(b, t, tk.dir)
	}
	return string(b)
}

// FormatMicros writes an instant given in microseconds since the epoch, in UTC.
func (l *Layout) FormatMicros(us int64) string {
	return l.Format(time.UnixMicro(us).UTC())
}

func pad(b []byte, n, width int) []byte {
	if n < 0 {
		b = append(b, '-')
		n = -n
	}
	s := strconv.Itoa(n)
	for i := len(s); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}

func appendDirective(b []byte, t time.Time, d byte) []byte {
	switch d {
	case 'Y':
		return pad(b, t.Year(), 4)
	case 'y':
		return pad(b, t.Year()%100, 2)
	case 'm':
		return pad(b, int(t.Month()), 2)
	case 'd':
		return pad(b, t.Day(), 2)
	case 'e':
		if t.Day() < 10 {
			b = append(b, ' ')
		}
		return strconv.AppendInt(b, int64(t.Day()), 10)
	case 'H':
		return pad(b, t.Hour(), 2)
	case 'I':
		h := t.Hour() % 12
		if h == 0 {
			h = 12
		}
		return pad(b, h, 2)
	case 'p':
		if t.Hour() < 12 {
			return append(b, "AM"...)
		}
		return append(b, "PM"...)
	case 'M':
		return pad(b, t.Minute(), 2)
	case 'S':
		return pad(b, t.Second(), 2)
	case 'f':
		return pad(b, t.Nanosecond()/1000, 6)
	case '_':
		return pad(b, t.Nanosecond()/1e6, 3)
	case 'z':
		return t.AppendFormat(b, "-0700")
	case 'Z':
		if _, off := t.Zone(); off == 0 {
			return append(b, "UTC"...)
		}
		return t.AppendFormat(b, "MST")
	case 'j':
		return pad(b, t.YearDay(), 3)
	case 'w':
		return strconv.AppendInt(b, int64(t.Weekday()), 10)
	case 'U':
		return pad(b, (t.YearDay()+6-int(t.Weekday()))/7, 2)
	case 'W':
		return pad(b, (t.YearDay()+6-(int(t.Weekday())+6)%7)/7, 2)
	case 'a':
		return append(b, t.Weekday().String()[:3]...)
	case 'A':
		return append(b, t.Weekday().String()...)
	case 'b', 'h':
		return append(b, t.Month().String()[:3]...)
	case 'B':
		return append(b, t.Month().String()...)
	case 's':
		return strconv.AppendInt(b, t.Unix(), 10)
	}
	return append(b, '%', d)
}

// PythonFloat writes a float as Python's str(float) does for ordinary
// magnitudes: the shortest text that reads back, with ".0" when integral.
func PythonFloat(f float64) string {
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".eEn") {
		s += ".0"
	}
	return s
}

// Strftime formats t with a Python strftime format (see Layout). An invalid
// format is written as it stands.
func Strftime(t time.Time, format string) string {
	l, err := Compile(format)
	if err != nil {
		return format
	}
	return l.Format(t)
}

// Strptime parses s with a Python strptime format (see Layout).
func Strptime(s, format string) (time.Time, error) {
	l, err := Compile(format)
	if err != nil {
		return time.Time{}, err
	}
	return l.Parse(s)
}
