package partition

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"testing"

	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/protocol"
	"github.com/airbyte-go/source-declarative/runtime/failure"
	"github.com/airbyte-go/source-declarative/runtime/request"
)

const boards = `{stream: {$ref: "#/definitions/boards"}, parent_key: id, partition_field: board_id}`

// The reference's substream vectors: one partition per parent record, with
// the parent's own partition as parent_slice, parents in manifest order.
func TestSubstreamPartitions(t *testing.T) {
	first, second := map[string]any{"slice": "first"}, map[string]any{"slice": "second"}
	cases := []struct {
		name, router string
		records      map[string][]ParentRecord
		want         string
	}{
		{"a parent without records gives no partition", `{type: SubstreamPartitionRouter, parent_stream_configs: [` + boards + `]}`,
			nil, ``},
		{"one partition per record", `{type: SubstreamPartitionRouter, parent_stream_configs: [` + boards + `]}`,
			map[string][]ParentRecord{"boards": recs(nil, `{"id": 1, "data": "data1"}`, `{"id": 2, "data": "data2"}`)},
			`{"keys":{"board_id":1,"parent_slice":{}}}` + "\n" + `{"keys":{"board_id":2,"parent_slice":{}}}`},
		{"the parent's partitions are the parent slices", `{type: SubstreamPartitionRouter, parent_stream_configs: [` + boards + `]}`,
			map[string][]ParentRecord{"boards": append(recs(first, `{"id": 0, "slice": "first"}`, `{"id": 1, "slice": "first"}`), recs(second, `{"id": 2, "slice": "second"}`)...)},
			`{"keys":{"board_id":0,"parent_slice":{"slice":"first"}}}` + "\n" + `{"keys":{"board_id":1,"parent_slice":{"slice":"first"}}}` + "\n" + `{"keys":{"board_id":2,"parent_slice":{"slice":"second"}}}`},
		{"several parents in manifest order, each with its own key", `{type: SubstreamPartitionRouter, parent_stream_configs: [` + boards + `, {stream: {$ref: "#/definitions/projects"}, parent_key: id, partition_field: project_id}]}`,
			map[string][]ParentRecord{"projects": recs(map[string]any{"slice": "second_parent"}, `{"id": 10}`, `{"id": 20}`), "boards": recs(first, `{"id": 0}`)},
			`{"keys":{"board_id":0,"parent_slice":{"slice":"first"}}}` + "\n" + `{"keys":{"parent_slice":{"slice":"second_parent"},"project_id":10}}` + "\n" + `{"keys":{"parent_slice":{"slice":"second_parent"},"project_id":20}}`},
		{"a nested parent key", `{type: SubstreamPartitionRouter, parent_stream_configs: [{stream: {$ref: "#/definitions/boards"}, parent_key: a/b, partition_field: board_id}]}`,
			map[string][]ParentRecord{"boards": recs(nil, `{"a": {"b": 0}}`, `{"a": {"b": 1}}`, `{"a": {"c": 2}}`, `{"a": {"b": 3}}`)},
			`{"keys":{"board_id":0,"parent_slice":{}}}` + "\n" + `{"keys":{"board_id":1,"parent_slice":{}}}` + "\n" + `{"keys":{"board_id":3,"parent_slice":{}}}`},
		{"list indexes and a leading slash in the key", `{type: SubstreamPartitionRouter, parent_stream_configs: [{stream: {$ref: "#/definitions/boards"}, parent_key: /owners/1/id, partition_field: owner}]}`,
			map[string][]ParentRecord{"boards": recs(nil, `{"owners": [{"id": "a"}, {"id": "b"}]}`, `{"owners": [{"id": "c"}]}`)},
			`{"keys":{"owner":"b","parent_slice":{}}}`},
		{"a parent key of \"/\" is the whole record, as dpath reads it (railz)", `{type: SubstreamPartitionRouter, parent_stream_configs: [{stream: {$ref: "#/definitions/boards"}, parent_key: "/", partition_field: connection}]}`,
			map[string][]ParentRecord{"boards": recs(nil, `{"businessName": "b", "serviceName": "s"}`)},
			`{"keys":{"connection":{"businessName":"b","serviceName":"s"},"parent_slice":{}}}`},
		{"values keep their JSON type", `{type: SubstreamPartitionRouter, parent_stream_configs: [` + boards + `]}`,
			map[string][]ParentRecord{"boards": recs(nil, `{"id": "7"}`, `{"id": 12345678901234567890123}`, `{"id": 1.5}`, `{"id": true}`, `{"id": null}`, `{"id": {"x": [1]}}`)},
			`{"keys":{"board_id":"7","parent_slice":{}}}` + "\n" + `{"keys":{"board_id":12345678901234567890123,"parent_slice":{}}}` + "\n" + `{"keys":{"board_id":1.5,"parent_slice":{}}}` + "\n" + `{"keys":{"board_id":true,"parent_slice":{}}}` + "\n" + `{"keys":{"board_id":{"x":[1]},"parent_slice":{}}}`},
		{"extra fields, null when missing", `{type: SubstreamPartitionRouter, parent_stream_configs: [{stream: {$ref: "#/definitions/boards"}, parent_key: id, partition_field: board_id, extra_fields: [[name], [meta, "{{ config.f }}"]]}]}`,
			map[string][]ParentRecord{"boards": recs(nil, `{"id": 1, "name": "Board 1", "meta": {"region": "eu"}}`, `{"id": 2}`)},
			`{"extra":{"meta.region":"eu","name":"Board 1"},"keys":{"board_id":1,"parent_slice":{}}}` + "\n" + `{"extra":{"meta.region":null,"name":null},"keys":{"board_id":2,"parent_slice":{}}}`},
		{"the lazy read pointer's value, [] when absent", `{type: SubstreamPartitionRouter, parent_stream_configs: [{stream: {$ref: "#/definitions/boards"}, parent_key: id, partition_field: board_id, lazy_read_pointer: [tasks, items]}]}`,
			map[string][]ParentRecord{"boards": recs(nil, `{"id": 1, "tasks": {"items": [{"t": 1}, {"t": 2}], "next": "x"}}`, `{"id": 2}`)},
			`{"keys":{"board_id":1,"parent_slice":{}},"lazy":"[{\"t\":1},{\"t\":2}]"}` + "\n" + `{"keys":{"board_id":2,"parent_slice":{}},"lazy":"[]"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := &parents{records: tc.records}
			got := describe(t, all(t, mustRouter(t, tc.router, map[string]any{"f": "region"}, p.read, nil)))
			if got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// A record lacking the parent key, or holding null there, is skipped with a
// warning naming the stream, the parent and the key (the reference skips a
// missing key silently, and requests a null one as "None"); past a few, the
// rest are counted in one line.
func TestMissingParentKeyWarns(t *testing.T) {
	var data []string
	data = append(data, `{"id": 0}`)
	for i := range 6 {
		data = append(data, fmt.Sprintf(`{"_id": %d}`, i))
	}
	data = append(data, `{"id": null}`)
	data = append(data, `{"id": 3}`)
	l := &logs{}
	got := describe(t, all(t, mustRouter(t, `{type: SubstreamPartitionRouter, parent_stream_configs: [`+boards+`]}`, nil, (&parents{records: map[string][]ParentRecord{"boards": recs(nil, data...)}}).read, l)))
	if got != `{"keys":{"board_id":0,"parent_slice":{}}}`+"\n"+`{"keys":{"board_id":3,"parent_slice":{}}}` {
		t.Errorf("partitions\n%s", got)
	}
	one := `WARN Stream child: a record of parent stream boards has no "id", or a null one (streams[0].retriever.partition_router.parent_stream_configs[0].parent_key); it is skipped`
	want := []string{one, one, one, one, one, `WARN Stream child: 7 records of parent stream boards had no "id", or a null one, and were skipped`}
	if !slices.Equal(l.lines, want) {
		t.Errorf("logs\n%q\nwant\n%q", l.lines, want)
	}
}

// Each partition injects its own parent config's value (the reference
// injects every config's option whose field the slice has).
func TestSubstreamRequestOptions(t *testing.T) {
	config := map[string]any{"field_name_first_stream": "config_first_stream_id"}
	router := `{type: SubstreamPartitionRouter, $parameters: {field_name_second_stream: parameter_second_stream_id}, parent_stream_configs: [
	  {stream: {$ref: "#/definitions/boards"}, parent_key: id, partition_field: first_stream_id, request_option: %s},
	  {stream: {$ref: "#/definitions/projects"}, parent_key: id, partition_field: second_stream_id, request_option: %s}]}`
	records := map[string][]ParentRecord{"boards": recs(nil, `{"id": "1234"}`), "projects": recs(nil, `{"id": 4567}`)}
	cases := []struct {
		name, first, second string
		want                [2]*request.Parts
	}{
		{"request parameters", `{inject_into: request_parameter, field_name: first_stream}`, `{inject_into: request_parameter, field_name: second_stream}`,
			[2]*request.Parts{parts(func(p *request.Parts) { p.Query.Set("first_stream", "1234") }), parts(func(p *request.Parts) { p.Query.Set("second_stream", "4567") })}},
		{"headers", `{inject_into: header, field_name: first_stream}`, `{inject_into: header, field_name: second_stream}`,
			[2]*request.Parts{parts(func(p *request.Parts) { p.Headers.Set("first_stream", "1234") }), parts(func(p *request.Parts) { p.Headers.Set("second_stream", "4567") })}},
		{"JSON body keeps the number", `{inject_into: body_json, field_name: first_stream}`, `{inject_into: body_json, field_path: [filter, second_stream]}`,
			[2]*request.Parts{parts(func(p *request.Parts) { p.BodyJSON = map[string]any{"first_stream": "1234"} }), parts(func(p *request.Parts) {
				p.BodyJSON = map[string]any{"filter": map[string]any{"second_stream": int64(4567)}}
			})}},
		{"form body", `{inject_into: body_data, field_name: first_stream}`, `{inject_into: body_data, field_name: second_stream}`,
			[2]*request.Parts{parts(func(p *request.Parts) { p.BodyData.Set("first_stream", "1234") }), parts(func(p *request.Parts) { p.BodyData.Set("second_stream", "4567") })}},
		// The CDK's unit test builds the option with the router's parameters;
		// its factory, which runs a manifest, builds it with none, so a name
		// from parameters renders empty there (checked with refcdk7), and here.
		{"names from config and parameters", `{inject_into: request_parameter, field_name: "{{ config['field_name_first_stream'] }}"}`, `{inject_into: request_parameter, field_name: "{{ parameters['field_name_second_stream'] }}"}`,
			[2]*request.Parts{parts(func(p *request.Parts) { p.Query.Set("config_first_stream_id", "1234") }), parts(func(p *request.Parts) { p.Query.Set("", "4567") })}},
	}
	for _, tc := range cases {
		got := all(t, mustRouter(t, fmt.Sprintf(router, tc.first, tc.second), config, (&parents{records: records}).read, nil))
		if len(got) != 2 {
			t.Fatalf("%s: %d partitions", tc.name, len(got))
		}
		sameRequest(t, tc.name+", first parent", injected(t, got[0]), tc.want[0])
		sameRequest(t, tc.name+", second parent", injected(t, got[1]), tc.want[1])
	}
}

// Partitions are streamed: each parent record becomes a partition before
// the next is read, so 100,000 parents never sit in memory together.
func TestSubstreamIsStreamed(t *testing.T) {
	const n = 100_000
	produced, consumed := 0, 0
	read := func(ctx context.Context, _ *manifest.ParentStreamConfig, emit func(ParentRecord) error) error {
		for i := range n {
			produced++
			if produced-consumed > 1 {
				return fmt.Errorf("record %d read while %d partitions wait", i, produced-consumed)
			}
			if err := emit(ParentRecord{Data: []byte(`{"id":` + strconv.Itoa(i) + `}`)}); err != nil {
				return err
			}
		}
		return nil
	}
	r := mustRouter(t, `{type: SubstreamPartitionRouter, parent_stream_configs: [`+boards+`]}`, nil, read, nil)
	for p, err := range r.Partitions(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		if p.Keys["board_id"] != int64(consumed) {
			t.Fatalf("partition %d is %v", consumed, p.Keys)
		}
		consumed++
	}
	if produced != n || consumed != n {
		t.Errorf("produced %d, consumed %d", produced, consumed)
	}
}

// pagedParents serves /boards in pages of two over HTTP; httpParents reads
// them page by page, as the read loop's reader will.
func pagedParents(t *testing.T, total int) (*httptest.Server, *[]string) {
	var requests []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests = append(requests, r.URL.RequestURI())
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		if r.URL.Query().Get("fail") != "" {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		var data []map[string]any
		for i := page * 2; i < min(page*2+2, total); i++ {
			data = append(data, map[string]any{"id": i, "owner": map[string]any{"login": fmt.Sprintf("u%d", i)}})
		}
		next := any(nil)
		if (page+1)*2 < total {
			next = page + 1
		}
		json.NewEncoder(w).Encode(map[string]any{"data": data, "next": next})
	}))
	t.Cleanup(srv.Close)
	return srv, &requests
}

func httpParents(url string) ParentReader {
	return func(ctx context.Context, _ *manifest.ParentStreamConfig, emit func(ParentRecord) error) error {
		for page := any(0); page != nil; {
			req, _ := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("%s/boards?page=%v", url, page), nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return err
			}
			if resp.StatusCode != 200 {
				resp.Body.Close()
				return &failure.Error{Failure: protocol.TransientError, Message: fmt.Sprintf("HTTP %d from GET /boards", resp.StatusCode), Status: resp.StatusCode}
			}
			var body struct {
				Data []json.RawMessage
				Next any
			}
			err = json.NewDecoder(resp.Body).Decode(&body)
			resp.Body.Close()
			if err != nil {
				return err
			}
			for _, rec := range body.Data {
				if err := emit(ParentRecord{Data: rec}); err != nil {
					return err
				}
			}
			page = body.Next
		}
		return nil
	}
}

// A paginated parent is read page by page, only as far as partitions are
// wanted.
func TestPaginatedParent(t *testing.T) {
	srv, requests := pagedParents(t, 5)
	r := mustRouter(t, `{type: SubstreamPartitionRouter, parent_stream_configs: [{stream: {$ref: "#/definitions/boards"}, parent_key: owner/login, partition_field: login}]}`, nil, httpParents(srv.URL), nil)
	want := `{"keys":{"login":"u0","parent_slice":{}}}` + "\n" + `{"keys":{"login":"u1","parent_slice":{}}}` + "\n" + `{"keys":{"login":"u2","parent_slice":{}}}` + "\n" +
		`{"keys":{"login":"u3","parent_slice":{}}}` + "\n" + `{"keys":{"login":"u4","parent_slice":{}}}`
	if got := describe(t, all(t, r)); got != want {
		t.Errorf("got\n%s", got)
	}
	if fmt.Sprint(*requests) != "[/boards?page=0 /boards?page=1 /boards?page=2]" {
		t.Errorf("requests %v", *requests)
	}
	*requests = nil
	n := 0
	for range r.Partitions(context.Background()) {
		if n++; n == 3 {
			break
		}
	}
	if fmt.Sprint(*requests) != "[/boards?page=0 /boards?page=1]" {
		t.Errorf("three partitions read %v", *requests)
	}
}

// A parent that fails fails the child, naming both, and keeps the
// parent's failure type.
func TestParentFailure(t *testing.T) {
	srv, _ := pagedParents(t, 5)
	r := mustRouter(t, `{type: SubstreamPartitionRouter, parent_stream_configs: [`+boards+`]}`, nil, httpParents(srv.URL+"/x?fail=1&"), nil)
	var errs []error
	for _, err := range r.Partitions(context.Background()) {
		errs = append(errs, err)
	}
	var re *failure.Error
	if len(errs) != 1 || !errors.As(errs[0], &re) || re.Failure != "transient_error" ||
		errs[0].Error() != "stream child: reading its parent stream boards failed: HTTP 500 from GET /boards" {
		t.Errorf("got %v", errs)
	}
}

func TestParentKeyErrors(t *testing.T) {
	for router, want := range map[string]string{
		`{type: SubstreamPartitionRouter, parent_stream_configs: [{stream: {$ref: "#/definitions/boards"}, parent_key: "a//b", partition_field: x}]}`:                  `streams[0].retriever.partition_router.parent_stream_configs[0].parent_key: "a//b" must be a path of field names separated by / (no empty segment, no *)`,
		`{type: SubstreamPartitionRouter, parent_stream_configs: [{stream: {$ref: "#/definitions/boards"}, parent_key: "items/*/id", partition_field: x}]}`:            `streams[0].retriever.partition_router.parent_stream_configs[0].parent_key: "items/*/id" must be a path of field names separated by / (no empty segment, no *)`,
		`{type: SubstreamPartitionRouter, parent_stream_configs: [{stream: {$ref: "#/definitions/boards"}, parent_key: id, partition_field: "{{ config.missing }}"}]}`: `streams[0].retriever.partition_router.parent_stream_configs[0].partition_field: renders empty`,
	} {
		_, err := newRouter(t, router, nil, (&parents{}).read, nil)
		if err == nil || err.Error() != want {
			t.Errorf("got %v\nwant %s", err, want)
		}
	}
}
