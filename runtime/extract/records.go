package extract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/runtime/failure"
)

// extractRecords cuts the records at path out of one decoded document, as
// slices of it, scanning it once and validating it on the way, as Airbyte's
// DpathExtractor picks them: an empty path takes the document; a path
// without wildcards takes the one value it leads to, and with a wildcard
// segment ("*", or a glob such as "item_*") every value it matches. A list
// gives its items, a non-empty object itself; an empty object, null, false,
// 0, "", or a path that leads nowhere give no record. With elements set, a
// top-level array is a list of documents, each searched on its own (the JSON
// decoders read a body that way).
//
// Two choices where the reference fails the stream: a list matched by a
// wildcard gives its items instead of being one record, and a null item is
// skipped. Any other value that is not an object is an error.
//
// The records are appended to into (nil: a new slice).
func extractRecords(into [][]byte, doc []byte, path []string, elements bool) ([][]byte, error) {
	records, _, err := cutRecords(into, doc, path, elements)
	return records, err
}

// topMember is a top-level member of a document, as spans of it.
type topMember struct {
	key        []byte // raw, with its quotes
	start, end int    // the value
}

// cutRecords is extractRecords that also gives the top-level members of a
// document that is an object, noted on the way when the path walks into it
// (nil otherwise): a cursor template's response.next_cursor is then decoded
// from its span, without scanning the page a second time.
func cutRecords(into [][]byte, doc []byte, path []string, elements bool) ([][]byte, []topMember, error) {
	s := &scanner{b: doc}
	start := s.ws(0)
	if start == len(doc) {
		return nil, nil, nil
	}
	x := &extractor{s: s, path: path, out: into, docStart: start}
	for _, seg := range path {
		x.glob = x.glob || IsGlob(seg)
	}
	var end int
	var err error
	if elements && doc[start] == '[' {
		end, err = s.items(start, func(i int) (int, error) { return x.walk(i, 0) })
	} else {
		end, err = x.walk(start, 0)
	}
	if err == errTooDeep {
		return nil, nil, err
	}
	if err != nil || s.ws(end) != len(doc) {
		return nil, nil, errNotJSON
	}
	if x.err != nil {
		return nil, nil, x.err
	}
	return x.out, x.top, nil
}

// extractor holds the state of one extraction.
type extractor struct {
	s    *scanner
	path []string
	glob bool // a segment is a wildcard: every match is a record
	out  [][]byte
	err  error // the first value that cannot be a record
	// docStart is where the document starts; top its members when it is
	// an object the path walks into.
	docStart int
	top      []topMember
}

// walk scans the value at i, which the first depth segments of the path
// led to, and returns where it ends.
func (x *extractor) walk(i, depth int) (int, error) {
	s := x.s
	if depth == len(x.path) {
		return x.take(i)
	}
	seg := x.path[depth]
	switch s.b[i] {
	case '{':
		// A repeated key: the last one wins, as in a decoded object.
		seen, mark := false, 0
		atTop := i == x.docStart
		if atTop {
			x.top = []topMember{}
		}
		return s.members(i, func(key []byte, vs int) (end int, err error) {
			if atTop {
				defer func() { x.top = append(x.top, topMember{key, vs, end}) }()
			}
			if !x.segmentMatches(seg, key, -1) {
				return s.value(vs)
			}
			if !x.glob {
				if seen {
					x.out = x.out[:mark]
				}
				seen, mark = true, len(x.out)
			}
			return x.walk(vs, depth+1)
		})
	case '[':
		n := -1
		return s.items(i, func(vs int) (int, error) {
			n++
			if !x.segmentMatches(seg, nil, n) {
				return s.value(vs)
			}
			return x.walk(vs, depth+1)
		})
	}
	return s.value(i)
}

// segmentMatches tells whether a path segment selects an object's key (raw,
// with quotes) or, when key is nil, an array's index.
func (x *extractor) segmentMatches(seg string, key []byte, index int) bool {
	if key == nil {
		if seg == "*" {
			return true
		}
		if IsGlob(seg) {
			ok, _ := path.Match(seg, strconv.Itoa(index))
			return ok
		}
		n, err := strconv.Atoi(seg)
		return err == nil && n == index && seg == strconv.Itoa(n)
	}
	if seg == "*" {
		return true
	}
	if IsGlob(seg) {
		ok, _ := path.Match(seg, unquote(key))
		return ok
	}
	return keyEquals(key, seg)
}

// CheckPath refuses the recursive wildcard "**", which is not supported.
func CheckPath(segs []string, where string) error {
	for i, seg := range segs {
		if strings.Contains(seg, "**") {
			return failure.Config("%s[%d]: the recursive wildcard ** is not supported; name each level, with * for any key", where, i)
		}
	}
	return nil
}

// IsGlob tells whether a path segment is a wildcard ("*", or a glob such as
// "item_*") rather than a key.
func IsGlob(seg string) bool { return strings.ContainsAny(seg, "*?[") }

// take scans the value at i that the path led to and keeps its records.
func (x *extractor) take(i int) (int, error) {
	s := x.s
	switch s.b[i] {
	case '[':
		return s.items(i, func(vs int) (int, error) {
			before := s.lines
			ve, err := s.value(vs)
			if err == nil {
				x.record(vs, ve, s.lines != before)
			}
			return ve, err
		})
	case 'n':
		return s.value(i)
	}
	before := s.lines
	end, err := s.value(i)
	if err != nil {
		return end, err
	}
	if !x.glob {
		if s.b[i] == '{' && s.b[s.ws(i+1)] == '}' {
			return end, nil // an empty object holds no record
		}
		if s.b[i] != '{' && falsy(s.b[i:end]) {
			return end, nil
		}
	}
	x.record(i, end, s.lines != before)
	return end, nil
}

// record adds the object at [start, end) as one line; null is skipped and
// any other value is an error.
func (x *extractor) record(start, end int, multiline bool) {
	raw := x.s.b[start:end]
	switch raw[0] {
	case '{':
	case 'n':
		return
	default:
		if x.err == nil {
			x.err = fmt.Errorf("a record must be a JSON object, got %s", interp.String(string(truncate(raw, 40))))
		}
		return
	}
	if multiline {
		var b bytes.Buffer
		if err := json.Compact(&b, raw); err != nil {
			x.err = err
			return
		}
		raw = b.Bytes()
	}
	x.out = append(x.out, raw)
}

// falsy tells whether a JSON scalar is false in Python: false, 0, "".
func falsy(v []byte) bool {
	switch v[0] {
	case 'f':
		return true
	case '"':
		return len(v) == 2
	case 't':
		return false
	}
	for _, c := range v {
		if c == 'e' || c == 'E' {
			break
		}
		if c >= '1' && c <= '9' {
			return false
		}
	}
	return true
}

var errNotJSON = errors.New("the response body is not valid JSON")

func truncate(b []byte, n int) []byte {
	if len(b) > n {
		return append(append([]byte{}, b[:n]...), "..."...)
	}
	return b
}

// DecodeJSON decodes JSON into template values (integers as int64, lists
// with negative indexes); anything that is not JSON is an empty object.
func DecodeJSON(b []byte) any {
	s := &scanner{b: b}
	v, end, err := s.decode(0)
	if err != nil || s.ws(end) != len(b) {
		return map[string]any{}
	}
	return v
}

// decodeJSONKeys decodes only the top-level keys a template reads (all of the
// body when the usage says All, or when the body is not an object).
func decodeJSONKeys(b []byte, u interp.Usage) any {
	return decodeTopKeys(b, nil, u)
}

// decodeTopKeys is decodeJSONKeys of a valid document whose top-level
// members are known (top not nil): only their values are read.
func decodeTopKeys(b []byte, top []topMember, u interp.Usage) any {
	if top != nil && !u.All {
		m := map[string]any{}
		for _, t := range top {
			if k := unquote(t.key); u.Keys[k] {
				if v, _, err := (&scanner{b: b}).decode(t.start); err == nil {
					m[k] = v
				}
			}
		}
		return m
	}
	if u.All {
		return DecodeJSON(b)
	}
	s := &scanner{b: b}
	start := s.ws(0)
	if start >= len(b) || b[start] != '{' {
		return DecodeJSON(b)
	}
	m := map[string]any{}
	var failed bool
	end, err := s.object(start, func(key []byte, vs, _ int) {
		k := unquote(key)
		if !u.Keys[k] || failed {
			return
		}
		v, _, err := s.decode(vs)
		if err != nil {
			failed = true
			return
		}
		m[k] = v
	})
	if err != nil || failed || s.ws(end) != len(b) {
		return map[string]any{}
	}
	return m
}
