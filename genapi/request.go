package genapi

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"net/url"
	"sort"
	"strings"
)

// request is one request as the API reads it.
type request struct {
	method, path, host string
	query              url.Values
	header             http.Header
	body               []byte
}

func newRequest(r *http.Request, body []byte) *request {
	return &request{method: r.Method, path: r.URL.Path, host: r.Host, query: r.URL.Query(), header: r.Header, body: body}
}

// queryValue is a query parameter's values, joined with commas.
func (r *request) queryValue(key string) (string, bool) {
	v, ok := r.query[key]
	return strings.Join(v, ","), ok
}

// bodyValue is a top-level field of a JSON object body, a text as it is and
// any other value as JSON.
func (r *request) bodyValue(key string) (string, bool) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(r.body, &obj) != nil {
		return "", false
	}
	raw, ok := obj[key]
	if !ok {
		return "", false
	}
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return text, true
	}
	return string(raw), true
}

// injected reads the value a request option put into the request: a query
// parameter, a header, a form field or a value of the JSON body.
func (r *request) injected(into string, field []string) (string, bool) {
	if len(field) == 0 {
		return "", false
	}
	switch into {
	case "request_parameter":
		v, ok := r.query[field[0]]
		return strings.Join(v, ","), ok
	case "header":
		v := r.header.Get(field[0])
		return v, v != ""
	case "body_data":
		q, err := url.ParseQuery(string(r.body))
		v, ok := q[field[0]]
		return strings.Join(v, ","), err == nil && ok
	case "body_json":
		var v any
		if json.Unmarshal(r.body, &v) != nil {
			return "", false
		}
		for _, k := range field {
			v = asMap(v)[k]
		}
		if v == nil {
			return "", false
		}
		if s, ok := v.(string); ok {
			return s, true
		}
		return fmt.Sprint(v), true
	}
	return "", false
}

// values are the texts the request carries: path segments, query values,
// header values, and the form fields or JSON leaves of its body.
func (r *request) values() []string {
	var out []string
	for _, seg := range strings.Split(r.path, "/") {
		if u, err := url.PathUnescape(seg); err == nil {
			seg = u
		}
		out = append(out, seg)
	}
	for _, k := range sortedKeys(r.query) {
		out = append(out, r.query[k]...)
	}
	return append(out, r.bodyValues()...)
}

func (r *request) bodyValues() []string {
	var out []string
	for _, f := range r.bodyFields() {
		out = append(out, f.value)
	}
	return out
}

// field is one leaf of a request's body: its key (a JSON object's or a
// form's; "" in a list) and its text.
type field struct{ key, value string }

// bodyFields are the form fields or JSON leaves of the body, keys sorted at
// every level, so that the order the body was written in means nothing.
func (r *request) bodyFields() []field {
	var out []field
	var v any
	if json.Unmarshal(r.body, &v) == nil {
		var walk func(key string, v any)
		walk = func(key string, v any) {
			switch x := v.(type) {
			case map[string]any:
				for _, k := range sortedKeys(x) {
					walk(k, x[k])
				}
			case []any:
				for _, e := range x {
					walk("", e)
				}
			case string:
				out = append(out, field{key, x})
			case nil:
			default:
				out = append(out, field{key, fmt.Sprint(x)})
			}
		}
		walk("", v)
		return out
	}
	if q, err := url.ParseQuery(string(r.body)); err == nil {
		for _, k := range sortedKeys(q) {
			for _, v := range q[k] {
				out = append(out, field{k, v})
			}
		}
	}
	return out
}

// contains tells whether the request carries s: in its path, a query value,
// a header value or its body, decoded.
func (r *request) contains(s string) bool {
	if s == "" {
		return false
	}
	if strings.Contains(r.path, s) || strings.Contains(string(r.body), s) {
		return true
	}
	for _, v := range r.values() {
		if strings.Contains(v, s) {
			return true
		}
	}
	for _, vs := range r.header {
		for _, v := range vs {
			if strings.Contains(v, s) {
				return true
			}
		}
	}
	return false
}

// seed numbers the records of a page from what the request asks for, less
// its page token (skip tells it, with the query or body key it has), its
// times (whole, or inside a value: ISO 8601 or epoch) and its values
// "None": pages of one partition, and partitions, get distinct records; the
// same page asked in another time window, or by another run, or with a null
// sent as Python's text None (Airbyte's runtime sends it; ours leaves the
// parameter out), the same ones, and a boolean asked as True (Python's
// spelling, as Airbyte's runtime renders a config boolean) or true the same
// ones.
func (r *request) seed(stream string, page int, isToken func(key, value string) bool) int {
	skip := func(key, value string) bool { return value == "None" || isToken(key, value) }
	keep := func(v string) string {
		if _, isTime := parseTime(v); isTime || skip("", v) {
			return "~"
		}
		if v == "True" || v == "False" {
			return strings.ToLower(v) // one boolean, in Python's spelling or JSON's
		}
		return epochTime.ReplaceAllString(isoTime.ReplaceAllString(v, "~"), "~")
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%s %s", stream, r.method)
	for _, seg := range strings.Split(r.path, "/") {
		fmt.Fprintf(h, "/%s", keep(seg))
	}
	var pairs []string
	for k, vs := range r.query {
		for _, v := range vs {
			if !skip(k, v) {
				pairs = append(pairs, k+"="+keep(v))
			}
		}
	}
	sort.Strings(pairs)
	fmt.Fprintf(h, "?%s", strings.Join(pairs, "&"))
	for _, f := range r.bodyFields() {
		if skip(f.key, f.value) {
			continue
		}
		fmt.Fprintf(h, "|%s", keep(f.value))
	}
	return int(h.Sum64()%9000)*10000 + page*1000
}
