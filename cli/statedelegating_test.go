package cli

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// wholeCursor is the full refresh stream's cursor: one slice, no request
// option, so that its state is there for the next sync to start from.
const wholeCursor = `type: DatetimeBasedCursor
cursor_field: updated_at
datetime_format: "%Y-%m-%dT%H:%M:%SZ"
start_datetime: "2024-01-01T00:00:00Z"
end_datetime: "2024-01-03T12:00:00Z"`

// delegatingStream is a StateDelegatingStream "items" (YAML, unindented)
// reading /items without state and /changes, day by day, with one.
// extra goes in the StateDelegatingStream itself.
func delegatingStream(url, extra string) string {
	return fmt.Sprintf("type: StateDelegatingStream\nname: items\n%s\nfull_refresh_stream:\n%s\nincremental_stream:\n%s", extra,
		indent(delegateOf(url, "/items", "{id: {type: integer}, updated_at: {type: string}}", wholeCursor), 2),
		indent(delegateOf(url, "/changes", "{id: {type: integer}}", dailyCursor), 2))
}

// delegateOf is one stream of delegatingStream.
func delegateOf(url, path, properties, cursor string) string {
	return fmt.Sprintf(`type: DeclarativeStream
name: items
primary_key: [id]
schema_loader: {type: InlineSchemaLoader, schema: {type: object, properties: %s}}
retriever:
  type: SimpleRetriever
  requester: {type: HttpRequester, url_base: %q, path: %s}
  record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
incremental_sync:
%s`, properties, url, path, indent(cursor, 2))
}

// delegatingManifest is a source whose one stream is delegatingStream,
// read one slice at a time so that its states come in the slices' order.
func delegatingManifest(url, extra string) string {
	return `version: 6.0.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [items]}
concurrency_level: {type: ConcurrencyLevel, default_concurrency: 1}
streams:
` + indent("- "+strings.ReplaceAll(delegatingStream(url, extra), "\n", "\n  "), 2) + "\n"
}

// itemsState is a state file holding a state of stream items.
func itemsState(t *testing.T, c *connector, state string) string {
	return writeFile(t, c.dir, "state.json", `[{"type":"STREAM","stream":{"stream_descriptor":{"name":"items"},"stream_state":`+state+`}}]`)
}

var delegatedStamps = []string{"2024-01-01T10:00:00Z", "2024-01-02T11:00:00Z", "2024-01-03T11:30:00Z"}

// changesSince are the incremental stream's requests from a state of
// 2024-01-02T10:00:00Z.
var changesSince = []string{
	"GET /changes?since=" + q("2024-01-02T10:00:00Z") + "&until=" + q("2024-01-03T09:59:59Z"),
	"GET /changes?since=" + q("2024-01-03T10:00:00Z") + "&until=" + q("2024-01-03T12:00:00Z"),
}

func TestStateDelegatingStreamReadsFullRefreshStreamWithoutState(t *testing.T) {
	a := datedAPI(t, delegatedStamps...)
	c := incrementalConnector(t, delegatingManifest(a.URL, ""), nil, "items")

	// discover, like check, has no state: Airbyte shows the full refresh stream.
	res := runCLI(t, "discover", "--manifest", c.manifest, "--config", c.config)
	want := `{"type":"CATALOG","catalog":{"streams":[{"name":"items","json_schema":{"properties":{"id":{"type":"integer"},"updated_at":{"type":"string"}},"type":"object"},"supported_sync_modes":["full_refresh","incremental"],"source_defined_cursor":true,"default_cursor_field":["updated_at"],"source_defined_primary_key":[["id"]],"is_resumable":true,"is_file_based":false}]}}` + "\n"
	if res.code != 0 || res.stdout != want {
		t.Errorf("discover:\n got: %s\nwant: %s", res.stdout, want)
	}
	if st := c.check(t).ofType("CONNECTION_STATUS"); len(st) != 1 || st[0]["connectionStatus"].(map[string]any)["status"] != "SUCCEEDED" {
		t.Errorf("check: %v", st)
	}
	equalLists(t, "check requests", a.lines(), []string{"GET /items"})

	res = c.read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "read requests", a.lines()[1:], []string{"GET /items"})
	equalLists(t, "records", res.records("items"), []string{
		`{"id":1,"updated_at":"2024-01-01T10:00:00Z"}`, `{"id":2,"updated_at":"2024-01-02T11:00:00Z"}`, `{"id":3,"updated_at":"2024-01-03T11:30:00Z"}`,
	})
	equalLists(t, "states", res.states(), []string{itemState(`{"updated_at":"2024-01-03T11:30:00Z"}`, 3)})

	// A full_refresh sync reads the full refresh stream whatever the state.
	full := newConnector(t, delegatingManifest(a.URL, ""), nil, "items")
	res = full.read(t, "--state", itemsState(t, full, `{"updated_at":"2024-01-02T10:00:00Z"}`))
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "full refresh requests", a.lines()[2:], []string{"GET /items"})
}

func TestStateDelegatingStreamReadsIncrementalStreamFromState(t *testing.T) {
	a := datedAPI(t, delegatedStamps...)
	c := incrementalConnector(t, delegatingManifest(a.URL, ""), nil, "items")
	res := c.read(t, "--state", itemsState(t, c, `{"updated_at":"2024-01-02T10:00:00Z"}`))
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), changesSince)
	equalLists(t, "records", res.records("items"), []string{`{"id":2,"updated_at":"2024-01-02T11:00:00Z"}`, `{"id":3,"updated_at":"2024-01-03T11:30:00Z"}`})
	equalLists(t, "states", res.states(), []string{
		itemState(`{"updated_at":"2024-01-02T11:00:00Z"}`, 1),
		itemState(`{"updated_at":"2024-01-03T11:30:00Z"}`, 1),
	})
}

func TestStateDelegatingStreamRetentionPeriod(t *testing.T) {
	a := datedAPI(t, delegatedStamps...)
	retention := `api_retention_period: "{{ config.get('retention', '') }}"`
	for _, tc := range []struct {
		retention string
		requests  []string
		states    []string
		warn      string
	}{
		// older than 7 days (today is past 2024): dropped, read from the start.
		{"P7D", []string{"GET /items"},
			[]string{itemState(`{}`, 0), itemState(`{"updated_at":"2024-01-03T11:30:00Z"}`, 3)},
			"Stream items: its state was read up to 2024-01-02T10:00:00Z, older than P7D ago (api_retention_period at streams[0].api_retention_period): the state is dropped and full_refresh_stream read from the start"},
		{"P36500D", changesSince,
			[]string{itemState(`{"updated_at":"2024-01-02T11:00:00Z"}`, 1), itemState(`{"updated_at":"2024-01-03T11:30:00Z"}`, 1)}, ""},
		// A period rendered empty sets no limit.
		{"", changesSince,
			[]string{itemState(`{"updated_at":"2024-01-02T11:00:00Z"}`, 1), itemState(`{"updated_at":"2024-01-03T11:30:00Z"}`, 1)}, ""},
	} {
		before := len(a.requests())
		c := incrementalConnector(t, delegatingManifest(a.URL, retention), map[string]any{"retention": tc.retention}, "items")
		res := c.read(t, "--state", itemsState(t, c, `{"updated_at":"2024-01-02T10:00:00Z"}`))
		if res.code != 0 {
			t.Fatalf("%q: exit %d: %s", tc.retention, res.code, res.stdout)
		}
		equalLists(t, tc.retention+" requests", a.lines()[before:], tc.requests)
		equalLists(t, tc.retention+" states", res.states(), tc.states)
		var warns []string
		if tc.warn != "" {
			warns = []string{tc.warn}
		}
		equalLists(t, tc.retention+" warnings", res.logs("WARN"), warns)
	}

	// A state without cursor value cannot be read from: full refresh; one
	// that is not a date is a config error naming it, before any request.
	c := incrementalConnector(t, delegatingManifest(a.URL, retention), map[string]any{"retention": "P7D"}, "items")
	before := len(a.requests())
	res := c.read(t, "--state", itemsState(t, c, `{"__ab_no_cursor_state_message":true}`))
	equalLists(t, "no cursor value", a.lines()[before:], []string{"GET /items"})
	equalLists(t, "no cursor value states", res.states(), []string{itemState(`{}`, 0), itemState(`{"updated_at":"2024-01-03T11:30:00Z"}`, 3)})
	before++
	res = c.read(t, "--state", itemsState(t, c, `{"updated_at":"yesterday"}`))
	errs := res.errors()
	want := `stream items: the state's updated_at value "yesterday" matches none of the formats %Y-%m-%dT%H:%M:%SZ (streams[0].api_retention_period cannot tell its age)`
	if res.code != 1 || len(errs) != 1 || errs[0]["message"] != want || errs[0]["failure_type"] != "config_error" || len(a.requests()) != before {
		t.Errorf("unreadable state: exit %d %v, want %q", res.code, errs, want)
	}

	// The period is rendered when the stream is built, with config and
	// parameters only: a slice variable is undeclared, as in the CDK.
	c = incrementalConnector(t, delegatingManifest(a.URL, `api_retention_period: "{{ 'P7D' if stream_slice is defined else '' }}"`), nil, "items")
	res = c.read(t, "--state", itemsState(t, c, `{"updated_at":"2024-01-02T10:00:00Z"}`))
	if errs := res.errors(); res.code != 1 || len(errs) == 0 || !strings.Contains(fmt.Sprint(errs[0]["message"]), "streams[0].api_retention_period: template") ||
		!strings.HasSuffix(fmt.Sprint(errs[0]["message"]), "uses undeclared variables: stream_slice") {
		t.Errorf("a slice in the period: exit %d %v", res.code, errs)
	}
}

func TestStateDelegatingStreamNamesMustBeEqual(t *testing.T) {
	m := strings.Replace(delegatingManifest("http://127.0.0.1:1", ""), "incremental_stream:\n      type: DeclarativeStream\n      name: items", "incremental_stream:\n      type: DeclarativeStream\n      name: item_changes", 1)
	res := runCLI(t, "discover", "--manifest", writeFile(t, t.TempDir(), "m.yaml", m), "--config", writeFile(t, t.TempDir(), "c.json", "{}"))
	errs := res.errors()
	want := `streams[0].incremental_stream.name: must equal the StateDelegatingStream's name "items", got "item_changes": full_refresh_stream and incremental_stream are two ways to read the one stream streams[0]`
	if res.code != 1 || len(errs) != 1 || !strings.Contains(errs[0]["message"].(string), want) || errs[0]["failure_type"] != "config_error" {
		t.Errorf("got exit %d %v, want %q", res.code, errs, want)
	}
}

// TestStateDelegatingParentStream: a StateDelegatingStream as the parent of
// a child with incremental_dependency is read as its full refresh stream
// until the child's state holds a parent state, then as its incremental
// stream from it.
func TestStateDelegatingParentStream(t *testing.T) {
	a := datedAPI(t, delegatedStamps...)
	m := fmt.Sprintf(`version: 6.0.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [notes]}
streams:
  - type: DeclarativeStream
    name: notes
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: %q, path: "/notes/{{ stream_partition.item }}"}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
      partition_router:
        type: SubstreamPartitionRouter
        parent_stream_configs:
          - type: ParentStreamConfig
            parent_key: id
            partition_field: item
            incremental_dependency: true
            stream:
%s
    incremental_sync:
%s
`, a.URL, indent(delegatingStream(a.URL, ""), 14), indent(wholeCursor, 6))
	c := incrementalConnector(t, m, nil, "notes")
	res := c.read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	// Partitions are read while the parent is: the order of requests varies.
	equalLists(t, "requests without state", sorted(a.lines()), []string{"GET /items", "GET /notes/1", "GET /notes/2", "GET /notes/3"})
	states := res.ofType("STATE")
	last, _ := json.Marshal(states[len(states)-1]["state"].(map[string]any)["stream"].(map[string]any)["stream_state"].(map[string]any)["parent_state"])
	if string(last) != `{"items":{"updated_at":"2024-01-03T11:30:00Z"}}` {
		t.Errorf("parent state: %s", last)
	}

	before := len(a.requests())
	state := `{"state":{"updated_at":"2024-01-02T10:00:00Z"},"states":[],"parent_state":{"items":{"updated_at":"2024-01-02T10:00:00Z"}},"use_global_cursor":false}`
	res = c.read(t, "--state", writeFile(t, c.dir, "state.json", `[{"type":"STREAM","stream":{"stream_descriptor":{"name":"notes"},"stream_state":`+state+`}}]`))
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests from a parent state", sorted(a.lines()[before:]), append(changesSince[:2:2], "GET /notes/2", "GET /notes/3"))
}

func TestStateDelegatingStreamTestReads(t *testing.T) {
	a := datedAPI(t, delegatedStamps...)
	m, err := yamlToMap(delegatingManifest(a.URL, ""))
	if err != nil {
		t.Fatal(err)
	}
	c := newConnector(t, "", map[string]any{"__command": "test_read", "__injected_declarative_manifest": m,
		"__test_read_config": map[string]any{"max_slices": 1}}, "items")
	res := runCLI(t, "read", "--config", c.config, "--catalog", c.catalog, "--state", itemsState(t, c, `{"updated_at":"2024-01-02T10:00:00Z"}`))
	recs := res.ofType("RECORD")
	if res.code != 0 || len(recs) != 1 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "test read from a state", a.lines(), changesSince[:1])
	slices := recs[0]["record"].(map[string]any)["data"].(map[string]any)["slices"].([]any)
	got, _ := json.Marshal(slices[0].(map[string]any)["state"])
	if want := `[{"data":null,"destinationStats":null,"global_":null,"sourceStats":{"recordCount":0},"stream":{"stream_descriptor":{"name":"items","namespace":null},"stream_state":{"updated_at":"2024-01-02T11:00:00Z"}},"type":"STREAM"}]`; string(got) != want {
		t.Errorf("slice state\n got: %s\nwant: %s", got, want)
	}

	file := newConnector(t, delegatingManifest(a.URL, ""), nil)
	var out, errb strings.Builder
	code := Main([]string{"test-read", "--manifest", file.manifest, "--config", file.config, "--stream", "items"}, &out, &errb, nil, "test")
	if code != 0 || !strings.Contains(out.String(), `"stream_state":{"updated_at":"2024-01-03T11:30:00Z"}`) {
		t.Errorf("test-read: exit %d: %s %s", code, out.String(), errb.String())
	}
	equalLists(t, "test-read without state", a.lines()[1:], []string{"GET /items"})
}

func sorted(l []string) []string {
	out := slices.Clone(l)
	slices.Sort(out)
	return out
}

func TestStateDelegatingStreamAsDynamicStreamTemplate(t *testing.T) {
	a := datedAPI(t, delegatedStamps...)
	m := `version: 6.0.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [one]}
definitions:
  template:
` + indent(delegatingStream(a.URL, ""), 4) + `
dynamic_streams:
  - type: DynamicDeclarativeStream
    name: listed
    stream_template: {$ref: "#/definitions/template"}
    components_resolver:
      type: ParametrizedComponentsResolver
      stream_parameters:
        type: StreamParametersDefinition
        list_of_parameters_for_stream: [{stream: one}, {stream: two}]
      components_mapping:
        - {type: ComponentMappingDefinition, field_path: [name], value: "{{ components_values.stream }}"}
        - {type: ComponentMappingDefinition, field_path: [full_refresh_stream, name], value: "{{ components_values.stream }}"}
        - {type: ComponentMappingDefinition, field_path: [incremental_stream, name], value: "{{ components_values.stream }}"}
        - {type: ComponentMappingDefinition, field_path: [full_refresh_stream, retriever, requester, path], value: "/{{ components_values.stream }}/items"}
        - {type: ComponentMappingDefinition, field_path: [incremental_stream, retriever, requester, path], value: "/{{ components_values.stream }}/changes"}
`
	c := incrementalConnector(t, m, nil, "one", "two")
	state := writeFile(t, c.dir, "state.json", `[{"type":"STREAM","stream":{"stream_descriptor":{"name":"two"},"stream_state":{"updated_at":"2024-01-02T10:00:00Z"}}}]`)
	res := c.read(t, "--state", state)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalSorted(t, "requests", a.lines(), []string{
		"GET /one/items",
		"GET /two/changes?since=" + q("2024-01-02T10:00:00Z") + "&until=" + q("2024-01-03T09:59:59Z"),
		"GET /two/changes?since=" + q("2024-01-03T10:00:00Z") + "&until=" + q("2024-01-03T12:00:00Z"),
	})
}

func TestSpecDerivedFromStateDelegatingStreamAuthenticator(t *testing.T) {
	m := `version: 6.0.0
check: {stream_names: [items]}
streams:
` + indent("- "+strings.ReplaceAll(delegatingStream("https://api.example.com", ""), "\n", "\n  "), 2) + "\n"
	m = strings.Replace(m, "path: /items}", "path: /items, authenticator: {type: BearerAuthenticator, api_token: \"{{ config['token'] }}\"}}", 1)
	got, _ := specOf(t, m)
	want := `{"connectionSpecification":{"$schema":"http://json-schema.org/draft-07/schema#","additionalProperties":true,"properties":{"token":{"airbyte_secret":true,"order":0,"title":"API Key","type":"string"}},"required":["token"],"type":"object"},"supportsDBT":false,"supportsNormalization":false}`
	if got != want {
		t.Errorf("spec\n got: %s\nwant: %s", got, want)
	}
}
