package manifest

import (
	"reflect"
	"strings"
	"testing"
)

const propsEndpoint = `{type: PropertiesFromEndpoint, property_field_path: [results, "{{ parameters.f }}"], $parameters: {f: name},
  retriever: {type: SimpleRetriever, requester: {type: HttpRequester, url_base: "https://p", path: /props},
    record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}}}`

func requesterWith(t *testing.T, fields string) (*Requester, []string, error) {
	t.Helper()
	src, err := loadWith(t, "http_method: GET}", "http_method: GET, "+fields+"}")
	if err != nil {
		return nil, nil, err
	}
	return src.Streams[0].Retriever.Requester, src.Warnings, nil
}

func TestQueryPropertiesDecoding(t *testing.T) {
	const req = "streams[0].retriever.requester"
	r, warnings, err := requesterWith(t, `request_parameters: {limit: "5", fields: {type: QueryProperties, property_list: [id, name], always_include_properties: [k]}}`)
	if err != nil {
		t.Fatal(err)
	}
	q := r.Properties
	if q == nil || q.Param != "fields" || q.Path != req+".request_parameters.fields" || !reflect.DeepEqual(q.List, []string{"id", "name"}) || q.Chunking != nil || q.FromEndpoint != nil {
		t.Fatalf("static list decoded as %+v", q)
	}
	if !reflect.DeepEqual(r.Params.Keys, []string{"limit"}) {
		t.Errorf("the QueryProperties parameter stays among the templates: %v", r.Params.Keys)
	}
	if want := req + ".request_parameters.fields.always_include_properties: does nothing without property_chunking, as in Airbyte: add these to property_list to request them"; strings.Join(warnings, "\n") != want {
		t.Errorf("warnings %q", warnings)
	}

	r, _, err = requesterWith(t, `request_parameters: {properties: {type: QueryProperties, property_list: `+propsEndpoint+`,
  property_chunking: {type: PropertyChunking, property_limit_type: characters, property_limit: 15000}}}`)
	if err != nil {
		t.Fatal(err)
	}
	q = r.Properties
	fe := q.FromEndpoint
	if fe == nil || fe.Path != req+".request_parameters.properties.property_list" || len(fe.FieldPath) != 2 || fe.Retriever == nil || fe.Parameters["f"] != "name" {
		t.Fatalf("endpoint decoded as %+v", fe)
	}
	if seg, _ := fe.FieldPath[1].Render(map[string]any{"parameters": fe.Parameters}); seg != "name" {
		t.Errorf("property_field_path[1] renders %q", seg)
	}
	if c := q.Chunking; c == nil || c.LimitType != LimitCharacters || c.Limit != 15000 || !reflect.DeepEqual(c.MergeKeys, []string{"id"}) {
		t.Errorf("chunking decoded as %+v (the default merge key is id)", c)
	}

	for strategy, keys := range map[string][]string{"key: hs_id": {"hs_id"}, "key: [end_date, pivot]": {"end_date", "pivot"}} {
		r, _, err = requesterWith(t, `query_properties: {type: QueryProperties, property_list: [a],
  property_chunking: {type: PropertyChunking, property_limit_type: property_count, property_limit: 2, record_merge_strategy: {type: GroupByKeyMergeStrategy, `+strategy+`}}}`)
		if err != nil {
			t.Fatal(err)
		}
		if q := r.Properties; q.Param != "" || q.Chunking.Limit != 2 || !reflect.DeepEqual(q.Chunking.MergeKeys, keys) {
			t.Errorf("%s: decoded as %+v %+v", strategy, q, q.Chunking)
		}
	}

	r, _, err = requesterWith(t, `fetch_properties_from_endpoint: `+propsEndpoint)
	if err != nil {
		t.Fatal(err)
	}
	if q := r.Properties; q.Param != "" || q.FromEndpoint == nil || q.Chunking != nil || q.Path != req+".fetch_properties_from_endpoint" {
		t.Errorf("fetch_properties_from_endpoint decoded as %+v", q)
	}
}

func TestQueryPropertiesRefusals(t *testing.T) {
	const qp = "streams[0].retriever.requester.request_parameters.p"
	for fields, want := range map[string]string{
		`request_parameters: {p: {type: QueryProperties, property_list: {type: PropertiesFromEndpoint, property_field_path: [name], retriever: {type: SimpleRetriever,
  requester: {type: HttpRequester, url_base: "https://p", request_parameters: {x: {type: QueryProperties, property_list: [a]}}},
  record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}}}}}`: qp + ".property_list.retriever.requester.request_parameters.x: properties of the properties endpoint are not supported: list them in its request instead",
		`request_parameters: {p: {type: QueryProperties, property_list: {type: PropertiesFromEndpoint, retriever: {}}}}`:                                                                                                    qp + ".property_list.property_field_path: is required",
		`request_parameters: {p: {type: QueryProperties, property_list: [a], property_chunking: {type: PropertyChunking, property_limit_type: words}}}`:                                                                     qp + ".property_chunking.property_limit_type",
		`request_parameters: {p: {type: QueryProperties, property_list: [a], property_chunking: {type: PropertyChunking, property_limit_type: characters, record_merge_strategy: {type: EmitPartialRecordMergeStrategy}}}}`: qp + ".property_chunking.record_merge_strategy",
	} {
		_, _, err := requesterWith(t, fields)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s:\n got %v\nwant %s", fields, err, want)
		}
	}
}

func TestQueryPropertiesWithLazyReadRefused(t *testing.T) {
	src := strings.Replace(good, "record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}",
		`record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
      partition_router:
        type: SubstreamPartitionRouter
        parent_stream_configs:
          - {type: ParentStreamConfig, parent_key: id, partition_field: pid, lazy_read_pointer: [items],
             stream: {type: DeclarativeStream, name: p, retriever: {type: SimpleRetriever, requester: {type: HttpRequester, url_base: "https://a", path: /p},
               record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}}}}`, 1)
	src = strings.Replace(src, "http_method: GET}", "http_method: GET, request_parameters: {p: {type: QueryProperties, property_list: [a]}}}", 1)
	_, err := Load(parse(t, src))
	want := "streams[0].retriever.partition_router.parent_stream_configs[0].lazy_read_pointer: cannot be used with the QueryProperties at streams[0].retriever.requester.request_parameters.p"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v\nwant %s", err, want)
	}
}
