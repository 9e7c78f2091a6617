package manifest

import (
	"encoding/json"
	"math"
	"sort"
	"strconv"
	"strings"
)

// check validates component m of type typ at path: integral floats where the
// schema wants integers become integers, the schema must hold, and fields
// the definition does not list are refused or warned about.
func (d *decoder) check(def *definition, typ string, m map[string]any, path string) bool {
	params, _ := m["$parameters"].(map[string]any)
	var unknown []string
	for k := range m {
		if k == "type" || k == "$parameters" || def.fields[k] {
			continue
		}
		if _, fromParameters := params[k]; fromParameters {
			continue // $parameters are handed down as fields; unknown ones mean nothing
		}
		unknown = append(unknown, k)
	}
	sort.Strings(unknown)
	ok := true
	for _, k := range unknown {
		hint := suggestion(k, def.fields)
		if def.closed {
			d.fail(join(path, k), "%s has no field %q%s", typ, k, hint)
			ok = false
			continue
		}
		d.warn(join(path, k), "%s has no field %q%s; it is ignored", typ, k, hint)
	}
	if !ok {
		return false
	}
	if err := def.schema.Validate(m); err != nil {
		d.schemaErrors(path, m, err.(SchemaErrors))
		return false
	}
	integers(def.raw, m)
	return true
}

// integers turns integral floats (500.0) into integers wherever schema s
// expects an integer; a fractional number is refused by the schema itself.
func integers(s any, v any) any {
	sm, _ := s.(map[string]any)
	if sm == nil {
		return v
	}
	if ref, ok := sm["$ref"].(string); ok {
		return integers(rawDefinition(strings.TrimPrefix(ref, "#/definitions/")), v)
	}
	switch x := v.(type) {
	case float64:
		if allowsInteger(sm) && x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x)
		}
	case map[string]any:
		props, _ := sm["properties"].(map[string]any)
		for k, e := range x {
			if ps, ok := props[k]; ok {
				x[k] = integers(ps, e)
			}
		}
	case []any:
		for i, e := range x {
			x[i] = integers(sm["items"], e)
		}
	}
	return v
}

func allowsInteger(sm map[string]any) bool {
	switch t := sm["type"].(type) {
	case string:
		return t == "integer"
	case []any:
		for _, e := range t {
			if e == "integer" {
				return true
			}
		}
	}
	for _, key := range []string{"anyOf", "oneOf"} {
		alts, _ := sm[key].([]any)
		for _, alt := range alts {
			if am, ok := alt.(map[string]any); ok && allowsInteger(am) {
				return true
			}
		}
	}
	if ref, ok := sm["$ref"].(string); ok {
		rm := rawDefinition(strings.TrimPrefix(ref, "#/definitions/"))
		return rm != nil && allowsInteger(rm)
	}
	return false
}

// suggestion names the listed field closest to a misspelled one.
func suggestion(field string, fields map[string]bool) string {
	best, bestDist := "", 3
	for f := range fields {
		if dist := editDistance(field, f); dist < bestDist || (dist == bestDist && best != "" && f < best) {
			best, bestDist = f, dist
		}
	}
	if best == "" {
		return ""
	}
	return " (did you mean " + best + "?)"
}

// editDistance is the Levenshtein distance of two short names.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

var knownCDKTypes = map[string]bool{
	"DatetimeBasedCursor": true, "SubstreamPartitionRouter": true, "ListPartitionRouter": true, "SelectiveAuthenticator": true,
	"AddFields": true, "RemoveFields": true, "XmlDecoder": true, "CsvDecoder": true, "GzipDecoder": true,
	"JsonlDecoder": true, "IterableDecoder": true, "CompositeRawDecoder": true, "DynamicDeclarativeStream": true,
	"JsonFileSchemaLoader": true, "DynamicSchemaLoader": true,
	"GroupingPartitionRouter": true, "DeclarativeOAuthAuthenticator": true, "ResponseToFileExtractor": true,
}

// schemaErrors reports each keyword component instance failed, at its
// manifest path.
func (d *decoder) schemaErrors(path string, instance map[string]any, errs SchemaErrors) {
	for _, e := range errs {
		msg := e.Message
		switch {
		case e.Keyword == "enum":
			msg = "must be " + enumList(e.Enum)
		case e.Keyword == "type" && strings.HasPrefix(msg, "expected integer") && strings.HasSuffix(msg, "but got number"):
			msg = "must be a whole number, got " + jsonValue(instance, e.Instance)
		}
		d.fail(instancePath(path, e.Instance), "%s", msg)
	}
}

// jsonValue is the value at a JSON pointer of v, as JSON text.
func jsonValue(v any, pointer string) string {
	v, ok := valueAt(v, pointer)
	if !ok {
		return "?"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// enumList writes the values an enum allows as `GET, POST or PUT`.
func enumList(values []any) string {
	texts := make([]string, len(values))
	for i, v := range values {
		if text, ok := v.(string); ok {
			texts[i] = text
		} else {
			b, _ := json.Marshal(v)
			texts[i] = string(b)
		}
	}
	if len(texts) == 1 {
		return texts[0]
	}
	return strings.Join(texts[:len(texts)-1], ", ") + " or " + texts[len(texts)-1]
}

// instancePath turns a JSON pointer into a manifest path under base.
func instancePath(base, pointer string) string {
	out := base
	for _, seg := range pointerSegments(pointer) {
		if _, err := strconv.Atoi(seg); err == nil {
			out += "[" + seg + "]"
		} else {
			out = join(out, seg)
		}
	}
	return out
}
