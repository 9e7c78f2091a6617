package runtime

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/airbyte-go/source-declarative/runtime/interp"
)

// extractRecords returns the records at path in a JSON body as slices of
// the body, in one validating pass and without decoding them: an empty path
// is the body itself (a top-level array gives its items, an object is one
// record); "*" matches every key or item of one level; a list found at the
// end gives its items.
func extractRecords(body []byte, path []string) ([][]byte, error) {
	s := &scanner{b: body}
	start := s.ws(0)
	if start == len(body) {
		return nil, nil
	}
	var out [][]byte
	var failure error
	var walk func(start, end, depth int) error
	walk = func(start, end, depth int) error {
		if depth == len(path) {
			return collectRecords(s, start, end, depth == 0, &out)
		}
		seg := path[depth]
		found := false
		var err error
		switch body[start] {
		case '{':
			_, err = s.object(start, func(key []byte, vs, ve int) {
				if failure == nil && (seg == "*" || keyEquals(key, seg)) {
					found = true
					failure = walk(vs, ve, depth+1)
				}
			})
		case '[':
			i := 0
			_, err = s.array(start, func(vs, ve int) {
				if failure == nil && (seg == "*" || itoa(i) == seg) {
					found = true
					failure = walk(vs, ve, depth+1)
				}
				i++
			})
		case 'n':
			return nil
		}
		if err != nil {
			return err
		}
		if !found && seg != "*" {
			return &missingPathError{path: path[:depth+1]}
		}
		return failure
	}
	end, err := s.value(start)
	if err != nil {
		return nil, errNotJSON
	}
	if s.ws(end) != len(body) {
		return nil, errNotJSON
	}
	if inner := s.ws(start + 1); body[start] == '{' && inner < len(body) && body[inner] == '}' {
		return nil, nil // an empty object holds no records, whatever the path
	}
	if err := walk(start, end, 0); err != nil {
		if err == errSyntax {
			return nil, errNotJSON
		}
		return nil, err
	}
	return out, nil
}

// collectRecords adds the records of the value body[start:end]: a list's items, or
// the value itself. An empty top-level object is no record.
func collectRecords(s *scanner, start, end int, top bool, out *[][]byte) error {
	switch s.b[start] {
	case '[':
		var err error
		_, scanErr := s.array(start, func(vs, ve int) {
			if err == nil {
				err = appendRecord(s.b[vs:ve], out)
			}
		})
		if scanErr != nil {
			return scanErr
		}
		return err
	case 'n':
		return nil
	case '{':
		if top && s.ws(start+1) < end && s.b[s.ws(start+1)] == '}' {
			return nil
		}
	}
	return appendRecord(s.b[start:end], out)
}

func appendRecord(raw []byte, out *[][]byte) error {
	rec, err := record(raw)
	if err != nil {
		return err
	}
	if rec != nil {
		*out = append(*out, rec)
	}
	return nil
}

func itoa(i int) string { return strconv.Itoa(i) }

var errNotJSON = fmt.Errorf("the response body is not valid JSON")

type missingPathError struct{ path []string }

func (e *missingPathError) Error() string {
	return fmt.Sprintf("record path [%s] is not in the response", strings.Join(e.path, ", "))
}

func firstByte(b []byte) byte {
	for _, c := range b {
		if c != ' ' && c != '\n' && c != '\r' && c != '\t' {
			return c
		}
	}
	return 0
}

// record checks that raw is an object and makes it one line.
func record(raw json.RawMessage) ([]byte, error) {
	switch firstByte(raw) {
	case '{':
	case 'n':
		return nil, nil
	default:
		return nil, fmt.Errorf("a record must be a JSON object, got %s", interp.String(string(truncate(raw, 40))))
	}
	if bytes.ContainsAny(raw, "\n\r") {
		var b bytes.Buffer
		if err := json.Compact(&b, raw); err != nil {
			return nil, err
		}
		return b.Bytes(), nil
	}
	return raw, nil
}

func truncate(b []byte, n int) []byte {
	if len(b) > n {
		return append(append([]byte{}, b[:n]...), "..."...)
	}
	return b
}

// decodeJSON decodes JSON into template values (integers as int64, lists
// with negative indexes); anything that is not JSON is an empty object.
func decodeJSON(b []byte) any {
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
	if u.All {
		return decodeJSON(b)
	}
	s := &scanner{b: b}
	start := s.ws(0)
	if start >= len(b) || b[start] != '{' {
		return decodeJSON(b)
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
