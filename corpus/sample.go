package corpus

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/airbyte-go/source-declarative/genapi"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/airbyte-go/source-declarative/lang/datetime"
	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/santhosh-tekuri/jsonschema/v5"
)

// DaysBack is how far before the fixed now sampled start dates lie: a few
// days, so that incremental streams make a few slices, not years of them.
const DaysBack = 3

// Sampler fills a config from a connection specification: required keys,
// and the optional ones the manifest's templates read.
type Sampler struct {
	Now   time.Time       // the fixed now; start dates lie DaysBack days before it
	Reads map[string]bool // config key paths ("a", "a.b") the templates read
	// Pinned is filled in: key paths whose value the spec fixes (const,
	// enum), which the config therefore cannot point at the mock.
	Pinned map[string]bool
}

// Config samples a config for spec (a connectionSpecification).
func (s *Sampler) Config(spec map[string]any) map[string]any {
	if s.Pinned == nil {
		s.Pinned = map[string]bool{}
	}
	return s.object(spec, "")
}

// object fills the properties of an object schema that are required, pinned
// by a const, or read by a template.
func (s *Sampler) object(schema map[string]any, prefix string) map[string]any {
	out := map[string]any{}
	props, _ := schema["properties"].(map[string]any)
	required := map[string]bool{}
	for _, r := range list(schema["required"]) {
		required[fmt.Sprint(r)] = true
	}
	for _, name := range interp.SortedKeys(props) {
		p, _ := props[name].(map[string]any)
		if p == nil {
			continue
		}
		path := prefix + name
		if _, isConst := p["const"]; required[name] || isConst || s.Reads[path] {
			out[name] = s.value(p, name, path)
		}
	}
	return out
}

// candidate is one value a property could take, and whether the spec fixes it.
type candidate struct {
	value  any
	pinned bool
}

// value returns the first candidate that the property's own schema accepts,
// formats included; else the first it accepts when formats are only
// annotations (a spec may pair format: date with a dd-mm-yyyy pattern).
func (s *Sampler) value(p map[string]any, name, path string) any {
	cands := s.candidates(p, name, path)
	for _, assertFormat := range []bool{true, false} {
		check := compileProperty(p, assertFormat)
		for _, c := range cands {
			if check == nil || check.Validate(normalize(c.value)) == nil {
				if c.pinned {
					s.Pinned[path] = true
				}
				return c.value
			}
		}
	}
	return cands[len(cands)-1].value
}

// candidates lists the values to try, best first: const, a recent date for
// date fields, the first oneOf option, default, first enum value, a dummy
// secret, examples, a string built from the pattern, a value for the format,
// and a value for the type.
func (s *Sampler) candidates(p map[string]any, name, path string) []candidate {
	var out []candidate
	add := func(v any, pinned bool) { out = append(out, candidate{v, pinned}) }
	if c, ok := p["const"]; ok {
		add(c, true)
	}
	typ := typeOf(p)
	if isDateField(p, name, typ) {
		for _, d := range s.dates(p, name, typ) {
			add(d, false)
		}
	}
	if options := list(p["oneOf"]); len(options) > 0 {
		if first, ok := options[0].(map[string]any); ok {
			if typeOf(first) == "object" || first["properties"] != nil {
				add(s.object(first, path+"."), false)
			} else {
				add(s.value(first, name, path), false)
			}
		}
	}
	if d, ok := p["default"]; ok {
		add(d, false)
	}
	if e := list(p["enum"]); len(e) > 0 {
		add(e[0], true)
	}
	pattern, _ := p["pattern"].(string)
	if p["airbyte_secret"] == true {
		add(coerce("mock-secret-"+name, typ), false)
		if g, ok := genapi.FromPattern(pattern); ok {
			add(coerce(g, typ), false)
		}
	}
	for _, e := range list(p["examples"]) {
		add(coerce(e, typ), false)
	}
	if g, ok := genapi.FromPattern(pattern); ok && pattern != "" {
		add(coerce(g, typ), false)
	}
	if f, ok := formatValues[fmt.Sprint(p["format"])]; ok {
		add(f, false)
	}
	switch typ {
	case "integer":
		add(int64(num(p["minimum"], 1)), false)
	case "number":
		add(num(p["minimum"], 1.5), false)
	case "boolean":
		add(false, false)
	case "array":
		items, _ := p["items"].(map[string]any)
		if items != nil {
			add([]any{s.value(items, name, path+"[]")}, false)
		} else {
			add([]any{"mock-" + name}, false)
		}
	case "object":
		add(s.object(p, path+"."), false)
	default:
		add("mock-"+name, false)
	}
	return out
}

// formatValues are sample values for JSON Schema string formats.
var formatValues = map[string]any{
	"email":         "mock@example.com",
	"uri":           "https://example.com/mock",
	"url":           "https://example.com/mock",
	"uri-reference": "/mock",
	"hostname":      "example.com",
	"ipv4":          "192.0.2.1",
	"ipv6":          "2001:db8::1",
	"uuid":          "00000000-0000-4000-8000-000000000001",
	"time":          "12:00:00",
}

// dateFormats are the shapes a sampled date can take, in the order tried;
// the spec's pattern, format and examples pick one.
var dateFormats = []string{
	"%Y-%m-%dT%H:%M:%SZ",
	"%Y-%m-%dT%H:%M:%S.%fZ",
	"%Y-%m-%d",
	"%d-%m-%Y",
	"%Y%m%dT%H%M%SZ",
	"%Y-%m-%d %H:%M:%S",
}

func isDateField(p map[string]any, name, typ string) bool {
	switch p["format"] {
	case "date", "date-time":
		return true
	}
	return (typ == "string" || typ == "integer") && strings.Contains(strings.ToLower(name), "date")
}

// dates are a recent date (now for an end date, DaysBack days before the
// start of today otherwise) in every shape: first the shape of the
// property's default or example, then those its format names; an integer
// property gets unix seconds.
func (s *Sampler) dates(p map[string]any, name, typ string) []any {
	t := s.Now.UTC().Truncate(24*time.Hour).AddDate(0, 0, -DaysBack)
	if strings.Contains(strings.ToLower(name), "end") {
		t = s.Now.UTC().Truncate(time.Second)
	}
	if typ == "integer" {
		return []any{t.Unix()}
	}
	var shaped, formatted, rest []any
	for _, f := range dateFormats {
		v := datetime.Strftime(t, f)
		switch {
		case shapedLike(p, f):
			shaped = append(shaped, v)
		case p["format"] == "date" && f == "%Y-%m-%d", p["format"] == "date-time" && strings.Contains(f, "T"):
			formatted = append(formatted, v)
		default:
			rest = append(rest, v)
		}
	}
	return append(append(shaped, formatted...), rest...)
}

// shapedLike tells whether the property's default or an example parses with
// format.
func shapedLike(p map[string]any, format string) bool {
	for _, e := range append([]any{p["default"]}, list(p["examples"])...) {
		if s, ok := e.(string); ok {
			if _, err := datetime.Strptime(s, format); err == nil {
				return true
			}
		}
	}
	return false
}

// compileProperty compiles one property's schema to check candidates,
// without its format unless assertFormat (draft-07 always asserts formats);
// nil when it does not compile on its own.
func compileProperty(p map[string]any, assertFormat bool) *jsonschema.Schema {
	if !assertFormat {
		p = maps.Clone(p)
		delete(p, "format")
	}
	b, err := json.Marshal(p)
	if err != nil {
		return nil
	}
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft7
	if c.AddResource("property.json", bytes.NewReader(b)) != nil {
		return nil
	}
	s, err := c.Compile("property.json")
	if err != nil {
		return nil
	}
	return s
}

// typeOf is a schema's type, the first that is not "null" when it lists
// several; "object" when it has properties and no type.
func typeOf(p map[string]any) string {
	switch t := p["type"].(type) {
	case string:
		return t
	case []any:
		for _, e := range t {
			if e != "null" {
				return fmt.Sprint(e)
			}
		}
		return "null"
	}
	if p["properties"] != nil {
		return "object"
	}
	return ""
}

// coerce turns an example into the property's type where it is written as
// another ("17831421" for an integer).
func coerce(v any, typ string) any {
	s, isString := v.(string)
	switch {
	case typ == "integer" && isString:
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n
		}
	case typ == "number" && isString:
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f
		}
	case typ == "string" && !isString && v != nil:
		return fmt.Sprint(v)
	}
	return v
}

// normalize passes v through JSON, as a validator expects its input.
func normalize(v any) any {
	b, _ := json.Marshal(v)
	var out any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	d.Decode(&out)
	return out
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

func num(v any, def float64) float64 {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case float64:
		return x
	case int:
		return float64(x)
	}
	return def
}
