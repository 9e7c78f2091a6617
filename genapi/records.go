package genapi

import (
	"fmt"
	"regexp"
	"strconv"
	"time"
)

// RecordSpec says how to make the records of one stream.
type RecordSpec struct {
	Schema     map[string]any
	PrimaryKey [][]string
	Cursor     []string // the cursor field, nil when the stream has none
	// CursorFormat is the strftime format the cursor reads values with
	// (cursor_datetime_formats[0], else datetime_format); "" for a count.
	CursorFormat string
	// Paths must hold a value: the parent keys children read and the key
	// chains the stream's templates read from a record. Where the schema
	// leaves one out it gets objects on the way and a string at its end.
	Paths [][]string
	// Patterns are keys templates search with a regular expression: a
	// string there that does not match gets the pattern's match added.
	Patterns []PatternRead
	// At is the time of the first record's cursor, Step the time between
	// two records (a minute when zero).
	At   time.Time
	Step time.Duration
	// First numbers the records: record i (from 0) is number First+i+1, so
	// that pages and partitions hold distinct records.
	First int
}

// maxDepth bounds nested schemas (and recursive ones).
const maxDepth = 8

// Records makes n records from the spec: every property of the schema
// filled with a value of its type and format, primary keys unique, the
// cursor in its format Step apart.
func (s RecordSpec) Records(n int) []any {
	out := make([]any, n)
	for i := range out {
		num := s.First + i + 1
		rec, _ := value(s.Schema, "record", num, 0).(map[string]any)
		if rec == nil {
			rec = map[string]any{}
		}
		for _, path := range s.Paths {
			fill(rec, path, num)
		}
		for _, pk := range s.PrimaryKey {
			setPath(rec, pk, s.keyValue(pk, num))
		}
		if len(s.Cursor) > 0 {
			setPath(rec, s.Cursor, s.cursorValue(i))
		}
		for _, p := range s.Patterns {
			matchPattern(rec, p)
		}
		out[i] = rec
	}
	return out
}

// keyValue is record i's primary key: an integer when the schema says so,
// an array or object of its schema (its leaves hold i) when it says that.
func (s RecordSpec) keyValue(path []string, i int) any {
	schema := fieldSchema(s.Schema, path)
	switch typeOf(schema) {
	case "integer", "number":
		return int64(i)
	case "array", "object":
		return value(schema, path[len(path)-1], i, 0)
	}
	return fmt.Sprintf("%s-%d", path[len(path)-1], i)
}

// cursorValue is the cursor of the page's record i (from 0): its time in
// the cursor's format, a number when the schema wants one; the record
// number for a count cursor.
func (s RecordSpec) cursorValue(i int) any {
	typ := typeOf(fieldSchema(s.Schema, s.Cursor))
	if s.CursorFormat == "" {
		return int64(s.First + i + 1)
	}
	step := s.Step
	if step == 0 {
		step = time.Minute
	}
	v := strftime(s.At.Add(time.Duration(i)*step), s.CursorFormat)
	if typ == "integer" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			return n
		}
	}
	if typ == "number" {
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			return f
		}
	}
	return v
}

// fieldSchema is the schema of the property at path, nil when absent.
func fieldSchema(schema map[string]any, path []string) map[string]any {
	cur := schema
	for _, k := range path {
		props, _ := cur["properties"].(map[string]any)
		next, _ := props[k].(map[string]any)
		if next == nil {
			return nil
		}
		cur = next
	}
	return cur
}

// value makes the i-th value of a schema; name is the property's name.
func value(schema map[string]any, name string, i, depth int) any {
	if schema == nil || depth > maxDepth {
		return fmt.Sprintf("%s-%d", name, i)
	}
	if c, ok := schema["const"]; ok {
		return c
	}
	if e := list(schema["enum"]); len(e) > 0 {
		for _, v := range e {
			if v != nil {
				return v
			}
		}
	}
	for _, key := range []string{"anyOf", "oneOf"} {
		for _, o := range list(schema[key]) {
			if om, ok := o.(map[string]any); ok && typeOf(om) != "null" {
				return value(om, name, i, depth+1)
			}
		}
	}
	switch typeOf(schema) {
	case "object":
		out := map[string]any{}
		props, _ := schema["properties"].(map[string]any)
		for _, k := range sortedKeys(props) {
			p, _ := props[k].(map[string]any)
			out[k] = value(p, k, i, depth+1)
		}
		return out
	case "array":
		items, _ := schema["items"].(map[string]any)
		if items == nil {
			return []any{}
		}
		return []any{value(items, name, i, depth+1)}
	case "integer":
		return int64(clamp(float64(i), schema))
	case "number":
		return clamp(float64(i)+0.5, schema)
	case "boolean":
		return i%2 == 1
	case "null":
		return nil
	}
	return stringValue(schema, name, i)
}

func clamp(v float64, schema map[string]any) float64 {
	if m, ok := schema["minimum"]; ok && v < num(m, v) {
		v = num(m, v)
	}
	if m, ok := schema["maximum"]; ok && v > num(m, v) {
		v = num(m, v)
	}
	return v
}

// recordTime is the time string formats give to records.
var recordTime = time.Date(2000, 1, 1, 12, 0, 0, 0, time.UTC)

// stringValue is a string for the schema's format or pattern, else
// "name-i", cut to maxLength.
func stringValue(schema map[string]any, name string, i int) string {
	var s string
	day := i % 10000 // dates stay within some thirty years
	switch schema["format"] {
	case "date-time":
		s = recordTime.AddDate(0, 0, day).Add(time.Duration(i%1440) * time.Minute).Format(time.RFC3339)
	case "date":
		s = recordTime.AddDate(0, 0, day).Format("2006-01-02")
	case "time":
		s = recordTime.Add(time.Duration(i%1440) * time.Minute).Format("15:04:05")
	case "email":
		s = fmt.Sprintf("%s%d@example.com", name, i)
	case "uri", "url", "iri":
		s = fmt.Sprintf("https://example.com/%s/%d", name, i)
	case "uuid":
		s = fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
	case "ipv4":
		s = fmt.Sprintf("192.0.2.%d", i)
	case "hostname":
		s = fmt.Sprintf("host%d.example.com", i)
	default:
		if p, ok := schema["pattern"].(string); ok {
			if g, ok := FromPattern(p); ok {
				return g
			}
		}
		s = fmt.Sprintf("%s-%d", name, i)
	}
	if m, ok := schema["maxLength"]; ok && len(s) > int(num(m, 0)) {
		s = s[:int(num(m, 0))]
	}
	return s
}

// setPath sets v at path in rec, making the objects on the way.
func setPath(rec map[string]any, path []string, v any) {
	cur := rec
	for _, k := range path[:len(path)-1] {
		next, ok := cur[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			cur[k] = next
		}
		cur = next
	}
	cur[path[len(path)-1]] = v
}

// fill gives path a string value "key-i" in rec when it holds none, making
// the objects on the way; a value that is not an object on the way is left
// as the schema made it.
func fill(rec map[string]any, path []string, i int) {
	cur := rec
	for _, k := range path[:len(path)-1] {
		v, ok := cur[k]
		if !ok || v == nil {
			v = map[string]any{}
			cur[k] = v
		}
		next, ok := v.(map[string]any)
		if !ok {
			return
		}
		cur = next
	}
	last := path[len(path)-1]
	if v, ok := cur[last]; !ok || v == nil {
		cur[last] = fmt.Sprintf("%s-%d", last, i)
	}
}

// matchPattern makes the string at p.Path match p.Pattern where it does
// not: the pattern's match before it, after it, or alone, the first that
// matches, so values stay distinct where they can.
func matchPattern(rec map[string]any, p PatternRead) {
	cur := rec
	for _, k := range p.Path[:len(p.Path)-1] {
		if cur, _ = cur[k].(map[string]any); cur == nil {
			return
		}
	}
	last := p.Path[len(p.Path)-1]
	v, ok := cur[last].(string)
	re, err := regexp.Compile(p.Pattern)
	if !ok || err != nil || re.MatchString(v) {
		return
	}
	m, ok := FromPattern(p.Pattern)
	if !ok {
		return
	}
	for _, c := range []string{m + v, v + m, m} {
		if re.MatchString(c) {
			cur[last] = c
			return
		}
	}
}
