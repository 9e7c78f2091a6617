package differential

import (
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"

	"github.com/airbyte-go/source-declarative/genapi"
	"github.com/airbyte-go/source-declarative/manifest"
)

// clientHeaders are what each HTTP client adds of its own, not the
// manifest: not compared.
var clientHeaders = map[string]bool{"User-Agent": true, "Accept-Encoding": true, "Accept": true, "Connection": true, "Content-Length": true}

// requestKey is a request as compared: method, path, sorted query, body and
// the headers the connector chose.
func requestKey(e genapi.Exchange) string {
	var hs []string
	for k, vs := range e.Header {
		if !clientHeaders[http.CanonicalHeaderKey(k)] {
			hs = append(hs, http.CanonicalHeaderKey(k)+": "+strings.Join(vs, ","))
		}
	}
	sort.Strings(hs)
	key := e.Method + " " + e.Path
	if e.RawQuery != "" {
		key += "?" + e.RawQuery
	}
	if e.Body != "" {
		key += " body " + e.Body
	}
	if len(hs) > 0 {
		key += " [" + strings.Join(hs, "; ") + "]"
	}
	return key
}

// streamParts are a read's messages and requests of one stream.
type streamParts struct {
	requests []string
	records  []string
	states   []string
	statuses []string
}

// partsByStream groups a read's output by stream; requests the API could not
// route are under "(no route)", token and login requests under their
// endpoint's name.
func partsByStream(o output) map[string]*streamParts {
	out := map[string]*streamParts{}
	get := func(name string) *streamParts {
		if out[name] == nil {
			out[name] = &streamParts{}
		}
		return out[name]
	}
	for _, e := range o.exchanges {
		name := e.Endpoint
		if name == "" {
			name = "(no route)"
		}
		p := get(name)
		p.requests = append(p.requests, requestKey(e))
	}
	for _, m := range o.msgs {
		switch m["type"] {
		case "RECORD":
			r := asMap(m["record"])
			p := get(fmt.Sprint(r["stream"]))
			p.records = append(p.records, jsonText(r["data"]))
		case "STATE":
			st := asMap(m["state"])
			s := asMap(st["stream"])
			p := get(fmt.Sprint(asMap(s["stream_descriptor"])["name"]))
			p.states = append(p.states, jsonText(s["stream_state"]))
		case "TRACE":
			ss := asMap(asMap(m["trace"])["stream_status"])
			if ss == nil {
				continue
			}
			p := get(fmt.Sprint(asMap(ss["stream_descriptor"])["name"]))
			status := fmt.Sprint(ss["status"])
			if n := len(p.statuses); n == 0 || p.statuses[n-1] != status {
				p.statuses = append(p.statuses, status)
			}
		}
	}
	return out
}

// compareRead compares two reads stream by stream: the distinct requests
// (the reference reads streams concurrently, so a parent it also reads as a
// stream may be asked twice or once), none asked more often here, and none
// less often but a parent stream's or a token endpoint's (the allow-list's
// parent-read-once and one-token), the records as a multiset, the statuses, the last state exactly
// and the shape of the others.
func (m *run) compareRead(label string, outs [2]output) {
	m.note("null-sent-as-none", nullsAsNone(&outs[0], &outs[1]))
	m.note("first-page-token", firstPageTokens(&outs[0], &outs[1]))
	m.note("booleans-true-false", pythonBooleans(&outs[0], &outs[1]))
	m.note("oauth-json-body", tokenBodies(&outs[0], &outs[1]))
	m.note("record-nulls", dropTopNulls(&outs[0]))
	m.note("network-error-transient", networkErrors(&outs[0], &outs[1]))
	m.differ(compareEnd(label, outs)...)
	a, b := partsByStream(outs[0]), partsByStream(outs[1])
	m.readFailures(label, outs, a, b)
	for _, name := range unionKeys(a, b) {
		pa, pb := a[name], b[name]
		if pa == nil {
			pa = &streamParts{}
		}
		if pb == nil {
			pb = &streamParts{}
		}
		d := func(what, format string, args ...any) {
			m.differ(Difference{Stream: name, What: what, Detail: label + ": " + fmt.Sprintf(format, args...)})
		}
		if extra, missing := setDifference(pa.requests, pb.requests); len(extra)+len(missing) > 0 {
			d("requests", "%d requests the reference does not make (first: %s); %d it makes that we do not (first: %s)", len(extra), first(extra), len(missing), first(missing))
		} else if more := moreOften(pa.requests, pb.requests); more != "" {
			d("requests", "asked more often than by the reference: %s", more)
		} else if fewer := moreOften(pb.requests, pa.requests); fewer != "" {
			what := "a stream"
			switch {
			case m.isParent(name):
				what = "a parent stream"
			case name == "oauth token" || name == "session login":
				what = "a token endpoint"
			}
			d("requests", "%s asked less often than by the reference: %s", what, strings.Replace(fewer, "more times", "fewer times", 1))
		}
		if extra, missing := multisetDifference(pa.records, pb.records); len(extra)+len(missing) > 0 {
			d("records", "%d records here (%d not in the reference's, first: %s); the reference %d (%d not here, first: %s)", len(pa.records), len(extra), first(extra), len(pb.records), len(missing), first(missing))
		}
		m.note("running-without-records", runningWithoutRecords(pa, pb))
		if !slices.Equal(pa.statuses, pb.statuses) {
			d("status", "statuses %v, the reference %v", pa.statuses, pb.statuses)
		}
		la, lb := last(pa.states), last(pb.states)
		if la != lb {
			d("state", "last state %s, the reference %s", clip(la, 300), clip(lb, 300))
		}
		if sa, sb := shapes(pa.states), shapes(pb.states); !slices.Equal(sa, sb) {
			d("states", "state shapes %v, the reference %v", sa, sb)
		}
	}
}

func first(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return clip(l[0], 300)
}

func last(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return l[len(l)-1]
}

// setDifference lists the distinct items only in a, and only in b.
func setDifference(a, b []string) (onlyA, onlyB []string) {
	inA, inB := map[string]bool{}, map[string]bool{}
	for _, x := range a {
		inA[x] = true
	}
	for _, x := range b {
		inB[x] = true
	}
	for _, x := range sortedSet(inA) {
		if !inB[x] {
			onlyA = append(onlyA, x)
		}
	}
	for _, x := range sortedSet(inB) {
		if !inA[x] {
			onlyB = append(onlyB, x)
		}
	}
	return onlyA, onlyB
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// multisetDifference lists the items of a not matched in b, and of b not
// matched in a, counting repeats.
func multisetDifference(a, b []string) (onlyA, onlyB []string) {
	count := map[string]int{}
	for _, x := range a {
		count[x]++
	}
	for _, x := range b {
		count[x]--
	}
	for _, k := range sortedKeysInt(count) {
		for n := count[k]; n > 0; n-- {
			onlyA = append(onlyA, k)
		}
		for n := count[k]; n < 0; n++ {
			onlyB = append(onlyB, k)
		}
	}
	return onlyA, onlyB
}

// parents are the names of the manifest's streams that are another
// stream's parent (in a SubstreamPartitionRouter's parent_stream_configs,
// at any depth).
func (m *run) parents() map[string]bool {
	names := map[string]bool{}
	for parent := range m.children() {
		names[parent] = true
	}
	return names
}

// isParent says whether the API's endpoint named stream serves a parent
// stream: stream itself or a twin (another stream read the same way, whose
// requests the API files under the first's name).
func (m *run) isParent(stream string) bool {
	twins := []string{stream}
	if m.plan != nil {
		twins = m.plan.Twins(stream)
	}
	return slices.ContainsFunc(twins, func(s string) bool { return m.parents()[s] })
}

// children maps each of the manifest's parent streams to the streams that
// read it (in their partition router, at any depth: a grandparent's too).
func (m *run) children() map[string][]string {
	if m.childNames != nil {
		return m.childNames
	}
	m.childNames = map[string][]string{}
	resolved, err := manifest.ResolveOnly(manifest.DeepCopy(m.raw).(map[string]any))
	if err != nil {
		return m.childNames
	}
	var walk func(stream string, v any)
	walk = func(stream string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for _, pc := range list(x["parent_stream_configs"]) {
				if name, ok := asMap(asMap(pc)["stream"])["name"].(string); ok {
					m.childNames[name] = append(m.childNames[name], stream)
				}
			}
			for _, e := range x {
				walk(stream, e)
			}
		case []any:
			for _, e := range x {
				walk(stream, e)
			}
		}
	}
	for _, st := range list(resolved["streams"]) {
		name, _ := asMap(st)["name"].(string)
		walk(name, st)
	}
	walk("", resolved["dynamic_streams"])
	return m.childNames
}

// moreOften names a request a makes more often than b.
func moreOften(a, b []string) string {
	count := map[string]int{}
	for _, x := range a {
		count[x]++
	}
	for _, x := range b {
		count[x]--
	}
	for _, k := range sortedKeysInt(count) {
		if count[k] > 0 {
			return fmt.Sprintf("%s (%d more times)", clip(k, 300), count[k])
		}
	}
	return ""
}

func sortedKeysInt(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// shapes are the distinct shapes of states: their keys, with every value
// that is not an object or a list written as its JSON type. Each state is
// taken without its parent_state, and the last one also whole: both runtimes
// commit a parent state once every partition made before it is read, so
// whether a state written while partitions are read at once has it (and
// which parent states it holds) depends on which partition closed first.
func shapes(states []string) []string {
	seen := map[string]bool{}
	for i, s := range states {
		v := parseJSON(s)
		if i == len(states)-1 {
			seen[jsonText(shape(v))] = true
		}
		if m, ok := v.(map[string]any); ok {
			delete(m, "parent_state")
		}
		seen[jsonText(shape(v))] = true
	}
	return sortedSet(seen)
}

func shape(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = shape(e)
		}
		return out
	case []any:
		if len(x) == 0 {
			return []any{}
		}
		return []any{shape(x[0])}
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "boolean"
	}
	return "null"
}
