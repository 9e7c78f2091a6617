package datetime

import (
	"strconv"
	"sync"
)

// inferFormats are the formats a builder test read recognises, in the order
// they are tried; compiled on first use, as only test reads need them.
var inferFormats = sync.OnceValue(func() []*Layout {
	var out []*Layout
	for _, f := range []string{"%Y-%m-%d", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%SZ", "%Y-%m-%dT%H:%M:%S.%fZ",
		"%Y-%m-%d %H:%M:%S.%f%z", "%Y-%m-%dT%H:%M:%S.%f%z", "%s", "%ms", "%d/%m/%Y %H:%M", "%Y-%m", "%d-%m-%Y"} {
		l, _ := Compile(f)
		out = append(out, l)
	}
	return out
})

// Inferrer finds the top-level fields of records that hold dates in one
// format throughout, as the Connector Builder's test read reports them: the
// first record proposes a format per field, later records drop the fields
// they contradict.
type Inferrer struct {
	candidates map[string]*Layout
	started    bool
}

// Add looks at one record's top-level fields.
func (in *Inferrer) Add(record map[string]any) {
	if !in.started {
		in.started = true
		in.candidates = map[string]*Layout{}
		for k, v := range record {
			if s, ok := dateCandidate(v); ok {
				for _, l := range inferFormats() {
					if _, err := l.ParseMicros(s); err == nil {
						in.candidates[k] = l
						break
					}
				}
			}
		}
		return
	}
	for k, l := range in.candidates {
		s, ok := dateCandidate(record[k])
		if !ok {
			delete(in.candidates, k)
			continue
		}
		if _, err := l.ParseMicros(s); err != nil {
			delete(in.candidates, k)
		}
	}
}

// Formats maps each field to its format.
func (in *Inferrer) Formats() map[string]string {
	out := map[string]string{}
	for k, l := range in.candidates {
		out[k] = l.String()
	}
	return out
}

// dateCandidate returns the text of a value that may be a date: a string, or
// an integer in the range of epoch seconds or milliseconds of 2001 to 2033.
func dateCandidate(v any) (string, bool) {
	var n int64
	switch x := v.(type) {
	case string:
		i, err := strconv.ParseInt(x, 10, 64)
		if err != nil {
			return x, true
		}
		n = i
	case int64:
		n = x
	default:
		return "", false
	}
	if (n >= 1e9 && n < 2e9) || (n >= 1e12 && n < 2e12) {
		return strconv.FormatInt(n, 10), true
	}
	return "", false
}
