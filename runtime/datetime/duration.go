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

var isoDuration = regexp.MustCompile(`^P(?:(\d+(?:\.\d+)?)Y)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)W)?(?:(\d+(?:\.\d+)?)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$`)

// ParseDuration reads an ISO 8601 duration such as PT1H, P1D, P2W or P1M.
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
	d.Fixed = time.Duration(secs * float64(time.Second))
	return d, nil
}

// AddTo returns t plus the duration.
func (d Duration) AddTo(t time.Time) time.Time {
	return t.AddDate(d.Years, d.Months, 0).Add(d.Fixed)
}
