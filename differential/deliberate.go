package differential

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/airbyte-go/source-declarative/genapi"
)

// The differences we make on purpose that show in every manifest using a
// component are taken out before comparing, each counted under its entry of
// allowed.yaml (which says why): a normalizer changes only our side, only
// where the result then equals the reference's.

// firstPageTokens: the seed says the first request of offset and page
// pagination carries offset 0 or the start page; the reference sends none
// (unless inject_on_first_request). A request of ours that the reference
// does not make, and that is one of its requests once a query parameter
// (or a top-level field of its JSON body) holding 0 or 1 is left out, is
// that first request.
func firstPageTokens(ours, ref *output) int {
	refKeys := map[string]bool{}
	for _, e := range ref.exchanges {
		refKeys[requestKey(e)] = true
	}
	n := 0
	for i := range ours.exchanges {
		e := &ours.exchanges[i]
		if refKeys[requestKey(*e)] {
			continue
		}
		if body, ok := firstInBody(*e, refKeys); ok {
			e.Body = body
			n++
			continue
		}
		if e.RawQuery == "" {
			continue
		}
		q, err := url.ParseQuery(e.RawQuery)
		if err != nil {
			continue
		}
		for k, vs := range q {
			if len(vs) != 1 || vs[0] != "0" && vs[0] != "1" {
				continue
			}
			trial := *e
			without := url.Values{}
			for k2, v2 := range q {
				if k2 != k {
					without[k2] = v2
				}
			}
			trial.RawQuery = sortedQuery(without)
			if refKeys[requestKey(trial)] {
				e.RawQuery = trial.RawQuery
				n++
				break
			}
		}
	}
	return n
}

// firstInBody is e's JSON body without the field holding the first page
// token, when the reference made that request.
func firstInBody(e genapi.Exchange, refKeys map[string]bool) (string, bool) {
	for _, body := range withoutTokenField(e.Body) {
		trial := e
		trial.Body = body
		if refKeys[requestKey(trial)] {
			return body, true
		}
	}
	return "", false
}

// withoutTokenField lists a JSON object body (as the normalizer writes it:
// compact, keys sorted) without each of its fields holding 0 or 1, at any
// depth (a page_token_option's field_path).
func withoutTokenField(body string) []string {
	var obj map[string]any
	if !strings.HasPrefix(body, "{") || json.Unmarshal([]byte(body), &obj) != nil {
		return nil
	}
	var out []string
	var walk func(m map[string]any)
	walk = func(m map[string]any) {
		for k, v := range m {
			if inner, ok := v.(map[string]any); ok {
				walk(inner)
				continue
			}
			if v != 0.0 && v != 1.0 {
				continue
			}
			delete(m, k)
			b, _ := json.Marshal(obj)
			out = append(out, string(b))
			m[k] = v
		}
	}
	walk(obj)
	return out
}

// pythonBooleans: a config boolean rendered into a query parameter is sent
// true/false (README); the reference sends Python's True/False. A request
// of ours that the reference does not make, and that is one of its requests
// once its true and false query values are spelled as Python spells them,
// is that request (the generic API serves both the same records).
func pythonBooleans(ours, ref *output) int {
	refKeys := map[string]bool{}
	for _, e := range ref.exchanges {
		refKeys[requestKey(e)] = true
	}
	n := 0
	for i := range ours.exchanges {
		e := &ours.exchanges[i]
		if refKeys[requestKey(*e)] {
			continue
		}
		trial := *e
		trial.RawQuery = pythonSpelling(e.RawQuery)
		if trial.RawQuery != e.RawQuery && refKeys[requestKey(trial)] {
			e.RawQuery = trial.RawQuery
			n++
		}
	}
	return n
}

// pythonSpelling writes a query's true and false values as Python's True
// and False.
func pythonSpelling(query string) string {
	return jsonBoolean.ReplaceAllStringFunc(query, func(m string) string {
		return strings.Replace(strings.Replace(m, "=true", "=True", 1), "=false", "=False", 1)
	})
}

var jsonBoolean = regexp.MustCompile(`=(true|false)(&|$)`)

// sortedQuery encodes a query as the normalizer writes it: sorted pairs.
func sortedQuery(q url.Values) string {
	var pairs []string
	for k, vs := range q {
		for _, v := range vs {
			pairs = append(pairs, url.QueryEscape(k)+"="+url.QueryEscape(v))
		}
	}
	sort.Strings(pairs)
	return strings.Join(pairs, "&")
}

// tokenBodies: the seed says the OAuth token request is a JSON body; the
// reference sends a form. Our JSON body of a token request is compared as
// the form of the same fields (a list as repeated fields, as Python's
// requests encodes it), without the Content-Type either side sets.
func tokenBodies(ours, ref *output) int {
	n := 0
	for _, o := range []*output{ours, ref} {
		for i := range o.exchanges {
			e := &o.exchanges[i]
			if e.Endpoint != "oauth token" {
				continue
			}
			e.Header = e.Header.Clone()
			e.Header.Del("Content-Type")
			var fields map[string]any
			if o == ours && json.Unmarshal([]byte(e.Body), &fields) == nil {
				form := url.Values{}
				for k, v := range fields {
					values, isList := v.([]any)
					if !isList {
						values = []any{v}
					}
					for _, e := range values {
						if s, ok := e.(string); ok {
							form.Add(k, s)
						} else {
							b, _ := json.Marshal(e)
							form.Add(k, string(b))
						}
					}
				}
				e.Body = "form:" + sortedQuery(form)
				n++
			}
		}
	}
	return n
}

// dropTopNulls: the reference's serializer leaves out a record's top-level
// nulls (serpyco-rs's omit_none); we keep the record as the API sent it.
func dropTopNulls(ours *output) int {
	n := 0
	for _, m := range ours.ofType("RECORD") {
		data := asMap(asMap(m["record"])["data"])
		dropped := false
		for k, v := range data {
			if v == nil {
				delete(data, k)
				dropped = true
			}
		}
		if dropped {
			n++
		}
	}
	return n
}

// testReadMaxRecords is the max_records of the harness's test reads.
const testReadMaxRecords = 100

// cutAtRecordLimit: the reference's test read (CDK 7.28) does not stop at
// max_records (its partitions are never given the limit, and its grouper
// counts records without stopping), so it reads every page and slice up to
// the page and slice limits; we stop at max_records, as the builder asks.
// When our StreamRead holds exactly max_records records and the reference's
// more, the reference's is cut at the same record: the rest of that page and
// the pages and slices after it are left out. The state of the slice cut
// (the reference's counts records read past the limit) is compared on
// neither side. This normalizer changes the reference's side: it is the one
// that read past the limit.
func cutAtRecordLimit(ours, ref map[string]any) int {
	if recordCount(ours) != testReadMaxRecords || recordCount(ref) <= testReadMaxRecords {
		return 0
	}
	left := testReadMaxRecords
	refSlices := list(ref["slices"])
	for i, s := range refSlices {
		slice := asMap(s)
		pages := list(slice["pages"])
		for j, p := range pages {
			records := list(asMap(p)["records"])
			if len(records) < left {
				left -= len(records)
				continue
			}
			asMap(p)["records"] = records[:left]
			slice["pages"] = pages[:j+1]
			ref["slices"] = refSlices[:i+1]
			delete(slice, "state")
			if oursSlices := list(ours["slices"]); len(oursSlices) > 0 {
				delete(asMap(oursSlices[len(oursSlices)-1]), "state")
			}
			return 1
		}
	}
	return 0
}

// recordCount counts the records of a StreamRead.
func recordCount(read map[string]any) int {
	n := 0
	for _, s := range list(read["slices"]) {
		for _, p := range list(asMap(s)["pages"]) {
			n += len(list(asMap(p)["records"]))
		}
	}
	return n
}

func parseJSON(s string) any {
	var v any
	json.Unmarshal([]byte(s), &v)
	return v
}

// runningWithoutRecords: a stream of ours without records says RUNNING (as
// Airbyte's acceptance tests ask); the reference says it only at a first
// record. Our RUNNING is taken out where the reference has none.
func runningWithoutRecords(ours, ref *streamParts) int {
	if len(ours.records) > 0 || !slices.Contains(ours.statuses, "RUNNING") || slices.Contains(ref.statuses, "RUNNING") {
		return 0
	}
	ours.statuses = slices.DeleteFunc(ours.statuses, func(s string) bool { return s == "RUNNING" })
	return 1
}

// networkErrors: a request that cannot reach its host (a host the generic
// API does not stand in for, behind the closed proxy) fails after its
// retries as a transient_error here, as the CDK's own error mapping calls a
// RequestException; the reference's HTTP client reports the exhausted
// retries as a system_error. Our transient_error of a stream whose
// reference error is that one is compared as the reference's.
func networkErrors(ours, ref *output) int {
	exhausted := map[any]bool{}
	for _, t := range ref.ofType("TRACE") {
		e := asMap(asMap(t["trace"])["error"])
		msg := fmt.Sprint(e["message"])
		if e["failure_type"] == "system_error" && strings.HasPrefix(msg, "Exhausted available request attempts") &&
			(strings.Contains(msg, "ProxyError") || strings.Contains(msg, "ConnectionError")) {
			exhausted[asMap(e["stream_descriptor"])["name"]] = true
		}
	}
	n := 0
	for _, t := range ours.ofType("TRACE") {
		e := asMap(asMap(t["trace"])["error"])
		if e["failure_type"] == "transient_error" && exhausted[asMap(e["stream_descriptor"])["name"]] &&
			strings.Contains(fmt.Sprint(e["message"]), "proxyconnect tcp") {
			e["failure_type"] = "system_error"
			n++
		}
	}
	return n
}
