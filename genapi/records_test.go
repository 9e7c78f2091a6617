package genapi

import (
	"encoding/json"
	"testing"
	"time"
)

func TestRecords(t *testing.T) {
	var schema map[string]any
	json.Unmarshal([]byte(`{"type": ["null", "object"], "properties": {
	  "key": {"type": "object", "properties": {"id": {"type": "string"}}},
	  "ts": {"type": "integer"},
	  "kind": {"type": "string", "enum": ["a", "b"]},
	  "v": {"const": 7},
	  "code": {"type": "string", "maxLength": 3},
	  "tags": {"type": "array", "items": {"type": "string", "format": "uuid"}},
	  "any": {"anyOf": [{"type": "null"}, {"type": "number", "minimum": 10}]},
	  "day": {"type": "string", "format": "date"}}}`), &schema)
	s := RecordSpec{Schema: schema, PrimaryKey: [][]string{{"key", "id"}}, Cursor: []string{"ts"}, CursorFormat: "%s",
		Paths: [][]string{{"parent_id"}, {"key", "id"}, {"scheduler", "email"}, {"ts", "x"}}, At: time.Date(2024, 5, 9, 12, 0, 0, 0, time.UTC)}
	b, _ := json.Marshal(s.Records(2))
	want := `[{"any":10,"code":"cod","day":"2000-01-02","key":{"id":"id-1"},"kind":"a","parent_id":"parent_id-1","scheduler":{"email":"email-1"},"tags":["00000000-0000-4000-8000-000000000001"],"ts":1715256000,"v":7},` +
		`{"any":10,"code":"cod","day":"2000-01-03","key":{"id":"id-2"},"kind":"a","parent_id":"parent_id-2","scheduler":{"email":"email-2"},"tags":["00000000-0000-4000-8000-000000000002"],"ts":1715256060,"v":7}]`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	// a key templates search with regular expressions matches them all
	b, _ = json.Marshal(RecordSpec{PrimaryKey: [][]string{{"uri"}}, Patterns: []PatternRead{{Path: []string{"uri"}, Pattern: `\/([a-z0-9-]*)$`}, {Path: []string{"uri"}, Pattern: `^u`}}}.Records(2))
	if want := `[{"uri":"u/-0123456uri-1"},{"uri":"u/-0123456uri-2"}]`; string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
	// a primary key of array type holds an array that differs per record
	json.Unmarshal([]byte(`{"type": "object", "properties": {"prices": {"type": "array", "items": {"type": "array", "items": {"type": "number"}}}}}`), &schema)
	b, _ = json.Marshal(RecordSpec{Schema: schema, PrimaryKey: [][]string{{"prices"}}}.Records(2))
	if want := `[{"prices":[[1.5]]},{"prices":[[2.5]]}]`; string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
	s = RecordSpec{Schema: map[string]any{"properties": map[string]any{"updated": map[string]any{"type": "string"}}},
		Cursor: []string{"updated"}, CursorFormat: "%Y-%m-%dT%H:%M:%S.%fZ", At: s.At}
	b, _ = json.Marshal(s.Records(1))
	if want := `[{"updated":"2024-05-09T12:00:00.000000Z"}]`; string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
}
