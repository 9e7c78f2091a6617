package manifest

import (
	"strings"
	"testing"
)

// load loads good with one replacement applied.
func loadWith(t *testing.T, from, to string) (*Source, error) {
	t.Helper()
	src := strings.Replace(good, from, to, 1)
	if src == good {
		t.Fatalf("replacement %q did not apply", from)
	}
	return Load(parse(t, src))
}

func TestUnknownFieldsAreWarnedOrRefused(t *testing.T) {
	src, err := loadWith(t, "http_method: GET}", "http_method: GET, authenticatr: {type: NoAuth}, $parameters: {name: s, page: 1}}")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`streams[0].retriever.requester.authenticatr: HttpRequester has no field "authenticatr" (did you mean authenticator?); it is ignored`}
	if strings.Join(src.Warnings, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings:\n got %q\nwant %q", src.Warnings, want)
	}
	// Airbyte's schema refuses unknown top-level fields (additionalProperties: false).
	_, err = loadWith(t, "check: {stream_names: [s]}", "check: {stream_names: [s]}\nstrams: []")
	if err == nil || err.Error() != `manifest.strams: DeclarativeSource has no field "strams" (did you mean streams?)` {
		t.Errorf("top-level typo: %v", err)
	}
	// The same unknown field in several streams is one warning.
	two := good + `  - type: DeclarativeStream
    name: t
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: "https://a", path: /t, colour: red}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
`
	two = strings.Replace(two, "path: /s, http_method: GET}", "path: /s, http_method: GET, colour: blue}", 1)
	loaded, err := Load(parse(t, two))
	if err != nil {
		t.Fatal(err)
	}
	want = []string{`streams[0].retriever.requester.colour: HttpRequester has no field "colour"; it is ignored (also at 1 other place)`}
	if strings.Join(loaded.Warnings, "\n") != strings.Join(want, "\n") {
		t.Errorf("grouped warnings:\n got %q\nwant %q", loaded.Warnings, want)
	}
}

func TestIntegralFloatsWhereIntegersAreExpected(t *testing.T) {
	src, err := loadWith(t, "field_path: [data]}}", `field_path: [data]}}
      paginator: {type: DefaultPaginator, pagination_strategy: {type: PageIncrement, page_size: 50.0, start_from_page: 1.0}}`)
	if err != nil {
		t.Fatal(err)
	}
	p := src.Streams[0].Retriever.Paginator
	if v, _ := p.PageSize.Eval(nil); v != int64(50) || p.StartFromPage != 1 {
		t.Errorf("page_size %v (%T), start_from_page %d", v, v, p.StartFromPage)
	}
	src, err = loadWith(t, "http_method: GET}", `http_method: GET, error_handler: {type: DefaultErrorHandler, max_retries: 3.0,
        response_filters: [{type: HttpResponseFilter, action: RETRY, http_codes: [500.0, 404]}]}}`)
	if err != nil {
		t.Fatal(err)
	}
	eh := src.Streams[0].Retriever.Requester.ErrorHandler
	if retries, _ := eh.MaxRetries.Eval(nil); retries != int64(3) || len(eh.Filters) != 1 || eh.Filters[0].HTTPCodes[0] != 404 || eh.Filters[0].HTTPCodes[1] != 500 {
		t.Errorf("error handler %+v", eh)
	}
	for from, to := range map[string]string{
		"max_retries: 2.5":    "streams[0].retriever.requester.error_handler.max_retries: must be a whole number, got 2.5",
		"http_codes: [500.5]": "streams[0].retriever.requester.error_handler.response_filters[0].http_codes[0]: must be a whole number, got 500.5",
	} {
		_, err := loadWith(t, "http_method: GET}", "http_method: GET, error_handler: {type: DefaultErrorHandler, "+from+", response_filters: [{type: HttpResponseFilter, action: RETRY, http_codes: [500]}]}}")
		if strings.Contains(from, "http_codes") {
			_, err = loadWith(t, "http_method: GET}", "http_method: GET, error_handler: {type: DefaultErrorHandler, response_filters: [{type: HttpResponseFilter, action: RETRY, "+from+"}]}}")
		}
		if err == nil || err.Error() != to {
			t.Errorf("%s: got %v, want %s", from, err, to)
		}
	}
	_, err = loadWith(t, "field_path: [data]}}", `field_path: [data]}}
      paginator: {type: DefaultPaginator, pagination_strategy: {type: OffsetIncrement, page_size: 12.5}}`)
	if err == nil || err.Error() != "streams[0].retriever.paginator.pagination_strategy.page_size: must be a whole number, got 12.5" {
		t.Errorf("fractional page size: %v", err)
	}
}

func TestBackoffRegexCompiledAtLoad(t *testing.T) {
	handler := func(regex string) string {
		return "http_method: GET, error_handler: {type: DefaultErrorHandler, backoff_strategies: [{type: WaitTimeFromHeader, header: X-Wait, regex: '" + regex + "'}]}}"
	}
	src, err := loadWith(t, "http_method: GET}", handler(`(?<=wait=)(?P<secs>\d+)`))
	if err != nil {
		t.Fatal(err)
	}
	if b := src.Streams[0].Retriever.Requester.ErrorHandler.Backoff[0]; b.Regex == nil {
		t.Errorf("regex not compiled: %+v", b)
	}
	_, err = loadWith(t, "http_method: GET}", handler(`(\d+`))
	if err == nil || !strings.HasPrefix(err.Error(), `streams[0].retriever.requester.error_handler.backoff_strategies[0].regex: "(\\d+" is not a regular expression: `) {
		t.Errorf("bad regex: %v", err)
	}
}

func TestRequestBodyForms(t *testing.T) {
	cases := map[string]func(r *Requester) bool{
		"{type: RequestBodyJsonObject, value: {a: '{{ config.a }}', n: 1}}": func(r *Requester) bool {
			m, ok := r.BodyJSON.(map[string]any)
			return ok && m["n"] == int64(1) && r.BodyData == nil
		},
		"{type: RequestBodyUrlEncodedForm, value: {a: x}}": func(r *Requester) bool {
			m, ok := r.BodyData.(*Mapping)
			return ok && len(m.Keys) == 1 && r.BodyJSON == nil
		},
		"{type: RequestBodyPlainText, value: 'hello {{ config.a }}'}": func(r *Requester) bool { return r.BodyText != nil },
		"{type: RequestBodyGraphQL, value: {query: '{ users { id } }', variables: {n: 1}}}": func(r *Requester) bool {
			m, ok := r.BodyJSON.(map[string]any)
			return ok && m["query"] != nil && m["variables"] != nil
		},
	}
	for body, check := range cases {
		src, err := loadWith(t, "http_method: GET}", "http_method: POST, request_body: "+body+"}")
		if err != nil {
			t.Errorf("%s: %v", body, err)
			continue
		}
		if !check(src.Streams[0].Retriever.Requester) {
			t.Errorf("%s: decoded as %+v", body, src.Streams[0].Retriever.Requester)
		}
	}
	_, err := loadWith(t, "http_method: GET}", "http_method: POST, request_body_json: {a: 1}, request_body: {type: RequestBodyPlainText, value: x}}")
	if err == nil || err.Error() != "streams[0].retriever.requester: request_body, request_body_json and request_body_data set more than one body: keep one" {
		t.Errorf("two bodies: %v", err)
	}
}

func TestOptionalAsInTheReference(t *testing.T) {
	src, err := loadWith(t, "field_path: [data]}}", `field_path: [data]}}
      paginator: {type: DefaultPaginator, pagination_strategy: {type: PageIncrement, start_from_page: 0}, page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}}`)
	if err != nil {
		t.Fatalf("PageIncrement without page_size: %v", err)
	}
	if src.Streams[0].Retriever.Paginator.PageSize != nil {
		t.Error("no page size expected")
	}
}

// $parameters whose values are components are handed down as copies: two
// such parameters must not come to hold each other (found by FuzzManifest).
func TestComponentParametersDoNotShareOrCycle(t *testing.T) {
	m := parse(t, `
streams:
  - type: DeclarativeStream
    $parameters:
      a: {type: NoAuth}
      b: {type: BearerAuthenticator, api_token: x}
    retriever: {type: SimpleRetriever, requester: {type: HttpRequester, url_base: "https://a"}, record_selector: {extractor: {field_path: []}}}
`)
	Propagate(m)
	req := m["streams"].([]any)[0].(map[string]any)["retriever"].(map[string]any)["requester"].(map[string]any)
	b := req["b"].(map[string]any)
	if _, cycle := b["a"].(map[string]any)["b"]; cycle {
		t.Fatal("parameter b holds a, which holds b")
	}
}
