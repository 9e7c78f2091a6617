package cli

import (
	"fmt"
	"net/http"
	"sort"
	"testing"
)

// The vectors of this file are the unit-test vectors of Airbyte's declarative
// CDK (unit_tests/sources/declarative/transformations/, record filter and
// TypeTransformer), run through a manifest; expected records are what the CDK
// prints, key order included, except where README's "Behaviour worth knowing"
// says we differ.

// vector is one record through one manifest: the records the API sends
// under data, the YAML added to the stream and to the record selector, and
// the records printed, exactly.
type vector struct {
	name     string
	data     string
	stream   string
	selector string
	config   map[string]any
	want     []string
}

func runVectors(t *testing.T, vs []vector) {
	t.Helper()
	for _, v := range vs {
		t.Run(v.name, func(t *testing.T) {
			a := fixedAPI(t, fmt.Sprintf(`{"data":%s}`, v.data))
			res := newConnector(t, itemsStream(a.URL, v.selector, "", v.stream), v.config, "items").read(t)
			if res.code != 0 {
				t.Fatalf("exit %d: %s", res.code, res.stdout)
			}
			equalLists(t, "records", printed(t, res, "items"), v.want)
		})
	}
}

func addFields(fields string) string {
	return "transformations:\n  - type: AddFields\n    fields:\n" + indent(fields, 6)
}

func TestAddFieldsMatchesCDKVectors(t *testing.T) {
	runVectors(t, []vector{
		{name: "static", data: `[{"k":"v"}]`, stream: addFields(`- {path: [path], value: static_value}`), want: []string{`{"k":"v","path":"static_value"}`}},
		{name: "number expr", data: `[{"k":"v"}]`, stream: addFields(`- {path: [path], value: "{{ 1 }}"}`), want: []string{`{"k":"v","path":1}`}},
		{name: "string type", data: `[{"k":"v"}]`, stream: addFields(`- {path: [path], value: "{{ 1 }}", value_type: string}`), want: []string{`{"k":"v","path":"1"}`}},
		{name: "nested", data: `[{"k":"v"}]`, stream: addFields(`- {path: [nested, path], value: static_value}`), want: []string{`{"k":"v","nested":{"path":"static_value"}}`}},
		{name: "overwrite", data: `[{"k":"v"}]`, stream: addFields(`- {path: [k], value: new_value}`), want: []string{`{"k":"new_value"}`}},
		{name: "array index", data: `[{"k":[0,1]}]`, stream: addFields(`- {path: [k, "3"], value: v}`), want: []string{`{"k":[0,1,null,"v"]}`}},
		{name: "config bracket", data: `[{"k":"v"}]`, config: map[string]any{"shop": "in-n-out"}, stream: addFields(`- {path: [k2], value: "{{ config[\"shop\"] }}"}`), want: []string{`{"k":"v","k2":"in-n-out"}`}},
		{name: "config dot", data: `[{"k":"v"}]`, config: map[string]any{"shop": "in-n-out"}, stream: addFields(`- {path: [k2], value: "{{ config.shop }}"}`), want: []string{`{"k":"v","k2":"in-n-out"}`}},
		{name: "record dot", data: `[{"k":{"nested":"v"}}]`, stream: addFields(`- {path: [k2], value: "{{ record.k.nested }}"}`), want: []string{`{"k":{"nested":"v"},"k2":"v"}`}},
		{name: "record bracket", data: `[{"k":{"nested":"v"}}]`, stream: addFields(`- {path: [k2], value: "{{ record['k']['nested'] }}"}`), want: []string{`{"k":{"nested":"v"},"k2":"v"}`}},
		{name: "jinja", data: `[{"k":"v"}]`, stream: addFields(`- {path: [k2], value: "{{ 2 + 2 }}"}`), want: []string{`{"k":"v","k2":4}`}},
		{name: "cond false", data: `[{"k":"v"}]`, stream: addFields(`- {path: [path], value: static_value}`) + "\n    condition: \"{{ False }}\"", want: []string{`{"k":"v"}`}},
		{name: "cond true", data: `[{"k":"v"}]`, stream: addFields(`- {path: [path], value: static_value}`) + "\n    condition: \"{{ True }}\"", want: []string{`{"k":"v","path":"static_value"}`}},
		{name: "cond path", data: `[{"k":"v"},{"k":"v","path":"record_value"}]`, stream: addFields(`- {path: [path], value: static_value}`) + "\n    condition: \"{{ path[0] not in record.keys() }}\"", want: []string{`{"k":"v","path":"static_value"}`, `{"k":"v","path":"record_value"}`}},
		{name: "cond value", data: `[{"k":"v"},{"k":""}]`, stream: addFields(`- {path: [copy], value: "{{ record.k }}"}`) + "\n    condition: \"{{ value }}\"", want: []string{`{"k":"v","copy":"v"}`, `{"k":""}`}},
		{name: "integer type", data: `[{"a":"42","b":"9.5"}]`, stream: addFields("- {path: [x], value: \"{{ record.a }}\", value_type: integer}\n- {path: [y], value: \"{{ record.b }}\", value_type: number}\n- {path: [z], value: \"{{ record.a }}\", value_type: string}\n- {path: [w], value: \"true\", value_type: boolean}"), want: []string{`{"a":"42","b":"9.5","x":42,"y":9.5,"z":"42","w":true}`}},
		{name: "literal eval", data: `[{"id":7}]`, stream: addFields("- {path: [a], value: \"007\"}\n- {path: [b], value: \"{{ record.id > 1 }}\"}\n- {path: [c], value: \"{{ record.missing }}\"}\n- {path: [d], value: \"{{ record.get('x') }}\"}\n- {path: [e], value: \"{{ [1, 2] }}\"}\n- {path: [f], value: \"{{ {'a': 1} }}\"}\n- {path: [g], value: \"{{ '7' }}\"}\n- {path: [h], value: \"{{ 1.50 }}\"}"), want: []string{`{"id":7,"a":"007","b":true,"c":"","d":null,"e":[1,2],"f":{"a":1},"g":7,"h":1.5}`}},
		{name: "static literals", data: `[{"id":1}]`, stream: addFields("- {path: [a], value: \"42\"}\n- {path: [b], value: \"True\"}\n- {path: [c], value: \"true\"}\n- {path: [d], value: \"[1, 2]\"}\n- {path: [e], value: \"None\"}\n- {path: [f], value: \"1.5\"}\n- {path: [g], value: \"-3\"}"), want: []string{`{"id":1,"a":42,"b":true,"c":"true","d":[1,2],"e":null,"f":1.5,"g":-3}`}},
		{name: "value types", data: `[{"id":1}]`, stream: addFields("- {path: [a], value: \"{{ true }}\", value_type: string}\n- {path: [b], value: \"{{ 9.5 }}\", value_type: integer}\n- {path: [c], value: \"x\", value_type: integer}\n- {path: [d], value: \"{{ 'false' }}\", value_type: boolean}"), want: []string{`{"id":1,"a":"true","b":"9.5","c":"x","d":false}`}},
		{name: "slice", data: `[{"id":1}]`, stream: addFields("- {path: [s], value: \"{{ stream_slice }}\"}\n- {path: [p], value: \"{{ parameters.kind }}\"}"), want: []string{`{"id":1,"s":{},"p":"things"}`}},
		{name: "later sees earlier", data: `[{"id":1}]`, stream: addFields("- {path: [a], value: \"{{ record.id + 1 }}\"}\n- {path: [b], value: \"{{ record.a * 10 }}\"}"), want: []string{`{"id":1,"a":2,"b":20}`}},
		{name: "scalar in the way", data: `[{"a":1}]`, stream: addFields(`- {path: [a, b], value: x}`), want: []string{`{"a":{"b":"x"}}`}},
		// bing-ads' accounts: a list the template makes, appended to in a loop.
		{name: "list appended in a loop", data: `[{"LinkedAgencies":[{"Id":"3","Name":"a"},{"Id":"4","Name":"b"}]},{"LinkedAgencies":null}]`,
			stream: addFields("- path: [LinkedAgencies]\n  value: |\n    {% set linked = [] %}\n    {% for agency in (record.get('LinkedAgencies') or []) %}\n    {% set _ = linked.append({'Id': agency.Id|int, 'Name': agency.Name}) %}\n    {% endfor %}\n    {{ linked }}"),
			want:   []string{`{"LinkedAgencies":[{"Id":3,"Name":"a"},{"Id":4,"Name":"b"}]}`, `{"LinkedAgencies":[]}`}},
	})
}

func removeFields(pointers, condition string) string {
	s := "transformations:\n  - type: RemoveFields\n    field_pointers: " + pointers
	if condition != "" {
		s += "\n    condition: \"" + condition + "\""
	}
	return s
}

func TestRemoveFieldsMatchesCDKVectors(t *testing.T) {
	runVectors(t, []vector{
		{name: "flat", data: `[{"k1":"v","k2":"v"}]`, stream: removeFields(`[[k1]]`, ""), want: []string{`{"k2":"v"}`}},
		{name: "missing", data: `[{"k1":"v","k2":"v"}]`, stream: removeFields(`[[k3]]`, ""), want: []string{`{"k1":"v","k2":"v"}`}},
		{name: "both", data: `[{"k1":"v","k2":"v"}]`, stream: removeFields(`[[k1],[k2]]`, ""), want: []string{`{}`}},
		{name: "array index", data: `[{"k1":[1,2]}]`, stream: removeFields(`[[k1, "0"]]`, ""), want: []string{`{"k1":[2]}`}},
		{name: "index missing", data: `[{"k1":[0,1]}]`, stream: removeFields(`[[".", k1, "10"]]`, ""), want: []string{`{"k1":[0,1]}`}},
		{name: "nested", data: `[{".":{"k2":"v","k1":"v"}}]`, stream: removeFields(`[[".", k1]]`, ""), want: []string{`{".":{"k2":"v"}}`}},
		{name: "nested both", data: `[{".":{"k2":"v","k1":"v"}}]`, stream: removeFields(`[[".", k1],[".", k2]]`, ""), want: []string{`{".":{}}`}},
		{name: "deep in arrays", data: `[{".":{"k1":[{"k2":"v","k3":"v"},{"k4":"v"}]}}]`, stream: removeFields(`[[".", k1, "0", k2],[".", k1, "1", k4]]`, ""), want: []string{`{".":{"k1":[{"k3":"v"},{}]}}`}},
		{name: "cond false", data: `[{"k1":"v","k2":"v"}]`, stream: removeFields(`[["**"]]`, "{{ False }}"), want: []string{`{"k1":"v","k2":"v"}`}},
		{name: "cond true", data: `[{"k1":"v","k2":"v"}]`, stream: removeFields(`[["**"]]`, "{{ True }}"), want: []string{`{}`}},
		{name: "cond v1", data: `[{"k1":"v","k2":"v1","k3":"v1","k4":{"k_nested":"v1","k_nested2":"v2"}}]`, stream: removeFields(`[["**"]]`, "{{ property == 'v1' }}"), want: []string{`{"k1":"v","k4":{"k_nested2":"v2"}}`}},
		{name: "cond length", data: `[{"k1":"v","k2":"some_long_string","k3":"some_long_string","k4":{"k_nested":"v1","k_nested2":"v2"}}]`, stream: removeFields(`[["**"]]`, "{{ property|length > 5 }}"), want: []string{`{"k1":"v","k4":{"k_nested":"v1","k_nested2":"v2"}}`}},
		{name: "cond integer", data: `[{"k1":255,"k2":"some_string","k3":"some_long_string","k4":{"k_nested":123123,"k_nested2":"v2"}}]`, stream: removeFields(`[["**"]]`, "{{ property is integer }}"), want: []string{`{"k2":"some_string","k3":"some_long_string","k4":{"k_nested2":"v2"}}`}},
		{name: "star", data: `[{"a":{"x":1,"y":2},"b":{"x":3},"x":4}]`, stream: removeFields(`[["*", x]]`, ""), want: []string{`{"a":{"y":2},"b":{},"x":4}`}},
		{name: "double star", data: `[{"password":1,"a":{"password":2,"b":[{"password":3,"c":4}]}}]`, stream: removeFields(`[["**", password]]`, ""), want: []string{`{"a":{"b":[{"c":4}]}}`}},
		{name: "star top", data: `[{"a":1,"b":{"c":2}}]`, stream: removeFields(`[["*"]]`, ""), want: []string{`{}`}},
		{name: "star through list", data: `[{"items":[{"secret":1,"a":2},{"secret":3}],"secret":4}]`, stream: removeFields(`[[items, "*", secret]]`, ""), want: []string{`{"items":[{"a":2},{}],"secret":4}`}},
		{name: "all", data: `[{"a":1,"b":{"c":[1]}}]`, stream: removeFields(`[["**"]]`, ""), want: []string{`{}`}},
		{name: "under star star", data: `[{"a":{"b":{"c":1}},"d":2}]`, stream: removeFields(`[[a, "**"]]`, ""), want: []string{`{"d":2}`}},
		{name: "cond empty strings", data: `[{"a":"","b":{"c":"","d":"x"},"e":[""]}]`, stream: removeFields(`[["**"]]`, "{{ property == '' }}"), want: []string{`{"b":{"d":"x"},"e":[]}`}},
		{name: "cond none", data: `[{"a":null,"b":1}]`, stream: removeFields(`[["**"]]`, "{{ property is none }}"), want: []string{`{"b":1}`}},
	})
}

// A RemoveFields condition sees config, parameters and property, as the
// CDK renders it (checked with refcdk7): the record and the slice are not
// variables there.
func TestRemoveFieldsConditionVariables(t *testing.T) {
	runVectors(t, []vector{
		{name: "config", data: `[{"a":"x","b":"y"}]`, config: map[string]any{"drop": "x"}, stream: removeFields(`[["**"]]`, "{{ property == config.drop }}"), want: []string{`{"b":"y"}`}},
		{name: "parameters", data: `[{"a":"things","b":"y"}]`, stream: removeFields(`[["**"]]`, "{{ property == parameters.kind }}"), want: []string{`{"b":"y"}`}},
	})
	a := fixedAPI(t, `{"data":[{"id":1,"a":"x"}]}`)
	res := newConnector(t, itemsStream(a.URL, "", "", removeFields(`[[a]]`, "{{ stream_slice.region == 'eu' }}")), nil, "items").read(t)
	errs := res.errors()
	want := `stream items: streams[0].transformations[0].condition: template "{{ stream_slice.region == 'eu' }}": uses undeclared variables: stream_slice`
	if res.code != 1 || len(errs) == 0 || errs[0]["message"] != want || errs[0]["failure_type"] != "system_error" {
		t.Fatalf("exit %d, errors %v; want the first %q (system_error)", res.code, errs, want)
	}
}

func TestKeyTransformationsMatchCDKVectors(t *testing.T) {
	snake := "transformations:\n  - type: KeysToSnakeCase"
	runVectors(t, []vector{
		{name: "snake1", data: `[{"FirstName":1,"lastName":2}]`, stream: snake, want: []string{`{"first_name":1,"last_name":2}`}},
		{name: "snake2", data: `[{"123Number":1,"456Another123":2}]`, stream: snake, want: []string{`{"_123_number":1,"_456_another_123":2}`}},
		{name: "snake3", data: `[{"NestedRecord":{"FirstName":1,"lastName":2},"456Another123":3}]`, stream: snake, want: []string{`{"nested_record":{"first_name":1,"last_name":2},"_456_another_123":3}`}},
		{name: "snake4", data: `[{"hello@world":1,"test#case":2}]`, stream: snake, want: []string{`{"hello_world":1,"test_case":2}`}},
		{name: "snake5", data: `[{"MixedUPCase123":1,"lowercaseAnd123":2}]`, stream: snake, want: []string{`{"mixed_upcase_123":1,"lowercase_and_123":2}`}},
		{name: "snake6", data: `[{"Café":1,"Naïve":2}]`, stream: snake, want: []string{`{"cafe":1,"naive":2}`}},
		{name: "snake7", data: `[{"This is a full sentence":1,"Another full sentence with more words":2}]`, stream: snake, want: []string{`{"this_is_a_full_sentence":1,"another_full_sentence_with_more_words":2}`}},
		{name: "snake tricky", data: `[{"__x__":1,"user-id":2,"value2Go":3,"HTTPStatus":4,"_id":5,"id_":6,"a.b":7,"":8,"$ref":9,"a  b":10,"ABC":11,"aB":12,"listKey":[{"innerKey":1}]}]`, stream: snake, want: []string{`{"_x_":1,"user_id":2,"value_2_go":3,"httpstatus":4,"_id":5,"id_":6,"a_b":12,"":8,"_ref":9,"abc":11,"list_key":[{"innerKey":1}]}`}},
		{name: "lower", data: `[{"ID":1,"Nested":{"InnerKey":2}}]`, stream: "transformations:\n  - type: KeysToLower", want: []string{`{"id":1,"nested":{"InnerKey":2}}`}},
		{name: "replace", data: `[{"date time":1,"customer id":2,"n":{"a b":3},"l":[{"c d":4}]}]`, stream: "transformations:\n  - type: KeysReplace\n    old: \" \"\n    new: \"_\"", want: []string{`{"date_time":1,"customer_id":2,"n":{"a_b":3},"l":[{"c d":4}]}`}},
		{name: "replace tpl", data: `[{"x_a":1,"sep":"_"}]`, config: map[string]any{"new": "-"}, stream: "transformations:\n  - type: KeysReplace\n    old: \"{{ record.sep }}\"\n    new: \"{{ config.new }}{{ parameters.kind }}\"", want: []string{`{"x-thingsa":1,"sep":"_"}`}},
	})
}

func TestFlattenFieldsMatchesCDKVectors(t *testing.T) {
	flat := "transformations:\n  - type: FlattenFields"
	noLists := "transformations:\n  - type: FlattenFields\n    flatten_lists: false"
	runVectors(t, []vector{
		{name: "f1", data: `[{"FirstName":"John","LastName":"Doe"}]`, stream: flat, want: []string{`{"LastName":"Doe","FirstName":"John"}`}},
		{name: "f3", data: `[{"NestedRecord":{"FirstName":"John","LastName":"Doe"},"456Another123":456}]`, stream: flat, want: []string{`{"456Another123":456,"LastName":"Doe","FirstName":"John"}`}},
		{name: "f4", data: `[{"ListExample":[{"A":"a"},{"A":"b"}]}]`, stream: flat, want: []string{`{"ListExample.1.A":"b","ListExample.0.A":"a"}`}},
		{name: "f5", data: `[{"MixedCase123":{"Nested":[{"Key":{"Value":"test1"}},{"Key":{"Value":"test2"}}]},"SimpleKey":"SimpleValue"}]`, stream: flat, want: []string{`{"SimpleKey":"SimpleValue","Nested.1.Key.Value":"test2","Nested.0.Key.Value":"test1"}`}},
		{name: "f6", data: `[{"List":["Item1","Item2","Item3"]}]`, stream: flat, want: []string{`{"List.2":"Item3","List.1":"Item2","List.0":"Item1"}`}},
		{name: "f7", data: `[{"List":["Item1","Item2","Item3"]}]`, stream: noLists, want: []string{`{"List":["Item1","Item2","Item3"]}`}},
		{name: "f8", data: `[{"RootField":{"NestedList":[{"Key":{"Value":"test1"}},{"Key":{"Value":"test2"}}]},"SimpleKey":"SimpleValue"}]`, stream: noLists, want: []string{`{"SimpleKey":"SimpleValue","NestedList":[{"Key":{"Value":"test1"}},{"Key":{"Value":"test2"}}]}`}},
		{name: "f9", data: `[{"RootField":{"List":[{"Key":{"Value":"test1"}},{"Key":{"Value":"test2"}}]},"List":[1,3,6],"SimpleKey":"SimpleValue"}]`, stream: noLists, want: []string{`{"SimpleKey":"SimpleValue","List":[1,3,6],"RootField.List":[{"Key":{"Value":"test1"}},{"Key":{"Value":"test2"}}]}`}},
		{name: "empty obj", data: `[{"a":{},"b":[],"c":null}]`, stream: flat, want: []string{`{"c":null}`}},
		{name: "ref info", data: `[{"info":{"name":"in"},"name":"out"}]`, stream: flat, want: []string{`{"name":"out","info.name":"in"}`}},
	})
}

func dpathFlatten(rest string) string {
	return "transformations:\n  - type: DpathFlattenFields\n" + indent(rest, 4)
}

func TestDpathFlattenFieldsMatchesCDKVectors(t *testing.T) {
	runVectors(t, []vector{
		{name: "keep", data: `[{"field1":-1,"field2":{"field3":-1}}]`, stream: dpathFlatten("field_path: [field2]"), want: []string{`{"field1":-1,"field2":{"field3":-1},"field3":-1}`}},
		{name: "delete", data: `[{"field1":-1,"field2":{"field3":-1}}]`, stream: dpathFlatten("field_path: [field2]\ndelete_origin_value: true"), want: []string{`{"field1":-1,"field3":-1}`}},
		{name: "star keep", data: `[{"field1":-1,"field2":{"field3":{"field4":{"field5":-1}}}}]`, stream: dpathFlatten(`field_path: [field2, "*", field4]`), want: []string{`{"field1":-1,"field2":{"field3":{"field4":{"field5":-1}}},"field5":-1}`}},
		{name: "star delete", data: `[{"field1":-1,"field2":{"field3":{"field4":{"field5":-1}}}}]`, stream: dpathFlatten("field_path: [field2, \"*\", field4]\ndelete_origin_value: true"), want: []string{`{"field1":-1,"field2":{"field3":{}},"field5":-1}`}},
		{name: "config", data: `[{"field1":-1,"field2":{"field3":-1}}]`, config: map[string]any{"field_path": "field2"}, stream: dpathFlatten(`field_path: ["{{ config['field_path'] }}"]`), want: []string{`{"field1":-1,"field2":{"field3":-1},"field3":-1}`}},
		{name: "missing", data: `[{"field1":-1,"field2":{"field3":-1}}]`, stream: dpathFlatten(`field_path: [non-existing-field]`), want: []string{`{"field1":-1,"field2":{"field3":-1}}`}},
		{name: "star missing", data: `[{"field1":-1,"field2":{"field3":-1}}]`, stream: dpathFlatten(`field_path: ["*", non-existing-field]`), want: []string{`{"field1":-1,"field2":{"field3":-1}}`}},
		{name: "conflict", data: `[{"field1":-1,"field2":{"field3":-1},"field3":-1}]`, stream: dpathFlatten("field_path: [field2]\ndelete_origin_value: true"), want: []string{`{"field1":-1,"field2":{"field3":-1},"field3":-1}`}},
		{name: "replace", data: `[{"field1":-1,"field2":{"field3":-1}}]`, stream: dpathFlatten("field_path: [field2]\nreplace_record: true"), want: []string{`{"field3":-1}`}},
		{name: "replace delete", data: `[{"field1":-1,"field2":{"field3":-1}}]`, stream: dpathFlatten("field_path: [field2]\nreplace_record: true\ndelete_origin_value: true"), want: []string{`{"field3":-1}`}},
		{name: "prefix", data: `[{"field1":-1,"field2":{"field3":-1}}]`, stream: dpathFlatten("field_path: [field2]\nreplace_record: true\nkey_transformation: {type: KeyTransformation, prefix: prefix_}"), want: []string{`{"prefix_field3":-1}`}},
		{name: "suffix", data: `[{"field1":-1,"field2":{"field3":-1}}]`, stream: dpathFlatten("field_path: [field2]\nreplace_record: true\nkey_transformation: {type: KeyTransformation, suffix: _suffix}"), want: []string{`{"field3_suffix":-1}`}},
		{name: "both", data: `[{"field1":-1,"field2":{"field3":-1}}]`, stream: dpathFlatten("field_path: [field2]\nreplace_record: true\nkey_transformation: {type: KeyTransformation, prefix: \"{{ config.p }}\", suffix: _suffix}"), config: map[string]any{"p": "prefix_"}, want: []string{`{"prefix_field3_suffix":-1}`}},
		{name: "replace empty", data: `[{"field1":-1,"field2":{}}]`, stream: dpathFlatten("field_path: [field2]\nreplace_record: true\ndelete_origin_value: true"), want: []string{`{"field1":-1}`}},
		{name: "not object", data: `[{"field1":-1,"field2":[1]}]`, stream: dpathFlatten("field_path: [field2]\ndelete_origin_value: true"), want: []string{`{"field1":-1,"field2":[1]}`}},
		{name: "list index", data: `[{"a":[{"x":1}]}]`, stream: dpathFlatten("field_path: [a, \"0\"]\ndelete_origin_value: true"), want: []string{`{"a":[],"x":1}`}},
	})
}

func TestRecordFilterTruthinessMatchesCDK(t *testing.T) {
	f := func(cond string) string { return "record_filter: {type: RecordFilter, condition: \"" + cond + "\"}" }
	data := `[{"id":1,"v":0},{"id":2,"v":"0"},{"id":3,"v":null},{"id":4,"v":"False"},{"id":5,"v":[]},{"id":6,"v":{}},{"id":7,"v":"no"},{"id":8,"v":0.0},{"id":9,"v":"x"},{"id":10,"v":true},{"id":11}]`
	runVectors(t, []vector{
		{name: "truthiness", data: data, selector: f("{{ record.v }}"), want: []string{`{"id":3,"v":null}`, `{"id":7,"v":"no"}`, `{"id":9,"v":"x"}`, `{"id":10,"v":true}`}},
		{name: "get", data: data, selector: f("{{ record.get('v') }}"), want: []string{`{"id":3,"v":null}`, `{"id":7,"v":"no"}`, `{"id":9,"v":"x"}`, `{"id":10,"v":true}`, `{"id":11}`}},
	})
}

// A record filter sees the slice of the page's request, and next_page_token
// None on every page: Airbyte's SimpleRetriever (CDK 7.28's _parse_records)
// hands its record selector no token, whatever cdk-semantics.md says
// (checked with refcdk7: "{{ next_page_token is none }}" keeps every page).
func TestRecordFilterSeesSliceAndNoPageToken(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		region, page := r.URL.Query().Get("region"), r.URL.Query().Get("page")
		if page == "" {
			page = "1"
		}
		if page == "3" {
			fmt.Fprint(w, `{"data":[]}`)
			return
		}
		fmt.Fprintf(w, `{"data":[{"id":"%s%s-a","region":"eu","page":%s},{"id":"%s%s-b","region":"us","page":%s}]}`, region, page, page, region, page, page)
	})
	retriever := `partition_router:
  type: ListPartitionRouter
  cursor_field: region
  values: [eu, us]
  request_option: {type: RequestOption, inject_into: request_parameter, field_name: region}
paginator:
  type: DefaultPaginator
  pagination_strategy: {type: PageIncrement, page_size: 2, start_from_page: 1}
  page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}`
	cases := []struct {
		cond string
		want []string
	}{
		{"{{ record.region == stream_interval.region }}", []string{`{"id":"eu1-a","region":"eu","page":1}`, `{"id":"eu2-a","region":"eu","page":2}`, `{"id":"us1-b","region":"us","page":1}`, `{"id":"us2-b","region":"us","page":2}`}},
		{"{{ record.region == stream_partition['region'] and record.page == 2 }}", []string{`{"id":"eu2-a","region":"eu","page":2}`, `{"id":"us2-b","region":"us","page":2}`}},
		{"{{ record.region == stream_slice.region and next_page_token is none }}", []string{`{"id":"eu1-a","region":"eu","page":1}`, `{"id":"eu2-a","region":"eu","page":2}`, `{"id":"us1-b","region":"us","page":1}`, `{"id":"us2-b","region":"us","page":2}`}},
		{"{{ record.region == stream_slice.region and next_page_token.next_page_token == 2 }}", []string{}},
	}
	for _, c := range cases {
		m := itemsStream(a.URL, "record_filter: {type: RecordFilter, condition: \""+c.cond+"\"}", retriever, "")
		res := newConnector(t, m, nil, "items").read(t)
		got := printed(t, res, "items")
		sort.Strings(got)
		equalLists(t, c.cond, got, c.want)
	}
	got := a.lines()
	sort.Strings(got)
	want := []string{}
	for range cases {
		for _, region := range []string{"eu", "us"} {
			for page := 1; page <= 3; page++ {
				want = append(want, fmt.Sprintf("GET /items?page=%d&region=%s", page, region))
			}
		}
	}
	sort.Strings(want)
	equalLists(t, "requests", got, want)
}

// A transformation has no next_page_token: Airbyte's AddFields renders with
// record and the slice only, and its Jinja refuses an undeclared variable,
// so the stream fails there as here (a system_error naming the template).
func TestTransformationHasNoPageToken(t *testing.T) {
	a := fixedAPI(t, `{"data":[{"id":1}]}`)
	m := itemsStream(a.URL, "", "", `transformations:
  - type: AddFields
    fields: [{path: [token], value: "{{ next_page_token }}"}]`)
	res := newConnector(t, m, nil, "items").read(t)
	errs := res.errors()
	want := `stream items: streams[0].transformations[0].fields[0].value: template "{{ next_page_token }}": uses undeclared variables: next_page_token`
	if res.code != 1 || len(errs) == 0 || errs[0]["message"] != want || errs[0]["failure_type"] != "system_error" {
		t.Fatalf("exit %d, errors %v; want the first %q (system_error)", res.code, errs, want)
	}
	if got := printed(t, res, "items"); len(got) != 0 {
		t.Errorf("records %v", got)
	}
}

func TestSchemaNormalizationMatchesCDKCasts(t *testing.T) {
	schema := `schema_loader:
  type: InlineSchemaLoader
  schema:
    type: object
    properties:
      i: {type: integer}
      n: {type: number}
      b: {type: boolean}
      s: {type: string}
      ni: {type: [integer, "null"]}
      ns: {type: ["null", string]}
      u: {type: [integer, string]}
      o:
        type: object
        properties:
          x: {type: integer}
          l: {type: array, items: {type: number}}
      a: {type: array, items: {type: [string, "null"]}}
      a2: {type: array}
      a3: {type: array, items: {type: string}}
      ao: {type: array, items: {type: object, properties: {z: {type: boolean}}}}
      r: {type: integer}`
	sel := "schema_normalization: Default"
	runVectors(t, []vector{
		{name: "basic", selector: sel, stream: schema, data: `[{"i":"12","n":"1.5","b":"true","s":12,"ni":null,"ns":null,"u":"7","o":{"x":"3","l":["1.5","2"]},"a":"x","a2":5,"ao":[{"z":"no"},{"z":1}],"r":"9","extra":"1"}]`,
			want: []string{`{"i":12,"n":1.5,"b":true,"s":"12","ni":null,"ns":null,"u":"7","o":{"x":3,"l":[1.5,2]},"a":["x"],"a2":[5],"ao":[{"z":false},{"z":true}],"r":9,"extra":"1"}`}},
		{name: "floats", selector: sel, stream: schema, data: `[{"i":1.9,"n":"12","s":1.5,"b":"Yes"},{"i":"1.5","n":true,"s":true,"b":0},{"i":true,"n":"abc","s":{"a":1},"b":"maybe"},{"i":"  7 ","n":" 2.5 ","s":[1,"a"],"b":" OFF "}]`,
			want: []string{`{"i":1,"n":12,"s":"1.5","b":true}`, `{"i":"1.5","n":1,"s":"true","b":false}`, `{"i":1,"n":"abc","s":"{\"a\":1}","b":"maybe"}`, `{"i":7,"n":2.5,"s":"[1,\"a\"]","b":false}`}},
		{name: "big", selector: sel, stream: schema, data: `[{"i":12345678901234567890,"n":12345678901234567890,"s":12345678901234567890,"ni":"-12345678901234567890","r":1e20}]`,
			want: []string{`{"i":12345678901234567890,"n":12345678901234567890,"s":"12345678901234567890","ni":-12345678901234567890,"r":100000000000000000000}`}},
		{name: "array string items", selector: sel, stream: schema, data: `[{"a3":"x"}]`, want: []string{`{"a3":["x"]}`}},
		{name: "nullable array items", selector: sel, stream: "schema_loader: {type: InlineSchemaLoader, schema: {type: object, properties: {l: {type: [array, \"null\"], items: {type: integer}}, o: {type: [object, \"null\"], properties: {x: {type: string}}}}}}", data: `[{"l":["5",6,"x"],"o":{"x":5}}]`, want: []string{`{"l":[5,6,"x"],"o":{"x":"5"}}`}},
		{name: "nulls", selector: sel, stream: schema, data: `[{"i":null,"s":null,"b":null,"a2":null,"o":null}]`, want: []string{`{"i":null,"s":null,"b":null,"a2":null,"o":null}`}},
		{name: "after transform", selector: sel, stream: schema + "\ntransformations:\n  - type: AddFields\n    fields: [{path: [i], value: \"{{ '5' ~ '' }}\"}, {path: [s], value: \"{{ 5 }}\"}]", data: `[{"id":1}]`, want: []string{`{"id":1,"i":5,"s":"5"}`}},
	})
}
