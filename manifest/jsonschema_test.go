package manifest

import (
	"encoding/json"
	"strings"
	"testing"
)

func decode(t testing.TB, text string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	return v
}

// failures lists a validation's errors as "keyword pointer: message" lines.
func failures(err error) []string {
	if err == nil {
		return nil
	}
	var lines []string
	for _, e := range err.(SchemaErrors) {
		lines = append(lines, e.Keyword+" "+e.Instance+": "+e.Message)
	}
	return lines
}

// Each draft-07 keyword, with a valid value (no errors) and invalid ones: the
// keyword, the instance location and the message of each error as we word
// the library's errors (each missing property at its own place, the names an
// additionalProperties refuses sorted, contains as one error), in the order
// of their places.
func TestKeywords(t *testing.T) {
	cases := []struct {
		schema, value string
		want          []string
	}{
		{`true`, `1`, nil},
		{`false`, `1`, []string{"false : not allowed"}},
		{`{}`, `{"a":[1]}`, nil},
		{`{"type":"string"}`, `"x"`, nil},
		{`{"type":"string"}`, `1`, []string{"type : expected string, but got number"}},
		{`{"type":["string","null"]}`, `null`, nil},
		{`{"type":["string","null"]}`, `true`, []string{"type : expected string or null, but got boolean"}},
		{`{"type":"integer"}`, `2.0`, nil},
		{`{"type":"integer"}`, `2.5`, []string{"type : expected integer, but got number"}},
		{`{"type":"number"}`, `2`, nil},
		{`{"type":"object"}`, `[]`, []string{"type : expected object, but got array"}},
		{`{"type":"array"}`, `{}`, []string{"type : expected array, but got object"}},
		{`{"type":"boolean"}`, `"true"`, []string{"type : expected boolean, but got string"}},
		{`{"const":"a"}`, `"a"`, nil},
		{`{"const":"a"}`, `"b"`, []string{`const : value must be "a"`}},
		{`{"const":1}`, `1.0`, nil},
		{`{"const":1}`, `2`, []string{`const : value must be "1"`}},
		{`{"const":null}`, `0`, []string{`const : value must be <nil>`}},
		{`{"const":{"a":[1]}}`, `{"a":[1.0]}`, nil},
		{`{"const":{"a":[1]}}`, `{"a":[2]}`, []string{`const : const failed`}},
		{`{"enum":["GET","POST"]}`, `"POST"`, nil},
		{`{"enum":["GET","POST"]}`, `"PUT"`, []string{`enum : value must be one of "GET", "POST"`}},
		{`{"enum":["GET"]}`, `"PUT"`, []string{`enum : value must be "GET"`}},
		{`{"enum":[1, true, null]}`, `false`, []string{`enum : value must be one of "1", true, <nil>`}},
		{`{"enum":[[1]]}`, `[2]`, []string{`enum : enum failed`}},
		{`{"minProperties":1,"maxProperties":2}`, `{"a":1}`, nil},
		{`{"minProperties":1}`, `{}`, []string{"minProperties : minimum 1 properties allowed, but found 0 properties"}},
		{`{"maxProperties":1}`, `{"a":1,"b":2}`, []string{"maxProperties : maximum 1 properties allowed, but found 2 properties"}},
		{`{"required":["a","b"]}`, `{"a":1,"b":null}`, nil},
		{`{"required":["a","b","c/d"]}`, `{"b":1}`, []string{"required /a: is required", "required /c~1d: is required"}},
		{`{"properties":{"a":{"type":"string"},"b":{"minimum":3}}}`, `{"a":"x","b":3,"c":false}`, nil},
		{`{"properties":{"a":{"type":"string"},"b":{"minimum":3}}}`, `{"a":1,"b":2}`,
			[]string{"type /a: expected string, but got number", "minimum /b: must be >= 3 but found 2"}},
		{`{"properties":{"a~b":{"properties":{"c/d":{"type":"string"}}}}}`, `{"a~b":{"c/d":1}}`, []string{"type /a~0b/c~1d: expected string, but got number"}},
		{`{"patternProperties":{"^x_":{"type":"integer"}}}`, `{"x_a":1,"y":"s"}`, nil},
		{`{"patternProperties":{"^x_":{"type":"integer"}}}`, `{"x_a":"s"}`, []string{"type /x_a: expected integer, but got string"}},
		{`{"properties":{"a":{}},"additionalProperties":false}`, `{"a":1}`, nil},
		{`{"properties":{"a":{}},"patternProperties":{"^p":{}},"additionalProperties":false}`, `{"a":1,"pz":1,"z":2,"b":1}`,
			[]string{"additionalProperties : additionalProperties 'b', 'z' not allowed"}},
		{`{"properties":{"a":{}},"additionalProperties":{"type":"string"}}`, `{"a":1,"b":"s"}`, nil},
		{`{"properties":{"a":{}},"additionalProperties":{"type":"string"}}`, `{"a":1,"b":2}`, []string{"type /b: expected string, but got number"}},
		{`{"propertyNames":{"maxLength":2}}`, `{"ab":1}`, nil},
		{`{"propertyNames":{"maxLength":2}}`, `{"abc":1}`, []string{"maxLength /abc: length must be <= 2, but got 3"}},
		{`{"dependencies":{"a":["b"],"c":{"required":["d"]}}}`, `{"a":1,"b":1,"d":1}`, nil},
		{`{"dependencies":{"a":["b"],"c":{"required":["d"]}}}`, `{"a":1,"c":1}`,
			[]string{"dependencies : property 'b' is required, if 'a' property exists", "required /d: is required"}},
		{`{"minItems":1,"maxItems":2}`, `[1]`, nil},
		{`{"minItems":1}`, `[]`, []string{"minItems : minimum 1 items required, but found 0 items"}},
		{`{"maxItems":1}`, `[1,2]`, []string{"maxItems : maximum 1 items required, but found 2 items"}},
		{`{"uniqueItems":true}`, `[1,"1",{"a":1},{"a":2}]`, nil},
		{`{"uniqueItems":true}`, `[0,1,{"a":1},1.0,{"a":1}]`, []string{"uniqueItems : items at index 1 and 3 are equal"}},
		{`{"items":{"type":"integer"}}`, `[1,2]`, nil},
		{`{"items":{"type":"integer"}}`, `[1,"x",3,null]`,
			[]string{"type /1: expected integer, but got string", "type /3: expected integer, but got null"}},
		{`{"items":[{"type":"string"},{"type":"integer"}]}`, `["a",1,true]`, nil},
		{`{"items":[{"type":"string"}],"additionalItems":{"type":"integer"}}`, `["a",1,true]`, []string{"type /2: expected integer, but got boolean"}},
		{`{"items":[{"type":"string"}],"additionalItems":false}`, `["a"]`, nil},
		{`{"items":[{"type":"string"}],"additionalItems":false}`, `[1,2]`,
			[]string{"additionalItems : only 1 items are allowed, but found 2 items", "type /0: expected string, but got number"}},
		{`{"additionalItems":false}`, `[1,2]`, nil},
		{`{"contains":{"const":2}}`, `[1,2]`, nil},
		{`{"contains":{"const":2}}`, `[1,3]`, []string{`contains : no item is valid against the "contains" schema`}},
		{`{"minLength":2,"maxLength":3}`, `"éé"`, nil},
		{`{"minLength":2}`, `"é"`, []string{"minLength : length must be >= 2, but got 1"}},
		{`{"maxLength":1}`, `"ab"`, []string{"maxLength : length must be <= 1, but got 2"}},
		{`{"pattern":"^[0-9]{4}-[0-9]{2}$"}`, `"2024-01"`, nil},
		{`{"pattern":"^[0-9]{4}$"}`, `"2024-01"`, []string{`pattern : does not match pattern '^[0-9]{4}$'`}},
		{`{"pattern":"^a"}`, `5`, nil},
		{`{"minimum":1,"maximum":3}`, `3`, nil},
		{`{"minimum":1.5}`, `1`, []string{"minimum : must be >= 1.5 but found 1"}},
		{`{"maximum":3}`, `3.5`, []string{"maximum : must be <= 3 but found 3.5"}},
		{`{"exclusiveMinimum":1,"exclusiveMaximum":3}`, `2`, nil},
		{`{"exclusiveMinimum":1}`, `1`, []string{"exclusiveMinimum : must be > 1 but found 1"}},
		{`{"exclusiveMaximum":3}`, `3`, []string{"exclusiveMaximum : must be < 3 but found 3"}},
		{`{"multipleOf":0.1}`, `0.3`, nil},
		{`{"multipleOf":5}`, `15`, nil},
		{`{"multipleOf":5}`, `12`, []string{"multipleOf : 12 not multipleOf 5"}},
		{`{"multipleOf":0.1}`, `0.35`, []string{"multipleOf : 0.35 not multipleOf 0.1"}},
		{`{"minimum":5}`, `"x"`, nil},
		{`{"not":{"type":"string"}}`, `1`, nil},
		{`{"not":{"type":"string"}}`, `"x"`, []string{"not : not failed"}},
		{`{"allOf":[{"minimum":1},{"maximum":3}]}`, `2`, nil},
		{`{"allOf":[{"minimum":1},{"maximum":3}]}`, `4`, []string{"maximum : must be <= 3 but found 4"}},
		{`{"anyOf":[{"type":"string"},{"minimum":3}]}`, `4`, nil},
		{`{"anyOf":[{"type":"string"},{"minimum":3}]}`, `2`,
			[]string{"type : expected string, but got number", "minimum : must be >= 3 but found 2"}},
		{`{"oneOf":[{"type":"string"},{"type":"integer","minimum":3}]}`, `"x"`, nil},
		{`{"oneOf":[{"type":"string"},{"type":"integer","minimum":3}]}`, `2`,
			[]string{"type : expected string, but got number", "minimum : must be >= 3 but found 2"}},
		{`{"oneOf":[{"type":"number"},{"minimum":3}]}`, `4`, []string{"oneOf : valid against schemas at indexes 0 and 1"}},
		{`{"if":{"properties":{"a":{"const":1}}},"then":{"required":["b"]},"else":{"required":["c"]}}`, `{"a":1,"b":1}`, nil},
		{`{"if":{"properties":{"a":{"const":1}}},"then":{"required":["b"]},"else":{"required":["c"]}}`, `{"a":1}`, []string{"required /b: is required"}},
		{`{"if":{"properties":{"a":{"const":1}}},"then":{"required":["b"]},"else":{"required":["c"]}}`, `{"a":2}`, []string{"required /c: is required"}},
		{`{"then":{"required":["b"]}}`, `{}`, nil},
		{`{"definitions":{"n":{"type":"integer"}},"properties":{"a":{"$ref":"#/definitions/n"}}}`, `{"a":1}`, nil},
		{`{"definitions":{"n":{"type":"integer"}},"properties":{"a":{"$ref":"#/definitions/n"}}}`, `{"a":"1"}`, []string{"type /a: expected integer, but got string"}},
		{`{"definitions":{"a/b":{"type":"integer"},"c%d":{"type":"string"}},"items":[{"$ref":"#/definitions/a~1b"},{"$ref":"#/definitions/c%25d"}]}`, `["x",1]`,
			[]string{"type /0: expected integer, but got string", "type /1: expected string, but got number"}},
		{`{"properties":{"next":{"$ref":"#"}},"required":["v"]}`, `{"v":1,"next":{"v":2,"next":{}}}`, []string{"required /next/next/v: is required"}},
		{`{"$ref":"#/definitions/n","type":"string","definitions":{"n":{"type":"integer"}}}`, `1`, nil},
		{`{"properties":{"a b%41/c":{"type":"string"}},"required":["x y%"]}`, `{"a b%41/c":1}`,
			[]string{"type /a b%41~1c: expected string, but got number", "required /x y%: is required"}},
		{`{"$id":"https://example.com/spec.json","required":["a"],"properties":{"m":{"enum":["x","y"]}}}`, `{"m":"z"}`,
			[]string{"required /a: is required", `enum /m: value must be one of "x", "y"`}},
		{`{"title":"x","description":"y","examples":[1],"format":"date","airbyte_secret":true,"order":0}`, `"not a date"`, nil},
	}
	for _, c := range cases {
		s, err := CompileJSONSchema(decode(t, c.schema))
		if err != nil {
			t.Errorf("%s: %v", c.schema, err)
			continue
		}
		got := failures(s.Validate(decode(t, c.value)))
		if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("%s with %s:\n got %q\nwant %q", c.schema, c.value, got, c.want)
		}
	}
}

// The enum error carries the values allowed, in a schema with an $id too.
func TestEnumValues(t *testing.T) {
	for _, schema := range []string{`{"enum":["a","b"]}`, `{"$id":"https://example.com/s.json","enum":["a","b"]}`} {
		s, _ := CompileJSONSchema(decode(t, schema))
		errs := s.Validate("c").(SchemaErrors)
		if len(errs) != 1 || len(errs[0].Enum) != 2 || errs[0].Enum[1] != "b" {
			t.Errorf("%s: %+v", schema, errs)
		}
	}
}

// Numbers as YAML decoders and our manifest make them are numbers.
func TestGoNumbers(t *testing.T) {
	s, _ := CompileJSONSchema(decode(t, `{"type":"integer","minimum":2,"enum":[2,3]}`))
	for _, v := range []any{int(2), int64(3), uint64(2), float32(3), json.Number("2")} {
		if err := s.Validate(v); err != nil {
			t.Errorf("%T %v: %v", v, v, err)
		}
	}
	if got := failures(s.Validate(struct{}{})); len(got) != 1 || got[0] != "type : struct {} is not a JSON value" {
		t.Errorf("%q", got)
	}
}

// A broken schema is refused with its place and what the draft-07
// meta-schema says of it; a $ref only points inside the schema; a $ref loop
// is refused.
func TestSchemaErrors(t *testing.T) {
	for schema, want := range map[string]string{
		`5`:                                          `expected object or boolean, but got number`,
		`{"type":"str"}`:                             `/type: value must be one of "array", "boolean", "integer", "null", "number", "object", "string"; /type: expected array, but got string`,
		`{"type":["string","string"]}`:               `/type: value must be one of "array", "boolean", "integer", "null", "number", "object", "string"; /type: items at index 0 and 1 are equal`,
		`{"properties":{"a":{"minLength":-1}}}`:      `/properties/a/minLength: must be >= 0 but found -1`,
		`{"properties":{"a":{"pattern":"(x"}}}`:      `/properties/a/pattern: '(x' is not a valid regular expression: error parsing regexp: missing closing ) in ` + "`(x`",
		`{"patternProperties":{"(":{}}}`:             `/patternProperties/(: '(' is not valid 'regex'`,
		`{"required":"a"}`:                           `/required: expected array, but got string`,
		`{"anyOf":[]}`:                               `/anyOf: minimum 1 items required, but found 0 items`,
		`{"multipleOf":0}`:                           `/multipleOf: must be > 0 but found 0`,
		`{"minimum":"1"}`:                            `/minimum: expected number, but got string`,
		`{"exclusiveMinimum":true}`:                  `/exclusiveMinimum: expected number, but got boolean`,
		`{"title":5}`:                                `/title: expected string, but got number`,
		`{"examples":"x"}`:                           `/examples: expected array, but got string`,
		`{"items":[{"type":1}]}`:                     `/items: expected object or boolean, but got array; /items/0/type: value must be one of "array", "boolean", "integer", "null", "number", "object", "string"; /items/0/type: expected array, but got number`,
		`{"$ref":"other.json#/definitions/a"}`:       `$ref "other.json": only references inside the schema (#/...) are supported`,
		`{"$ref":"file:///etc/passwd"}`:              `$ref "file:///etc/passwd": only references inside the schema (#/...) are supported`,
		`{"$ref":"#/definitions/missing"}`:           `$ref "#/definitions/missing": the schema has nothing there`,
		`{"$ref":"#anchor"}`:                         `$ref "#anchor": the schema has nothing there`,
		`{"definitions":{"unused":{"type":"what"}}}`: `/definitions/unused/type: value must be one of "array", "boolean", "integer", "null", "number", "object", "string"; /definitions/unused/type: expected array, but got string`,
		`{"not":{"$ref":"#/definitions/gone"}}`:      `$ref "#/definitions/gone": the schema has nothing there`,
		`{"dependencies":{"a":[1]}}`:                 `/dependencies/a: expected object or boolean, but got array; /dependencies/a/0: expected string, but got number`,
		`{"definitions":{"a":{"$ref":"#/definitions/b"},"b":{"anyOf":[{"$ref":"#/definitions/a"}]}},"$ref":"#/definitions/a"}`: `its $refs loop without going into the value (#/$ref/$ref/anyOf/0/$ref)`,
	} {
		_, err := CompileJSONSchema(decode(t, schema))
		if err == nil || err.Error() != want {
			t.Errorf("%s:\n got %v\nwant %s", schema, err, want)
		}
	}
}

// A pattern is a Python regular expression found anywhere in the text, as
// Airbyte's runtime (Python's jsonschema, re.search) reads it: a lookahead
// (google-analytics-data-api's spec) is accepted and applied, in every place
// a schema can be, and a property named "pattern" is still a property.
func TestPythonPatterns(t *testing.T) {
	schema := decode(t, `{"properties":{
		"name":{"pattern":"^(?!(cohort_|RESERVED_)).*$"},
		"reports":{"type":"array","items":{"properties":{"id":{"pattern":"(?<=r)\\d"}}}},
		"pattern":{"type":"string","pattern":"^p"},
		"choice":{"oneOf":[{"type":"integer"},{"type":"string","pattern":"(?P<y>\\d{4})-(?P=y)"}]}},
		"definitions":{"x":{"pattern":"x"}}}`)
	s, err := CompileJSONSchema(schema)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(decode(t, `{"name":"daily","reports":[{"id":"r1"}],"pattern":"pq","choice":"2024-2024"}`)); err != nil {
		t.Errorf("a valid config: %v", err)
	}
	got := failures(s.Validate(decode(t, `{"name":"cohort_1","reports":[{"id":"1"}],"pattern":"q","choice":"2024-2025"}`)))
	want := []string{
		`type /choice: expected integer, but got string`,
		`pattern /choice: does not match pattern '(?P<y>\\d{4})-(?P=y)'`,
		`pattern /name: does not match pattern '^(?!(cohort_|RESERVED_)).*$'`,
		`pattern /pattern: does not match pattern '^p'`,
		`pattern /reports/0/id: does not match pattern '(?<=r)\\d'`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
