package cli

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"
)

// expanderStream is a one-stream manifest (invoice_lines, at url/invoices,
// records under data) whose extractor has the record_expander given as YAML,
// with YAML added to the record selector, the retriever and the stream.
func expanderStream(url, expander, selector, retriever, streamExtra string) string {
	return fmt.Sprintf(`version: 6.0.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [invoice_lines]}
streams:
  - type: DeclarativeStream
    name: invoice_lines
    primary_key: [id]
    $parameters: {list_field: lines}
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: %q, path: /invoices}
      record_selector:
        type: RecordSelector
        extractor:
          type: DpathExtractor
          field_path: [data]
          record_expander:
%s
%s
%s
%s
`, url, indent(expander, 12), indent(selector, 8), indent(retriever, 6), indent(streamExtra, 4))
}

// readExpanded reads the stream once and checks the one request and the
// records printed, exactly.
func readExpanded(t *testing.T, body, expander string, config map[string]any, want ...string) result {
	t.Helper()
	a := fixedAPI(t, body)
	res := newConnector(t, expanderStream(a.URL, expander, "", "", ""), config, "invoice_lines").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{"GET /invoices"})
	equalLists(t, "records", printed(t, res, "invoice_lines"), want)
	return res
}

// warnLogs lists the messages of the WARN logs printed.
func warnLogs(res result) []string {
	var out []string
	for _, m := range res.ofType("LOG") {
		if l := m["log"].(map[string]any); l["level"] == "WARN" {
			out = append(out, l["message"].(string))
		}
	}
	return out
}

const invoices = `{"object":"list","data":[
 {"id":"in_1","customer":"cus_1","lines":{"object":"list","data":[{"id":"il_1","amount":100},{"id":"il_2","amount":250}],"has_more":false},"amount":350},
 {"id":"in_2","customer":"cus_2","lines":{"object":"list","data":[{"id":"il_3","amount":7}],"has_more":false},"amount":7}
]}`

func TestRecordExpanderEmitsOneRecordPerLineItem(t *testing.T) {
	// The path is rendered with parameters and config, as the reference's.
	readExpanded(t, invoices, `{type: RecordExpander, expand_records_from_field: ["{{ parameters.list_field }}", "{{ config.inner }}"]}`,
		map[string]any{"inner": "data"},
		`{"id":"il_1","amount":100}`, `{"id":"il_2","amount":250}`, `{"id":"il_3","amount":7}`)
}

func TestRecordExpanderTypeIsFilledIn(t *testing.T) {
	// No type: RecordExpander is the default of DpathExtractor.record_expander.
	res := readExpanded(t, invoices, `{expand_records_from_field: [lines, data]}`, nil,
		`{"id":"il_1","amount":100}`, `{"id":"il_2","amount":250}`, `{"id":"il_3","amount":7}`)
	if got := res.statuses("invoice_lines"); strings.Join(got, ",") != "STARTED,RUNNING,COMPLETE" {
		t.Errorf("statuses %v", got)
	}
}

func TestRecordExpanderWildcardTakesTheItemsOfEveryMatchedList(t *testing.T) {
	body := `{"data":[
 {"id":1,"sections":[{"name":"a","items":[{"id":"i1"},{"id":"i2"}]},{"name":"b","items":[]},{"name":"c"},{"name":"d","items":{"id":"not a list"}},{"name":"e","items":[{"id":"i3"}]}]},
 {"id":2,"sections":{"x":{"items":[{"id":"i4"}]},"y":{"items":[{"id":"i5"}]}}}
]}`
	readExpanded(t, body, `{type: RecordExpander, expand_records_from_field: [sections, "*", items]}`, nil,
		`{"id":"i1"}`, `{"id":"i2"}`, `{"id":"i3"}`, `{"id":"i4"}`, `{"id":"i5"}`)
}

func TestRecordExpanderRemainOriginalRecord(t *testing.T) {
	body := `{"data":[{"id":"in_1","lines":{"data":[{"id":"il_1"},{"id":"il_2"}]}}]}`
	parent := `{"id":"in_1","lines":{"data":[{"id":"il_1"},{"id":"il_2"}]}}`
	readExpanded(t, body, `{type: RecordExpander, expand_records_from_field: [lines, data], remain_original_record: true}`, nil,
		`{"id":"il_1","original_record":`+parent+`}`, `{"id":"il_2","original_record":`+parent+`}`)
}

func TestRecordExpanderMergeParentPutsTheParentUnderEachItem(t *testing.T) {
	// The parent's keys first, in its order; the item wins on a key both
	// have; only the expanded list leaves the parent's copy.
	readExpanded(t, invoices, `{type: RecordExpander, expand_records_from_field: [lines, data], merge_parent: true}`, nil,
		`{"id":"il_1","customer":"cus_1","lines":{"object":"list","has_more":false},"amount":100}`,
		`{"id":"il_2","customer":"cus_1","lines":{"object":"list","has_more":false},"amount":250}`,
		`{"id":"il_3","customer":"cus_2","lines":{"object":"list","has_more":false},"amount":7}`)
}

func TestRecordExpanderParentFields(t *testing.T) {
	body := `{"data":[{"id":"in_1","meta":{"created":1700000000,"tags":["a"]},"lines":{"data":[{"id":"il_1"},{"id":"il_2","parent":{"kept":true}}]}}]}`
	readExpanded(t, body, `type: RecordExpander
expand_records_from_field: [lines, data]
parent_fields:
  - {type: ParentFieldPath, parent_path: [id], record_path: [invoice_id]}
  - {type: ParentFieldPath, parent_path: [meta, created], record_path: [parent, created]}
  - {type: ParentFieldPath, parent_path: [meta, tags], record_path: ["{{ config.tags_key }}"]}
  - {type: ParentFieldPath, parent_path: [missing], record_path: [gone]}`, map[string]any{"tags_key": "invoice_tags"},
		`{"id":"il_1","invoice_id":"in_1","parent":{"created":1700000000},"invoice_tags":["a"],"gone":null}`,
		`{"id":"il_2","parent":{"kept":true,"created":1700000000},"invoice_id":"in_1","invoice_tags":["a"],"gone":null}`)
}

func TestRecordExpanderParentContextOrderMergeThenFieldsThenOriginal(t *testing.T) {
	// merge_parent first, parent_fields over it, then original_record: the
	// parent as the API sent it, untouched by what was written into an item.
	body := `{"data":[{"id":"in_1","status":"paid","lines":{"data":[{"id":"il_1","detail":{"n":1}}]}}]}`
	readExpanded(t, body, `type: RecordExpander
expand_records_from_field: [lines, data]
merge_parent: true
remain_original_record: true
parent_fields:
  - {type: ParentFieldPath, parent_path: [id], record_path: [status]}
  - {type: ParentFieldPath, parent_path: [status], record_path: [detail, parent_status]}`, nil,
		`{"id":"il_1","status":"in_1","lines":{},"detail":{"n":1,"parent_status":"paid"},"original_record":{"id":"in_1","status":"paid","lines":{"data":[{"id":"il_1","detail":{"n":1}}]}}}`)
}

const parentsWithoutItems = `{"data":[
 {"id":"p1","items":[{"id":"c1"}]},
 {"id":"p2","items":[]},
 {"id":"p3"},
 {"id":"p4","items":"not a list"},
 {"id":"p5","items":{"id":"an object"}}
]}`

func TestRecordExpanderOnNoRecordsSkipsByDefault(t *testing.T) {
	readExpanded(t, parentsWithoutItems, `{type: RecordExpander, expand_records_from_field: [items]}`, nil, `{"id":"c1"}`)
	readExpanded(t, parentsWithoutItems, `{type: RecordExpander, expand_records_from_field: [items], on_no_records: skip}`, nil, `{"id":"c1"}`)
}

func TestRecordExpanderOnNoRecordsEmitParent(t *testing.T) {
	readExpanded(t, parentsWithoutItems, `{type: RecordExpander, expand_records_from_field: [items], on_no_records: emit_parent}`, nil,
		`{"id":"c1"}`, `{"id":"p2","items":[]}`, `{"id":"p3"}`, `{"id":"p4","items":"not a list"}`, `{"id":"p5","items":{"id":"an object"}}`)
}

func TestRecordExpanderNonObjectItems(t *testing.T) {
	body := `{"data":[{"id":1,"tags":[{"name":"a"},null,2,"x",[true],{"value":"own"}]}]}`
	// With parent context a non-object item is wrapped under "value".
	readExpanded(t, body, `type: RecordExpander
expand_records_from_field: [tags]
parent_fields: [{type: ParentFieldPath, parent_path: [id], record_path: [parent_id]}]`, nil,
		`{"name":"a","parent_id":1}`, `{"value":null,"parent_id":1}`, `{"value":2,"parent_id":1}`,
		`{"value":"x","parent_id":1}`, `{"value":[true],"parent_id":1}`, `{"value":"own","parent_id":1}`)

	// Without, an item is a record as an extracted one is: a null is
	// skipped, and a number is not a record (the reference cannot emit it
	// either).
	readExpanded(t, `{"data":[{"id":1,"tags":[{"name":"a"},null,{"name":"b"}]}]}`, `{type: RecordExpander, expand_records_from_field: [tags]}`, nil,
		`{"name":"a"}`, `{"name":"b"}`)
	a := fixedAPI(t, body)
	res := newConnector(t, expanderStream(a.URL, `{type: RecordExpander, expand_records_from_field: [tags]}`, "", "", ""), nil, "invoice_lines").read(t)
	errs := res.errors()
	want := `stream invoice_lines: an item of the list at ['tags'] must be a JSON object to be a record, got 2 (HTTP 200 from ` + a.URL + `/invoices): ` + body
	if res.code != 1 || len(errs) != 2 || errs[0]["message"] != want || errs[0]["failure_type"] != "system_error" || errs[1]["message"] != syncFailed {
		t.Fatalf("exit %d, errors %v", res.code, errs)
	}
	equalLists(t, "records", printed(t, res, "invoice_lines"), nil)
}

func TestRecordExpanderRunsBeforeFilterAndTransformations(t *testing.T) {
	a := fixedAPI(t, invoices)
	m := expanderStream(a.URL, `{type: RecordExpander, expand_records_from_field: [lines, data], remain_original_record: true}`,
		`record_filter: {type: RecordFilter, condition: "{{ record.amount >= 100 }}"}`, "", `transformations:
  - type: AddFields
    fields: [{path: [invoice_id], value: "{{ record.original_record.id }}"}]
  - type: RemoveFields
    field_pointers: [[original_record]]`)
	res := newConnector(t, m, nil, "invoice_lines").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "records", printed(t, res, "invoice_lines"), []string{
		`{"id":"il_1","amount":100,"invoice_id":"in_1"}`, `{"id":"il_2","amount":250,"invoice_id":"in_1"}`,
	})
}

// invoicePages serves one invoice per page, with the lines given per
// request (by starting_after or offset), and records the requests.
func invoicePages(t *testing.T, pages map[string]string) *api {
	return newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		q := r.URL.Query()
		key := q.Get("starting_after") + q.Get("offset")
		fmt.Fprintf(w, `{"data":[{"id":"in_%s","lines":{"data":%s}}]}`, key, pages[key])
	})
}

func TestRecordExpanderCursorPaginationSeesTheExpandedRecords(t *testing.T) {
	// last_record and last_page_size are the page's expanded records: the
	// last line item, three of them on the first page.
	a := invoicePages(t, map[string]string{
		"":     `[{"id":"il_1"},{"id":"il_2"},{"id":"il_3"}]`,
		"il_3": `[{"id":"il_4"}]`,
	})
	m := expanderStream(a.URL, `{type: RecordExpander, expand_records_from_field: [lines, data]}`, "", `paginator:
  type: DefaultPaginator
  page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: starting_after}
  pagination_strategy:
    type: CursorPagination
    cursor_value: "{{ last_record.id }}"
    stop_condition: "{{ last_page_size < 3 }}"`, "")
	res := newConnector(t, m, nil, "invoice_lines").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{"GET /invoices", "GET /invoices?starting_after=il_3"})
	equalLists(t, "records", printed(t, res, "invoice_lines"), []string{`{"id":"il_1"}`, `{"id":"il_2"}`, `{"id":"il_3"}`, `{"id":"il_4"}`})
}

func TestRecordExpanderOffsetPaginationCountsTheExpandedRecords(t *testing.T) {
	// The reference's OffsetIncrement recounts with the extractor, expander
	// included: three lines make a full page of three.
	a := invoicePages(t, map[string]string{
		"0": `[{"id":"il_1"},{"id":"il_2"},{"id":"il_3"}]`,
		"3": `[{"id":"il_4"},{"id":"il_5"}]`,
	})
	m := expanderStream(a.URL, `{type: RecordExpander, expand_records_from_field: [lines, data]}`, "", `paginator:
  type: DefaultPaginator
  page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: offset}
  pagination_strategy: {type: OffsetIncrement, page_size: 3, inject_on_first_request: true}`, "")
	res := newConnector(t, m, nil, "invoice_lines").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{"GET /invoices?offset=0", "GET /invoices?offset=3"})
	equalLists(t, "records", printed(t, res, "invoice_lines"), []string{`{"id":"il_1"}`, `{"id":"il_2"}`, `{"id":"il_3"}`, `{"id":"il_4"}`, `{"id":"il_5"}`})
}

func TestRecordExpanderTruncatedListIsExpandedWithOneWarning(t *testing.T) {
	body := `{"data":[
 {"id":"in_1","lines":{"data":[{"id":"il_1"},{"id":"il_2"}],"has_more":true,"total_count":5}},
 {"id":"in_2","lines":{"data":[{"id":"il_6"}],"has_more":true,"total_count":3}},
 {"id":"in_3","lines":{"data":[{"id":"il_9"}],"has_more":false}}
]}`
	res := readExpanded(t, body, `type: RecordExpander
expand_records_from_field: [lines, data]
truncation_indicator_path: [lines, has_more]`, nil,
		`{"id":"il_1"}`, `{"id":"il_2"}`, `{"id":"il_6"}`, `{"id":"il_9"}`)
	equalLists(t, "warnings", warnLogs(res), []string{"Stream invoice_lines: The nested list at ['lines', 'data'] is marked as truncated (the field at ['lines', 'has_more'] is truthy), " +
		"so only the 2 embedded item(s) of 5 total were expanded and the remaining items are not emitted: set truncated_list_retriever to fetch the complete list. " +
		"This warning is emitted once per stream; other records may be truncated as well."})
}

func TestRecordExpanderManifestErrors(t *testing.T) {
	const where = "streams[0].retriever.record_selector.extractor.record_expander"
	cases := []struct{ expander, want string }{
		{`{type: RecordExpander, expand_records_from_field: [lines, data], parent_fields: [{type: ParentFieldPath, parent_path: [lines, "*"], record_path: [x]}]}`,
			where + `.parent_fields[0].parent_path[1]: "*" is a glob; this path must name a single field (no *, ? or [)`},
		{`{type: RecordExpander, expand_records_from_field: [lines, data], parent_fields: [{type: ParentFieldPath, parent_path: [id], record_path: ["x[0]"]}]}`,
			where + `.parent_fields[0].record_path[0]: "x[0]" is a glob; this path must name a single field (no *, ? or [)`},
		{`{type: RecordExpander, expand_records_from_field: [lines, data], parent_fields: [{type: ParentFieldPath, parent_path: [], record_path: [x]}]}`,
			where + `.parent_fields[0].parent_path: cannot be empty: it names one field`},
		{`{type: RecordExpander, expand_records_from_field: [lines, data], truncation_indicator_path: ["*", has_more]}`,
			where + `.truncation_indicator_path[0]: "*" is a glob; this path must name a single field (no *, ? or [)`},
		{`{type: RecordExpander, expand_records_from_field: [lines, data], on_no_records: emit}`, where + `.on_no_records`},
		{`type: RecordExpander
expand_records_from_field: [lines, data]
truncated_list_retriever:
  type: SimpleRetriever
  requester: {type: HttpRequester, url_base: "http://127.0.0.1:1", path: "/invoices/{{ stream_slice.parent_record.id }}/lines"}
  record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}`,
			where + `.truncated_list_retriever: needs truncation_indicator_path: it is read for the parents whose field there is truthy`},
		{`type: RecordExpander
expand_records_from_field: ["*", data]
truncation_indicator_path: [lines, has_more]
truncated_list_retriever:
  type: SimpleRetriever
  requester: {type: HttpRequester, url_base: "http://127.0.0.1:1", path: "/lines"}
  record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}`,
			where + `.expand_records_from_field[0]: "*" is a glob; this path must name a single field (no *, ? or [)`},
	}
	for _, c := range cases {
		a := fixedAPI(t, invoices)
		res := newConnector(t, expanderStream(a.URL, c.expander, "", "", ""), nil, "invoice_lines").read(t)
		errs := res.errors()
		if res.code != 1 || len(errs) != 1 || errs[0]["failure_type"] != "config_error" || !strings.HasPrefix(errs[0]["message"].(string), "invalid manifest: "+c.want) {
			t.Errorf("%s:\nexit %d, errors %v\nwant %q", c.expander, res.code, errs, c.want)
		}
		if len(a.requests()) != 0 || len(res.ofType("RECORD")) != 0 {
			t.Errorf("%s: requests %v, records %d", c.expander, a.lines(), len(res.ofType("RECORD")))
		}
	}
}

const syncFailed = "During the sync, the following streams did not sync successfully: invoice_lines"

func TestRecordExpanderGlobFromConfigIsAConfigError(t *testing.T) {
	// A templated segment is checked once rendered: before any request.
	a := fixedAPI(t, invoices)
	m := expanderStream(a.URL, `type: RecordExpander
expand_records_from_field: [lines, data]
parent_fields: [{type: ParentFieldPath, parent_path: ["{{ config.key }}"], record_path: [x]}]`, "", "", "")
	res := newConnector(t, m, map[string]any{"key": "a*"}, "invoice_lines").read(t)
	errs := res.errors()
	want := `streams[0].retriever.record_selector.extractor.record_expander.parent_fields[0].parent_path[0]: "a*" is a glob; this path must name a single field (no *, ? or [)`
	if res.code != 1 || len(errs) != 2 || errs[0]["failure_type"] != "config_error" || errs[0]["message"] != want || errs[1]["message"] != syncFailed {
		t.Fatalf("exit %d, errors %v", res.code, errs)
	}
	equalLists(t, "requests", a.lines(), nil)
}

func TestRecordExpanderTruncationWarningIsOncePerStreamAcrossPartitions(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		p := r.URL.Query().Get("p")
		fmt.Fprintf(w, `{"data":[{"id":"in_%s","lines":{"data":[{"id":"il_%s"}],"has_more":1}}]}`, p, p)
	})
	m := expanderStream(a.URL, `{type: RecordExpander, expand_records_from_field: [lines, data], truncation_indicator_path: [lines, has_more]}`, "",
		`partition_router:
  type: ListPartitionRouter
  values: [a, b, c]
  cursor_field: p
  request_option: {type: RequestOption, inject_into: request_parameter, field_name: p}`, "")
	res := newConnector(t, m, nil, "invoice_lines").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	// No total_count next to the indicator: no total in the message.
	equalLists(t, "warnings", warnLogs(res), []string{"Stream invoice_lines: The nested list at ['lines', 'data'] is marked as truncated (the field at ['lines', 'has_more'] is truthy), " +
		"so only the 1 embedded item(s) were expanded and the remaining items are not emitted: set truncated_list_retriever to fetch the complete list. " +
		"This warning is emitted once per stream; other records may be truncated as well."})
	got := printed(t, res, "invoice_lines")
	sort.Strings(got) // partitions interleave
	equalLists(t, "records", got, []string{`{"id":"il_a"}`, `{"id":"il_b"}`, `{"id":"il_c"}`})
}

// A truncated parent's complete list is read through truncated_list_retriever
// (every page, the parent as stream_slice['parent_record']) and replaces the
// embedded items; a parent that is not truncated keeps its own; a complete
// list that comes back empty leaves the embedded items.
func TestRecordExpanderTruncatedListRetriever(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		switch {
		case r.URL.Path == "/invoices":
			fmt.Fprint(w, `{"data":[
 {"id":"in_1","lines":{"data":[{"id":"il_1"},{"id":"il_2"}],"has_more":true}},
 {"id":"in_2","lines":{"data":[{"id":"il_9"}],"has_more":false}},
 {"id":"in_3","lines":{"data":[{"id":"il_7"}],"has_more":true}}
]}`)
		case r.URL.Path == "/invoices/in_1/lines" && r.URL.Query().Get("starting_after") == "":
			fmt.Fprint(w, `{"data":[{"id":"il_1"},{"id":"il_2"},{"id":"il_3"}],"has_more":true}`)
		case r.URL.Path == "/invoices/in_1/lines":
			fmt.Fprint(w, `{"data":[{"id":"il_4"}],"has_more":false}`)
		default:
			fmt.Fprint(w, `{"data":[],"has_more":false}`)
		}
	})
	m := expanderStream(a.URL, `type: RecordExpander
expand_records_from_field: [lines, data]
truncation_indicator_path: [lines, has_more]
parent_fields: [{type: ParentFieldPath, parent_path: [id], record_path: [invoice]}]
truncated_list_retriever:
  type: SimpleRetriever
  requester: {type: HttpRequester, url_base: "`+a.URL+`", path: "/invoices/{{ stream_slice['parent_record']['id'] }}/lines"}
  record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
  paginator:
    type: DefaultPaginator
    pagination_strategy: {type: CursorPagination, cursor_value: "{{ last_record.id }}", stop_condition: "{{ not response.has_more }}"}
    page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: starting_after}`, "", "", "")
	res := newConnector(t, m, nil, "invoice_lines").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{"GET /invoices", "GET /invoices/in_1/lines", "GET /invoices/in_1/lines?starting_after=il_3", "GET /invoices/in_3/lines"})
	equalLists(t, "records", printed(t, res, "invoice_lines"), []string{
		`{"id":"il_1","invoice":"in_1"}`, `{"id":"il_2","invoice":"in_1"}`, `{"id":"il_3","invoice":"in_1"}`, `{"id":"il_4","invoice":"in_1"}`,
		`{"id":"il_9","invoice":"in_2"}`, `{"id":"il_7","invoice":"in_3"}`,
	})
	equalLists(t, "warnings", warnLogs(res), nil)
}
