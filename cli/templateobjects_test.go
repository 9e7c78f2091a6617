package cli

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// Templates see the slice as the reference's StreamSlice (partition,
// cursor_slice, _partition beside its merged keys) and the paginator's
// last_record as its Record (data). Airbyte's runtime, run on this manifest
// against the same API, sends these four requests (its query in manifest
// order: cat, part, cursor, underscore, after) and emits the same records.
func TestTemplatesSeeStreamSliceAndRecordObjects(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		if r.URL.Query().Get("after") != "" {
			fmt.Fprint(w, `{"data":[]}`)
			return
		}
		cat := r.URL.Query().Get("cat")
		fmt.Fprintf(w, `{"data":[{"id":1,"cat":%q},{"id":2,"cat":%q}]}`, cat, cat)
	})
	m := stream("s", fmt.Sprintf(`url_base: %s
path: /items
request_parameters:
  cat: "{{ stream_slice.partition.cat }}"
  part: "{{ stream_partition['partition'] }}"
  cursor: "{{ stream_slice.cursor_slice }}"
  underscore: "{{ stream_slice._partition.cat }}"`, a.URL), "[data]", `partition_router: {type: ListPartitionRouter, values: [a, b], cursor_field: cat}
paginator:
  type: DefaultPaginator
  page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: after}
  pagination_strategy:
    type: CursorPagination
    cursor_value: "{{ last_record.data.id }}-{{ last_record.data | length }}"
    stop_condition: "{{ last_record is none }}"`)
	res := newConnector(t, m, nil, "s").read(t)
	// The partitions are read at the same time: compared in sorted order.
	equalLists(t, "requests", sorted(a.lines()), []string{
		"GET /items?after=2-2&cat=a&cursor=%7B%7D&part=%7B%27cat%27%3A+%27a%27%7D&underscore=a",
		"GET /items?after=2-2&cat=b&cursor=%7B%7D&part=%7B%27cat%27%3A+%27b%27%7D&underscore=b",
		"GET /items?cat=a&cursor=%7B%7D&part=%7B%27cat%27%3A+%27a%27%7D&underscore=a",
		"GET /items?cat=b&cursor=%7B%7D&part=%7B%27cat%27%3A+%27b%27%7D&underscore=b",
	})
	equalLists(t, "records", sorted(res.records("s")), []string{`{"cat":"a","id":1}`, `{"cat":"a","id":2}`, `{"cat":"b","id":1}`, `{"cat":"b","id":2}`})
	if res.code != 0 || len(res.errors()) != 0 {
		t.Errorf("exit %d, errors %v", res.code, res.errors())
	}
}

// The templates Airbyte renders when it builds a component, before any
// slice, see config and parameters only: a record selector's field_path, a
// paginator's request option, a list router's values, a cursor's request
// option, a record expander's path, the property_field_path of
// QueryProperties read from an endpoint, and DpathFlattenFields' field_path,
// rendered for each record with the config only (checked with refcdk7). A slice
// variable there is undeclared, there as here.
func TestBuildTimeTemplatesSeeNoSlice(t *testing.T) {
	a := fixedAPI(t, `{"data":[{"id":1}]}`)
	paginator := `paginator:
  type: DefaultPaginator
  pagination_strategy: {type: PageIncrement, page_size: 2}
  page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: "%s"}`
	cursor := `incremental_sync:
  type: DatetimeBasedCursor
  cursor_field: updated
  datetime_format: "%Y-%m-%d"
  start_datetime: "2024-01-01"
  start_time_option: {type: RequestOption, inject_into: request_parameter, field_name: "{{ 'since' if stream_slice is defined else 'from' }}"}`
	extractor := "extractor: {type: DpathExtractor, field_path: [data]}"
	requester := fmt.Sprintf("requester: {type: HttpRequester, url_base: %q, path: /items}", a.URL)
	for _, tc := range []struct{ name, retriever, path, stream, from, to string }{
		{"field_path", "", "retriever.record_selector.extractor.field_path", "",
			"field_path: [data]", "field_path: [\"{{ 'data' if stream_interval is defined else 'x' }}\"]"},
		{"page_token_option", fmt.Sprintf(paginator, "{{ 'page' if stream_slice is defined else 'p' }}"), "retriever.paginator.page_token_option.field_name", "", "", ""},
		{"list values", "partition_router: {type: ListPartitionRouter, cursor_field: k, values: \"{{ ['a'] if stream_partition is defined else ['b'] }}\"}", "retriever.partition_router.values", "", "", ""},
		{"start_time_option", "", "incremental_sync.start_time_option.field_name", cursor, "", ""},
		{"record_expander", "", "retriever.record_selector.extractor.record_expander.expand_records_from_field", "", extractor,
			"extractor: {type: DpathExtractor, field_path: [], record_expander: {type: RecordExpander, expand_records_from_field: [\"{{ 'data' if stream_slice is defined else 'x' }}\"]}}"},
		{"dpath_flatten", "", "transformations[0].field_path", "transformations:\n  - {type: DpathFlattenFields, field_path: [\"{{ 'n' if stream_partition is defined else 'x' }}\"]}", "", ""},
		{"property_field_path", "", "retriever.requester.request_parameters.props.property_list.property_field_path", "", requester,
			strings.TrimSuffix(requester, "}") + ", request_parameters: {props: {type: QueryProperties, property_list: {type: PropertiesFromEndpoint, " +
				"property_field_path: [\"{{ 'id' if stream_partition is defined else 'x' }}\"], retriever: {type: SimpleRetriever, " + requester +
				", record_selector: {type: RecordSelector, " + extractor + "}}}}}}"},
	} {
		m := strings.Replace(itemsStream(a.URL, "", tc.retriever, tc.stream), tc.from, tc.to, 1)
		res := newConnector(t, m, nil, "items").read(t)
		errs := res.errors()
		if res.code != 1 || len(errs) == 0 || !strings.Contains(fmt.Sprint(errs[0]["message"]), "streams[0]."+tc.path) || !strings.Contains(fmt.Sprint(errs[0]["message"]), "uses undeclared variables: stream_") {
			t.Errorf("%s: exit %d, errors %v", tc.name, res.code, errs)
		}
		if n := len(res.records("items")); n != 0 {
			t.Errorf("%s: %d records", tc.name, n)
		}
	}
}

// A paginator's and a partition router's request options are built by the
// CDK without the stream's $parameters (parameters is empty there); a
// cursor's request options get them (checked with refcdk7).
func TestRequestOptionParameters(t *testing.T) {
	a := fixedAPI(t, `{"data":[{"id":1,"updated":"2024-01-02"}]}`)
	m := itemsStream(a.URL, "", `partition_router:
  type: ListPartitionRouter
  cursor_field: region
  values: [eu]
  request_option: {type: RequestOption, inject_into: request_parameter, field_name: "{{ parameters.get('kind', 'region') }}"}
paginator:
  type: DefaultPaginator
  pagination_strategy: {type: PageIncrement, page_size: 2}
  page_size_option: {type: RequestOption, inject_into: request_parameter, field_name: "{{ parameters.get('kind', 'limit') }}"}
  page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: "{{ parameters.get('kind', 'page') }}"}`, `incremental_sync:
  type: DatetimeBasedCursor
  cursor_field: updated
  datetime_format: "%Y-%m-%d"
  start_datetime: "2024-01-01"
  end_datetime: "2024-01-03"
  step: P10D
  cursor_granularity: P1D
  start_time_option: {type: RequestOption, inject_into: request_parameter, field_name: "{{ parameters.get('kind', 'since') }}"}`)
	res := newConnector(t, m, nil, "items").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{"GET /items?limit=2&page=0&region=eu&things=2024-01-01"})
}
