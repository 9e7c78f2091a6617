package manifest

import (
	"strings"
	"testing"
)

// resetManifest is a one-stream manifest whose retriever has the given
// extra YAML (retriever fields) and stream fields.
func resetManifest(retriever, stream string) string {
	return `version: 6.0.0
check: {stream_names: [s]}
streams:
  - type: DeclarativeStream
    name: s
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: "https://x"}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}
      ` + strings.ReplaceAll(strings.TrimSpace(retriever), "\n", "\n      ") + `
    ` + strings.ReplaceAll(strings.TrimSpace(stream), "\n", "\n    ") + "\n"
}

const dayCursor = `incremental_sync: {type: DatetimeBasedCursor, cursor_field: u, datetime_format: "%Y-%m-%d", start_datetime: "2024-01-01"}`

func TestPaginationResetDecoding(t *testing.T) {
	for _, tc := range []struct {
		retriever, stream string
		want              PaginationReset
	}{
		{"pagination_reset: {type: PaginationReset, action: RESET}", "",
			PaginationReset{Path: "streams[0].retriever.pagination_reset", Action: ResetRestart}},
		{"pagination_reset: {type: PaginationReset, action: SPLIT_USING_CURSOR, limits: {type: PaginationResetLimits, number_of_records: 10000}}", dayCursor,
			PaginationReset{Path: "streams[0].retriever.pagination_reset", Action: ResetSplitUsingCursor, MaxRecords: 10000}},
		{"pagination_reset: {type: PaginationReset, action: RESET, limits: {type: PaginationResetLimits}}", "",
			PaginationReset{Path: "streams[0].retriever.pagination_reset", Action: ResetRestart}},
	} {
		src, err := Load(parse(t, resetManifest(tc.retriever, tc.stream)))
		if err != nil {
			t.Errorf("%s: %v", tc.retriever, err)
			continue
		}
		if got := src.Streams[0].Retriever.PaginationReset; got == nil || *got != tc.want || len(src.Warnings) != 0 {
			t.Errorf("%s: decoded %+v, warnings %q", tc.retriever, got, src.Warnings)
		}
	}
	src, err := Load(parse(t, resetManifest("", "")))
	if err != nil || src.Streams[0].Retriever.PaginationReset != nil {
		t.Errorf("no pagination_reset: %v %+v", err, src.Streams[0].Retriever.PaginationReset)
	}
}

func TestResetPaginationFilterDecoding(t *testing.T) {
	m := strings.Replace(resetManifest("", ""), `url_base: "https://x"}`, `url_base: "https://x", error_handler: {type: DefaultErrorHandler, response_filters: [{type: HttpResponseFilter, action: RESET_PAGINATION, http_codes: [400]}]}}`, 1)
	src, err := Load(parse(t, m))
	if err != nil {
		t.Fatal(err)
	}
	f := src.Streams[0].Retriever.Requester.ErrorHandler.Filters
	if len(f) != 1 || f[0].Action != ActionResetPagination || len(f[0].HTTPCodes) != 1 {
		t.Errorf("filters %+v", f)
	}
}

func TestPaginationResetErrors(t *testing.T) {
	const p = "streams[0].retriever.pagination_reset"
	for _, tc := range []struct{ retriever, stream, want string }{
		{"pagination_reset: {type: PaginationReset}", "", p + ".action: is required"},
		{"pagination_reset: {type: PaginationReset, action: SPLIT}", "", p + ".action: must be SPLIT_USING_CURSOR or RESET"},
		{"pagination_reset: {type: PaginationReset, action: RESET, limits: {type: PaginationResetLimits, number_of_records: -1}}", "", p + ".limits.number_of_records: must be >= 1 but found -1"},
		{"pagination_reset: {type: PaginationReset, action: RESET, limits: {type: PaginationResetLimits, number_of_records: 2.5}}", "", p + ".limits.number_of_records: "},
		{"pagination_reset: {type: PaginationResetLimits}", "", p + ": PaginationResetLimits is not supported here (supported: PaginationReset)"},
		{"pagination_reset: {type: PaginationReset, action: RESET, limits: {type: PaginationResetLimits}}\nrecord_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}, record_filter: {type: RecordFilter, condition: \"{{ true }}\"}}", "",
			p + ".limits: cannot be used with a record_selector.record_filter: records the filter drops would not count towards number_of_records (Airbyte refuses it too)"},
		{"pagination_reset: {type: PaginationReset, action: SPLIT_USING_CURSOR}", "incremental_sync: {type: IncrementingCountCursor, cursor_field: n}",
			p + ".action: SPLIT_USING_CURSOR needs a DatetimeBasedCursor to narrow the slice with; the stream's incremental_sync (streams[0].incremental_sync) is not one: use RESET"},
		{"pagination_reset: {type: PaginationReset, action: RESET}\npartition_router: {type: SubstreamPartitionRouter, parent_stream_configs: [{type: ParentStreamConfig, parent_key: id, partition_field: pid, lazy_read_pointer: [items], " +
			"stream: {type: DeclarativeStream, name: p, retriever: {type: SimpleRetriever, requester: {type: HttpRequester, url_base: \"https://x\"}, record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}}}}]}", "",
			p + ": cannot be used with streams[0].retriever.partition_router.parent_stream_configs[0].lazy_read_pointer: Airbyte's LazySimpleRetriever does not reset pagination"},
	} {
		m := resetManifest(tc.retriever, tc.stream)
		if strings.Contains(tc.retriever, "record_filter") {
			m = strings.Replace(m, "      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}\n", "", 1)
		}
		_, err := Load(parse(t, m))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s:\n got %v\nwant %s", tc.retriever, err, tc.want)
		}
	}
}

func TestSplitUsingCursorWithoutCursorWarns(t *testing.T) {
	src, err := Load(parse(t, resetManifest("pagination_reset: {type: PaginationReset, action: SPLIT_USING_CURSOR}", "")))
	if err != nil {
		t.Fatal(err)
	}
	want := "streams[0].retriever.pagination_reset.action: SPLIT_USING_CURSOR on a stream without incremental_sync restarts the slice from its first page, as RESET does"
	if len(src.Warnings) != 1 || src.Warnings[0] != want {
		t.Errorf("warnings %q", src.Warnings)
	}
}
