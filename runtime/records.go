package runtime

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/airbyte-go/source-declarative/runtime/interp"
)

// extractRecords returns the records at path in a JSON body, as compact JSON
// bytes, without decoding them: an empty path is the body itself (a top-level
// array gives its items, an object is one record); "*" matches every key or
// item of one level; a list found at the end gives its items.
func extractRecords(body []byte, path []string) ([][]byte, error) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil, nil
	}
	if !json.Valid(body) {
		return nil, errNotJSON
	}
	current := []json.RawMessage{body}
	for depth, seg := range path {
		var next []json.RawMessage
		for _, raw := range current {
			switch firstByte(raw) {
			case '{':
				if seg == "*" {
					vals, err := objectValues(raw)
					if err != nil {
						return nil, err
					}
					next = append(next, vals...)
					continue
				}
				var m map[string]json.RawMessage
				if err := json.Unmarshal(raw, &m); err != nil {
					return nil, err
				}
				v, ok := m[seg]
				if !ok {
					return nil, &missingPathError{path: path[:depth+1]}
				}
				next = append(next, v)
			case '[':
				var items []json.RawMessage
				if err := json.Unmarshal(raw, &items); err != nil {
					return nil, err
				}
				if seg == "*" {
					next = append(next, items...)
					continue
				}
				i, err := strconv.Atoi(seg)
				if err != nil || i < 0 || i >= len(items) {
					return nil, &missingPathError{path: path[:depth+1]}
				}
				next = append(next, items[i])
			case 'n':
				// null: nothing below
			default:
				return nil, &missingPathError{path: path[:depth+1]}
			}
		}
		current = next
	}
	var out [][]byte
	for _, raw := range current {
		switch firstByte(raw) {
		case '[':
			var items []json.RawMessage
			if err := json.Unmarshal(raw, &items); err != nil {
				return nil, err
			}
			for _, it := range items {
				rec, err := record(it)
				if err != nil {
					return nil, err
				}
				if rec != nil {
					out = append(out, rec)
				}
			}
		case 'n':
		default:
			rec, err := record(raw)
			if err != nil {
				return nil, err
			}
			if rec != nil && !(len(path) == 0 && bytes.Equal(bytes.TrimSpace(rec), []byte("{}"))) {
				out = append(out, rec)
			}
		}
	}
	return out, nil
}

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

// objectValues returns an object's values in document order.
func objectValues(raw json.RawMessage) ([]json.RawMessage, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	if _, err := d.Token(); err != nil {
		return nil, err
	}
	var out []json.RawMessage
	for d.More() {
		if _, err := d.Token(); err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// decodeJSON decodes JSON into template values (integers as int64, lists
// with negative indexes).
func decodeJSON(b []byte) any {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return map[string]any{}
	}
	return interp.Native(v)
}
