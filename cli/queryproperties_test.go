package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// chunkAnswer answers a request for the properties listed in its param:
// for each of ids, a record with each property requested (but id) under
// "properties" and the chunk's last property under "chunk".
func chunkAnswer(r *http.Request, param string, ids ...string) string {
	props := strings.Split(r.URL.Query().Get(param), ",")
	var recs []string
	for _, id := range ids {
		var fields []string
		for _, p := range props {
			if p != "id" {
				fields = append(fields, fmt.Sprintf(`%q:"%s-%s"`, p, p, strings.Trim(id, `"`)))
			}
		}
		recs = append(recs, fmt.Sprintf(`{"id":%s,"chunk":%q,"properties":{%s}}`, id, props[len(props)-1], strings.Join(fields, ",")))
	}
	return `{"data":[` + strings.Join(recs, ",") + `]}`
}

func TestPropertiesFromEndpointWithoutChunking(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		if r.URL.Path == "/props" {
			fmt.Fprint(w, `{"results":[{"name":"firstname"},{"name":"lastname"},{"label":"no name"},{"name":"email"}]}`)
			return
		}
		fmt.Fprint(w, chunkAnswer(r, "properties", `"1"`, `"2"`))
	})
	m := stream("contacts", "url_base: "+a.URL+`
path: /contacts
request_parameters:
  limit: "10"
  properties:
    type: QueryProperties
    property_list:
      type: PropertiesFromEndpoint
      property_field_path: ["{{ parameters.field }}"]
      $parameters: {field: name}
      retriever:
        type: SimpleRetriever
        requester: {type: HttpRequester, url_base: "`+a.URL+`", path: /props, request_parameters: {archived: "false"}}
        record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [results]}}`, "[data]", "")
	res := newConnector(t, m, nil, "contacts").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{
		"GET /props?archived=false",
		"GET /contacts?limit=10&properties=firstname%2Clastname%2Cemail",
	})
	equalLists(t, "records", rawRecords(res, "contacts"), []string{
		`{"id":"1","chunk":"email","properties":{"firstname":"firstname-1","lastname":"lastname-1","email":"email-1"}}`,
		`{"id":"2","chunk":"email","properties":{"firstname":"firstname-2","lastname":"lastname-2","email":"email-2"}}`,
	})
	if !strings.Contains(res.stdout, `Stream contacts: 1 record(s) of streams[0].retriever.requester.request_parameters.properties.property_list have no text at property_field_path \"name\"; they name no property`) {
		t.Errorf("no warning for the record without a name:\n%s", res.stdout)
	}
}

func TestPropertiesEndpointFailureFailsTheStream(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		if r.URL.Path == "/props" {
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `{"message":"no scope"}`)
			return
		}
		fmt.Fprint(w, `{"data":[]}`)
	})
	m := stream("contacts", "url_base: "+a.URL+`
path: /contacts
request_parameters:
  properties:
    type: QueryProperties
    property_list:
      type: PropertiesFromEndpoint
      property_field_path: [name]
      retriever:
        type: SimpleRetriever
        requester: {type: HttpRequester, url_base: "`+a.URL+`", path: /props}
        record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}`, "[data]", "")
	res := newConnector(t, m, nil, "contacts").read(t)
	equalLists(t, "requests", a.lines(), []string{"GET /props"})
	errs := res.errors()
	if res.code == 0 || len(errs) != 2 || !strings.HasSuffix(errs[0]["message"].(string), "(reading the property names of streams[0].retriever.requester.request_parameters.properties.property_list)") ||
		!strings.HasPrefix(errs[0]["message"].(string), "stream contacts: ") {
		t.Fatalf("exit %d, errors %v", res.code, errs)
	}
	if got := res.statuses("contacts"); strings.Join(got, ",") != "STARTED,RUNNING,INCOMPLETE" {
		t.Errorf("statuses %v", got)
	}
}

func TestPropertyChunkingByCount(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		fmt.Fprint(w, chunkAnswer(r, "fields", "1", "2"))
	})
	m := stream("ads", "url_base: "+a.URL+`
path: /ads
request_parameters:
  fields:
    type: QueryProperties
    property_list: [a, b, c, d, e]
    always_include_properties: [id]
    property_chunking: {type: PropertyChunking, property_limit_type: property_count, property_limit: 2}`, "[data]", "")
	res := newConnector(t, m, nil, "ads").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{
		"GET /ads?fields=id%2Ca%2Cb",
		"GET /ads?fields=id%2Cc%2Cd",
		"GET /ads?fields=id%2Ce",
	})
	// Records merge by the default key, id (a number here: Airbyte fails on it).
	equalLists(t, "records", rawRecords(res, "ads"), []string{
		`{"id":1,"chunk":"e","properties":{"a":"a-1","b":"b-1","c":"c-1","d":"d-1","e":"e-1"}}`,
		`{"id":2,"chunk":"e","properties":{"a":"a-2","b":"b-2","c":"c-2","d":"d-2","e":"e-2"}}`,
	})
}

func TestPropertyChunkingByCharactersMergesDeep(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		fmt.Fprint(w, chunkAnswer(r, "properties", `"x"`, `"y"`))
	})
	// größe counts 5 characters (+3 for the encoded comma): with ab, 13.
	m := stream("deals", "url_base: "+a.URL+`
path: /deals
request_parameters:
  properties:
    type: QueryProperties
    property_list: [größe, ab, cdefgh]
    always_include_properties: [id]
    property_chunking:
      type: PropertyChunking
      property_limit_type: characters
      property_limit: 13
      record_merge_strategy: {type: GroupByKeyMergeStrategy, key: [id]}`, "[data]", "")
	res := newConnector(t, m, nil, "deals").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{
		"GET /deals?properties=id%2Cgr%C3%B6%C3%9Fe%2Cab",
		"GET /deals?properties=id%2Ccdefgh",
	})
	equalLists(t, "records", rawRecords(res, "deals"), []string{
		`{"id":"x","chunk":"cdefgh","properties":{"größe":"größe-x","ab":"ab-x","cdefgh":"cdefgh-x"}}`,
		`{"id":"y","chunk":"cdefgh","properties":{"größe":"größe-y","ab":"ab-y","cdefgh":"cdefgh-y"}}`,
	})
}

func TestPropertyChunkingWithoutMergeKey(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		switch r.URL.Query().Get("properties") {
		case "a":
			fmt.Fprint(w, `{"data":[{"id":"1","day":"d","a":1},{"a":"orphan"},{"id":"2","day":"","a":2}]}`)
		default:
			fmt.Fprint(w, `{"data":[{"id":"1","day":"d","b":2,"a":{"x":1}},{"id":0,"day":"d","b":"zero id"}]}`)
		}
	})
	m := stream("s", "url_base: "+a.URL+`
path: /s
request_parameters:
  properties:
    type: QueryProperties
    property_list: [a, b]
    property_chunking:
      type: PropertyChunking
      property_limit_type: property_count
      property_limit: 1
      record_merge_strategy: {type: GroupByKeyMergeStrategy, key: [id, day]}`, "[data]", "")
	res := newConnector(t, m, nil, "s").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{"GET /s?properties=a", "GET /s?properties=b"})
	// Records without a (truthy) key come first, as they arrive; merged
	// ones after, in the order their key first came.
	equalLists(t, "records", rawRecords(res, "s"), []string{
		`{"a":"orphan"}`,
		`{"id":"2","day":"","a":2}`,
		`{"id":0,"day":"d","b":"zero id"}`,
		`{"id":"1","day":"d","a":{"x":1},"b":2}`,
	})
}

func TestPropertyChunksWithCursorPagination(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		q := r.URL.Query()
		props, cursor := q.Get("properties"), q.Get("cursor")
		next := `"p2"`
		if props == "id,a" {
			next = `"only-the-last-chunk-counts"`
		}
		if cursor == "p2" {
			next = "null"
		}
		id := map[string]string{"": "1", "p2": "2"}[cursor]
		fmt.Fprintf(w, `{"next":%s,"data":[{"id":"%s","%s":true}]}`, next, id, props[len(props)-1:])
	})
	m := stream("s", "url_base: "+a.URL+`
path: /s
request_parameters:
  properties:
    type: QueryProperties
    property_list: [a, b]
    always_include_properties: [id]
    property_chunking: {type: PropertyChunking, property_limit_type: property_count, property_limit: 1}`, "[data]", `paginator:
  type: DefaultPaginator
  pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next }}", stop_condition: "{{ not response.next }}"}
  page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: cursor}`)
	res := newConnector(t, m, nil, "s").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{
		"GET /s?properties=id%2Ca",
		"GET /s?properties=id%2Cb",
		"GET /s?cursor=p2&properties=id%2Ca",
		"GET /s?cursor=p2&properties=id%2Cb",
	})
	equalLists(t, "records", rawRecords(res, "s"), []string{`{"id":"1","a":true,"b":true}`, `{"id":"2","a":true,"b":true}`})
}

func TestPropertyChunksWithOffsetPagination(t *testing.T) {
	// The next offset counts the records of the page's last chunk, as the
	// reference's paginator reads the last response.
	pages := map[string]string{
		"0,a": `[{"id":"1","a":1},{"id":"2","a":2}]`, "0,b": `[{"id":"1","b":1},{"id":"2","b":2}]`,
		"2,a": `[{"id":"3","a":3}]`, "2,b": `[{"id":"3","b":3},{"id":"4","b":4}]`,
		"4,a": `[]`, "4,b": `[]`,
	}
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		q := r.URL.Query()
		offset := q.Get("offset")
		if offset == "" {
			offset = "0"
		}
		fmt.Fprintf(w, `{"data":%s}`, pages[offset+","+q.Get("properties")])
	})
	m := stream("s", "url_base: "+a.URL+`
path: /s
request_parameters:
  properties:
    type: QueryProperties
    property_list: [a, b]
    property_chunking: {type: PropertyChunking, property_limit_type: property_count, property_limit: 1}`, "[data]", `paginator:
  type: DefaultPaginator
  pagination_strategy: {type: OffsetIncrement, page_size: 2}
  page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: offset}`)
	res := newConnector(t, m, nil, "s").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{
		"GET /s?offset=0&properties=a", "GET /s?offset=0&properties=b",
		"GET /s?offset=2&properties=a", "GET /s?offset=2&properties=b",
		"GET /s?offset=4&properties=a", "GET /s?offset=4&properties=b",
	})
	equalLists(t, "records", rawRecords(res, "s"), []string{
		`{"id":"1","a":1,"b":1}`, `{"id":"2","a":2,"b":2}`, `{"id":"3","a":3,"b":3}`, `{"id":"4","b":4}`,
	})
}

func TestRequesterQueryPropertiesReachTemplates(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) { fmt.Fprint(w, `{"data":[{"id":"1"}]}`) })
	m := stream("s", "url_base: "+a.URL+`
path: /s
query_properties:
  type: QueryProperties
  property_list: [a, b, c]
  property_chunking: {type: PropertyChunking, property_limit_type: property_count, property_limit: 2}
request_parameters:
  select: "{{ stream_partition.extra_fields.query_properties | join('|') }}"
  n: "{{ query_properties | length }}"`, "[data]", "")
	res := newConnector(t, m, nil, "s").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{"GET /s?n=2&select=a%7Cb", "GET /s?n=1&select=c"})
	equalLists(t, "records", rawRecords(res, "s"), []string{`{"id":"1"}`})
}

func TestQueryPropertiesRefusedAtLoad(t *testing.T) {
	qp := "{type: QueryProperties, property_list: [a]}"
	fe := "{type: PropertiesFromEndpoint, property_field_path: [name], retriever: {type: SimpleRetriever, requester: {type: HttpRequester, url_base: http://x, path: /p}, record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}}}"
	const req = "streams[0].retriever.requester"
	cases := map[string]string{
		"request_parameters: {p: " + qp + ", q: " + qp + "}":                         req + ".request_parameters.q: is a second QueryProperties of the requester (the first is " + req + ".request_parameters.p): a stream may define only one, as in Airbyte",
		"request_parameters: {p: " + qp + "}\nfetch_properties_from_endpoint: " + fe: req + ".fetch_properties_from_endpoint: is a second QueryProperties of the requester (the first is " + req + ".request_parameters.p): a stream may define only one, as in Airbyte",
		"request_parameters: {p: " + qp + "}\nquery_properties: " + qp:               req + ".query_properties: is a second QueryProperties of the requester (the first is " + req + ".request_parameters.p): a stream may define only one, as in Airbyte",
		"request_parameters: {p: {type: QueryProperties, property_list: " + strings.Replace(fe, "retriever: {type: SimpleRetriever,", "retriever: {type: SimpleRetriever, partition_router: {type: ListPartitionRouter, cursor_field: x, values: [1]},", 1) + "}}": req + ".request_parameters.p.property_list.retriever.partition_router: is not run by Airbyte for the properties endpoint (it is read once, without partitions): remove it",
		"request_parameters: {p: {type: QueryProperties, property_list: [a], property_chunking: {type: PropertyChunking, property_limit_type: property_count, property_limit: -1}}}":                                                                               req + ".request_parameters.p.property_chunking.property_limit: must not be negative",
		"request_parameters: {p: {type: QueryProperties, property_list: [a], property_chunking: {type: PropertyChunking, property_limit_type: property_count, record_merge_strategy: {type: GroupByKeyMergeStrategy, key: []}}}}":                                  req + ".request_parameters.p.property_chunking.record_merge_strategy.key: must name at least one field",
	}
	for body, want := range cases {
		m := stream("s", "url_base: http://127.0.0.1:1\npath: /s\n"+body, "[data]", "")
		res := newConnector(t, m, nil, "s").read(t)
		errs := res.errors()
		if res.code == 0 || len(errs) != 1 || !strings.Contains(errs[0]["message"].(string), want) {
			t.Errorf("%s:\n got %d %v\nwant %s", body, res.code, errs, want)
		}
	}
}

// With a JsonSchemaPropertySelector, only the properties the configured
// catalog selects are requested: the keys of the configured json_schema's
// properties, after the selector's transformations (here HubSpot's form:
// schema fields named properties_<name>). check and a configured schema
// without properties request them all.
func TestPropertySelectorRequestsTheCatalogsSelectedProperties(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		fmt.Fprint(w, chunkAnswer(r, "properties", `"1"`))
	})
	conn := selectedRead(t, a, `type: QueryProperties
property_list: [firstname, lastname, email, phone]
property_chunking: {type: PropertyChunking, property_limit_type: property_count, property_limit: 2}
property_selector:
  type: JsonSchemaPropertySelector
  transformations:
    - type: KeysReplace
      old: "properties_"
      new: ""`, `{"id":{},"properties_email":{},"properties_firstname":{}}`)
	equalLists(t, "requests of the read", a.lines(), []string{"GET /contacts?properties=firstname%2Cemail"})

	before := len(a.lines())
	conn.read(t) // newConnector's catalog: json_schema {}
	conn.check(t)
	equalLists(t, "requests without a selection", a.lines()[before:], []string{
		"GET /contacts?properties=firstname%2Clastname", "GET /contacts?properties=email%2Cphone", // read
		"GET /contacts?properties=firstname%2Clastname", "GET /contacts?properties=email%2Cphone", // check's first page
	})
}

// The selector's transformations run with stream_slice None, as the CDK
// runs them (record and stream_slice=None): a condition on it holds.
func TestPropertySelectorTransformationsHaveNoSlice(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		fmt.Fprint(w, chunkAnswer(r, "properties", `"1"`))
	})
	selectedRead(t, a, `type: QueryProperties
property_list: [firstname, lastname, email, phone]
property_selector:
  type: JsonSchemaPropertySelector
  transformations:
    - type: AddFields
      condition: "{{ stream_slice is none and stream_partition is none and record.id is defined }}"
      fields: [{path: [phone], value: "x"}]`, `{"id":{},"email":{}}`)
	equalLists(t, "requests", a.lines(), []string{"GET /contacts?properties=email%2Cphone"})
}

// selectedRead reads stream contacts, whose query parameter properties is
// the QueryProperties given, with a configured catalog whose schema has
// the properties given.
func selectedRead(t *testing.T, a *api, queryProperties, properties string) *connector {
	t.Helper()
	m := stream("contacts", "url_base: "+a.URL+"\npath: /contacts\nrequest_parameters:\n  properties:\n"+indent(queryProperties, 4), "[data]", "")
	conn := newConnector(t, m, nil, "contacts")
	catalog := `{"streams":[{"stream":{"name":"contacts","json_schema":{"type":"object","properties":` + properties + `},"supported_sync_modes":["full_refresh"]},"sync_mode":"full_refresh","destination_sync_mode":"overwrite"}]}`
	res := runCLI(t, "read", "--manifest", conn.manifest, "--config", conn.config, "--catalog", writeFile(t, t.TempDir(), "catalog.json", catalog))
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	return conn
}

// A test read shows the records merged across chunks with the last chunk's
// page, where they come out, and none with the chunks before (as Airbyte's
// builder shows them).
func TestPropertyChunksInATestRead(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		fmt.Fprint(w, chunkAnswer(r, "fields", `"1"`))
	})
	m := stream("ads", "url_base: "+a.URL+`
path: /ads
request_parameters:
  fields:
    type: QueryProperties
    property_list: [a, b, c]
    always_include_properties: [id]
    property_chunking: {type: PropertyChunking, property_limit_type: property_count, property_limit: 2}`, "[data]", "")
	got, _ := rawStreamRead(t, m, nil, "ads")
	var read struct {
		Slices []struct {
			Pages []struct {
				Records []json.RawMessage `json:"records"`
				Request struct {
					URL string `json:"url"`
				} `json:"request"`
			} `json:"pages"`
		} `json:"slices"`
	}
	if err := json.Unmarshal([]byte(got), &read); err != nil || len(read.Slices) != 1 {
		t.Fatalf("StreamRead %s: %v", got, err)
	}
	var pages []string
	for _, p := range read.Slices[0].Pages {
		recs, _ := json.Marshal(p.Records)
		pages = append(pages, strings.TrimPrefix(p.Request.URL, a.URL)+" "+string(recs))
	}
	equalLists(t, "pages", pages, []string{
		"/ads?fields=id%2Ca%2Cb []",
		`/ads?fields=id%2Cc [{"id":"1","chunk":"c","properties":{"a":"a-1","b":"b-1","c":"c-1"}}]`,
	})
}
