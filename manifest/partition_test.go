package manifest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/airbyte-go/source-declarative/lang/interp"
)

// decodeField resolves and decodes one field of a YAML document with f,
// returning the decoder's errors too.
func decodeField[T any](t *testing.T, y, field string, f func(d *decoder, v any, path string) T) (T, []string) {
	t.Helper()
	m, err := Resolve(parse(t, y))
	if err != nil {
		t.Fatal(err)
	}
	Propagate(m)
	d := &decoder{parts: &customParts{}}
	return f(d, m[field], field), d.errs
}

// describeRouter renders a decoded router as plain values, templates as
// their source, so a whole decoding is compared at once.
func describeRouter(r *PartitionRouter) any {
	if r == nil {
		return nil
	}
	out := map[string]any{"type": r.Type, "path": r.Path}
	switch {
	case r.List != nil:
		out["cursor_field"] = src(r.List.CursorField)
		out["values"] = r.List.Values
		if r.List.ValuesTemplate != nil {
			out["values"] = src(r.List.ValuesTemplate)
		}
		out["request_option"] = describeOption(r.List.RequestOption)
	case r.Substream != nil:
		var parents []any
		for _, p := range r.Substream.Parents {
			parents = append(parents, map[string]any{
				"path": p.Path, "stream": p.Stream.Name, "stream_path": p.Stream.Path,
				"parent_router": describeRouter(p.Stream.Retriever.PartitionRouter),
				"parent_key":    src(p.ParentKey), "partition_field": src(p.PartitionField),
				"request_option": describeOption(p.RequestOption), "incremental_dependency": p.IncrementalDependency,
				"extra_fields": srcLists(p.ExtraFields), "lazy_read_pointer": srcList(p.LazyReadPointer),
			})
		}
		out["parents"] = parents
	case r.Grouping != nil:
		out["group_size"] = r.Grouping.GroupSize
		out["deduplicate"] = r.Grouping.Deduplicate
		out["underlying"] = describeRouter(r.Grouping.Underlying)
	case r.Union != nil:
		out["partition_field"] = src(r.Union.PartitionField)
		var routers []any
		for _, u := range r.Union.Routers {
			routers = append(routers, describeRouter(u))
		}
		out["routers"] = routers
	default:
		var routers []any
		for _, u := range r.Product {
			routers = append(routers, describeRouter(u))
		}
		out["product"] = routers
	}
	return out
}

func describeOption(o *RequestOption) any {
	if o == nil {
		return nil
	}
	return map[string]any{"path": o.Path, "inject_into": o.InjectInto, "field_name": src(o.FieldName), "field_path": srcList(o.FieldPath)}
}

func src(t *interp.Template) any {
	if t == nil {
		return nil
	}
	return t.Source
}

func srcList(l []*interp.Template) []any {
	var out []any
	for _, t := range l {
		out = append(out, src(t))
	}
	return out
}

func srcLists(l [][]*interp.Template) []any {
	var out []any
	for _, e := range l {
		out = append(out, srcList(e))
	}
	return out
}

// decodesTo decodes field of y with decode and compares its description, as
// JSON, with want.
func decodesTo[T any](t *testing.T, y, field string, decode func(*decoder, any, string) T, describe func(T) any, want string) {
	t.Helper()
	v, errs := decodeField(t, y, field, decode)
	if len(errs) > 0 {
		t.Fatalf("errors: %q", errs)
	}
	if got := jsonOf(t, describe(v)); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestDecodePartitionRouters(t *testing.T) {
	const parent = `
definitions:
  projects:
    type: DeclarativeStream
    name: projects
    retriever:
      requester: {type: HttpRequester, url_base: "https://a", path: /projects}
      record_selector: {extractor: {field_path: [data]}}
      partition_router:
        type: ListPartitionRouter
        cursor_field: region
        values: "{{ config['regions'] }}"
`
	cases := []struct{ name, yaml, want string }{
		{"list with a literal list and a nested JSON body option", `
partition_router:
  type: ListPartitionRouter
  cursor_field: "{{ parameters.key }}"
  values: [a, 2, true]
  request_option: {inject_into: body_json, field_path: [filter, "{{ config.k }}"]}
  $parameters: {key: section}
`, `{"cursor_field":"{{ parameters.key }}","path":"partition_router","request_option":{"field_name":null,"field_path":["filter","{{ config.k }}"],"inject_into":"body_json","path":"partition_router.request_option"},"type":"ListPartitionRouter","values":["a",2,true]}`},
		{"list with a values template", `
partition_router: {type: ListPartitionRouter, cursor_field: id, values: "{{ config.ids }}", request_option: {type: RequestOption, inject_into: header, field_name: X-Id}}
`, `{"cursor_field":"id","path":"partition_router","request_option":{"field_name":"X-Id","field_path":null,"inject_into":"header","path":"partition_router.request_option"},"type":"ListPartitionRouter","values":"{{ config.ids }}"}`},
		{"substream with two parents, a nested router, extra fields and a lazy pointer", parent + `
partition_router:
  type: SubstreamPartitionRouter
  parent_stream_configs:
    - stream: {$ref: "#/definitions/projects"}
      parent_key: owner/id
      partition_field: project_id
      request_option: {inject_into: request_parameter, field_name: project}
      incremental_dependency: true
      extra_fields: [[name], [meta, "{{ config.field }}"]]
      lazy_read_pointer: [tasks, items]
    - type: ParentStreamConfig
      stream: {$ref: "#/definitions/projects", name: archived}
      parent_key: id
      partition_field: archived_id
`, `{"parents":[{"extra_fields":[["name"],["meta","{{ config.field }}"]],"incremental_dependency":true,"lazy_read_pointer":["tasks","items"],"parent_key":"owner/id","parent_router":{"cursor_field":"region","path":"partition_router.parent_stream_configs[0].stream.retriever.partition_router","request_option":null,"type":"ListPartitionRouter","values":"{{ config['regions'] }}"},"partition_field":"project_id","path":"partition_router.parent_stream_configs[0]","request_option":{"field_name":"project","field_path":null,"inject_into":"request_parameter","path":"partition_router.parent_stream_configs[0].request_option"},"stream":"projects","stream_path":"partition_router.parent_stream_configs[0].stream"},{"extra_fields":null,"incremental_dependency":false,"lazy_read_pointer":null,"parent_key":"id","parent_router":{"cursor_field":"region","path":"partition_router.parent_stream_configs[1].stream.retriever.partition_router","request_option":null,"type":"ListPartitionRouter","values":"{{ config['regions'] }}"},"partition_field":"archived_id","path":"partition_router.parent_stream_configs[1]","request_option":null,"stream":"archived","stream_path":"partition_router.parent_stream_configs[1].stream"}],"path":"partition_router","type":"SubstreamPartitionRouter"}`},
		{"a list of routers is a cartesian product", `
partition_router:
  - {type: ListPartitionRouter, cursor_field: a, values: [x]}
  - {type: ListPartitionRouter, cursor_field: b, values: [y, z]}
`, `{"path":"partition_router","product":[{"cursor_field":"a","path":"partition_router[0]","request_option":null,"type":"ListPartitionRouter","values":["x"]},{"cursor_field":"b","path":"partition_router[1]","request_option":null,"type":"ListPartitionRouter","values":["y","z"]}],"type":"CartesianProduct"}`},
		{"grouping deduplicates by default", `
partition_router:
  type: GroupingPartitionRouter
  group_size: 10
  underlying_partition_router: {type: ListPartitionRouter, cursor_field: id, values: [a, b]}
`, `{"deduplicate":true,"group_size":10,"path":"partition_router","type":"GroupingPartitionRouter","underlying":{"cursor_field":"id","path":"partition_router.underlying_partition_router","request_option":null,"type":"ListPartitionRouter","values":["a","b"]}}`},
		{"grouping without deduplication", `
partition_router: {type: GroupingPartitionRouter, group_size: 1, deduplicate: false, underlying_partition_router: {type: ListPartitionRouter, cursor_field: id, values: [a]}}
`, `{"deduplicate":false,"group_size":1,"path":"partition_router","type":"GroupingPartitionRouter","underlying":{"cursor_field":"id","path":"partition_router.underlying_partition_router","request_option":null,"type":"ListPartitionRouter","values":["a"]}}`},
		{"union", `
partition_router:
  type: UnionPartitionRouter
  partition_field: repository
  partition_routers:
    - {type: ListPartitionRouter, cursor_field: repository, values: [a]}
    - {type: ListPartitionRouter, cursor_field: repository, values: [b]}
`, `{"partition_field":"repository","path":"partition_router","routers":[{"cursor_field":"repository","path":"partition_router.partition_routers[0]","request_option":null,"type":"ListPartitionRouter","values":["a"]},{"cursor_field":"repository","path":"partition_router.partition_routers[1]","request_option":null,"type":"ListPartitionRouter","values":["b"]}],"type":"UnionPartitionRouter"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			decodesTo(t, tc.yaml, "partition_router", (*decoder).partitionRouter, describeRouter, tc.want)
		})
	}
}

func TestPartitionRouterErrors(t *testing.T) {
	const list = "{type: ListPartitionRouter, cursor_field: id, values: [a]}"
	const parentStream = "{type: DeclarativeStream, name: p, retriever: {requester: {url_base: 'https://a'}, record_selector: {extractor: {field_path: []}}}}"
	cases := []struct{ router, want string }{
		{`{type: GroupingPartitionRouter, group_size: 0, underlying_partition_router: ` + list + `}`,
			"partition_router.group_size: must be at least 1, got 0"},
		{`{type: GroupingPartitionRouter, group_size: 2, underlying_partition_router: {type: ListPartitionRouter, cursor_field: id, values: [a], request_option: {inject_into: request_parameter, field_name: id}}}`,
			"partition_router.underlying_partition_router.request_option: request options are not supported under a GroupingPartitionRouter: put the partition in the request with a template such as {{ stream_partition.<field> | join(',') }}"},
		{`{type: GroupingPartitionRouter, group_size: 2, underlying_partition_router: {type: SubstreamPartitionRouter, parent_stream_configs: [{stream: ` + parentStream + `, parent_key: id, partition_field: pid, request_option: {inject_into: header, field_name: X}}]}}`,
			"partition_router.underlying_partition_router.parent_stream_configs[0].request_option: request options are not supported under a GroupingPartitionRouter: put the partition in the request with a template such as {{ stream_partition.<field> | join(',') }}"},
		{`{type: GroupingPartitionRouter, group_size: 2, underlying_partition_router: {type: SubstreamPartitionRouter, parent_stream_configs: [{stream: ` + parentStream + `, parent_key: id, partition_field: pid, lazy_read_pointer: [items]}]}}`,
			"partition_router.underlying_partition_router.parent_stream_configs[0].lazy_read_pointer: is not supported under a GroupingPartitionRouter: a group has no single parent record to read the child records from"},
		{`{type: GroupingPartitionRouter, group_size: 2, underlying_partition_router: {type: GroupingPartitionRouter, group_size: 2, underlying_partition_router: ` + list + `}}`,
			"partition_router.underlying_partition_router: GroupingPartitionRouter is not supported here (supported: ListPartitionRouter, SubstreamPartitionRouter, UnionPartitionRouter)"},
		{`{type: UnionPartitionRouter, partition_field: id, partition_routers: [` + list + `]}`,
			"partition_router.partition_routers: minimum 2 items required, but found 1 items"},
		{`{type: UnionPartitionRouter, partition_field: id, partition_routers: [` + list + `, {type: ListPartitionRouter, cursor_field: id, values: [b], request_option: {inject_into: body_data, field_name: id}}]}`,
			"partition_router.partition_routers[1].request_option: request options are not supported under a UnionPartitionRouter: put the partition in the request with a template such as {{ stream_partition.<field> }}"},
		{`{type: SubstreamPartitionRouter, parent_stream_configs: [{stream: ` + parentStream + `, partition_field: pid}]}`,
			"partition_router.parent_stream_configs[0].parent_key: is required"},
		{`{type: SubstreamPartitionRouter, parent_stream_configs: []}`,
			"partition_router.parent_stream_configs: minimum 1 items required, but found 0 items"},
		{`{type: SubstreamPartitionRouter, parent_stream_configs: [{stream: ` + parentStream + `, parent_key: id, partition_field: pid, lazy_read_pointer: [data, "*"]}]}`,
			"partition_router.parent_stream_configs[0].lazy_read_pointer[1]: the '*' wildcard is not supported in lazy_read_pointer: only direct paths are"},
		{`{type: SubstreamPartitionRouter, parent_stream_configs: [{stream: {type: StateDelegatingStream, name: s}, parent_key: id, partition_field: pid}]}`,
			"partition_router.parent_stream_configs[0].stream.full_refresh_stream: is required; partition_router.parent_stream_configs[0].stream.incremental_stream: is required"},
		{`{type: SubstreamPartitionRouter, parent_stream_configs: [{stream: {type: DeclarativeStream, name: p, retriever: {requester: {url_base: 'https://a'}, record_selector: {extractor: {field_path: []}}, partition_router: {type: ListPartitionRouter, cursor_field: id}}}, parent_key: id, partition_field: pid}]}`,
			"partition_router.parent_stream_configs[0].stream.retriever.partition_router.values: is required"},
		{`{type: ListPartitionRouter, cursor_field: id, values: {a: 1}}`,
			"partition_router.values: expected string, but got object; partition_router.values: expected array, but got object"},
		{`{type: ListPartitionRouter, cursor_field: id, values: [a], request_option: {inject_into: header, field_path: [a, b]}}`,
			"partition_router.request_option.field_path: is only allowed with inject_into: body_json"},
		{`{type: CustomPartitionRouter, class_name: x.Y}`,
			"partition_router: custom component CustomPartitionRouter (class_name x.Y) is not supported here: the components host runs custom components of streams and of the spec's config_normalization_rules"},
		{`[` + list + `, {type: ListRouter, cursor_field: b, values: [b]}]`,
			`partition_router[1].type: unknown component type "ListRouter" (supported: SubstreamPartitionRouter, ListPartitionRouter, GroupingPartitionRouter, UnionPartitionRouter)`},
	}
	for _, tc := range cases {
		_, errs := decodeField(t, "partition_router: "+tc.router, "partition_router", (*decoder).partitionRouter)
		got := strings.Join(errs, "; ")
		if got != tc.want {
			t.Errorf("%s\n got: %s\nwant: %s", tc.router, got, tc.want)
		}
	}
}
