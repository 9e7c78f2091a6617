package differential

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// streamRead is the StreamRead a builder test read printed, nil when it
// printed none.
func streamRead(o output) map[string]any {
	for _, m := range o.ofType("RECORD") {
		return asMap(asMap(m["record"])["data"])
	}
	return nil
}

// compareTestRead compares two builder test reads of a stream as the
// builder shows them: the limit reached, the slices with their descriptor
// and state, each page's request, status and records, the auxiliary
// requests, the inferred schema and the config update.
func (m *run) compareTestRead(stream string, outs [2]output) {
	d := func(format string, args ...any) {
		m.differ(Difference{Stream: stream, What: "test read", Detail: fmt.Sprintf(format, args...)})
	}
	m.testReadFailure(stream, outs)
	a, b := streamRead(outs[0]), streamRead(outs[1])
	switch {
	case a == nil && b == nil:
		if ea, eb := errorTypes(outs[0])[""], errorTypes(outs[1])[""]; fmt.Sprint(ea) != fmt.Sprint(eb) {
			d("no StreamRead; failure types %v, the reference %v%s", ea, eb, firstError(outs))
		}
		return
	case a == nil:
		d("no StreamRead here%s", firstError(outs))
		return
	case b == nil:
		d("no StreamRead from the reference%s", firstError(outs))
		return
	}
	m.note("test-read-record-limit", cutAtRecordLimit(a, b))
	for _, k := range []string{"test_read_limit_reached", "latest_config_update", "inferred_schema"} {
		if diff := firstDifference(a[k], b[k], k); diff != "" {
			d("%s", diff)
		}
	}
	if diff := m.compareAuxiliary(a["auxiliary_requests"], b["auxiliary_requests"], "auxiliary_requests"); diff != "" {
		d("%s", diff)
	}
	sa, sb := list(a["slices"]), list(b["slices"])
	if regrouped, ok := regroupRacedSlices(sa, sb); ok {
		sb = regrouped
		m.note("test-read-first-slice-descriptor", 1)
	}
	if len(sa) != len(sb) {
		d("%d slices, the reference %d (first slices: %s; %s)", len(sa), len(sb), clip(jsonText(sliceSummary(sa)), 300), clip(jsonText(sliceSummary(sb)), 300))
		return
	}
	for i := range sa {
		x, y := asMap(sa[i]), asMap(sb[i])
		where := fmt.Sprintf("slices[%d]", i)
		m.note("state-at-slice-end", stateAtSliceEnd(x, y))
		for _, k := range []string{"slice_descriptor", "state"} {
			if diff := firstDifference(x[k], y[k], where+"."+k); diff != "" {
				d("%s", diff)
			}
		}
		if diff := m.compareAuxiliary(x["auxiliary_requests"], y["auxiliary_requests"], where+".auxiliary_requests"); diff != "" {
			d("%s", diff)
		}
		pa, pb := list(x["pages"]), list(y["pages"])
		if len(pa) != len(pb) {
			d("%s: %d pages, the reference %d", where, len(pa), len(pb))
			continue
		}
		for j := range pa {
			if diff := m.comparePage(asMap(pa[j]), asMap(pb[j]), fmt.Sprintf("%s.pages[%d]", where, j)); diff != "" {
				d("%s", diff)
			}
		}
	}
}

// stateAtSliceEnd: a record's cursor value counts at most up to its slice's
// end; the reference lets a record from after the slice move the state. A
// value of our slice's state that is a value of its descriptor (the
// slice's end), where the reference's differs, takes the reference's.
func stateAtSliceEnd(ours, theirs map[string]any) int {
	a, b := list(ours["state"]), list(theirs["state"])
	if len(a) != len(b) {
		return 0
	}
	ends := map[string]bool{}
	for _, v := range asMap(ours["slice_descriptor"]) {
		if end, ok := v.(string); ok {
			ends[end] = true
		}
	}
	n := 0
	for i := range a {
		sa := asMap(asMap(asMap(a[i])["stream"])["stream_state"])
		sb := asMap(asMap(asMap(b[i])["stream"])["stream_state"])
		for k, v := range sa {
			end, _ := v.(string)
			if w, ok := sb[k]; ok && ends[end] && v != w {
				sa[k] = w
				n++
			}
		}
	}
	return n
}

// comparePage compares a test read's page: its request, status and records.
func (m *run) comparePage(a, b map[string]any, where string) string {
	ra, rb := pageRequest(asMap(a["request"])), pageRequest(asMap(b["request"]))
	m.noneInURL(ra, rb)
	m.firstPageToken(ra, rb)
	m.pythonBoolean(ra, rb)
	if diff := firstDifference(ra, rb, where+".request"); diff != "" {
		return diff
	}
	if diff := firstDifference(asMap(a["response"])["status"], asMap(b["response"])["status"], where+".response.status"); diff != "" {
		return diff
	}
	return firstDifference(a["records"], b["records"], where+".records")
}

// pageRequest is what is compared of a test read's request.
func pageRequest(r map[string]any) map[string]any {
	headers := map[string]any{}
	for k, v := range asMap(r["headers"]) {
		if !clientHeaders[canonical(k)] {
			headers[canonical(k)] = v
		}
	}
	return map[string]any{"url": r["url"], "http_method": r["http_method"], "body": jsonBody(r["body"]), "headers": headers}
}

// jsonBody is a JSON body as compact JSON with sorted keys: the reference
// writes Python's json.dumps (", " and ": ", keys in the order they were
// added), which means the same.
func jsonBody(body any) any {
	text, ok := body.(string)
	var v any
	if !ok || json.Unmarshal([]byte(text), &v) != nil {
		return body
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func canonical(k string) string {
	parts := strings.Split(strings.ToLower(k), "-")
	for i, p := range parts {
		if p != "" {
			parts[i] = strings.ToUpper(p[:1]) + p[1:]
		}
	}
	return strings.Join(parts, "-")
}

// withoutFirstPageToken tells whether ours is theirs with one more query
// parameter holding 0 or 1: the seed's first page token.
func withoutFirstPageToken(ours, theirs string) bool {
	ob, oq, _ := strings.Cut(ours, "?")
	tb, tq, _ := strings.Cut(theirs, "?")
	if ob != tb {
		return false
	}
	q, err1 := url.ParseQuery(oq)
	t, err2 := url.ParseQuery(tq)
	if err1 != nil || err2 != nil || len(q) != len(t)+1 {
		return false
	}
	for k, vs := range q {
		if len(vs) == 1 && (vs[0] == "0" || vs[0] == "1") {
			without := url.Values{}
			for k2, v2 := range q {
				if k2 != k {
					without[k2] = v2
				}
			}
			if sortedQuery(without) == sortedQuery(t) {
				return true
			}
		}
	}
	return false
}

// firstPageToken takes the seed's first page token out of our request's
// URL or JSON body where it is the one difference with the reference's.
func (m *run) firstPageToken(ours, theirs map[string]any) {
	if ours["url"] != theirs["url"] && withoutFirstPageToken(fmt.Sprint(ours["url"]), fmt.Sprint(theirs["url"])) {
		ours["url"] = theirs["url"]
		m.note("first-page-token", 1)
	}
	if body, ok := theirs["body"].(string); ok && ours["body"] != body && slices.Contains(withoutTokenField(fmt.Sprint(ours["body"])), body) {
		ours["body"] = body
		m.note("first-page-token", 1)
	}
}

// pythonBoolean takes our true and false query values for the reference's
// True and False where that is the one difference of the URLs (see
// pythonBooleans).
func (m *run) pythonBoolean(ours, theirs map[string]any) {
	url, ok := ours["url"].(string)
	if !ok || url == theirs["url"] {
		return
	}
	if path, query, found := strings.Cut(url, "?"); found && path+"?"+pythonSpelling(query) == theirs["url"] {
		ours["url"] = theirs["url"]
		m.note("booleans-true-false", 1)
	}
}

// compareAuxiliary compares two lists of auxiliary requests. A parent
// stream's requests are paginated as the stream's own pages are: the first
// carries the seed's first page token.
func (m *run) compareAuxiliary(ours, theirs any, where string) string {
	a, b := auxiliary(ours), auxiliary(theirs)
	a, n := sessionLogins(a, b)
	m.note("test-read-session-logins", n)
	for i := 0; i < len(a) && i < len(b); i++ {
		m.noneInURL(asMap(a[i]), asMap(b[i]))
		m.firstPageToken(asMap(a[i]), asMap(b[i]))
		m.pythonBoolean(asMap(a[i]), asMap(b[i]))
	}
	return firstDifference(a, b, where)
}

// auxiliary is what is compared of auxiliary requests: title, type and the
// request's method and URL.
func auxiliary(v any) []any {
	var out []any
	for _, e := range list(v) {
		a := asMap(e)
		r := asMap(a["request"])
		out = append(out, map[string]any{"title": a["title"], "type": a["type"], "url": r["url"], "http_method": r["http_method"]})
	}
	return out
}

// sliceSummary lists each slice's descriptor and page count.
func sliceSummary(slices []any) []any {
	var out []any
	for _, s := range slices {
		out = append(out, map[string]any{"slice": asMap(s)["slice_descriptor"], "pages": len(list(asMap(s)["pages"]))})
	}
	return out
}

// regroupRacedSlices: the reference's threads race to log a substream's
// slices (test-read-first-slice-descriptor), so the pages of one partition
// may show under another slice's descriptor, or one slice split in two.
// When the reference's pages, in order, are ours (their request URLs) but
// grouped or labelled otherwise, its pages are regrouped as ours are, under
// our descriptors, each slice with the reference's state and auxiliary
// requests of the slice its last page was in.
func regroupRacedSlices(ours, theirs []any) ([]any, bool) {
	type page struct {
		v     any
		slice map[string]any // the reference's slice it was in
	}
	var pa []any
	var pb []page
	for _, s := range ours {
		pa = append(pa, list(asMap(s)["pages"])...)
	}
	for _, s := range theirs {
		for _, p := range list(asMap(s)["pages"]) {
			pb = append(pb, page{p, asMap(s)})
		}
	}
	if len(pa) != len(pb) || len(pa) == 0 || sameGrouping(ours, theirs) && sameDescriptors(ours, theirs) {
		return nil, false
	}
	for i := range pa {
		if fmt.Sprint(asMap(asMap(pa[i])["request"])["url"]) != fmt.Sprint(asMap(asMap(pb[i].v)["request"])["url"]) {
			return nil, false
		}
	}
	out := make([]any, 0, len(ours))
	next := 0
	for _, s := range ours {
		pages := make([]any, len(list(asMap(s)["pages"])))
		var last map[string]any
		for j := range pages {
			pages[j], last = pb[next].v, pb[next].slice
			next++
		}
		out = append(out, map[string]any{"slice_descriptor": asMap(s)["slice_descriptor"], "pages": pages,
			"state": last["state"], "auxiliary_requests": last["auxiliary_requests"]})
	}
	return out, true
}

// sameGrouping tells whether two lists of slices hold as many pages each.
func sameGrouping(a, b []any) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(list(asMap(a[i])["pages"])) != len(list(asMap(b[i])["pages"])) {
			return false
		}
	}
	return true
}

// sameDescriptors tells whether two lists of slices (as many) have the same
// descriptors, in order.
func sameDescriptors(a, b []any) bool {
	for i := range a {
		if jsonText(asMap(a[i])["slice_descriptor"]) != jsonText(asMap(b[i])["slice_descriptor"]) {
			return false
		}
	}
	return true
}
