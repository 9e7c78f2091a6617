package differential

import (
	"encoding/json"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// What differs between two runs without meaning anything is made equal
// before comparing: each API's address (its port), the times a connector
// takes from its clock (a slice ending now, an emitted_at), and the client's
// own headers (User-Agent, Accept-Encoding...).

// nowSlack is how far before the run a time may be to count as "now";
// laterSlack how far after (a token's expiry, an hour or a day ahead).
const (
	nowSlack   = 10 * time.Minute
	laterSlack = 25 * time.Hour
)

// normalizer rewrites the texts of one side's output.
type normalizer struct {
	api        string
	from, till time.Time
	// given are the times of the run in the state the command was given
	// (each side's own clock): a time whole minutes before one of them is
	// that time less a lookback.
	given []time.Time
}

func normalizeOutput(o *output, s *side, started time.Time) {
	n := normalizer{api: s.api.URL, from: started.Add(-nowSlack), till: time.Now().Add(laterSlack)}
	n.given = n.runTimes(o.given, nil)
	for i, m := range o.msgs {
		o.msgs[i] = n.value(m).(map[string]any)
	}
	for i := range o.exchanges {
		e := &o.exchanges[i]
		e.Path = n.text(e.Path)
		e.RawQuery = n.query(e.RawQuery)
		e.Body = n.body(e.Body)
		for k, vs := range e.Header {
			for j := range vs {
				vs[j] = n.text(vs[j])
			}
			e.Header[k] = vs
		}
	}
}

func (n normalizer) value(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = n.value(e)
			if d, ok := e.(float64); ok && k == "lookback_window" && d > 0 {
				// A partitioned state's lookback_window is how long
				// the sync took, in whole seconds: each runtime's own.
				x[k] = "<duration>"
			}
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = n.value(e)
		}
		return x
	case string:
		return n.text(x)
	case float64:
		if n.isNow(strconv.FormatFloat(x, 'f', -1, 64)) {
			return "<now>"
		}
	}
	return v
}

// text replaces the API's address by MOCK, a time of the run by <now> (also
// one inside the text, as ISO 8601 or unix seconds or milliseconds), and in a
// URL the times of its query.
func (n normalizer) text(s string) string {
	s = strings.ReplaceAll(s, n.api, "MOCK")
	if c := n.clock(s); c != "" {
		return c
	}
	now := func(t string) string {
		if c := n.clock(t); c != "" {
			return c
		}
		return t
	}
	s = isoTime.ReplaceAllStringFunc(s, now)
	s = epochTime.ReplaceAllStringFunc(s, now)
	if base, query, ok := strings.Cut(s, "?"); ok && (strings.HasPrefix(s, "MOCK") || strings.HasPrefix(s, "/")) {
		return base + "?" + n.query(query)
	}
	return s
}

// query normalizes a raw query's values and sorts its pairs.
func (n normalizer) query(raw string) string {
	if raw == "" {
		return ""
	}
	q, err := url.ParseQuery(raw)
	if err != nil {
		return n.text(raw)
	}
	var pairs []string
	for k, vs := range q {
		for _, v := range vs {
			pairs = append(pairs, url.QueryEscape(k)+"="+url.QueryEscape(n.text(v)))
		}
	}
	sort.Strings(pairs)
	return strings.Join(pairs, "&")
}

// body normalizes a JSON body (as sorted compact JSON) or a form body.
func (n normalizer) body(b string) string {
	if strings.TrimSpace(b) == "" {
		return ""
	}
	var v any
	if json.Unmarshal([]byte(b), &v) == nil {
		out, _ := json.Marshal(n.value(v))
		return string(out)
	}
	if q, err := url.ParseQuery(b); err == nil && strings.Contains(b, "=") {
		return "form:" + n.query(q.Encode())
	}
	return n.text(b)
}

// epochTime finds unix seconds or milliseconds inside a text (a body
// written by a template, not JSON).
var epochTime = regexp.MustCompile(`\b\d{10}(\d{3})?\b`)

// isoTime finds ISO 8601 times inside a text (a query's filter expression).
var isoTime = regexp.MustCompile(`\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?`)

// clock is "<now>" for a time of the run, "<now - D>" for one a whole
// number of minutes D (a lookback) before a time of the run in the state
// the command was given, "<now - Nd>" for one N whole days before a time of
// the run, and "" for any other text.
func (n normalizer) clock(s string) string {
	t, ok := parseClock(s)
	switch {
	case !ok:
		return ""
	case n.isNow(s):
		return "<now>"
	}
	for _, g := range n.given {
		if d := g.Sub(t); d > 0 && d <= laterSlack && d%time.Minute == 0 {
			return "<now - " + d.String() + ">"
		}
	}
	if d := n.daysBefore(t); d > 0 {
		return "<now - " + strconv.Itoa(d) + "d>"
	}
	return ""
}

// daysBefore is D when t is a time of the run less D whole days, as a
// template's day_delta(-D) takes it from the clock (paypal-transaction's
// start, 180 days before each side's own now), else 0.
func (n normalizer) daysBefore(t time.Time) int {
	d := int(time.Since(t) / (24 * time.Hour))
	if d < 1 || t.Add(time.Duration(d)*24*time.Hour).Before(n.from) {
		return 0
	}
	return d
}

// runTimes appends the times of the run found in a value (a state).
func (n normalizer) runTimes(v any, out []time.Time) []time.Time {
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			out = n.runTimes(e, out)
		}
	case []any:
		for _, e := range x {
			out = n.runTimes(e, out)
		}
	case string:
		if t, ok := parseClock(x); ok && n.isNow(x) {
			out = append(out, t)
		}
	}
	return out
}

// nowLayouts are the shapes of a time taken from the clock.
var nowLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999Z0700",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
	"20060102T150405Z",
}

// isNow tells whether s is a time (or unix seconds or milliseconds) within
// the run, give or take nowSlack.
func (n normalizer) isNow(s string) bool {
	t, ok := parseClock(s)
	return ok && !t.Before(n.from) && !t.After(n.till)
}

// parseClock reads a time as a clock writes it: ISO 8601 in one of
// nowLayouts, or unix seconds or milliseconds.
func parseClock(s string) (time.Time, bool) {
	if len(s) < 10 || len(s) > 40 {
		return time.Time{}, false
	}
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		switch {
		case v >= 1e9 && v < 4e9:
			return time.Unix(int64(v), 0), true
		case v >= 1e12 && v < 4e12:
			return time.UnixMilli(int64(v)), true
		}
		return time.Time{}, false
	}
	for _, l := range nowLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}
