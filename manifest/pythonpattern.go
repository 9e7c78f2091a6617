package manifest

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/dlclark/regexp2"
	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/airbyte-go/source-declarative/lang/pyregex"
)

// A schema's "pattern" is a Python regular expression, as Airbyte's runtime
// validates a config with Python's jsonschema (re.search): a spec may use a
// lookahead (google-analytics-data-api's `^(?!(cohort_|RESERVED_)).*$`),
// which Go's regexp, the library's, refuses. Each pattern is moved to
// pythonPatternKeyword before the library compiles the schema, and checked
// there with a Python-compatible engine; its errors read as the library's
// own "pattern" errors.

// pythonPatternKeyword is where a schema's pattern is moved: no schema
// writes this key.
const pythonPatternKeyword = "pattern (Python)"

// pythonPatternMeta is the meta-schema of the moved keyword: a text.
var pythonPatternMeta = jsonschema.MustCompileString("schema:///python-pattern.json",
	`{"properties": {"`+pythonPatternKeyword+`": {"type": "string"}}}`)

// pythonPatterns compiles the moved patterns of a schema.
type pythonPatterns struct{}

func (pythonPatterns) Compile(_ jsonschema.CompilerContext, m map[string]any) (jsonschema.ExtSchema, error) {
	text, ok := m[pythonPatternKeyword].(string)
	if !ok {
		return nil, nil
	}
	re, err := pyregex.Compile(text)
	if err != nil {
		return nil, fmt.Errorf("pattern %s is not a valid regular expression: %v", quoteSchemaText(text), err)
	}
	return pythonPattern{text, re}, nil
}

// pythonPattern is one compiled pattern: a text is valid when the pattern
// is found anywhere in it (re.search).
type pythonPattern struct {
	text string // as written
	re   *regexp2.Regexp
}

func (p pythonPattern) Validate(ctx jsonschema.ValidationContext, v any) error {
	text, ok := v.(string)
	if !ok {
		return nil
	}
	found, err := p.re.MatchString(text)
	if err != nil {
		return ctx.Error("pattern", "could not be matched against pattern %s: %v", quoteSchemaText(p.text), err)
	}
	if !found {
		return ctx.Error("pattern", "does not match pattern %s", quoteSchemaText(p.text))
	}
	return nil
}

// quoteSchemaText quotes a text as the library's messages do.
func quoteSchemaText(s string) string {
	q := fmt.Sprintf("%q", s)
	q = strings.ReplaceAll(q, `\"`, `"`)
	q = strings.ReplaceAll(q, `'`, `\'`)
	return "'" + q[1:len(q)-1] + "'"
}

// movePatterns is a copy of a schema document with the "pattern" of each of
// its schemas moved to pythonPatternKeyword; an invalid pattern is an error
// naming its place.
func movePatterns(doc any) (any, error) {
	moved := DeepCopy(doc)
	return moved, moveSchemaPatterns(moved, "")
}

// schemaKeywords are the keywords holding one schema ("items": one or a
// list).
var schemaKeywords = []string{"items", "additionalItems", "additionalProperties", "contains", "propertyNames", "not", "if", "then", "else", "unevaluatedItems", "unevaluatedProperties", "contentSchema"}

// schemaListKeywords hold a list of schemas.
var schemaListKeywords = []string{"items", "allOf", "anyOf", "oneOf", "prefixItems"}

// schemaMapKeywords hold schemas by name.
var schemaMapKeywords = []string{"properties", "patternProperties", "definitions", "$defs", "dependentSchemas", "dependencies"}

// moveSchemaPatterns moves the patterns of the schema s (at pointer) and of
// the schemas inside it, in place.
func moveSchemaPatterns(s any, pointer string) error {
	m, ok := s.(map[string]any)
	if !ok {
		return nil
	}
	if p, ok := m["pattern"].(string); ok {
		if _, err := pyregex.Compile(p); err != nil {
			return fmt.Errorf("%s/pattern: %s is not a valid regular expression: %v", pointer, quoteSchemaText(p), err)
		}
		delete(m, "pattern")
		m[pythonPatternKeyword] = p
	}
	for _, k := range schemaKeywords {
		if err := moveSchemaPatterns(m[k], pointer+"/"+k); err != nil {
			return err
		}
	}
	for _, k := range schemaListKeywords {
		list, _ := m[k].([]any)
		for i, v := range list {
			if err := moveSchemaPatterns(v, fmt.Sprintf("%s/%s/%d", pointer, k, i)); err != nil {
				return err
			}
		}
	}
	for _, k := range schemaMapKeywords {
		named, _ := m[k].(map[string]any)
		for _, name := range slices.Sorted(maps.Keys(named)) {
			if err := moveSchemaPatterns(named[name], pointer+"/"+k+"/"+escapeSegment(name)); err != nil {
				return err
			}
		}
	}
	return nil
}
