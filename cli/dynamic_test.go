package cli

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// dynamicAPI lists tables at /tables and serves rows at /tables/<id>/rows.
func dynamicAPI(t *testing.T) *api {
	return newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		switch {
		case r.URL.Path == "/tables":
			fmt.Fprint(w, `{"tables":[{"name":"alpha","id":1},{"name":"beta","id":2}]}`)
		case strings.HasSuffix(r.URL.Path, "/rows"):
			fmt.Fprintf(w, `{"rows":[{"table":%q,"days":%q}]}`, r.URL.Path, r.URL.Query().Get("days"))
		default:
			fmt.Fprint(w, `{"rows":[]}`)
		}
	})
}

func dynamicManifest(url, resolvers string) string {
	return fmt.Sprintf(`version: 6.0.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [static]}
definitions:
  template:
    type: DeclarativeStream
    name: placeholder
    primary_key: []
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: %[1]q, path: /placeholder}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [rows]}}
streams:
  - type: DeclarativeStream
    name: static
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: %[1]q, path: /static}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [rows]}}
dynamic_streams:
%[2]s
`, url, indent(resolvers, 2))
}

const httpTables = `- type: DynamicDeclarativeStream
  name: tables
  stream_template: {$ref: "#/definitions/template"}
  components_resolver:
    type: HttpComponentsResolver
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: "URL", path: /tables}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [tables]}}
    components_mapping:
      - {type: ComponentMappingDefinition, field_path: [name], value: "{{ components_values.name }}"}
      - {type: ComponentMappingDefinition, field_path: [retriever, requester, path], value: "/tables/{{ components_values['id'] }}/rows"}`

const configReports = `- type: DynamicDeclarativeStream
  name: reports
  stream_template: {$ref: "#/definitions/template"}
  components_resolver:
    type: ConfigComponentsResolver
    stream_config: {type: StreamConfig, configs_pointer: [reports], default_values: [{name: yearly, days: 365}]}
    components_mapping:
      - {type: ComponentMappingDefinition, field_path: [name], value: "report_{{ components_values.name }}"}
      - {type: ComponentMappingDefinition, field_path: [retriever, requester, path], value: "/reports/{{ components_values.name }}/rows"}
      - {type: ComponentMappingDefinition, field_path: [retriever, requester, request_parameters, days], value: "{{ components_values.days }}", create_or_update: true}
      - {type: ComponentMappingDefinition, field_path: [primary_key], value: "[id, day]", condition: "{{ components_values.days > 1 }}"}`

const parametrized = `- type: DynamicDeclarativeStream
  name: listed
  stream_template: {$ref: "#/definitions/template"}
  components_resolver:
    type: ParametrizedComponentsResolver
    stream_parameters:
      type: StreamParametersDefinition
      list_of_parameters_for_stream: [{stream: one, path: /one/rows}, {stream: two, path: /two/rows}]
    components_mapping:
      - {type: ComponentMappingDefinition, field_path: [name], value: "{{ components_values.stream }}"}
      - {type: ComponentMappingDefinition, field_path: [retriever, requester, path], value: "{{ components_values.path }}"}`

// catalogNames lists the stream names and primary keys a discover printed.
func catalogNames(t *testing.T, res result) []string {
	t.Helper()
	cats := res.ofType("CATALOG")
	if res.code != 0 || len(cats) != 1 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	var out []string
	for _, s := range cats[0]["catalog"].(map[string]any)["streams"].([]any) {
		sm := s.(map[string]any)
		out = append(out, fmt.Sprintf("%s %v", sm["name"], sm["source_defined_primary_key"]))
	}
	return out
}

func TestDynamicStreamsInDiscover(t *testing.T) {
	a := dynamicAPI(t)
	m := dynamicManifest(a.URL, strings.ReplaceAll(httpTables, "URL", a.URL)+"\n"+configReports+"\n"+parametrized)
	c := newConnector(t, m, map[string]any{"reports": []any{map[string]any{"name": "daily", "days": 1}, map[string]any{"name": "weekly", "days": 7}}})
	equalLists(t, "streams", catalogNames(t, discover(c, t)), []string{
		"static <nil>", "alpha <nil>", "beta <nil>", "report_daily <nil>", "report_weekly [[id] [day]]", "report_yearly [[id] [day]]", "one <nil>", "two <nil>",
	})
	equalLists(t, "requests", a.lines(), []string{"GET /tables"})
}

func TestDynamicStreamsRead(t *testing.T) {
	a := dynamicAPI(t)
	m := dynamicManifest(a.URL, strings.ReplaceAll(httpTables, "URL", a.URL)+"\n"+configReports)
	c := newConnector(t, m, map[string]any{"reports": map[string]any{"name": "weekly", "days": 7}}, "beta", "report_weekly", "report_yearly")
	res := c.read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	// The dynamic streams are made first; then the streams are read at once.
	lines := a.lines()
	equalLists(t, "first request", lines[:1], []string{"GET /tables"})
	equalSorted(t, "requests", lines[1:], []string{"GET /tables/2/rows", "GET /reports/weekly/rows?days=7", "GET /reports/yearly/rows?days=365"})
	equalLists(t, "beta", res.records("beta"), []string{`{"days":"","table":"/tables/2/rows"}`})
	equalLists(t, "weekly", res.records("report_weekly"), []string{`{"days":"7","table":"/reports/weekly/rows"}`})
	equalLists(t, "statuses", res.statuses("report_yearly"), []string{"STARTED", "RUNNING", "COMPLETE"})
}

func TestDynamicStreamsCheck(t *testing.T) {
	a := dynamicAPI(t)
	m := dynamicManifest(a.URL, strings.ReplaceAll(httpTables, "URL", a.URL))
	m = strings.Replace(m, "check: {type: CheckStream, stream_names: [static]}",
		"check: {type: CheckStream, stream_names: [static], dynamic_streams_check_configs: [{type: DynamicStreamCheckConfig, dynamic_stream_name: tables, stream_count: 1}]}", 1)
	res := newConnector(t, m, nil).check(t)
	status := res.ofType("CONNECTION_STATUS")
	if len(status) != 1 || status[0]["connectionStatus"].(map[string]any)["status"] != "SUCCEEDED" {
		t.Fatalf("check: %s", res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{"GET /tables", "GET /static", "GET /tables/1/rows"})

	m = strings.Replace(m, "dynamic_stream_name: tables", "dynamic_stream_name: nope", 1)
	res = newConnector(t, m, nil).check(t)
	status = res.ofType("CONNECTION_STATUS")
	if len(status) != 1 || status[0]["connectionStatus"].(map[string]any)["message"] != "dynamic stream nope is not defined in the manifest's dynamic_streams" {
		t.Errorf("unknown dynamic stream: %s", res.stdout)
	}
}

func TestDynamicStreamsErrors(t *testing.T) {
	a := dynamicAPI(t)
	// Two config items with one name make two streams of one name.
	m := dynamicManifest(a.URL, configReports)
	c := newConnector(t, m, map[string]any{"reports": []any{map[string]any{"name": "yearly", "days": 1}}})
	res := discover(c, t)
	errs := res.errors()
	want := `dynamic_streams[0] made a stream named "report_yearly", a name another stream already has; stream names must be unique`
	if res.code != 1 || len(errs) != 1 || errs[0]["message"] != want || errs[0]["failure_type"] != "config_error" {
		t.Errorf("duplicate: exit %d %v", res.code, errs)
	}
	// A condition is for config resolvers only.
	bad := strings.Replace(strings.ReplaceAll(httpTables, "URL", a.URL), `value: "{{ components_values.name }}"}`, `value: "{{ components_values.name }}", condition: "{{ true }}"}`, 1)
	res = discover(newConnector(t, dynamicManifest(a.URL, bad), nil), t)
	errs = res.errors()
	if res.code != 1 || len(errs) != 1 || !strings.Contains(errs[0]["message"].(string), "dynamic_streams[0].components_resolver.components_mapping[0].condition: is only supported by ConfigComponentsResolver") {
		t.Errorf("condition on HTTP resolver: exit %d %v", res.code, errs)
	}
	// A custom component of the template is refused at load, named by its
	// path, where custom code is not permitted.
	t.Setenv("AIRBYTE_ENABLE_UNSAFE_CODE", "")
	custom := strings.Replace(dynamicManifest(a.URL, configReports), "    primary_key: []", "    primary_key: []\n    transformations: [{type: CustomTransformation, class_name: source_x.components.Fix}]", 1)
	res = discover(newConnector(t, custom, nil), t)
	errs = res.errors()
	if res.code != 1 || len(errs) != 1 || !strings.Contains(errs[0]["message"].(string), "dynamic_streams[0].stream_template.transformations[0]: "+notPermittedText) {
		t.Errorf("custom in template: exit %d %v", res.code, errs)
	}
}

// Custom components run only where Airbyte's runtime lets them run (the
// image's own, or AIRBYTE_ENABLE_UNSAFE_CODE): otherwise they are refused
// with the CDK's words and their path. A class_name on a built-in type is
// not custom code: the CDK builds the typed component.
func TestCustomComponentsNeedPermission(t *testing.T) {
	t.Setenv("AIRBYTE_ENABLE_UNSAFE_CODE", "false")
	notPermitted := ": Custom connector code is not permitted in this environment. If you need to run custom code, please ask your administrator to set the `AIRBYTE_ENABLE_UNSAFE_CODE` environment variable to 'true' in your Airbyte environment. If you see this message in Airbyte Cloud, your workspace does not allow executing custom connector code."
	for extra, want := range map[string]string{
		"transformations: [{type: CustomTransformation, class_name: source_x.components.Fix}]":    "streams[0].transformations[0]" + notPermitted,
		"schema_loader: {type: CustomSchemaLoader, class_name: source_x.components.Schema}":       "streams[0].schema_loader" + notPermitted,
		"state_migrations: [{class_name: source_x.components.Migrate}]":                           "invalid manifest: streams[0].state_migrations[0].type: is required beside class_name source_x.components.Migrate: this place has no default custom type",
		"transformations: [{type: AddFields, fields: [{path: [a], value: b}], class_name: Evil}]": "",
	} {
		c := newConnector(t, itemsStream("http://127.0.0.1:1", "", "", extra), nil)
		res := discover(c, t)
		errs := res.errors()
		if want == "" {
			if res.code != 0 || len(errs) != 0 {
				t.Errorf("%s: exit %d %v", extra, res.code, errs)
			}
			continue
		}
		if res.code != 1 || len(errs) != 1 || errs[0]["message"] != want || errs[0]["failure_type"] != "config_error" {
			t.Errorf("%s:\n got exit %d %v\nwant %q", extra, res.code, errs, want)
		}
	}
}

// An HttpComponentsResolver whose retriever has a partition router reads
// every partition, each with its request options, and its mappings see the
// partition as stream_slice (the reference iterates the retriever's
// slices).
func TestHttpComponentsResolverReadsEveryPartition(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		switch r.URL.Path {
		case "/tables":
			fmt.Fprintf(w, `{"tables":[{"name":"t_%s"}]}`, r.URL.Query().Get("region"))
		default:
			fmt.Fprint(w, `{"rows":[]}`)
		}
	})
	resolver := `- type: DynamicDeclarativeStream
  name: tables
  stream_template: {$ref: "#/definitions/template"}
  components_resolver:
    type: HttpComponentsResolver
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: "` + a.URL + `", path: /tables}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [tables]}}
      partition_router:
        type: ListPartitionRouter
        cursor_field: region
        values: [us, eu]
        request_option: {type: RequestOption, inject_into: request_parameter, field_name: region}
    components_mapping:
      - {type: ComponentMappingDefinition, field_path: [name], value: "{{ components_values.name }}_{{ stream_slice.region }}"}
      - {type: ComponentMappingDefinition, field_path: [retriever, requester, path], value: "/{{ stream_partition.region }}/rows"}`
	c := newConnector(t, dynamicManifest(a.URL, resolver), nil, "t_eu_eu")
	equalLists(t, "streams", catalogNames(t, discover(c, t)), []string{"static <nil>", "t_us_us <nil>", "t_eu_eu <nil>"})
	equalLists(t, "discover requests", a.lines(), []string{"GET /tables?region=us", "GET /tables?region=eu"})
	a.mu.Lock()
	a.reqs = nil
	a.mu.Unlock()
	if res := c.read(t); res.code != 0 {
		t.Fatalf("read: exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "read requests", a.lines(), []string{"GET /tables?region=us", "GET /tables?region=eu", "GET /eu/rows"})
}

// The builder's full resolve lists the manifest's streams marked with a null
// dynamic_stream_name, then the streams each dynamic stream makes, at most
// __test_read_config.max_streams of each, marked with its name.
func TestBuilderFullResolveManifestListsTheStreamsDynamicStreamsMake(t *testing.T) {
	a := dynamicAPI(t)
	m, _ := yamlToMap(dynamicManifest(a.URL, strings.ReplaceAll(httpTables, "URL", a.URL)+"\n"+parametrized))
	c := newConnector(t, "", map[string]any{"__command": "full_resolve_manifest", "__injected_declarative_manifest": m,
		"__test_read_config": map[string]any{"max_streams": 1}}, "static")
	res := runCLI(t, "read", "--config", c.config, "--catalog", c.catalog)
	recs := res.ofType("RECORD")
	if res.code != 0 || len(recs) != 1 || len(res.msgs) != 1 || recs[0]["record"].(map[string]any)["stream"] != "full_resolve_manifest" {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	manifest := recs[0]["record"].(map[string]any)["data"].(map[string]any)["manifest"].(map[string]any)
	var got []string
	for _, s := range manifest["streams"].([]any) {
		sm := s.(map[string]any)
		requester := sm["retriever"].(map[string]any)["requester"].(map[string]any)
		got = append(got, fmt.Sprintf("%s %s %v %v", sm["type"], sm["name"], requester["path"], sm["dynamic_stream_name"]))
	}
	equalLists(t, "streams", got, []string{
		"DeclarativeStream static /static <nil>",
		"DeclarativeStream alpha /tables/1/rows tables",
		"DeclarativeStream one /one/rows listed",
	})
	if len(manifest["dynamic_streams"].([]any)) != 2 || manifest["check"] == nil {
		t.Errorf("the rest of the manifest is not the resolved manifest: %v", manifest)
	}
	equalLists(t, "requests", a.lines(), []string{"GET /tables"})
}

// CheckDynamicStream with use_check_availability: false makes the streams
// (the resolver's request) and reads none, as Airbyte's check does; with
// no stream made, check fails.
func TestCheckDynamicStreamWithoutAvailability(t *testing.T) {
	a := dynamicAPI(t)
	m := dynamicManifest(a.URL, strings.ReplaceAll(httpTables, "URL", a.URL))
	m = strings.Replace(m, "check: {type: CheckStream, stream_names: [static]}",
		"check: {type: CheckDynamicStream, stream_count: 2, use_check_availability: false}", 1)
	res := newConnector(t, m, nil).check(t)
	if got := res.stdout; res.code != 0 || !strings.Contains(got, `"connectionStatus":{"status":"SUCCEEDED"}`) {
		t.Fatalf("check: exit %d: %s", res.code, got)
	}
	equalLists(t, "requests", a.lines(), []string{"GET /tables"})

	m = strings.Replace(m, "check: {type: CheckDynamicStream, stream_count: 2, use_check_availability: false}",
		"check: {type: CheckDynamicStream, stream_count: 2}", 1)
	a.reqs = nil
	if res := newConnector(t, m, nil).check(t); !strings.Contains(res.stdout, `"SUCCEEDED"`) {
		t.Fatalf("check: %s", res.stdout)
	}
	equalLists(t, "requests with availability", a.lines(), []string{"GET /tables", "GET /static", "GET /tables/1/rows"})
}

// Only the HTTP resolver's mappings have a stream_slice (and its aliases), as
// the CDK's resolvers evaluate them; a config or parametrized resolver's
// mapping sees config, parameters, components_values and the template, and
// one that names stream_slice fails as undeclared.
func TestResolverMappingsSeeASliceOnlyFromHTTP(t *testing.T) {
	a := dynamicAPI(t)
	params := func(resolver string) string {
		return strings.Replace(resolver, "  components_resolver:\n", "  components_resolver:\n    $parameters: {rp: p}\n", 1)
	}
	probe := func(path, value string) string {
		return "\n      - {type: ComponentMappingDefinition, field_path: " + path + ", value: \"" + value + "\", create_or_update: true}"
	}
	// The HTTP resolver sets only what the template has (its path); the
	// config resolver creates the request parameters.
	http := params(strings.ReplaceAll(httpTables, "URL", a.URL)) + probe("[retriever, requester, path]",
		"/{{ stream_slice.get('x', 'none') }}/{{ stream_partition | length }}/{{ parameters.rp }}/{{ stream_template_config.name }}")
	query := "{{ {'rp': parameters.rp, 'tpl': stream_template_config.name} }}"
	m := dynamicManifest(a.URL, http+"\n"+params(configReports)+probe("[retriever, requester, request_parameters]", query)+"\n"+
		params(parametrized)+probe("[retriever, requester, path]", "/{{ parameters.rp }}/{{ stream_template_config.name }}"))
	c := newConnector(t, m, map[string]any{"reports": []any{}}, "alpha", "report_yearly", "one")
	if res := c.read(t); res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalSorted(t, "requests", a.lines()[1:], []string{
		"GET /none/0/p/placeholder",
		"GET /reports/yearly/rows?rp=p&tpl=placeholder",
		"GET /p/placeholder",
	})

	c = newConnector(t, dynamicManifest(a.URL, params(configReports)+probe("[name]", "{{ stream_slice.get('x', 'none') }}")), map[string]any{"reports": []any{}}, "report_yearly")
	res := c.read(t)
	errs := res.errors()
	if res.code != 1 || len(errs) != 1 || !strings.Contains(errs[0]["message"].(string), "dynamic_streams[0].components_resolver.components_mapping[4].value: template") || !strings.HasSuffix(errs[0]["message"].(string), "uses undeclared variables: stream_slice") {
		t.Fatalf("exit %d, want one error naming the undeclared stream_slice: %s", res.code, res.stdout)
	}
}
