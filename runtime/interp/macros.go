package interp

import (
	"crypto/rand"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/airbyte-go/source-declarative/runtime/datetime"
	"github.com/nikolalohinski/gonja/v2/exec"
)

// Now is the clock of the date macros; tests replace it.
var Now = func() time.Time { return time.Now().UTC() }

// macros are the global functions of Airbyte's declarative CDK.
func macros() *exec.Context {
	return exec.NewContext(map[string]any{
		"now_utc":   func(*exec.VarArgs) (any, error) { return Now().UTC(), nil },
		"today_utc": func(*exec.VarArgs) (any, error) { return Now().UTC().Format("2006-01-02"), nil },
		"today_with_timezone": func(a *exec.VarArgs) (any, error) {
			loc, err := time.LoadLocation(a.First().String())
			if err != nil {
				return nil, err
			}
			return Now().In(loc).Format("2006-01-02"), nil
		},
		"timestamp": func(a *exec.VarArgs) (any, error) {
			v := native(a.First())
			switch x := v.(type) {
			case int64:
				return x, nil
			case float64:
				return int64(x), nil
			}
			t, err := toTime(v)
			if err != nil {
				return nil, err
			}
			return t.Unix(), nil
		},
		"max": func(a *exec.VarArgs) (any, error) { return extreme(a, 1) },
		"min": func(a *exec.VarArgs) (any, error) { return extreme(a, -1) },
		"day_delta": func(a *exec.VarArgs) (any, error) {
			n, _ := number(native(a.First()))
			format := "%Y-%m-%dT%H:%M:%S.%f%z"
			if len(a.Args) > 1 {
				format = a.Args[1].String()
			} else if f, ok := a.KwArgs["format"]; ok {
				format = f.String()
			}
			return datetime.Strftime(Now().UTC().Add(time.Duration(n*24*float64(time.Hour))), format), nil
		},
		"duration": func(a *exec.VarArgs) (any, error) {
			d, err := datetime.ParseDuration(a.First().String())
			if err != nil {
				return nil, err
			}
			if d.Years != 0 || d.Months != 0 {
				return nil, errors.New("duration: years and months have no fixed length; use days")
			}
			return d.Fixed, nil
		},
		"format_datetime": func(a *exec.VarArgs) (any, error) {
			if len(a.Args) < 2 {
				return nil, errors.New("format_datetime(dt, format[, input_format]) needs two arguments")
			}
			v := native(a.Args[0])
			var t time.Time
			var err error
			input := ""
			if len(a.Args) > 2 {
				input = a.Args[2].String()
			} else if f, ok := a.KwArgs["input_format"]; ok {
				input = f.String()
			}
			switch x := v.(type) {
			case time.Time:
				t = x
			case int64, float64:
				if input == "" {
					input = "%s"
				}
				t, err = datetime.Strptime(String(x), input)
			default:
				if input != "" {
					t, err = datetime.Strptime(String(x), input)
				} else {
					t, err = toTime(x)
					t = t.UTC()
				}
			}
			if err != nil {
				return nil, err
			}
			return datetime.Strftime(t, a.Args[1].String()), nil
		},
		"str_to_datetime": func(a *exec.VarArgs) (any, error) {
			t, err := datetime.ParseDatetime(a.First().String())
			if err != nil {
				return nil, err
			}
			return t.UTC(), nil
		},
		"sanitize_url": func(a *exec.VarArgs) (any, error) { return url.QueryEscape(a.First().String()), nil },
		"camel_case_to_snake_case": func(a *exec.VarArgs) (any, error) {
			return strings.ToLower(camel.ReplaceAllString(a.First().String(), "${1}_${2}")), nil
		},
		"generate_uuid": func(*exec.VarArgs) (any, error) {
			var b [16]byte
			rand.Read(b[:])
			b[6] = b[6]&0x0f | 0x40
			b[8] = b[8]&0x3f | 0x80
			return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:]), nil
		},
	})
}

var camel = regexp.MustCompile(`([a-z0-9])([A-Z])`)

func toTime(v any) (time.Time, error) {
	switch x := v.(type) {
	case time.Time:
		return x, nil
	case int64:
		return time.Unix(x, 0).UTC(), nil
	case float64:
		return time.Unix(0, int64(x*1e9)).UTC(), nil
	case string:
		return datetime.ParseDatetime(x)
	}
	return time.Time{}, fmt.Errorf("%v is not a date", v)
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		return f, err == nil
	}
	return 0, false
}

// extreme returns the largest (sign 1) or smallest (sign -1) argument, or of
// the one list argument.
func extreme(a *exec.VarArgs, sign int) (any, error) {
	var items []any
	if len(a.Args) == 1 {
		if l, ok := native(a.Args[0]).([]any); ok {
			items = l
		}
	}
	if items == nil {
		for _, v := range a.Args {
			items = append(items, native(v))
		}
	}
	if len(items) == 0 {
		return nil, errors.New("max/min of nothing")
	}
	best := items[0]
	for _, v := range items[1:] {
		if compare(v, best)*sign > 0 {
			best = v
		}
	}
	return best, nil
}

func compare(a, b any) int {
	fa, oka := number(a)
	fb, okb := number(b)
	if oka && okb {
		switch {
		case fa < fb:
			return -1
		case fa > fb:
			return 1
		}
		return 0
	}
	ta, erra := toTime(a)
	tb, errb := toTime(b)
	if erra == nil && errb == nil {
		return ta.Compare(tb)
	}
	return strings.Compare(String(a), String(b))
}
