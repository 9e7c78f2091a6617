package manifest

import (
	"strings"
	"testing"
)

func incrementalManifest(cursor string) string {
	return `version: 6.0.0
check: {stream_names: [s]}
streams:
  - type: DeclarativeStream
    name: s
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: "https://x"}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}
    incremental_sync:
      ` + strings.ReplaceAll(strings.TrimSpace(cursor), "\n", "\n      ") + "\n"
}

func TestIncrementalSyncDecoding(t *testing.T) {
	src, err := Load(parse(t, incrementalManifest(`type: DatetimeBasedCursor
cursor_field: updated_at
datetime_format: "%Y-%m-%d"
cursor_datetime_formats: ["%s", "%Y-%m-%dT%H:%M:%SZ"]
start_datetime: {datetime: "{{ config['start'] }}", min_datetime: "2020-01-01"}
end_datetime: "2024-01-01"
step: P1M
cursor_granularity: P1D
start_time_option: {inject_into: request_parameter, field_name: from}
is_client_side_incremental: true
clamping: {target: WEEK, target_details: {weekday: sunday}}`)))
	if err != nil {
		t.Fatal(err)
	}
	inc := src.Streams[0].Incremental
	c := inc.Datetime
	if c == nil || c.DatetimeFormat.String() != "%Y-%m-%d" || len(c.CursorDatetimeFormats) != 2 || c.Start.Min == nil || c.Start.Format != nil ||
		c.End == nil || c.StartOption.InjectInto != InjectParam || c.Clamping.Weekday != "SUNDAY" || !inc.ClientSideIncremental() {
		t.Errorf("decoded %+v", c)
	}
	// Client-side incremental streams transform before they filter unless told otherwise.
	if !src.Streams[0].Retriever.Selector.TransformBeforeFiltering {
		t.Errorf("transform_before_filtering should default to true")
	}
	src, err = Load(parse(t, incrementalManifest(`type: IncrementingCountCursor
cursor_field: seq
start_value: 5
start_value_option: {inject_into: header, field_name: X-After}`)))
	if err != nil || src.Streams[0].Incremental.Count == nil || src.Streams[0].Incremental.Count.StartOption.InjectInto != InjectHeader {
		t.Errorf("counting cursor: %v", err)
	}
}

func TestIncrementalSyncErrors(t *testing.T) {
	base := "type: DatetimeBasedCursor\ncursor_field: u\ndatetime_format: \"%Y\"\nstart_datetime: \"2020\"\n"
	for _, tc := range []struct{ cursor, want string }{
		{"type: DatetimeBasedCursor\ncursor_field: u", "streams[0].incremental_sync.datetime_format: is required; streams[0].incremental_sync.start_datetime: is required"},
		{base + "step: P1D", "streams[0].incremental_sync: step and cursor_granularity must be given together (or neither)"},
		{base + "step: one day\ncursor_granularity: PT1S", `streams[0].incremental_sync.step: "one day" is not an ISO 8601 duration`},
		{base + "step: \"{{ config.step }}\"\ncursor_granularity: \"{{ config.granularity }}\"", `streams[0].incremental_sync.cursor_granularity: "{{ config.granularity }}": Airbyte reads cursor_granularity as an ISO 8601 duration as written, without rendering a template`},
		{strings.Replace(base, `"%Y"`, `"%Y-%Q"`, 1), `streams[0].incremental_sync.datetime_format: format "%Y-%Q": unsupported directive %Q`},
		{base + "cursor_datetime_formats: [\"%Y\", \"%K\"]", `streams[0].incremental_sync.cursor_datetime_formats[1]: format "%K": unsupported directive %K`},
		{base + "clamping: {target: YEAR}", `streams[0].incremental_sync.clamping.target: must be DAY, WEEK or MONTH, got "YEAR"`},
		{base + "clamping: {target: WEEK, target_details: {weekday: FUNDAY}}", `streams[0].incremental_sync.clamping.target_details.weekday: must be one of MONDAY`},
		{base + "start_time_option: {inject_into: path, field_name: x}", "streams[0].incremental_sync.start_time_option.inject_into: must be request_parameter, header, body_data or body_json"},
		{"type: IncrementingCountCursor", "streams[0].incremental_sync.cursor_field: is required"},
		{"type: CustomIncrementalSync", "streams[0].incremental_sync.class_name: is required: a custom component CustomIncrementalSync names the Python class that implements it"},
	} {
		_, err := Load(parse(t, incrementalManifest(tc.cursor)))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s\n got: %v\nwant: %s", tc.cursor, err, tc.want)
		}
	}
}

// TestStreamStateLoads: a template holding stream_state loads; Airbyte's
// runtime refuses it only when it is evaluated (interp.RefusedError).
func TestStreamStateLoads(t *testing.T) {
	m := incrementalManifest("type: DatetimeBasedCursor\ncursor_field: u\ndatetime_format: \"%Y\"\nstart_datetime: \"2020\"")
	m = strings.Replace(m, `url_base: "https://x"}`, `url_base: "https://x", path: "/x/{{ stream_state['u'] }}", request_headers: {A: "{{ stream_interval.start_time }}", B: "stream_state"}}`, 1)
	if _, err := Load(parse(t, m)); err != nil {
		t.Errorf("got %v", err)
	}
}

// Airbyte's factory refuses a counting cursor on a stream with any partition
// router (a list of routers, a substream), not on one read as one partition.
func TestCountCursorWithARouterIsRefused(t *testing.T) {
	count := "type: IncrementingCountCursor\ncursor_field: n"
	want := "streams[0].incremental_sync: an IncrementingCountCursor cannot be used with a partition_router (streams[0].retriever.partition_router)"
	for _, router := range []string{
		"partition_router: {type: ListPartitionRouter, cursor_field: k, values: [a]}",
		"partition_router: [{type: ListPartitionRouter, cursor_field: k, values: [a]}, {type: ListPartitionRouter, cursor_field: j, values: [b]}]",
	} {
		m := strings.Replace(incrementalManifest(count), "      record_selector:", "      "+router+"\n      record_selector:", 1)
		if _, err := Load(parse(t, m)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s\n got: %v\nwant: %s", router, err, want)
		}
	}
	if _, err := Load(parse(t, incrementalManifest(count))); err != nil {
		t.Errorf("without a router: %v", err)
	}
}
