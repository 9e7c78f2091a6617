package partition

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/runtime/request"
)

func lines(s ...string) string { return strings.Join(s, "\n") }

// The reference's cartesian product vectors: every combination, the first
// router outermost; extra fields merged.
func TestCartesianProduct(t *testing.T) {
	const owners = `{type: ListPartitionRouter, values: [customer, store, subscription], cursor_field: owner_resource}`
	cases := []struct {
		name, router string
		want         string
	}{
		{"one router", `[` + owners + `]`, lines(`{"keys":{"owner_resource":"customer"}}`, `{"keys":{"owner_resource":"store"}}`, `{"keys":{"owner_resource":"subscription"}}`)},
		{"two routers", `[` + owners + `, {type: ListPartitionRouter, values: [A, B], cursor_field: letter}]`, lines(
			`{"keys":{"letter":"A","owner_resource":"customer"}}`, `{"keys":{"letter":"B","owner_resource":"customer"}}`,
			`{"keys":{"letter":"A","owner_resource":"store"}}`, `{"keys":{"letter":"B","owner_resource":"store"}}`,
			`{"keys":{"letter":"A","owner_resource":"subscription"}}`, `{"keys":{"letter":"B","owner_resource":"subscription"}}`)},
		{"three routers, the last varying fastest", `[{type: ListPartitionRouter, values: [x, y], cursor_field: a}, {type: ListPartitionRouter, values: [1], cursor_field: b}, {type: ListPartitionRouter, values: [p, q], cursor_field: c}]`, lines(
			`{"keys":{"a":"x","b":"1","c":"p"}}`, `{"keys":{"a":"x","b":"1","c":"q"}}`, `{"keys":{"a":"y","b":"1","c":"p"}}`, `{"keys":{"a":"y","b":"1","c":"q"}}`)},
		{"a substream with extra fields", `[{type: SubstreamPartitionRouter, parent_stream_configs: [{stream: {$ref: "#/definitions/boards"}, parent_key: a/b, partition_field: first_stream_id, extra_fields: [[extra_field_key]]}]}]`, lines(
			`{"extra":{"extra_field_key":"extra_field_value_0"},"keys":{"first_stream_id":0,"parent_slice":{}}}`,
			`{"extra":{"extra_field_key":"extra_field_value_1"},"keys":{"first_stream_id":1,"parent_slice":{}}}`,
			`{"extra":{"extra_field_key":"extra_field_value_3"},"keys":{"first_stream_id":3,"parent_slice":{}}}`)},
		{"the first router wins a key clash", `[{type: ListPartitionRouter, values: [x], cursor_field: a}, {type: ListPartitionRouter, values: [y, z], cursor_field: a}]`,
			lines(`{"keys":{"a":"x"}}`, `{"keys":{"a":"x"}}`)},
		{"no partition from the first router, none at all", `[{type: ListPartitionRouter, values: "", cursor_field: a}, ` + owners + `]`, ``},
	}
	records := map[string][]ParentRecord{"boards": recs(nil, `{"a": {"b": 0}, "extra_field_key": "extra_field_value_0"}`, `{"a": {"b": 1}, "extra_field_key": "extra_field_value_1"}`,
		`{"a": {"c": 2}, "extra_field_key": "extra_field_value_2"}`, `{"a": {"b": 3}, "extra_field_key": "extra_field_value_3"}`)}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := &parents{records: records}
			if got := describe(t, all(t, mustRouter(t, tc.router, nil, p.read, nil))); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// Each router injects its own value; the first wins a clash on the same
// request field.
func TestCartesianRequestOptions(t *testing.T) {
	cases := []struct {
		name, first, second string
		want                *request.Parts
	}{
		{"parameter and header", `{inject_into: request_parameter, field_name: owner}`, `{inject_into: header, field_name: repo}`,
			parts(func(p *request.Parts) { p.Query.Set("owner", "customer"); p.Headers.Set("repo", "airbyte") })},
		{"two headers", `{inject_into: header, field_name: owner}`, `{inject_into: header, field_name: repo}`,
			parts(func(p *request.Parts) { p.Headers.Set("owner", "customer"); p.Headers.Set("repo", "airbyte") })},
		{"form body", `{inject_into: body_data, field_name: owner}`, `{inject_into: body_data, field_name: repo}`,
			parts(func(p *request.Parts) { p.BodyData.Set("owner", "customer"); p.BodyData.Set("repo", "airbyte") })},
		{"JSON body, nested paths merged", `{inject_into: body_json, field_path: [filter, owner]}`, `{inject_into: body_json, field_path: [filter, repo]}`,
			parts(func(p *request.Parts) {
				p.BodyJSON = map[string]any{"filter": map[string]any{"owner": "customer", "repo": "airbyte"}}
			})},
		{"the first wins a clash (header names ignore case)", `{inject_into: header, field_name: X-Key}`, `{inject_into: header, field_name: x-key}`,
			parts(func(p *request.Parts) { p.Headers.Set("X-Key", "customer") })},
	}
	for _, tc := range cases {
		r := mustRouter(t, `[{type: ListPartitionRouter, values: [customer, store], cursor_field: owner_resource, request_option: `+tc.first+`},
		  {type: ListPartitionRouter, values: [airbyte, airbyte-cloud], cursor_field: repository, request_option: `+tc.second+`}]`, nil, nil, nil)
		sameRequest(t, tc.name, injected(t, all(t, r)[0]), tc.want)
	}
}

// The routers after the first are read once, and only when the first has a
// partition; a substream in a product warns that its parents' state is not
// kept.
func TestCartesianReadsInnerRoutersOnce(t *testing.T) {
	p := &parents{records: map[string][]ParentRecord{"boards": recs(nil, `{"id": 1}`, `{"id": 2}`)}}
	l := &logs{}
	r := mustRouter(t, `[{type: ListPartitionRouter, values: [a, b, c], cursor_field: x}, {type: SubstreamPartitionRouter, parent_stream_configs: [`+boards+`]}]`, nil, p.read, l)
	if got := len(all(t, r)); got != 6 {
		t.Errorf("%d partitions", got)
	}
	if fmt.Sprint(p.reads) != "[boards]" {
		t.Errorf("parent reads %v", p.reads)
	}
	want := []string{"WARN Stream child: streams[0].retriever.partition_router[1] is in a list of partition routers: its parents' state is not kept in the stream's state, so incremental_dependency cannot apply"}
	if !slices.Equal(l.lines, want) {
		t.Errorf("logs %q", l.lines)
	}
}

const boardRecords = `{"board_id": 0, "name": "Board 0", "owner": "User0"}|{"board_id": 0, "name": "Board 0 Duplicate", "owner": "User0 Duplicate"}|{"board_id": 1, "name": "Board 1", "owner": "User1"}|{"board_id": 2, "name": "Board 2", "owner": "User2"}|{"board_id": 3, "name": "Board 3", "owner": "User3"}|{"board_id": 4, "name": "Board 4", "owner": "User4"}`

func groupingYAML(size int, dedup bool) string {
	return fmt.Sprintf(`{type: GroupingPartitionRouter, group_size: %d, deduplicate: %v, underlying_partition_router: {type: SubstreamPartitionRouter, parent_stream_configs: [{stream: {$ref: "#/definitions/boards"}, parent_key: board_id, partition_field: board_ids, extra_fields: [[name], [owner]]}]}}`, size, dedup)
}

// The reference's grouping vectors.
func TestGrouping(t *testing.T) {
	cases := []struct {
		name, router, records string
		parentSlices          bool
		want                  string
	}{
		{"groups of 2, deduplicated", groupingYAML(2, true), boardRecords, false, lines(
			`{"extra":{"name":["Board 0","Board 1"],"owner":["User0","User1"]},"keys":{"board_ids":[0,1],"parent_slice":[{},{}]}}`,
			`{"extra":{"name":["Board 2","Board 3"],"owner":["User2","User3"]},"keys":{"board_ids":[2,3],"parent_slice":[{},{}]}}`,
			`{"extra":{"name":["Board 4"],"owner":["User4"]},"keys":{"board_ids":[4],"parent_slice":[{}]}}`)},
		{"groups of 3, deduplicated", groupingYAML(3, true), boardRecords, false, lines(
			`{"extra":{"name":["Board 0","Board 1","Board 2"],"owner":["User0","User1","User2"]},"keys":{"board_ids":[0,1,2],"parent_slice":[{},{},{}]}}`,
			`{"extra":{"name":["Board 3","Board 4"],"owner":["User3","User4"]},"keys":{"board_ids":[3,4],"parent_slice":[{},{}]}}`)},
		{"groups of 2, duplicates kept", groupingYAML(2, false), boardRecords, false, lines(
			`{"extra":{"name":["Board 0","Board 0 Duplicate"],"owner":["User0","User0 Duplicate"]},"keys":{"board_ids":[0,0],"parent_slice":[{},{}]}}`,
			`{"extra":{"name":["Board 1","Board 2"],"owner":["User1","User2"]},"keys":{"board_ids":[1,2],"parent_slice":[{},{}]}}`,
			`{"extra":{"name":["Board 3","Board 4"],"owner":["User3","User4"]},"keys":{"board_ids":[3,4],"parent_slice":[{},{}]}}`)},
		{"no parent record, no group", groupingYAML(2, true), ``, false, ``},
		{"missing extra fields are null", groupingYAML(2, true), `{"board_id": 1, "name": "Board 1", "owner": "User1"}|{"board_id": 2, "name": "Board 2"}|{"board_id": 3, "owner": "User3"}`, false, lines(
			`{"extra":{"name":["Board 1","Board 2"],"owner":["User1",null]},"keys":{"board_ids":[1,2],"parent_slice":[{},{}]}}`,
			`{"extra":{"name":[null],"owner":["User3"]},"keys":{"board_ids":[3],"parent_slice":[{}]}}`)},
		{"parent slices are grouped too", groupingYAML(2, true), `{"board_id": 1, "name": "Board 1", "owner": "User1"}|{"board_id": 2, "name": "Board 2", "owner": "User2"}|{"board_id": 3, "name": "Board 3", "owner": "User3"}`, true, lines(
			`{"extra":{"name":["Board 1","Board 2"],"owner":["User1","User2"]},"keys":{"board_ids":[1,2],"parent_slice":[{"slice":"s1"},{"slice":"s2"}]}}`,
			`{"extra":{"name":["Board 3"],"owner":["User3"]},"keys":{"board_ids":[3],"parent_slice":[{"slice":"s3"}]}}`)},
		{"deduplication holds across groups", groupingYAML(2, true), `{"board_id": 1}|{"board_id": 2}|{"board_id": 1}|{"board_id": 3}`, false, lines(
			`{"extra":{"name":[null,null],"owner":[null,null]},"keys":{"board_ids":[1,2],"parent_slice":[{},{}]}}`,
			`{"extra":{"name":[null],"owner":[null]},"keys":{"board_ids":[3],"parent_slice":[{}]}}`)},
		{"a list router grouped", `{type: GroupingPartitionRouter, group_size: 2, underlying_partition_router: {type: ListPartitionRouter, values: [a, b, a, c], cursor_field: id}}`, ``, false,
			lines(`{"keys":{"id":["a","b"]}}`, `{"keys":{"id":["c"]}}`)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var rs []ParentRecord
			if tc.records != "" {
				for i, j := range strings.Split(tc.records, "|") {
					rec := ParentRecord{Data: []byte(j)}
					if tc.parentSlices {
						rec.Partition = map[string]any{"slice": fmt.Sprintf("s%d", i+1)}
					}
					rs = append(rs, rec)
				}
			}
			p := &parents{records: map[string][]ParentRecord{"boards": rs}}
			if got := describe(t, all(t, mustRouter(t, tc.router, nil, p.read, nil))); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// A group is made as soon as its members are read: the underlying router
// is pulled only as far as the groups asked for.
func TestGroupingIsLazy(t *testing.T) {
	read := 0
	reader := func(ctx context.Context, _ *manifest.ParentStreamConfig, emit func(ParentRecord) error) error {
		for i := range 5 {
			read++
			if err := emit(ParentRecord{Data: fmt.Appendf(nil, `{"board_id": %d}`, i)}); err != nil {
				return err
			}
		}
		return nil
	}
	r := mustRouter(t, groupingYAML(2, true), nil, reader, nil)
	var afterEach []int
	for range r.Partitions(context.Background()) {
		afterEach = append(afterEach, read)
	}
	if fmt.Sprint(afterEach) != "[2 4 5]" {
		t.Errorf("parent records read when each group was handed out: %v", afterEach)
	}
}

// The reference's union vectors: each value once, the first occurrence
// winning, other keys moved to the extra fields.
func TestUnion(t *testing.T) {
	cases := []struct {
		name, router string
		records      map[string][]ParentRecord
		want         string
	}{
		{"deduplicated across routers", `{type: UnionPartitionRouter, partition_field: repository, partition_routers: [{type: ListPartitionRouter, values: [org/a, org/b], cursor_field: repository}, {type: ListPartitionRouter, values: [org/b, org/c], cursor_field: repository}]}`, nil,
			lines(`{"keys":{"repository":"org/a"}}`, `{"keys":{"repository":"org/b"}}`, `{"keys":{"repository":"org/c"}}`)},
		{"the first occurrence wins, other keys move to extra fields", `{type: UnionPartitionRouter, partition_field: repository, partition_routers: [{type: SubstreamPartitionRouter, parent_stream_configs: [{stream: {$ref: "#/definitions/boards"}, parent_key: full_name, partition_field: repository, extra_fields: [[origin]]}]}, {type: SubstreamPartitionRouter, parent_stream_configs: [{stream: {$ref: "#/definitions/projects"}, parent_key: full_name, partition_field: repository, extra_fields: [[origin]]}]}]}`,
			map[string][]ParentRecord{"boards": recs(map[string]any{"organization": "org"}, `{"full_name": "org/b", "origin": "a"}`), "projects": recs(nil, `{"full_name": "org/b", "origin": "b"}`, `{"full_name": "org/c", "origin": "b"}`)},
			lines(`{"extra":{"origin":"a","parent_slice":{"organization":"org"}},"keys":{"repository":"org/b"}}`, `{"extra":{"origin":"b","parent_slice":{}},"keys":{"repository":"org/c"}}`)},
		{"nested unions", `{type: UnionPartitionRouter, partition_field: repository, partition_routers: [{type: UnionPartitionRouter, partition_field: repository, partition_routers: [{type: ListPartitionRouter, values: [org/a], cursor_field: repository}, {type: ListPartitionRouter, values: [org/b], cursor_field: repository}]}, {type: ListPartitionRouter, values: [org/b, org/c], cursor_field: repository}]}`, nil,
			lines(`{"keys":{"repository":"org/a"}}`, `{"keys":{"repository":"org/b"}}`, `{"keys":{"repository":"org/c"}}`)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := describe(t, all(t, mustRouter(t, tc.router, nil, (&parents{records: tc.records}).read, nil))); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
	r := mustRouter(t, `{type: UnionPartitionRouter, partition_field: repository, partition_routers: [{type: ListPartitionRouter, values: [org/a], cursor_field: repository}, {type: ListPartitionRouter, values: [x], cursor_field: other_field}]}`, nil, nil, nil)
	var errs []string
	for _, err := range r.Partitions(context.Background()) {
		if err != nil {
			errs = append(errs, err.Error())
		}
	}
	want := `streams[0].retriever.partition_router: every partition of a UnionPartitionRouter needs the partition field "repository", got keys [other_field]`
	if len(errs) != 1 || errs[0] != want {
		t.Errorf("got %q", errs)
	}
}
