package manifest

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"io/fs"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// The embedded schema: one file per component family (schema/*.json), each
// holding definitions; they are merged into one document so that "#/definitions/x"
// references work across files. One definition per supported component, listing
// ALL its fields as Airbyte's schema does: a field it does not list is refused
// when the definition says additionalProperties false, and warned about
// otherwise. Each component is validated on its own, and its child components
// when they are decoded, so child fields are only "object" in their parent's
// definition.
//
//go:embed schema/*.json
var schemaFiles embed.FS

// definition is one component's schema, compiled and as written.
type definition struct {
	schema *jsonschema.Schema
	raw    map[string]any
	fields map[string]bool // the properties it lists
	closed bool            // additionalProperties: false
}

var (
	schemaOnce  sync.Once
	definitions map[string]*definition
	rawDefs     map[string]any
)

// componentDefinition returns the definition of one component type, or nil.
func componentDefinition(typ string) *definition {
	schemaOnce.Do(loadDefinitions)
	return definitions[typ]
}

func loadDefinitions() {
	rawDefs = map[string]any{}
	files, err := fs.Glob(schemaFiles, "schema/*.json")
	if err != nil {
		panic(err)
	}
	for _, f := range files {
		b, err := schemaFiles.ReadFile(f)
		if err != nil {
			panic(err)
		}
		var doc struct {
			Definitions map[string]any `json:"definitions"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			panic(f + ": " + err.Error())
		}
		for name, def := range doc.Definitions {
			if _, dup := rawDefs[name]; dup {
				panic(f + ": definition " + name + " is also in another schema file")
			}
			rawDefs[name] = def
		}
	}
	merged, err := json.Marshal(map[string]any{"$schema": "http://json-schema.org/draft-07/schema#", "definitions": rawDefs})
	if err != nil {
		panic(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("manifest.json", bytes.NewReader(merged)); err != nil {
		panic(err)
	}
	definitions = map[string]*definition{}
	for name, raw := range rawDefs {
		rm, _ := raw.(map[string]any)
		d := &definition{schema: c.MustCompile("manifest.json#/definitions/" + name), raw: rm, fields: map[string]bool{}}
		props, _ := rm["properties"].(map[string]any)
		for k := range props {
			d.fields[k] = true
		}
		d.closed = rm["additionalProperties"] == false
		definitions[name] = d
	}
}

// check validates component m of type typ at path: integral floats where the
// schema wants integers become integers, the schema must hold, and fields
// the definition does not list are refused or warned about.
func (d *decoder) check(def *definition, typ string, m map[string]any, path string) bool {
	params, _ := m["$parameters"].(map[string]any)
	ok := true
	for _, k := range sortedKeys(m) {
		if k == "type" || k == "$parameters" || def.fields[k] {
			continue
		}
		if _, fromParameters := params[k]; fromParameters {
			continue // $parameters are handed down as fields; unknown ones mean nothing
		}
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
		d.schemaErrors(path, m, err)
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
		return integers(rawDefs[strings.TrimPrefix(ref, "#/definitions/")], v)
	}
	switch x := v.(type) {
	case float64:
		if allowsInteger(sm) && x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x)
		}
	case map[string]any:
		props, _ := sm["properties"].(map[string]any)
		for k, ps := range props {
			if e, ok := x[k]; ok {
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
		rm, _ := rawDefs[strings.TrimPrefix(ref, "#/definitions/")].(map[string]any)
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

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

var knownCDKTypes = map[string]bool{
	"DatetimeBasedCursor": true, "SubstreamPartitionRouter": true, "ListPartitionRouter": true, "SelectiveAuthenticator": true,
	"JwtAuthenticator": true, "AddFields": true, "RemoveFields": true, "XmlDecoder": true, "CsvDecoder": true, "GzipDecoder": true,
	"JsonlDecoder": true, "IterableDecoder": true, "CompositeRawDecoder": true, "AsyncRetriever": true, "DynamicDeclarativeStream": true,
	"JsonFileSchemaLoader": true, "DynamicSchemaLoader": true, "LegacySessionTokenAuthenticator": true, "StateDelegatingStream": true,
	"GroupingPartitionRouter": true, "DeclarativeOAuthAuthenticator": true,
}

func (d *decoder) schemaErrors(path string, instance map[string]any, err error) {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		d.fail(path, "%v", err)
		return
	}
	var leaves []*jsonschema.ValidationError
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			leaves = append(leaves, e)
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	seen := map[string]bool{}
	for _, l := range leaves {
		msg := l.Message
		if strings.HasSuffix(l.KeywordLocation, "/enum") {
			msg = "must be " + enumList(l.Message)
		}
		if strings.HasPrefix(msg, "expected integer") && strings.HasSuffix(msg, "but got number") {
			msg = "must be a whole number, got " + jsonValue(instance, l.InstanceLocation)
		}
		if strings.HasPrefix(msg, "missing properties: ") {
			for _, p := range strings.Split(strings.TrimPrefix(msg, "missing properties: "), ", ") {
				line := instancePath(path, l.InstanceLocation) + "." + strings.Trim(p, "'") + ": is required"
				if !seen[line] {
					seen[line] = true
					d.errs = append(d.errs, line)
				}
			}
			continue
		}
		line := instancePath(path, l.InstanceLocation) + ": " + msg
		if !seen[line] {
			seen[line] = true
			d.errs = append(d.errs, line)
		}
	}
}

// jsonValue is the value at a JSON pointer of v, as JSON text.
func jsonValue(v any, pointer string) string {
	for _, seg := range strings.Split(strings.TrimPrefix(pointer, "/"), "/") {
		if seg == "" {
			continue
		}
		switch x := v.(type) {
		case map[string]any:
			v = x[strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")]
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(x) {
				return "?"
			}
			v = x[i]
		}
	}
	b, _ := json.Marshal(v)
	return string(b)
}

var quoted = regexp.MustCompile(`"([^"]*)"`)

// enumList turns `value must be one of "GET", "POST"` into `GET or POST`.
func enumList(msg string) string {
	var vals []string
	for _, m := range quoted.FindAllStringSubmatch(msg, -1) {
		vals = append(vals, m[1])
	}
	switch len(vals) {
	case 0:
		return msg
	case 1:
		return vals[0]
	}
	return strings.Join(vals[:len(vals)-1], ", ") + " or " + vals[len(vals)-1]
}

// instancePath turns a JSON pointer into a manifest path under base.
func instancePath(base, pointer string) string {
	out := base
	for _, seg := range strings.Split(strings.TrimPrefix(pointer, "/"), "/") {
		if seg == "" {
			continue
		}
		seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
		if _, err := strconv.Atoi(seg); err == nil {
			out += "[" + seg + "]"
		} else {
			out = join(out, seg)
		}
	}
	return out
}
