package datetime

import (
	"regexp"
	"strconv"
	"testing"
)

// The duration scanner accepts exactly what the regular expression it
// replaced accepted, and reads the same parts.
func TestParseDurationAsTheRegexpDid(t *testing.T) {
	re := regexp.MustCompile(`^P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)W)?(?:(\d+(?:\.\d+)?)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$`)
	inputs := []string{"", "P", "PT", "T1H", "P1Y2M3W4DT5H6M7S", "P1D", "PT1H", "P1DT", "P2W", "P1M", "PT1M", "PT0.001S", "P1.5D", "P1.5Y",
		"P1.5M", "PT1.5M", "P1DT1H1M1.25S", "P1H", "PT1D", "P1D1D", "P1M1Y", "PT1S1M", "P1DTT1H", "P1DT1HT", "P.5D", "P1.D", "P1..5D",
		"P-1D", "P+1D", "p1d", "P1d", "P 1D", "P1D ", "PT1H2", "P1", "P1W1D", "P1D1W", "P10000D", "PT36H", "P1YT", "PTT", "PT1H1H"}
	for _, a := range []string{"1", "2.5", ""} {
		for _, d := range []string{"Y", "M", "W", "D", "T", "H", "S", "X", ""} {
			for _, b := range []string{"1", "0.5", ""} {
				for _, e := range []string{"Y", "M", "W", "D", "T", "H", "S", ""} {
					inputs = append(inputs, "P"+a+d+b+e, "PT"+a+d+b+e, "P1D"+a+d+b+e)
				}
			}
		}
	}
	for _, s := range inputs {
		m := re.FindStringSubmatch(s)
		wantOK := m != nil && s != "P" && s != "PT"
		got, err := ParseDuration(s)
		if (err == nil) != wantOK {
			t.Errorf("%q: error %v, the regexp accepted: %v", s, err, wantOK)
			continue
		}
		if !wantOK {
			continue
		}
		values, _ := durationParts(s)
		for i := range values {
			var want float64
			if m[i+1] != "" {
				want, _ = strconv.ParseFloat(m[i+1], 64)
			}
			if values[i] != want {
				t.Errorf("%q: part %c is %v, want %v", s, durationDesignators[i], values[i], want)
			}
		}
		if got.IsZero() != (values == [7]float64{}) {
			t.Errorf("%q: %+v", s, got)
		}
	}
}
