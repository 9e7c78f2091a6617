package interp

import (
	"crypto/rand"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/airbyte-go/source-declarative/lang/datetime"
)

// Now is the clock of the date macros; tests replace it.
var Now = func() time.Time { return time.Now().UTC() }

// clockVar is where WithClock puts a clock among the variables: no template
// can name it (an identifier has no NUL).
const clockVar = "\x00clock"

// WithClock returns vars whose date macros (now_utc, today_utc,
// today_with_timezone, day_delta) read now instead of Now.
func WithClock(vars Vars, now func() time.Time) Vars {
	out := make(Vars, len(vars)+1)
	for k, v := range vars {
		out[k] = v
	}
	out[clockVar] = now
	return out
}

// now is the time the date macros read: the clock of the variables
// (WithClock), else Now.
func (s *state) now() time.Time {
	if c, ok := s.vars[clockVar].(func() time.Time); ok {
		return c().UTC()
	}
	return Now().UTC()
}

// globalsTable is the names every template sees: Jinja's dict and namespace,
// and the Airbyte CDK's macros (macros.py). range is absent, as in the
// reference.
var (
	globalsTable     map[string]any
	globalsTableOnce sync.Once
)

// globals returns the table, built on first use rather than at package init:
// a run builds only the tables its templates need.
func globals() map[string]any {
	globalsTableOnce.Do(buildGlobals)
	return globalsTable
}

func buildGlobals() {
	globalsTable = map[string]any{}
	for name, fn := range map[string]func(*state, *args) (any, error){
		"now_utc":                  mNowUTC,
		"today_utc":                mTodayUTC,
		"today_with_timezone":      mTodayWithTimezone,
		"timestamp":                mTimestamp,
		"max":                      mExtreme(1),
		"min":                      mExtreme(-1),
		"day_delta":                mDayDelta,
		"duration":                 mDuration,
		"format_datetime":          mFormatDatetime,
		"str_to_datetime":          mStrToDatetime,
		"sanitize_url":             mSanitizeURL,
		"camel_case_to_snake_case": mCamelToSnake,
		"generate_uuid":            mGenerateUUID,
		"dict":                     gDict,
		"namespace":                gNamespace,
		"lipsum":                   gLipsum,
	} {
		globalsTable[name] = &callable{name: name, fn: fn}
	}
	globalsTable["self"] = &templateRef{}
}

func noArgs(a *args, fn string) error {
	if len(a.pos) > 0 || len(a.names) > 0 {
		return typeErr("%s() takes 0 positional arguments but %d were given", fn, len(a.pos)+len(a.names))
	}
	return nil
}

func mNowUTC(s *state, a *args) (any, error) {
	if err := noArgs(a, "now_utc"); err != nil {
		return nil, err
	}
	return s.now(), nil
}

func midnight(t time.Time) date {
	return date{time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)}
}

func mTodayUTC(s *state, a *args) (any, error) {
	if err := noArgs(a, "today_utc"); err != nil {
		return nil, err
	}
	return midnight(s.now()), nil
}

func mTodayWithTimezone(s *state, a *args) (any, error) {
	if err := a.check("today_with_timezone", 1, "timezone"); err != nil {
		return nil, err
	}
	name, ok, err := argStr(a, 0, "timezone", "today_with_timezone")
	if err != nil || !ok {
		return nil, orTypeErr(err, "today_with_timezone() missing required argument 'timezone'")
	}
	if name == "" || strings.Contains(name, "..") || strings.HasPrefix(name, "/") {
		return nil, valueErr("unknown time zone %q", name)
	}
	loc, err := time.LoadLocation(name)
	if err != nil || name == "Local" {
		return nil, valueErr("unknown time zone %q", name)
	}
	return midnight(s.now().In(loc)), nil
}

// mTimestamp is timestamp(x): a number truncated to an int, or a date text
// read as ISO 8601 (UTC when it has no zone) and given as float seconds.
func mTimestamp(_ *state, a *args) (any, error) {
	if err := a.check("timestamp", 1, "dt"); err != nil {
		return nil, err
	}
	v, ok := a.get(0, "dt")
	if !ok {
		return nil, typeErr("timestamp() missing required argument 'dt'")
	}
	if n, ok, err := intOfNumber(v); ok {
		return n, err
	}
	t, err := strToDatetime(v)
	if err != nil {
		return nil, err
	}
	return float64(t.UnixMicro()) / 1e6, nil
}

// strToDatetime is the CDK's str_to_datetime: isoparse, UTC when naive,
// converted to UTC.
func strToDatetime(v any) (time.Time, error) {
	s, ok := v.(string)
	if !ok {
		if err := failUndefined(v); err != nil {
			return time.Time{}, err
		}
		return time.Time{}, typeErr("Parser must be a string or character stream, not %s", typeName(v))
	}
	t, _, err := datetime.IsoParse(s)
	if err != nil {
		return time.Time{}, valueErr("%s", err.Error())
	}
	return t.UTC(), nil
}

func mStrToDatetime(_ *state, a *args) (any, error) {
	if err := a.check("str_to_datetime", 1, "s"); err != nil {
		return nil, err
	}
	v, ok := a.get(0, "s")
	if !ok {
		return nil, typeErr("str_to_datetime() missing required argument 's'")
	}
	return strToDatetime(v)
}

// mExtreme is Python's max (sign 1) or min (-1): of one iterable argument or
// of several arguments; default= answers an empty iterable.
func mExtreme(sign int) func(*state, *args) (any, error) {
	name := "max"
	if sign < 0 {
		name = "min"
	}
	return func(s *state, a *args) (any, error) {
		if err := a.check(name, math.MaxInt32, "default"); err != nil {
			return nil, err
		}
		candidates := a.pos
		def, hasDef := a.get(-1, "default")
		switch len(a.pos) {
		case 0:
			return nil, typeErr("%s expected at least 1 argument, got 0", name)
		case 1:
			items, err := iterate(a.pos[0])
			if err != nil {
				return nil, err
			}
			candidates = items
		default:
			if hasDef {
				return nil, typeErr("Cannot specify a default for %s() with multiple positional arguments", name)
			}
		}
		if len(candidates) == 0 {
			if hasDef {
				return def, nil
			}
			return nil, valueErr("%s() arg is an empty sequence", name)
		}
		if err := s.charge(len(candidates)); err != nil {
			return nil, err
		}
		best := candidates[0]
		for _, c := range candidates[1:] {
			r, err := cmp(c, best, map[int]string{1: ">", -1: "<"}[sign])
			if err != nil {
				return nil, err
			}
			if r != 2 && r*sign > 0 {
				best = c
			}
		}
		return best, nil
	}
}

func mDayDelta(s *state, a *args) (any, error) {
	if err := a.check("day_delta", 2, "num_days", "format"); err != nil {
		return nil, err
	}
	n, ok := a.get(0, "num_days")
	if !ok {
		return nil, typeErr("day_delta() missing required argument 'num_days'")
	}
	i, f, isF, isNum := num(n)
	if !isNum {
		if err := failUndefined(n); err != nil {
			return nil, err
		}
		return nil, typeErr("unsupported type for timedelta days component: %s", typeName(n))
	}
	format, ok, err := argStr(a, 1, "format", "day_delta")
	if err != nil {
		return nil, err
	}
	if !ok {
		format = "%Y-%m-%dT%H:%M:%S.%f%z"
	}
	days := toFloat(i, f, isF)
	if math.Abs(days) > 999999999 {
		return nil, valueErr("days=%v; must have magnitude <= 999999999", days)
	}
	t := s.now().Add(roundMicro(days * 24 * float64(time.Hour)))
	return strftime(t, format)
}

// mDuration is isodate's parse_duration: a timedelta, or a Duration when
// the text has years or months.
func mDuration(_ *state, a *args) (any, error) {
	if err := a.check("duration", 1, "datestring"); err != nil {
		return nil, err
	}
	s, ok, err := argStr(a, 0, "datestring", "duration")
	if err != nil || !ok {
		if v, _ := a.get(0, "datestring"); v != nil {
			return nil, typeErr("Expecting a string")
		}
		return nil, orTypeErr(err, "duration() missing required argument 'datestring'")
	}
	sign := time.Duration(1)
	text := s
	if strings.HasPrefix(text, "-") || strings.HasPrefix(text, "+") {
		if text[0] == '-' {
			sign = -1
		}
		text = text[1:]
	}
	d, err := datetime.ParseDuration(strings.ReplaceAll(text, ",", "."))
	if err != nil {
		return nil, valueErr("Unable to parse duration string %q", s)
	}
	if d.Years != 0 || d.Months != 0 {
		if sign < 0 {
			d.Years, d.Months = -d.Years, -d.Months
		}
		d.Fixed = roundMicro(float64(d.Fixed * sign))
		return monthDuration{d}, nil
	}
	return roundMicro(float64(d.Fixed * sign)), nil
}

// mFormatDatetime is format_datetime(dt, format, input_format=None).
func mFormatDatetime(_ *state, a *args) (any, error) {
	if err := a.check("format_datetime", 3, "dt", "format", "input_format"); err != nil {
		return nil, err
	}
	dt, ok := a.get(0, "dt")
	if !ok {
		return nil, typeErr("format_datetime() missing required argument 'dt'")
	}
	if f, _ := a.get(1, "format"); typeName(f) == "Undefined" {
		return nil, typeErr("strftime() argument 1 must be str, not Undefined") // Python's, on the CDK's strftime(format)
	}
	format, ok, err := argStr(a, 1, "format", "format_datetime")
	if err != nil || !ok {
		return nil, orTypeErr(err, "format_datetime() missing required argument 'format'")
	}
	input, hasInput, err := argStr(a, 2, "input_format", "format_datetime")
	if err != nil {
		return nil, err
	}
	var t time.Time
	switch x := dt.(type) {
	case time.Time:
		return strftime(x, format)
	case int64:
		if !hasInput {
			input = "%s"
		}
		if t, err = cdkParse(strconv.FormatInt(x, 10), input); err != nil {
			return nil, err
		}
	default:
		if hasInput {
			s, isStr := dt.(string)
			if !isStr {
				return nil, typeErr("strptime() argument 1 must be str, not %s", typeName(dt))
			}
			if t, err = datetime.Strptime(s, input); err != nil {
				return nil, valueErr("time data does not match format %q", input)
			}
		} else if t, err = strToDatetime(dt); err != nil {
			return nil, err
		}
	}
	return cdkFormat(t, format)
}

// cdkParse is the CDK's DatetimeParser.parse for the epoch formats, and
// strptime (UTC when naive) for the others.
func cdkParse(s, format string) (time.Time, error) {
	switch format {
	case "%s", "%ms", "%epoch_microseconds", "%s_as_float":
		f, ok := pyFloat(s)
		if !ok || (format != "%s_as_float" && strings.ContainsAny(s, ".eE")) {
			return time.Time{}, valueErr("invalid literal for int() with base 10")
		}
		switch format {
		case "%ms":
			return time.UnixMilli(int64(f)).UTC(), nil
		case "%epoch_microseconds":
			return time.UnixMicro(int64(f)).UTC(), nil
		case "%s_as_float":
			return time.UnixMicro(int64(math.Round(f * 1e6))).UTC(), nil
		}
		return time.Unix(int64(f), 0).UTC(), nil
	}
	t, err := datetime.Strptime(s, strings.ReplaceAll(format, "%_ms", "%f"))
	if err != nil {
		return time.Time{}, valueErr("time data does not match format %q", format)
	}
	return t, nil
}

// cdkFormat is the CDK's DatetimeParser.format: the epoch formats when the
// whole format is one, %_ms as three-digit milliseconds, strftime otherwise.
func cdkFormat(t time.Time, format string) (string, error) {
	switch format {
	case "%s":
		return strconv.FormatInt(t.Unix(), 10), nil
	case "%s_as_float":
		return FormatFloat(float64(t.UnixMicro()) / 1e6), nil
	case "%epoch_microseconds":
		return strconv.FormatInt(t.UnixMicro(), 10), nil
	case "%ms":
		return strconv.FormatInt(t.UnixMilli(), 10), nil
	}
	if strings.Contains(format, "%_ms") {
		out, err := strftime(t, strings.ReplaceAll(format, "%_ms", "%f"))
		micro := datetime.PythonStrftime(t, "%f")
		return strings.ReplaceAll(out, micro, fmt.Sprintf("%03d", t.Nanosecond()/1e6)), err
	}
	return strftime(t, format)
}

// mSanitizeURL is urllib's quote_plus.
func mSanitizeURL(_ *state, a *args) (any, error) {
	v, ok := a.get(0, "value")
	if !ok {
		return nil, typeErr("sanitize_url() missing required argument 'value'")
	}
	s, isStr := v.(string)
	if !isStr {
		if err := failUndefined(v); err != nil {
			return nil, err
		}
		return nil, typeErr("quote_from_bytes() expected bytes")
	}
	return urlQuote(s, true), nil
}

// mCamelToSnake puts "_" before every capital letter but the first, then
// lower-cases.
func mCamelToSnake(_ *state, a *args) (any, error) {
	v, ok := a.get(0, "value")
	if !ok {
		return nil, typeErr("camel_case_to_snake_case() missing required argument 'value'")
	}
	s, isStr := v.(string)
	if !isStr {
		if err := failUndefined(v); err != nil {
			return nil, err
		}
		return nil, typeErr("expected string or bytes-like object, got '%s'", typeName(v))
	}
	var b strings.Builder
	for i, r := range s {
		if i > 0 && r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
		}
		b.WriteRune(r)
	}
	return strings.ToLower(b.String()), nil
}

func mGenerateUUID(_ *state, a *args) (any, error) {
	if err := noArgs(a, "generate_uuid"); err != nil {
		return nil, err
	}
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, valueErr("no randomness available")
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:]), nil
}

func gDict(_ *state, a *args) (any, error) {
	out := map[string]any{}
	if len(a.pos) > 1 {
		return nil, typeErr("dict expected at most 1 argument, got %d", len(a.pos))
	}
	if len(a.pos) == 1 {
		switch x := canon(a.pos[0]).(type) {
		case map[string]any:
			for k, v := range x {
				out[k] = v
			}
		default:
			items, err := iterate(x)
			if err != nil {
				return nil, err
			}
			for _, it := range items {
				pair, err := iterate(it)
				if err != nil || len(pair) != 2 {
					return nil, valueErr("dictionary update sequence element has the wrong length")
				}
				k, err := dictKey(pair[0])
				if err != nil {
					return nil, err
				}
				out[k] = pair[1]
			}
		}
	}
	for i, n := range a.names {
		out[n] = a.kw[i]
	}
	return out, nil
}

func gNamespace(_ *state, a *args) (any, error) {
	d, err := gDict(nil, a)
	if err != nil {
		return nil, err
	}
	return &namespace{attrs: d.(map[string]any)}, nil
}

func gLipsum(*state, *args) (any, error) {
	return nil, valueErr("lipsum() is not supported: its text is random")
}
