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
// (or a field of its JSON body) holding 0 or 1 is left out, is that first
// request. A request of ours the reference also makes can be both: two
// streams reading one path (box's files and folders, one with
// inject_on_first_request), whose first pages we ask once, as one request;
// a request of the reference's first page that we then do not make is
// counted as that request of ours, without its token.
func firstPageTokens(ours, ref *output) int {
	n := asTheReferences(ours, ref, withoutFirstToken)
	ourKeys := requestKeys(ours.exchanges)
	for _, r := range ref.exchanges {
		key := requestKey(r)
		if ourKeys[key] {
			continue
		}
		for _, e := range ours.exchanges {
			if without, ok := withoutFirstToken(e, map[string]bool{key: true}); ok {
				ours.exchanges = append(ours.exchanges, without)
				ourKeys[key] = true
				n++
				break
			}
		}
	}
	return n
}

// withoutFirstToken is e without the query parameter, or the field of its
// JSON body, holding 0 or 1 that makes it one of the requests of want.
func withoutFirstToken(e genapi.Exchange, want map[string]bool) (genapi.Exchange, bool) {
	if body, ok := firstInBody(e, want); ok {
		e.Body = body
		return e, true
	}
	q, err := url.ParseQuery(e.RawQuery)
	if e.RawQuery == "" || err != nil {
		return e, false
	}
	for k, vs := range q {
		if len(vs) != 1 || vs[0] != "0" && vs[0] != "1" {
			continue
		}
		trial := e
		without := url.Values{}
		for k2, v2 := range q {
			if k2 != k {
				without[k2] = v2
			}
		}
		trial.RawQuery = sortedQuery(without)
		if want[requestKey(trial)] {
			return trial, true
		}
	}
	return e, false
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
	return asTheReferences(ours, ref, func(e genapi.Exchange, refKeys map[string]bool) (genapi.Exchange, bool) {
		trial := e
		trial.RawQuery = pythonSpelling(e.RawQuery)
		return trial, trial.RawQuery != e.RawQuery && refKeys[requestKey(trial)]
	})
}

// asTheReferences rewrites each request of ours that the reference does not
// make into the reference's request that rewrite finds for it (ok), and
// counts them.
func asTheReferences(ours, ref *output, rewrite func(e genapi.Exchange, refKeys map[string]bool) (genapi.Exchange, bool)) int {
	refKeys := requestKeys(ref.exchanges)
	n := 0
	for i := range ours.exchanges {
		e := &ours.exchanges[i]
		if refKeys[requestKey(*e)] {
			continue
		}
		if rewritten, ok := rewrite(*e, refKeys); ok {
			*e = rewritten
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

// requestKeys are the requestKeys of exchanges.
func requestKeys(exchanges []genapi.Exchange) map[string]bool {
	keys := make(map[string]bool, len(exchanges))
	for _, e := range exchanges {
		keys[requestKey(e)] = true
	}
	return keys
}

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

// nullsAsNone: a template rendering null (Python's None) as a query
// parameter is sent by the reference as the text "None"; we leave the
// parameter out (README, Templates). A request of the reference that we do
// not make is compared without its parameters holding "None"; this
// normalizer changes the reference's side, the one that sent them.
func nullsAsNone(ours, ref *output) int {
	ourKeys := requestKeys(ours.exchanges)
	n := 0
	for i := range ref.exchanges {
		e := &ref.exchanges[i]
		if without := withoutNone(e.RawQuery); without != e.RawQuery && !ourKeys[requestKey(*e)] {
			e.RawQuery = without
			n++
		}
	}
	return n
}

// withoutNone is a query without its parameters holding "None", the other
// pairs kept in their order.
func withoutNone(rawQuery string) string {
	var kept []string
	for _, pair := range strings.Split(rawQuery, "&") {
		_, v, _ := strings.Cut(pair, "=")
		if value, err := url.QueryUnescape(v); err != nil || value != "None" {
			kept = append(kept, pair)
		}
	}
	return strings.Join(kept, "&")
}

// noneInURL takes the parameters holding "None" out of the reference's
// test read URL where it differs from ours (see nullsAsNone).
func (m *run) noneInURL(ours, theirs map[string]any) {
	u, ok := theirs["url"].(string)
	if !ok || ours["url"] == u {
		return
	}
	base, query, found := strings.Cut(u, "?")
	if !found {
		return
	}
	without := withoutNone(query)
	if without == query {
		return
	}
	if without != "" {
		base += "?" + without
	}
	theirs["url"] = base
	m.note("null-sent-as-none", 1)
}

// sessionLogins: a session token without expiration_duration is obtained
// once for each request here; the reference's SessionTokenAuthenticator logs
// in once for each part of a request it fills (two for a Bearer header, six
// for an API key), each login an auxiliary request. Where both lists show
// the same login request at the same place, our run of that request
// repeated takes the length of the reference's run. It returns our list and
// how many runs it changed.
func sessionLogins(ours, theirs []any) ([]any, int) {
	var out []any
	n, j := 0, 0
	for i := 0; i < len(ours); {
		ra := sameRun(ours, i)
		if j < len(theirs) && isLogin(ours[i]) && jsonText(ours[i]) == jsonText(theirs[j]) {
			rb := sameRun(theirs, j)
			if ra != rb {
				n++
			}
			out = append(out, theirs[j:j+rb]...)
			i, j = i+ra, j+rb
			continue
		}
		out = append(out, ours[i])
		i, j = i+1, j+1
	}
	return out, n
}

// sameRun is how many entries from i on equal entries[i].
func sameRun(entries []any, i int) int {
	n := 1
	for i+n < len(entries) && jsonText(entries[i+n]) == jsonText(entries[i]) {
		n++
	}
	return n
}

// isLogin tells whether an auxiliary request (as compared) is a session
// token's login request, of the stream or of a parent.
func isLogin(entry any) bool {
	return strings.HasSuffix(fmt.Sprint(asMap(entry)["title"]), "Login request")
}
