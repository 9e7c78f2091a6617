package corpus

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/runtime/interp"
	"github.com/airbyte-go/source-declarative/runtime/request"
)

// Page is one answer of the mock.
type Page struct {
	Body        []byte
	ContentType string
	Header      http.Header
}

// stopper evaluates a cursor paginator's templates as the runtime does, to
// find a response that ends pagination.
type stopper struct {
	stop, cursor *interp.Template // stop is nil when the manifest has none
	vars         interp.Vars      // config and parameters
}

// ends tells whether a page (decoded body, headers, the records read from
// it) is the last: the stop condition holds or, unless byStop, the next
// cursor is empty.
func (s stopper) ends(body any, h http.Header, records []any, byStop bool) bool {
	vars := s.pageVars(body, h, records)
	if s.stop != nil {
		if stop, err := s.stop.Bool(vars); err == nil && stop {
			return true
		}
	}
	if byStop {
		return false
	}
	v, err := s.cursor.Eval(vars)
	return err == nil && !interp.Truthy(v)
}

// next is the cursor the page yields, "" when there is none.
func (s stopper) next(body any, h http.Header, records []any) string {
	v, err := s.cursor.Eval(s.pageVars(body, h, records))
	if err != nil || !interp.Truthy(v) {
		return ""
	}
	return interp.String(v)
}

// pageVars are the variables of cursor templates after a page, as the
// runtime's paginator builds them.
func (s stopper) pageVars(body any, h http.Header, records []any) interp.Vars {
	vars := interp.Vars{"response": body, "headers": request.HeaderVars(h),
		"last_records": interp.List(records), "last_page_size": int64(len(records)), "last_record": nil}
	if len(records) > 0 {
		vars["last_record"] = records[len(records)-1]
	}
	for k, v := range s.vars {
		vars[k] = v
	}
	return vars
}

// unset and parentOnly are the two candidates of a key chain that write no
// value: the chain absent, or its parents present as empty objects.
type marker int

const (
	unset marker = iota
	parentOnly
)

// maxChains and maxTries bound the search for a last page.
const (
	maxChains = 4
	maxTries  = 20000
)

// findEnd looks for the additions to body (a decoded response) and the
// headers that make s end pagination, as a real API would: the stop
// condition holding if the manifest has one, else (or if none makes it hold)
// an empty cursor. Every key chain the templates read from response and
// headers is tried absent, with empty parents, and set to null, false, "",
// 0, {}, [], true or a string the templates quote; keys the body already
// holds (the records) are left alone. ok is false when nothing ends it.
func (s stopper) findEnd(body any, records []any) (any, http.Header, bool) {
	if s.stop != nil {
		if b, h, ok := s.search(body, records, true); ok {
			return b, h, true
		}
	}
	return s.search(body, records, false)
}

func (s stopper) search(body any, records []any, byStop bool) (any, http.Header, bool) {
	src := s.cursor.Source
	if s.stop != nil {
		src += " " + s.stop.Source
	}
	type chain struct {
		root string
		keys []string
	}
	var chains []chain
	seen := map[string]bool{}
	for _, root := range []string{"response", "headers"} {
		for _, keys := range Accesses(src, root) {
			id := root + "." + strings.Join(keys, ".")
			if _, held := asMap(body)[keys[0]]; seen[id] || root == "response" && held {
				continue
			}
			seen[id] = true
			chains = append(chains, chain{root, keys})
		}
	}
	if len(chains) > maxChains {
		chains = chains[:maxChains]
	}
	values := []any{unset, parentOnly, nil, false, "", int64(0), map[string]any{}, []any{}, true}
	for _, l := range literals(src) {
		values = append(values, l)
	}
	idx := make([]int, len(chains))
	for try := 0; try < maxTries; try++ {
		b := manifest.DeepCopy(body)
		headers := map[string]any{}
		for i, c := range chains {
			tree := headers
			if c.root == "response" {
				m, ok := b.(map[string]any)
				if !ok {
					continue
				}
				tree = m
			}
			place(tree, c.keys, values[idx[i]])
		}
		h := headerOf(headers)
		if s.ends(b, h, records, byStop) {
			return b, h, true
		}
		// the next combination, odometer-wise
		i := 0
		for ; i < len(idx); i++ {
			idx[i]++
			if idx[i] < len(values) {
				break
			}
			idx[i] = 0
		}
		if i == len(idx) {
			break
		}
	}
	return body, http.Header{}, false
}

// place writes v at keys in tree, making the parents; unset writes nothing,
// parentOnly only the parents.
func place(tree map[string]any, keys []string, v any) {
	if v == unset {
		return
	}
	cur := tree
	for _, k := range keys[:len(keys)-1] {
		next, ok := cur[k].(map[string]any)
		if !ok {
			if _, taken := cur[k]; taken {
				return
			}
			next = map[string]any{}
			cur[k] = next
		}
		cur = next
	}
	if v != parentOnly {
		cur[keys[len(keys)-1]] = manifest.DeepCopy(v)
	}
}

// headerOf turns the header tree of a candidate into HTTP headers: link
// (any case) becomes a Link header, one link per relation holding the
// relation's parameters; any other key a header of its value.
func headerOf(tree map[string]any) http.Header {
	h := http.Header{}
	for name, v := range tree {
		if !strings.EqualFold(name, "link") {
			if v != nil {
				h.Set(name, interp.String(v))
			}
			continue
		}
		rels, _ := v.(map[string]any)
		for _, rel := range interp.SortedKeys(rels) {
			params, _ := rels[rel].(map[string]any)
			url, _ := params["url"].(string)
			if url == "" {
				url = "http://mock.invalid/next"
			}
			link := fmt.Sprintf("<%s>; rel=%q", url, rel)
			for _, k := range interp.SortedKeys(params) {
				if k != "url" && k != "rel" {
					link += fmt.Sprintf("; %s=%q", k, interp.String(params[k]))
				}
			}
			h.Add("Link", link)
		}
	}
	return h
}
