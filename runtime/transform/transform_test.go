package transform

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/manifest"
)

func decode(t *testing.T, s string) *Object {
	t.Helper()
	o, err := Decode([]byte(s))
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return o
}

func encode(o *Object) string { return string(AppendJSON(nil, o)) }

func vars() interp.Vars {
	return interp.Vars{"config": map[string]any{"region": "eu", "sep": "-"}, "parameters": map[string]any{},
		"stream_slice": map[string]any{"id": int64(7)}, "stream_partition": map[string]any{"id": int64(7)}, "stream_interval": map[string]any{}}
}

func apply(t *testing.T, tr *manifest.Transformation, in string) string {
	t.Helper()
	x, err := New(tr)
	if err != nil {
		t.Fatal(err)
	}
	rec := decode(t, in)
	if err := x.Apply(rec, vars()); err != nil {
		t.Fatalf("%s: %v", in, err)
	}
	return encode(rec)
}

func tpl(s string) *interp.Template { return interp.MustCompile(s) }

func TestDecodeEncodeKeepsOrderAndNumbers(t *testing.T) {
	for in, want := range map[string]string{
		`{"b":1,"a":{"z":1.50,"y":[1e3,-0,12345678901234567890]},"c":"x\"\\\n\u00e9\u0001"}`: `{"b":1,"a":{"z":1.50,"y":[1e3,-0,12345678901234567890]},"c":"x\"\\\né\u0001"}`,
		` { "a" : null , "a" : true } `: `{"a":true}`,
		`{"k":"\ud83d\ude00 ok"}`:       `{"k":"😀 ok"}`,
	} {
		if got := encode(decode(t, in)); got != want {
			t.Errorf("%s:\n got %s\nwant %s", in, got, want)
		}
	}
	for _, bad := range []string{`[1]`, `{"a":}`, `{"a":1`, `{"a":01}`, `{"a":"x`} {
		if _, err := Decode([]byte(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

// TestDecodeStringsAsEncodingJSON puts each byte that matters to a string at
// every offset of a long one, where strings are searched eight bytes at a
// time: the value decoded and the error must be encoding/json's.
func TestDecodeStringsAsEncodingJSON(t *testing.T) {
	for _, c := range []string{`"`, `\`, `\"`, `\n`, `\u00e9`, `\x`, "\x00", "\x1f", "\x7f", "\xc3\xa9", "\xff"} {
		for at := 0; at < 20; at++ {
			text := `{"s":"` + strings.Repeat("x", at) + c + strings.Repeat("y", 20-at) + `"}`
			var want map[string]string
			wantErr := json.Unmarshal([]byte(text), &want)
			o, err := Decode([]byte(text))
			if (err != nil) != (wantErr != nil) {
				t.Errorf("%q: error %v, encoding/json %v", text, err, wantErr)
				continue
			}
			if err == nil {
				if got, _ := o.Get("s"); got != want["s"] {
					t.Errorf("%q: got %q, want %q", text, got, want["s"])
				}
			}
		}
	}
}

func addFieldsT(cond string, fields ...manifest.AddedField) *manifest.Transformation {
	a := &manifest.AddFields{Fields: fields}
	if cond != "" {
		a.Condition = tpl(cond)
	}
	return &manifest.Transformation{Type: manifest.AddFieldsType, Path: "streams[0].transformations[0]", AddFields: a,
		Parameters: map[string]any{"name": "users"}}
}

func field(path, value, valueType string) manifest.AddedField {
	return manifest.AddedField{Path: strings.Split(path, "."), Value: tpl(value), ValueType: valueType}
}

func TestAddFields(t *testing.T) {
	cases := []struct {
		tr       *manifest.Transformation
		in, want string
	}{
		{addFieldsT("", field("double", "{{ record['id'] * 2 }}", ""), field("static", "static", ""), field("stream", "{{ parameters['name'] }}", "")),
			`{"id":21}`, `{"id":21,"double":42,"static":"static","stream":"users"}`},
		{addFieldsT("", field("a.b.c", "{{ config['region'] }}", ""), field("id", "{{ stream_partition.id }}", "")),
			`{"id":1,"a":{"x":0}}`, `{"id":7,"a":{"x":0,"b":{"c":"eu"}}}`},
		{addFieldsT("", field("n", "{{ record.id }}", ""), field("m", "{{ record.n + 1 }}", "")),
			`{"id":1}`, `{"id":1,"n":1,"m":2}`},
		{addFieldsT("", field("s", "{{ record.id }}", "string"), field("i", "42", "integer"), field("f", "9.5", "number"),
			field("n", "42", "number"), field("b", "{{ 'true' }}", "boolean"), field("x", "9.5", "integer")),
			`{"id":5}`, `{"id":5,"s":"5","i":42,"f":9.5,"n":42,"b":true,"x":"9.5"}`},
		{addFieldsT("{{ value > 1 and property > 1 and path[0] == 'big' }}", field("big", "{{ record.id }}", "")),
			`{"id":2}`, `{"id":2,"big":2}`},
		{addFieldsT("{{ value > 1 }}", field("big", "{{ record.id }}", "")),
			`{"id":1}`, `{"id":1}`},
		{addFieldsT("", field("list.1", "x", "")), `{"list":["a"]}`, `{"list":["a","x"]}`},
	}
	for _, c := range cases {
		if got := apply(t, c.tr, c.in); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.in, got, c.want)
		}
	}
}

func removeFieldsT(cond string, pointers ...string) *manifest.Transformation {
	r := &manifest.RemoveFields{}
	for _, p := range pointers {
		r.FieldPointers = append(r.FieldPointers, strings.Split(p, "."))
	}
	if cond != "" {
		r.Condition = tpl(cond)
	}
	return &manifest.Transformation{Type: manifest.RemoveFieldsType, RemoveFields: r}
}

func TestRemoveFields(t *testing.T) {
	rec := `{"id":1,"password":"p","user":{"password":"q","name":""},"items":[{"password":"r","n":""},{"n":2}],"tags":["a","b","c"],"empty":""}`
	cases := []struct {
		tr   *manifest.Transformation
		want string
	}{
		{removeFieldsT("", "password", "user.name", "missing.deep"),
			`{"id":1,"user":{"password":"q"},"items":[{"password":"r","n":""},{"n":2}],"tags":["a","b","c"],"empty":""}`},
		{removeFieldsT("", "**.password"),
			`{"id":1,"user":{"name":""},"items":[{"n":""},{"n":2}],"tags":["a","b","c"],"empty":""}`},
		{removeFieldsT("", "*.password"),
			`{"id":1,"password":"p","user":{"name":""},"items":[{"password":"r","n":""},{"n":2}],"tags":["a","b","c"],"empty":""}`},
		{removeFieldsT("", "tags.0", "tags.2"), // items leave their list; indexes are the list's as read
			`{"id":1,"password":"p","user":{"password":"q","name":""},"items":[{"password":"r","n":""},{"n":2}],"tags":["b"],"empty":""}`},
		{removeFieldsT("", "items.*.pass*", "t[a-z]gs", "e?pty"),
			`{"id":1,"password":"p","user":{"password":"q","name":""},"items":[{"n":""},{"n":2}]}`},
		{removeFieldsT("{{ property == '' }}", "**"),
			`{"id":1,"password":"p","user":{"password":"q"},"items":[{"password":"r"},{"n":2}],"tags":["a","b","c"]}`},
		// A condition removes only what the pointer matches.
		{removeFieldsT("{{ property == '' }}", "user.*"),
			`{"id":1,"password":"p","user":{"password":"q"},"items":[{"password":"r","n":""},{"n":2}],"tags":["a","b","c"],"empty":""}`},
		{removeFieldsT("{{ property|length > 0 }}", "user"),
			rec},
	}
	for i, c := range cases {
		if got := apply(t, c.tr, rec); got != c.want {
			t.Errorf("case %d:\n got %s\nwant %s", i, got, c.want)
		}
	}
	if _, err := New(removeFieldsT("", "**.a.**")); err == nil {
		t.Error("two ** accepted")
	}
}

func TestKeysTransformations(t *testing.T) {
	lower := &manifest.Transformation{Type: manifest.KeysToLowerType}
	if got := apply(t, lower, `{"ID":1,"Name":{"First":"a"},"x":2}`); got != `{"id":1,"name":{"First":"a"},"x":2}` {
		t.Errorf("lower: %s", got)
	}
	for key, want := range map[string]string{
		"FirstName": "first_name", "lastName": "last_name", "Created At": "created_at", "user-id": "user_id",
		"value2Go": "value_2_go", "123abc": "_123_abc", "__x__": "_x_", "HTTPStatus": "httpstatus", "Prénom": "prenom",
		"straße": "strasse", "already_snake": "already_snake", "_id": "_id", "a.b": "a_b",
		// Letters with no transliteration here are kept, lower-cased; a
		// symbol is still a separator.
		"日本語": "日本語", "Ωmega": "ωmega", "price €": "price_",
	} {
		if got := snakeCase(key); got != want {
			t.Errorf("snakeCase(%q) = %q, want %q", key, got, want)
		}
	}
	snake := &manifest.Transformation{Type: manifest.KeysToSnakeCaseType}
	if got := apply(t, snake, `{"userId":1,"Profile":{"FirstName":"a","tags":[{"KeepMe":1}]}}`); got != `{"user_id":1,"profile":{"first_name":"a","tags":[{"KeepMe":1}]}}` {
		t.Errorf("snake: %s", got)
	}
	replace := &manifest.Transformation{Type: manifest.KeysReplaceType, KeysReplace: &manifest.KeysReplace{Old: tpl(" "), New: tpl("{{ config.sep }}")}}
	if got := apply(t, replace, `{"first name":1,"b":{"c d e":2},"l":[{"x y":3}]}`); got != `{"first-name":1,"b":{"c-d-e":2},"l":[{"x y":3}]}` {
		t.Errorf("replace: %s", got)
	}
}

func TestFlattenFields(t *testing.T) {
	flat := &manifest.Transformation{Type: manifest.FlattenFieldsType, FlattenFields: &manifest.FlattenFields{FlattenLists: true}}
	for in, want := range map[string]string{
		`{"id":1,"profile":{"first":"A"}}`:             `{"first":"A","id":1}`,
		`{"lines":[{"sku":"a"},{"sku":"b"}]}`:          `{"lines.1.sku":"b","lines.0.sku":"a"}`,
		`{"info":{"name":"in"},"name":"out"}`:          `{"name":"out","info.name":"in"}`,
		`{"name":"out","info":{"name":"in"}}`:          `{"name":"out","info.name":"in"}`, // the reference loses "in"
		`{"a":{"b":{"c":1}},"d":[1,2],"e":{"f":null}}`: `{"f":null,"d.1":2,"d.0":1,"a.b.c":1}`,
	} {
		if got := apply(t, flat, in); got != want {
			t.Errorf("%s:\n got %s\nwant %s", in, got, want)
		}
	}
	keepLists := &manifest.Transformation{Type: manifest.FlattenFieldsType, FlattenFields: &manifest.FlattenFields{FlattenLists: false}}
	if got := apply(t, keepLists, `{"a":{"b":[1,{"c":2}]},"d":3}`); got != `{"d":3,"b":[1,{"c":2}]}` {
		t.Errorf("flatten_lists false: %s", got)
	}
}

func dpathFlattenT(path string, del, replace bool, prefix, suffix string) *manifest.Transformation {
	d := &manifest.DpathFlattenFields{DeleteOrigin: del, ReplaceRecord: replace}
	for _, p := range strings.Split(path, ".") {
		d.FieldPath = append(d.FieldPath, tpl(p))
	}
	if prefix != "" {
		d.KeyPrefix = tpl(prefix)
	}
	if suffix != "" {
		d.KeySuffix = tpl(suffix)
	}
	return &manifest.Transformation{Type: manifest.DpathFlattenFieldsType, DpathFlattenFields: d}
}

func TestDpathFlattenFields(t *testing.T) {
	rec := `{"id":1,"data":{"a":1,"b":2},"list":[{"x":1},{"y":2}],"s":"text"}`
	cases := []struct {
		tr   *manifest.Transformation
		want string
	}{
		{dpathFlattenT("data", false, false, "", ""), `{"id":1,"data":{"a":1,"b":2},"list":[{"x":1},{"y":2}],"s":"text","a":1,"b":2}`},
		{dpathFlattenT("data", true, false, "", ""), `{"id":1,"list":[{"x":1},{"y":2}],"s":"text","a":1,"b":2}`},
		{dpathFlattenT("data", true, false, "{{ config.region }}_", "_x"), `{"id":1,"list":[{"x":1},{"y":2}],"s":"text","eu_a_x":1,"eu_b_x":2}`},
		{dpathFlattenT("data", true, true, "", ""), `{"a":1,"b":2}`},
		{dpathFlattenT("list.*", false, false, "", ""), `{"id":1,"data":{"a":1,"b":2},"list":[{"x":1},{"y":2}],"s":"text","x":1}`},
		{dpathFlattenT("s", true, false, "", ""), rec},
		{dpathFlattenT("missing", true, false, "", ""), rec},
	}
	for i, c := range cases {
		if got := apply(t, c.tr, rec); got != c.want {
			t.Errorf("case %d:\n got %s\nwant %s", i, got, c.want)
		}
	}
	// A key already at the top: nothing changes, the origin is kept.
	if got := apply(t, dpathFlattenT("data", true, false, "", ""), `{"a":0,"data":{"a":1}}`); got != `{"a":0,"data":{"a":1}}` {
		t.Errorf("clash: %s", got)
	}
}

func TestNormalize(t *testing.T) {
	schema := map[string]any{
		"type": "object",
		"definitions": map[string]any{
			"when": map[string]any{"type": []any{"null", "integer"}},
		},
		"properties": map[string]any{
			"s": map[string]any{"type": "string"}, "s2": map[string]any{"type": []any{"string", "null"}},
			"s3": map[string]any{"type": "string"}, "s4": map[string]any{"type": "string"}, "s5": map[string]any{"type": "string"},
			"i": map[string]any{"type": "integer"}, "i2": map[string]any{"type": "integer"}, "i3": map[string]any{"type": "integer"},
			"n": map[string]any{"type": "number"}, "b": map[string]any{"type": "boolean"}, "b2": map[string]any{"type": "boolean"},
			"b3": map[string]any{"type": "boolean"}, "a": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
			"u":   map[string]any{"type": []any{"string", "integer"}},
			"ref": map[string]any{"$ref": "#/definitions/when"},
			"obj": map[string]any{"type": "object", "properties": map[string]any{"x": map[string]any{"type": "integer"}}},
			"l":   map[string]any{"type": "array", "items": map[string]any{"type": "object", "properties": map[string]any{"y": map[string]any{"type": "string"}}}},
		},
	}
	var warnings []string
	n := NewNormalizer(schema, func(field, got, want string) { warnings = append(warnings, field+": "+got+" -> "+want) })
	rec := decode(t, `{"s":1.50,"s2":null,"s3":true,"s4":{"k":[1]},"s5":null,"i":"12","i2":1.9,"i3":"1.5","n":"2.5","b":"Yes","b2":0,"b3":"maybe","a":"x","u":"1","ref":"7","obj":{"x":"3"},"l":[{"y":5}],"other":"1"}`)
	n.Apply(rec)
	want := `{"s":"1.50","s2":null,"s3":"true","s4":"{\"k\":[1]}","s5":null,"i":12,"i2":1,"i3":"1.5","n":2.5,"b":true,"b2":false,"b3":"maybe","a":["x"],"u":"1","ref":7,"obj":{"x":3},"l":[{"y":"5"}],"other":"1"}`
	if got := encode(rec); got != want {
		t.Errorf("\n got %s\nwant %s", got, want)
	}
	wantWarn := []string{"s5: null -> string", "i3: string -> integer", "b3: string -> boolean"}
	if strings.Join(warnings, "; ") != strings.Join(wantWarn, "; ") {
		t.Errorf("warnings %q, want %q", warnings, wantWarn)
	}
	n.Apply(decode(t, `{"i3":"x"}`))
	if len(warnings) != 3 {
		t.Errorf("a field warned twice: %q", warnings)
	}
}

func TestGlobMatch(t *testing.T) {
	for _, c := range []struct {
		glob, path string
		want       bool
	}{
		{"a.b", "a.b", true}, {"a.*", "a.b", true}, {"a.*", "a.b.c", false}, {"**", "a.b.c", true},
		{"**.c", "c", true}, {"**.c", "a.b.c", true}, {"a.**.c", "a.c", true}, {"a.**", "a", true},
		{"a.**", "b", false}, {"x?", "xy", true}, {"[!a]b", "ab", false}, {"[!a]b", "cb", true}, {"A", "a", false},
	} {
		g, err := CompileGlob(strings.Split(c.glob, "."))
		if err != nil {
			t.Fatal(err)
		}
		if got := g.Match(strings.Split(c.path, ".")); got != c.want {
			t.Errorf("%s ~ %s = %v", c.glob, c.path, got)
		}
	}
}
