package datetime

import (
	"strings"
	"time"
)

// pendulumTokens map the tokens of pendulum / moment.js formats, which
// manifests written for older runtimes use (YYYY-MM-DDTHH:mm:ss), to strptime
// directives, longest first.
var pendulumTokens = []struct{ token, directive string }{
	{"YYYY", "%Y"}, {"YY", "%y"},
	{"MMMM", "%B"}, {"MMM", "%b"}, {"MM", "%m"}, {"M", "%m"},
	{"DDDD", "%j"}, {"DD", "%d"}, {"D", "%d"},
	{"dddd", "%A"}, {"ddd", "%a"},
	{"HH", "%H"}, {"H", "%H"}, {"hh", "%I"}, {"h", "%I"},
	{"mm", "%M"}, {"m", "%M"}, {"ss", "%S"}, {"s", "%S"},
	{"SSSSSS", "%f"}, {"SSSSS", "%f"}, {"SSSS", "%f"}, {"SSS", "%f"}, {"SS", "%f"}, {"S", "%f"},
	{"A", "%p"}, {"a", "%p"}, {"ZZ", "%z"}, {"Z", "%z"}, {"z", "%Z"},
	{"X", "%s"}, {"x", "%ms"},
}

// PendulumToStrptime turns a pendulum format into a strptime format; text in
// [brackets] is literal.
func PendulumToStrptime(format string) string {
	var b strings.Builder
	for i := 0; i < len(format); {
		if format[i] == '[' {
			end := strings.IndexByte(format[i:], ']')
			if end > 0 {
				b.WriteString(strings.ReplaceAll(format[i+1:i+end], "%", "%%"))
				i += end + 1
				continue
			}
		}
		matched := false
		for _, t := range pendulumTokens {
			if strings.HasPrefix(format[i:], t.token) {
				b.WriteString(t.directive)
				i += len(t.token)
				matched = true
				break
			}
		}
		if !matched {
			if format[i] == '%' {
				b.WriteByte('%')
			}
			b.WriteByte(format[i])
			i++
		}
	}
	return b.String()
}

// ParseFormatted parses s with a date format written either as strftime
// (%Y-%m-%d) or in the older pendulum style (YYYY-MM-DD); a value that does
// not match the format but is an ISO 8601 date or unix seconds is read as
// such, as the reference reads it whatever the format says.
func ParseFormatted(s, format string) (time.Time, error) {
	strptime := format
	if !strings.Contains(format, "%") {
		strptime = PendulumToStrptime(format)
	}
	t, err := Strptime(s, strptime)
	if err == nil {
		return t, nil
	}
	if t, perr := ParseDatetime(s); perr == nil {
		return t, nil
	}
	return time.Time{}, err
}
