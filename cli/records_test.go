package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// printed returns the data of the stream's RECORD messages exactly as
// printed (key order included).
func printed(t *testing.T, r result, stream string) []string {
	t.Helper()
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var m struct {
			Type   string
			Record struct {
				Stream string
				Data   json.RawMessage
			}
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if m.Type == "RECORD" && m.Record.Stream == stream {
			out = append(out, string(m.Record.Data))
		}
	}
	return out
}

// itemsStream is a one-stream manifest (items, at url/items, records under
// data) with YAML added to the record selector, the retriever and the stream.
func itemsStream(url, selector, retriever, streamExtra string) string {
	return fmt.Sprintf(`version: 6.0.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [items]}
streams:
  - type: DeclarativeStream
    name: items
    primary_key: [id]
    $parameters: {kind: things}
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: %q, path: /items}
      record_selector:
        type: RecordSelector
        extractor: {type: DpathExtractor, field_path: [data]}
%s
%s
%s
`, url, indent(selector, 8), indent(retriever, 6), indent(streamExtra, 4))
}

func fixedAPI(t *testing.T, body string) *api {
	return newAPI(t, func(w http.ResponseWriter, _ *http.Request, _ string) { fmt.Fprint(w, body) })
}

func TestTransformationsRunInManifestOrder(t *testing.T) {
	a := fixedAPI(t, `{"data":[{"id":1,"First Name":"Ada","secret":{"token":"x","keep":1},"tags":[{"password":"p","n":1}],"empty":"","Nested":{"Inner Key":2}}]}`)
	m := itemsStream(a.URL, "", "", `transformations:
  - type: AddFields
    fields:
      - {path: [region], value: "{{ config['region'] }}"}
      - {path: [kind], value: "{{ parameters['kind'] }}"}
      - {path: [meta, doubled], value: "{{ record['id'] * 2 }}"}
      - {path: [label], value: "{{ record['First Name'] }}-{{ record.meta.doubled }}"}
      - {path: [id_text], value: "{{ record.id }}", value_type: string}
      - {path: [slice], value: "{{ stream_slice }}"}
  - type: RemoveFields
    field_pointers: [[secret, token], ["**", password]]
  - type: RemoveFields
    condition: "{{ property == '' }}"
    field_pointers: [["**"]]
  - type: KeysToSnakeCase`)
	res := newConnector(t, m, map[string]any{"region": "eu"}, "items").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{"GET /items"})
	equalLists(t, "records", printed(t, res, "items"), []string{
		`{"id":1,"first_name":"Ada","secret":{"keep":1},"tags":[{"n":1}],"nested":{"inner_key":2},"region":"eu","kind":"things","meta":{"doubled":2},"label":"Ada-2","id_text":"1","slice":{}}`,
	})
}

func TestKeysAndFlattenTransformations(t *testing.T) {
	a := fixedAPI(t, `{"data":[{"ID":1,"Full Name":"Ada L","Address":{"City Name":"Paris","Zip":"75"},"Tags":["a","b"]}]}`)
	m := itemsStream(a.URL, "", "", `transformations:
  - type: DpathFlattenFields
    field_path: [Address]
    delete_origin_value: true
    key_transformation: {type: KeyTransformation, prefix: "addr_"}
  - type: KeysReplace
    old: " "
    new: "{{ config['sep'] }}"
  - type: KeysToLower
  - type: FlattenFields
    flatten_lists: false`)
	res := newConnector(t, m, map[string]any{"sep": "_"}, "items").read(t)
	equalLists(t, "records", printed(t, res, "items"), []string{`{"addr_zip":"75","addr_city_name":"Paris","tags":["a","b"],"full_name":"Ada L","id":1}`})
}

// pageAPI serves total records in pages of size (page numbers from 1).
func pageAPI(t *testing.T, total, size int) *api {
	return newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		from := min((page-1)*size, total)
		fmt.Fprintf(w, `{"data":%s}`, items(from, min(from+size, total)))
	})
}

func TestRecordFilterWithOffsetAndPagePaginationCountsExtractedRecords(t *testing.T) {
	filter := `record_filter: {type: RecordFilter, condition: "{{ record.id < 3 or record.id >= 20 }}"}`
	a := offsetAPI(t, 25)
	res := newConnector(t, itemsStream(a.URL, filter, offsetLimit10, ""), nil, "items").read(t)
	// The second page is filtered away entirely: still full, so the offset
	// moves on by the ten records extracted.
	equalLists(t, "offset requests", a.lines(), []string{"GET /items?limit=10&offset=0", "GET /items?limit=10&offset=10", "GET /items?limit=10&offset=20"})
	equalLists(t, "offset records", printed(t, res, "items"), append(ids(0, 3), ids(20, 25)...))

	p := pageAPI(t, 25, 10)
	pages := `paginator:
  type: DefaultPaginator
  page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}
  pagination_strategy: {type: PageIncrement, page_size: 10, start_from_page: 1}`
	res = newConnector(t, itemsStream(p.URL, filter, pages, ""), nil, "items").read(t)
	equalLists(t, "page requests", p.lines(), []string{"GET /items?page=1", "GET /items?page=2", "GET /items?page=3"})
	equalLists(t, "page records", printed(t, res, "items"), append(ids(0, 3), ids(20, 25)...))
}

func TestCursorSeesRecordsAfterFilterAndTransformations(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		after, _ := strconv.Atoi(r.URL.Query().Get("after"))
		fmt.Fprintf(w, `{"data":%s}`, items(after+1, min(after+4, 10)))
	})
	m := itemsStream(a.URL, `record_filter: {condition: "{{ record.id != 6 }}"}`, `paginator:
  type: DefaultPaginator
  page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: after}
  pagination_strategy: {type: CursorPagination, cursor_value: "{{ last_record.next }}", stop_condition: "{{ last_page_size == 0 }}"}`,
		`transformations:
  - type: AddFields
    fields: [{path: [next], value: "{{ record.id }}"}]`)
	res := newConnector(t, m, nil, "items").read(t)
	equalLists(t, "requests", a.lines(), []string{"GET /items", "GET /items?after=3", "GET /items?after=5", "GET /items?after=8", "GET /items?after=9"})
	var want []string
	for _, id := range []int{1, 2, 3, 4, 5, 7, 8, 9} {
		want = append(want, fmt.Sprintf(`{"id":%d,"next":%d}`, id, id))
	}
	equalLists(t, "records", printed(t, res, "items"), want)
}

func TestTransformBeforeFilteringAndFilterVariables(t *testing.T) {
	a := fixedAPI(t, `{"data":[{"id":1,"n":1},{"id":2,"n":5},{"id":3,"n":9}]}`)
	selector := `transform_before_filtering: true
record_filter:
  type: RecordFilter
  condition: "{{ record.big and record.id != config['skip'] and parameters['kind'] == 'things' and next_page_token is none }}"`
	m := itemsStream(a.URL, selector, "", `transformations:
  - type: AddFields
    fields: [{path: [big], value: "{{ record.n > 2 }}"}]`)
	res := newConnector(t, m, map[string]any{"skip": 3}, "items").read(t)
	equalLists(t, "records", printed(t, res, "items"), []string{`{"id":2,"n":5,"big":true}`})

	// Without it the filter runs first and does not see the added field.
	m = itemsStream(a.URL, `record_filter: {condition: "{{ record.big is defined }}"}`, "", `transformations:
  - type: AddFields
    fields: [{path: [big], value: "{{ record.n > 2 }}"}]`)
	res = newConnector(t, m, nil, "items").read(t)
	equalLists(t, "records without transform_before_filtering", printed(t, res, "items"), nil)
}

// A filter without a condition filters nothing (the reference drops every
// record).
func TestRecordFilterWithoutConditionKeepsEverything(t *testing.T) {
	a := fixedAPI(t, `{"data":[{"id":1},{"id":2}]}`)
	for _, f := range []string{`record_filter: {type: RecordFilter}`, `record_filter: {type: RecordFilter, condition: ""}`} {
		res := newConnector(t, itemsStream(a.URL, f, "", ""), nil, "items").read(t)
		equalLists(t, f, printed(t, res, "items"), []string{`{"id":1}`, `{"id":2}`})
	}
}

func TestSchemaNormalization(t *testing.T) {
	a := fixedAPI(t, `{"data":[{"id":"7","price":"9.50","active":"yes","code":12,"tags":"solo","note":null,"when":{"y":2024},"left":"x","count":"many"},{"id":"8","count":"also many"}]}`)
	schema := `schema_loader:
  type: InlineSchemaLoader
  schema:
    type: object
    properties:
      id: {type: integer}
      price: {type: [number, "null"]}
      active: {type: boolean}
      code: {type: string}
      tags: {type: array, items: {type: string}}
      note: {type: string}
      when: {type: string}
      count: {type: integer}`
	res := newConnector(t, itemsStream(a.URL, "schema_normalization: Default", "", schema), nil, "items").read(t)
	equalLists(t, "records", printed(t, res, "items"), []string{
		`{"id":7,"price":9.5,"active":true,"code":"12","tags":["solo"],"note":null,"when":"{\"y\":2024}","left":"x","count":"many"}`,
		`{"id":8,"count":"also many"}`,
	})
	var warnings []string
	for _, m := range res.ofType("LOG") {
		l := m["log"].(map[string]any)
		if l["level"] == "WARN" {
			warnings = append(warnings, l["message"].(string))
		}
	}
	equalLists(t, "warnings", warnings, []string{
		"Stream items: field note is null, which cannot be cast to string as the schema says; it is kept as it is (said once per field)",
		"Stream items: field count is string, which cannot be cast to integer as the schema says; it is kept as it is (said once per field)",
	})
	// schema_normalization: None leaves records as sent.
	res = newConnector(t, itemsStream(a.URL, "schema_normalization: None", "", schema), nil, "items").read(t)
	if got := printed(t, res, "items"); len(got) != 2 || got[0] != `{"id":"7","price":"9.50","active":"yes","code":12,"tags":"solo","note":null,"when":{"y":2024},"left":"x","count":"many"}` {
		t.Errorf("None changed records: %v", got)
	}
}

func TestTransformationErrorsNameTheManifestPath(t *testing.T) {
	a := fixedAPI(t, `{"data":[{"id":1}]}`)
	cases := map[string]string{
		"transformations:\n  - type: AddFields\n    fields: [{path: [], value: x}]":                    "streams[0].transformations[0].fields[0].path: minimum 1 items required, but found 0 items",
		"transformations:\n  - type: RemoveFields\n    field_pointers: [[\"**\", a, \"**\"]]":          "invalid manifest: streams[0].transformations[0].field_pointers[0]: has 2 ** segments; a path may have only one",
		"transformations:\n  - type: AddFields\n    fields: [{path: [a], value: x, value_type: date}]": "streams[0].transformations[0].fields[0].value_type: must be string, number, integer or boolean",
		"transformations:\n  - type: KeysReplace\n    old: a":                                          "streams[0].transformations[0].new: is required",
	}
	for extra, want := range cases {
		res := newConnector(t, itemsStream(a.URL, "", "", extra), nil, "items").read(t)
		errs := res.errors()
		if res.code != 1 || len(errs) != 1 || !strings.Contains(errs[0]["message"].(string), want) || errs[0]["failure_type"] != "config_error" {
			t.Errorf("%s:\n got exit %d, %v\nwant a config_error with %q", extra, res.code, errs, want)
		}
	}
}

// A transformation whose template fails on a record (a date the API writes
// in another format than the manifest's format_datetime expects, as
// source-shopwired's createdAt) fails the stream as a system_error: the
// API's data or the manifest is at fault, not the user's config, and
// Airbyte's runtime reports it as one (an unexpected ValueError). A test
// read shows the page without records, as the builder logs the response
// before its records are made, and the error.
func TestTransformationFailingOnARecordIsASystemError(t *testing.T) {
	a := fixedAPI(t, `{"data":[{"id":1,"createdAt":"yesterday"}]}`)
	m := itemsStream(a.URL, "", "", `transformations:
  - type: AddFields
    fields:
      - {path: [created], value: "{{ format_datetime(record['createdAt'], '%Y-%m-%d', '%d/%m/%Y') }}"}`)
	msg := `stream items: streams[0].transformations[0].fields[0].value: template "{{ format_datetime(record['createdAt'], '%Y-%m-%d', '%d/%m/%Y') }}": time data does not match format "%d/%m/%Y"`
	res := newConnector(t, m, nil, "items").read(t)
	errs := res.errors()
	if res.code != 1 || len(errs) != 2 || errs[0]["failure_type"] != "system_error" || errs[0]["message"] != msg {
		t.Fatalf("exit %d, errors %v", res.code, errs)
	}
	equalLists(t, "records", res.records("items"), nil)
	read := testReadData(t, newConnector(t, m, nil, "items"), "items")
	slices := read["slices"].([]any)
	if len(slices) != 1 {
		t.Fatalf("slices %s", compactJSON(slices))
	}
	pages := slices[0].(map[string]any)["pages"].([]any)
	if len(pages) != 1 || compactJSON(pages[0].(map[string]any)["records"]) != "[]" || pages[0].(map[string]any)["response"].(map[string]any)["status"] != 200.0 {
		t.Errorf("pages %s", compactJSON(pages))
	}
	if logs := read["logs"].([]any); len(logs) != 1 || logs[0].(map[string]any)["message"] != msg {
		t.Errorf("logs %s", compactJSON(logs))
	}
	equalLists(t, "requests", a.lines(), []string{"GET /items", "GET /items"})
}

// The once-per-field warnings of schema normalization outlive the page that
// raised them: page bodies are read into reused buffers, so what they keep
// must not be the page's own text (the second page, read into the first
// one's buffer, would change the field name kept, and "a" would be said
// twice).
func TestNormalizationWarnsOncePerFieldAcrossPages(t *testing.T) {
	pages := map[string]string{"1": `{"data":[{"a":"zz"}]}`, "2": `{"data":[{"b":"zz","a":"zz"}]}`, "3": `{"data":[]}`}
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		fmt.Fprint(w, pages[r.URL.Query().Get("page")])
	})
	m := itemsStream(a.URL, "schema_normalization: Default",
		`paginator: {type: DefaultPaginator, page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}, pagination_strategy: {type: PageIncrement, page_size: 1, start_from_page: 1}}`,
		"schema_loader: {type: InlineSchemaLoader, schema: {type: object, properties: {a: {type: integer}, b: {type: integer}}}}")
	res := newConnector(t, m, nil, "items").read(t)
	equalLists(t, "records", printed(t, res, "items"), []string{`{"a":"zz"}`, `{"b":"zz","a":"zz"}`})
	var warnings []string
	for _, msg := range res.ofType("LOG") {
		if l := msg["log"].(map[string]any); l["level"] == "WARN" {
			warnings = append(warnings, l["message"].(string))
		}
	}
	equalLists(t, "warnings", warnings, []string{
		"Stream items: field a is string, which cannot be cast to integer as the schema says; it is kept as it is (said once per field)",
		"Stream items: field b is string, which cannot be cast to integer as the schema says; it is kept as it is (said once per field)",
	})
}

// A record without fields is a record: it is emitted and the read goes on,
// every stream to its end (Airbyte's read loop ends the whole read there,
// silently, as an empty record is false in Python: fullstory).
func TestAnEmptyRecordIsEmittedAndTheReadGoesOn(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		if r.URL.Path == "/a" {
			fmt.Fprint(w, `{"data":[{},{"id":1}]}`)
			return
		}
		fmt.Fprint(w, `{"data":[{"id":2}]}`)
	})
	m := `version: 6.0.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [a]}
definitions:
  retriever:
    type: SimpleRetriever
    requester: {type: HttpRequester, url_base: "` + a.URL + `", path: "/{{ parameters.name }}"}
    record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
streams:
  - {type: DeclarativeStream, name: a, $parameters: {name: a}, retriever: {$ref: "#/definitions/retriever"}}
  - {type: DeclarativeStream, name: b, $parameters: {name: b}, retriever: {$ref: "#/definitions/retriever"}}
`
	res := newConnector(t, m, nil, "a", "b").read(t)
	equalLists(t, "records of a", printed(t, res, "a"), []string{`{}`, `{"id":1}`})
	equalLists(t, "records of b", printed(t, res, "b"), []string{`{"id":2}`})
	for _, s := range []string{"a", "b"} {
		if st := res.statuses(s); len(st) == 0 || st[len(st)-1] != "COMPLETE" {
			t.Errorf("stream %s: statuses %v, want COMPLETE last", s, st)
		}
	}
}
