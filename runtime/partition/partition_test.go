package partition

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/runtime/failure"
	"github.com/airbyte-go/source-declarative/runtime/request"
)

// childManifest is a source whose one stream, child, has the partition
// router given in YAML flow style; parents are defined under definitions.
const childManifest = `version: 6.0.0
check: {stream_names: [child]}
definitions:
  requester: {type: HttpRequester, url_base: "https://api.example.com"}
  selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
  boards: {type: DeclarativeStream, name: boards, retriever: {type: SimpleRetriever, requester: {$ref: "#/definitions/requester", path: /boards}, record_selector: {$ref: "#/definitions/selector"}}}
  projects: {type: DeclarativeStream, name: projects, retriever: {type: SimpleRetriever, requester: {$ref: "#/definitions/requester", path: /projects}, record_selector: {$ref: "#/definitions/selector"}}}
streams:
  - type: DeclarativeStream
    name: child
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/requester", path: /child}
      record_selector: {$ref: "#/definitions/selector"}
      partition_router: %s
`

// parents is an in-memory ParentReader: the records (JSON) of each parent
// stream, with the parent partition each was read in.
type parents struct {
	mu      sync.Mutex
	records map[string][]ParentRecord
	reads   []string // parent streams read, in order
}

func (p *parents) read(ctx context.Context, pc *manifest.ParentStreamConfig, emit func(ParentRecord) error) error {
	p.mu.Lock()
	p.reads = append(p.reads, pc.Stream.Name)
	recs := p.records[pc.Stream.Name]
	p.mu.Unlock()
	for _, r := range recs {
		if err := emit(r); err != nil {
			return err
		}
	}
	return nil
}

// recs makes parent records read in one parent partition (nil: none).
func recs(partition map[string]any, jsons ...string) []ParentRecord {
	out := make([]ParentRecord, len(jsons))
	for i, j := range jsons {
		out[i] = ParentRecord{Data: []byte(j), Partition: partition}
	}
	return out
}

type logs struct {
	mu    sync.Mutex
	lines []string
}

func (l *logs) log(level, msg string) {
	l.mu.Lock()
	l.lines = append(l.lines, level+" "+msg)
	l.mu.Unlock()
}

// newRouter loads the child manifest with routerYAML and makes its router.
func newRouter(t testing.TB, routerYAML string, config map[string]any, read ParentReader, l *logs) (Router, error) {
	t.Helper()
	raw, err := manifest.Parse([]byte(fmt.Sprintf(childManifest, routerYAML)))
	if err != nil {
		t.Fatal(err)
	}
	src, err := manifest.Load(raw)
	if err != nil {
		t.Fatal(err)
	}
	st := src.Streams[0]
	if l == nil {
		l = &logs{}
	}
	if config == nil {
		config = map[string]any{}
	}
	return New(st.Retriever.PartitionRouter, Env{Stream: st.Name, Vars: interp.Vars{"config": config, "parameters": map[string]any{}}, ReadParent: read, Log: l.log})
}

func mustRouter(t testing.TB, routerYAML string, config map[string]any, read ParentReader, l *logs) Router {
	t.Helper()
	r, err := newRouter(t, routerYAML, config, read, l)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func all(t *testing.T, r Router) []Partition {
	t.Helper()
	var out []Partition
	for p, err := range r.Partitions(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// describe renders partitions as JSON lines: keys, then extra fields and
// the lazy page when present.
func describe(t *testing.T, parts []Partition) string {
	t.Helper()
	var lines []string
	for _, p := range parts {
		m := map[string]any{"keys": p.Keys}
		if p.Extra != nil {
			m["extra"] = p.Extra
		}
		if p.Lazy != nil {
			m["lazy"] = string(p.Lazy)
		}
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	return strings.Join(lines, "\n")
}

// injected is the request a partition makes of GET https://api.example.com/child.
func injected(t *testing.T, p Partition) *request.Parts {
	t.Helper()
	parts := request.New("GET", "https://api.example.com/child")
	if err := p.Inject(parts); err != nil {
		t.Fatal(err)
	}
	return parts
}

// parts builds an expected request: set adds to it.
func parts(set func(p *request.Parts)) *request.Parts {
	p := request.New("GET", "https://api.example.com/child")
	if set != nil {
		set(p)
	}
	return p
}

func sameRequest(t *testing.T, name string, got, want *request.Parts) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got %+v\nwant %+v", name, *got, *want)
	}
}

func TestListPartitions(t *testing.T) {
	cases := []struct {
		name, router string
		config       map[string]any
		want         string
	}{
		{"a list", `{type: ListPartitionRouter, values: [customer, store, subscription], cursor_field: owner_resource}`, nil,
			`{"keys":{"owner_resource":"customer"}}` + "\n" + `{"keys":{"owner_resource":"store"}}` + "\n" + `{"keys":{"owner_resource":"subscription"}}`},
		{"a string holding a list", `{type: ListPartitionRouter, values: '["customer", "store", "subscription"]', cursor_field: owner_resource}`, nil,
			`{"keys":{"owner_resource":"customer"}}` + "\n" + `{"keys":{"owner_resource":"store"}}` + "\n" + `{"keys":{"owner_resource":"subscription"}}`},
		{"the cursor field from parameters", `{type: ListPartitionRouter, values: [customer], cursor_field: "{{ parameters['cursor_field'] }}", $parameters: {cursor_field: owner_resource}}`, nil,
			`{"keys":{"owner_resource":"customer"}}`},
		{"a config list keeps its types, in order, duplicates kept", `{type: ListPartitionRouter, values: "{{ config['ids'] }}", cursor_field: id}`,
			map[string]any{"ids": []any{int64(7), "x", int64(7)}},
			`{"keys":{"id":7}}` + "\n" + `{"keys":{"id":"x"}}` + "\n" + `{"keys":{"id":7}}`},
		{"a comma-separated config string", `{type: ListPartitionRouter, values: "{{ config.ids }}", cursor_field: id}`,
			map[string]any{"ids": " a, b,,c "}, `{"keys":{"id":"a"}}` + "\n" + `{"keys":{"id":"b"}}` + "\n" + `{"keys":{"id":"c"}}`},
		{"a plain comma-separated string", `{type: ListPartitionRouter, values: "a,b", cursor_field: id}`, nil,
			`{"keys":{"id":"a"}}` + "\n" + `{"keys":{"id":"b"}}`},
		{"an empty string gives no partition", `{type: ListPartitionRouter, values: "{{ config.ids }}", cursor_field: id}`,
			map[string]any{"ids": ""}, ``},
		{"literal numbers and booleans are text, as the reference's", `{type: ListPartitionRouter, values: [1, true], cursor_field: id}`, nil,
			`{"keys":{"id":"1"}}` + "\n" + `{"keys":{"id":"true"}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := describe(t, all(t, mustRouter(t, tc.router, tc.config, nil, nil))); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestListConfigErrors(t *testing.T) {
	cases := []struct {
		router string
		config map[string]any
		want   string
	}{
		{`{type: ListPartitionRouter, values: "{{ config.get('ids') }}", cursor_field: id}`, nil,
			`streams[0].retriever.partition_router.values: "{{ config.get('ids') }}" must give a list of values (or a comma-separated string), got nothing (is the config key set?)`},
		{`{type: ListPartitionRouter, values: "{{ config.ids }}", cursor_field: id}`, map[string]any{"ids": int64(5)},
			`streams[0].retriever.partition_router.values: "{{ config.ids }}" must give a list of values (or a comma-separated string), got the number 5`},
		{`{type: ListPartitionRouter, values: "{{ config.ids }}", cursor_field: id}`, map[string]any{"ids": map[string]any{"a": "b"}},
			`streams[0].retriever.partition_router.values: "{{ config.ids }}" must give a list of values (or a comma-separated string), got an object`},
		{`{type: ListPartitionRouter, values: [a], cursor_field: "{{ config.field }}"}`, nil,
			`streams[0].retriever.partition_router.cursor_field: renders empty`},
		{`{type: ListPartitionRouter, values: [a], cursor_field: id, request_option: {inject_into: header, field_name: "{{ config.h }}"}}`, nil,
			`streams[0].retriever.partition_router.request_option: the field name renders empty, and a header needs a name`},
	}
	for _, tc := range cases {
		_, err := newRouter(t, tc.router, tc.config, nil, nil)
		var e *failure.Error
		if !errors.As(err, &e) || e.Failure != "config_error" || e.Message != tc.want {
			t.Errorf("%s\n got %v\nwant %s", tc.router, err, tc.want)
		}
	}
}

// The reference's request option vectors: the value goes where the option
// says, under a name rendered from parameters or config.
func TestListRequestOptions(t *testing.T) {
	config := map[string]any{"partition_name": "config_partition", "k": "owner"}
	cases := []struct {
		name, option string
		want         *request.Parts
	}{
		{"request parameter", `{inject_into: request_parameter, field_name: owner_resource}`,
			parts(func(p *request.Parts) { p.Query.Set("owner_resource", "customer") })},
		{"header", `{inject_into: header, field_name: owner_resource}`,
			parts(func(p *request.Parts) { p.Headers.Set("owner_resource", "customer") })},
		{"JSON body", `{inject_into: body_json, field_name: owner_resource}`,
			parts(func(p *request.Parts) { p.BodyJSON = map[string]any{"owner_resource": "customer"} })},
		{"nested JSON body", `{inject_into: body_json, field_path: [data, "{{ config.k }}"]}`,
			parts(func(p *request.Parts) { p.BodyJSON = map[string]any{"data": map[string]any{"owner": "customer"}} })},
		{"form body", `{inject_into: body_data, field_name: owner_resource}`,
			parts(func(p *request.Parts) { p.BodyData.Set("owner_resource", "customer") })},
		// The CDK's factory builds the option without the router's
		// parameters (its unit test passes them): the name renders empty.
		{"name from parameters", `{inject_into: request_parameter, field_name: "{{ parameters['partition_name'] }}"}`,
			parts(func(p *request.Parts) { p.Query.Set("", "customer") })},
		{"name from config", `{inject_into: request_parameter, field_name: "{{ config['partition_name'] }}"}`,
			parts(func(p *request.Parts) { p.Query.Set("config_partition", "customer") })},
	}
	for _, tc := range cases {
		r := mustRouter(t, `{type: ListPartitionRouter, values: [customer], cursor_field: owner_resource, $parameters: {partition_name: parameters_partition}, request_option: `+tc.option+`}`, config, nil, nil)
		sameRequest(t, tc.name, injected(t, all(t, r)[0]), tc.want)
	}
}

// An empty value injects nothing, as in the reference; 0 and false are
// sent (the reference skips every falsy value, so a partition 0 would
// silently read the unfiltered endpoint).
func TestEmptyValuesAreNotInjected(t *testing.T) {
	r := mustRouter(t, `{type: ListPartitionRouter, values: "{{ config['values'] }}", cursor_field: v, request_option: {inject_into: request_parameter, field_name: v}}`,
		map[string]any{"values": []any{"", int64(0), false, nil, []any{}}}, nil, nil)
	var got []string
	for _, p := range all(t, r) {
		full, err := injected(t, p).FullURL()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, full)
	}
	want := "[https://api.example.com/child https://api.example.com/child?v=0 https://api.example.com/child?v=false https://api.example.com/child https://api.example.com/child]"
	if fmt.Sprint(got) != want {
		t.Errorf("got  %v\nwant %s", got, want)
	}
}

// A partition's option clashing with the requester's own parameter fails
// the request, naming the option, as the reference refuses duplicates.
func TestInjectedKeyAlreadySet(t *testing.T) {
	r := mustRouter(t, `{type: ListPartitionRouter, values: [a], cursor_field: id, request_option: {inject_into: request_parameter, field_name: id}}`, nil, nil, nil)
	p := request.New("GET", "https://api.example.com/child")
	if err := p.SetQuery("id", "mine"); err != nil {
		t.Fatal(err)
	}
	err := all(t, r)[0].Inject(p)
	if err == nil || err.Error() != `streams[0].retriever.partition_router.request_option: query parameter "id" is set twice` {
		t.Errorf("got %v", err)
	}
}

func TestStopsWhenTheConsumerStops(t *testing.T) {
	r := mustRouter(t, `{type: ListPartitionRouter, values: [a, b, c], cursor_field: id}`, nil, nil, nil)
	n := 0
	for range r.Partitions(context.Background()) {
		if n++; n == 2 {
			break
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, err := range r.Partitions(ctx) {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("a cancelled read gives %v", err)
		}
	}
}
