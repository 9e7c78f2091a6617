package datetime

import (
	"testing"
	"time"
)

func TestParseFormattedPendulumAndStrftime(t *testing.T) {
	cases := []struct{ value, format, want string }{
		{"2024-05-01", "YYYY-MM-DD", "2024-05-01T00:00:00Z"},
		{"2024-05-01T13:04:05", "YYYY-MM-DDTHH:mm:ss", "2024-05-01T13:04:05Z"},
		{"2024-05-01 13:04:05.250+02:00", "YYYY-MM-DD HH:mm:ss.SSSZ", "2024-05-01T13:04:05.25+02:00"},
		{"01/05/2024 01:04 PM", "DD/MM/YYYY hh:mm A", "2024-05-01T13:04:00Z"},
		{"on 2024-05-01", "[on] YYYY-MM-DD", "2024-05-01T00:00:00Z"},
		{"2024-05-01 13:04:05", "%Y-%m-%d %H:%M:%S", "2024-05-01T13:04:05Z"},
		{"1714568645", "X", "2024-05-01T13:04:05Z"},
		{"2024-05-01T13:04:05Z", "%Y-%m-%d", "2024-05-01T13:04:05Z"}, // not the format, but ISO 8601
	}
	for _, c := range cases {
		got, err := ParseFormatted(c.value, c.format)
		if err != nil || got.Format(time.RFC3339Nano) != c.want {
			t.Errorf("%q with %q: %v %v, want %s", c.value, c.format, got.Format(time.RFC3339Nano), err, c.want)
		}
	}
	if _, err := ParseFormatted("tomorrow", "YYYY-MM-DD"); err == nil {
		t.Error("a value that is no date must fail")
	}
	if got := PendulumToStrptime("YYYY-MM-DDTHH:mm:ss"); got != "%Y-%m-%dT%H:%M:%S" {
		t.Errorf("conversion %q", got)
	}
}
