package runtime

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"testing"
	"time"

	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/protocol"
)

// fuzzSeeds are valid manifests on the local API at url, one per family of
// components: the fuzzer mutates their decoded trees, not their bytes.
func fuzzSeeds(url string) []string {
	stream := func(requester, paginator string) string {
		return fmt.Sprintf(`version: 6.0.0
check: {type: CheckStream, stream_names: [s]}
definitions:
  base: {type: HttpRequester, url_base: "%s", path: /s}
streams:
  - type: DeclarativeStream
    name: s
    primary_key: [id]
    $parameters: {name: s, page: 1}
    retriever:
      type: SimpleRetriever
      requester:
        $ref: "#/definitions/base"
%s
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}, record_filter: {type: RecordFilter, condition: "{{ record.id > 0 }}"}}
%s
`, url, requester, paginator)
	}
	return []string{
		stream(`        authenticator: {type: BearerAuthenticator, api_token: "{{ config['key'] }}"}`, `      paginator:
        type: DefaultPaginator
        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: cursor}
        pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next }}", stop_condition: "{{ not response.next }}", page_size: 2}
        page_size_option: {type: RequestOption, inject_into: header, field_name: X-Limit}`),
		stream(`        http_method: POST
        request_body_json: {q: "{{ config['q'] }}", nested: {a: [1, 2.0]}}
        authenticator: {type: OAuthAuthenticator, token_refresh_endpoint: "`+url+`/token", client_id: id, client_secret: secret, refresh_token: "{{ config['rt'] }}", scopes: [a, b]}
        error_handler:
          type: CompositeErrorHandler
          error_handlers:
            - type: DefaultErrorHandler
              max_retries: 2
              backoff_strategies: [{type: WaitTimeFromHeader, header: Retry-After, regex: '(?P<s>\d+)', max_waiting_time_in_seconds: 5}]
              response_filters: [{type: HttpResponseFilter, action: RETRY, http_codes: [500.0], predicate: "{{ headers['x-busy'] == 'yes' }}"}]`, `      paginator:
        type: DefaultPaginator
        page_token_option: {type: RequestOption, inject_into: body_json, field_path: [page, number]}
        pagination_strategy: {type: PageIncrement, page_size: 1, start_from_page: 1, inject_on_first_request: true}`),
		stream(`        request_parameters: {fields: {type: QueryProperties, property_list: [id, name]}, q: "{{ next_page_token.next_page_token }}"}
        request_body: {type: RequestBodyUrlEncodedForm, value: {a: b}}
        authenticator:
          type: SessionTokenAuthenticator
          login_requester: {type: HttpRequester, url_base: "`+url+`", path: /login, http_method: POST, request_body: {type: RequestBodyJsonObject, value: {user: u}}}
          session_token_path: [session, id]
          expiration_duration: PT1H
          request_authentication: {type: ApiKey, inject_into: {type: RequestOption, inject_into: header, field_name: X-Session}}`, `      paginator:
        type: DefaultPaginator
        page_token_option: {type: RequestPath}
        pagination_strategy: {type: OffsetIncrement, page_size: "{{ config['n'] or 2 }}"}`),
	}
}

// Values and names the mutations draw from.
var (
	fuzzValues = []any{nil, true, false, int64(0), int64(-1), int64(1 << 40), 500.0, 50.5, 1e300, "", "x", "{{", "{{ response.next }}",
		"{{ config['missing']['deeper'] }}", "{{ headers['link']['next']['url'] }}", "(?P<n>\\d+)", "(", "#/definitions/base", "#/nowhere",
		"http://[::1", "P1D", "%Y-%m-%d", []any{}, []any{"a", 1.5}, map[string]any{},
		map[string]any{"type": "RequestOption", "inject_into": "header", "field_name": "X"},
		map[string]any{"type": "RequestPath"}, map[string]any{"$ref": "#/definitions/base"}}
	fuzzTypes []string
	fuzzNames []string
)

func init() {
	names := map[string]bool{}
	for _, k := range []string{"type", "$parameters", "$ref", "page_size", "cursor_value", "stop_condition", "inject_into", "field_name",
		"field_path", "http_codes", "max_retries", "regex", "header", "request_body", "request_parameters", "authenticator", "paginator",
		"error_handler", "streams", "check", "url_base", "path", "token_refresh_endpoint", "refresh_token_updater", "authenticatr"} {
		names[k] = true
	}
	for k := range names {
		fuzzNames = append(fuzzNames, k)
	}
	sort.Strings(fuzzNames)
	fuzzTypes = []string{"DeclarativeStream", "SimpleRetriever", "HttpRequester", "RecordSelector", "DpathExtractor", "DefaultPaginator",
		"NoPagination", "OffsetIncrement", "PageIncrement", "CursorPagination", "RequestOption", "RequestPath", "NoAuth", "BearerAuthenticator",
		"BasicHttpAuthenticator", "ApiKeyAuthenticator", "OAuthAuthenticator", "SessionTokenAuthenticator", "DefaultErrorHandler",
		"CompositeErrorHandler", "HttpResponseFilter", "WaitTimeFromHeader", "WaitUntilTimeFromHeader", "ConstantBackoffStrategy",
		"RequestBodyPlainText", "RequestBodyGraphQL", "QueryProperties", "DatetimeBasedCursor", "CustomRecordExtractor", "Nonsense"}
}

// node is a place in a decoded manifest: a map entry or a list item.
type node struct {
	m   map[string]any
	key string
	l   []any
	i   int
}

func (n node) get() any {
	if n.m != nil {
		return n.m[n.key]
	}
	return n.l[n.i]
}

func (n node) set(v any) {
	if n.m != nil {
		n.m[n.key] = v
	} else {
		n.l[n.i] = v
	}
}

func nodes(v any, out []node) []node {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range interpKeys(x) {
			out = append(out, node{m: x, key: k})
			out = nodes(x[k], out)
		}
	case []any:
		for i := range x {
			out = append(out, node{l: x, i: i})
			out = nodes(x[i], out)
		}
	}
	return out
}

func interpKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// mutate applies the operations ops encodes, three bytes each: what to do,
// where, and with what.
func mutate(root map[string]any, ops []byte) {
	for i := 0; i+2 < len(ops) && i < 48; i += 3 {
		all := nodes(root, nil)
		if len(all) == 0 {
			return
		}
		n := all[int(ops[i+1])%len(all)]
		arg := int(ops[i+2])
		switch ops[i] % 6 {
		case 0: // remove a field
			if n.m != nil {
				delete(n.m, n.key)
			}
		case 1: // replace a value
			n.set(manifest.DeepCopy(fuzzValues[arg%len(fuzzValues)]))
		case 2: // add a field
			if m, ok := n.get().(map[string]any); ok {
				m[fuzzNames[arg%len(fuzzNames)]] = manifest.DeepCopy(fuzzValues[(arg/len(fuzzNames))%len(fuzzValues)])
			}
		case 3: // change a component's type
			if m, ok := n.get().(map[string]any); ok {
				m["type"] = fuzzTypes[arg%len(fuzzTypes)]
			}
		case 4: // move another node's value here
			n.set(manifest.DeepCopy(all[arg%len(all)].get()))
		case 5: // duplicate a list item
			if l, ok := n.get().([]any); ok && len(l) > 0 {
				n.set(append(l, manifest.DeepCopy(l[arg%len(l)])))
			}
		}
	}
}

// FuzzManifest mutates decoded manifests structurally and runs spec, check,
// discover and a short test read of each against a local API: none may
// panic or hang, whatever the manifest says.
func FuzzManifest(f *testing.F) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Link", `<`+"http://"+r.Host+`/s?page=2>; rel="next"`)
		w.Header().Set("Retry-After", "1")
		if r.URL.Query().Get("cursor") == "500" {
			w.WriteHeader(500)
		}
		fmt.Fprint(w, `{"access_token":"tok","expires_in":3600,"session":{"id":"sess"},"data":[{"id":1},{"id":2}],"next":"n2","num":1}`)
	}))
	f.Cleanup(srv.Close)
	seeds := fuzzSeeds(srv.URL)
	for i := range seeds {
		f.Add(uint8(i), []byte{})
		f.Add(uint8(i), []byte{1, 7, 6, 3, 12, 9, 2, 3, 40})
	}
	f.Fuzz(func(t *testing.T, seed uint8, ops []byte) {
		raw, err := manifest.Parse([]byte(seeds[int(seed)%len(seeds)]))
		if err != nil {
			t.Fatal(err)
		}
		mutate(raw, ops)
		if resolved, err := manifest.ResolveOnly(manifest.DeepCopy(raw).(map[string]any)); err == nil {
			manifest.Spec(resolved)
		}
		src, err := manifest.Load(raw)
		if err != nil {
			return
		}
		config := map[string]any{"key": "k", "q": "q", "rt": "r", "n": 2}
		out := protocol.NewWriter(io.Discard)
		r := New(src, config, out, NewMasker())
		r.Client.Sleep = func(context.Context, time.Duration) error { return nil }
		r.Client.MaxElapsed = time.Second
		r.Client.HeartbeatEvery = 0
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		r.Check(ctx)
		r.Discover(ctx)
		for _, st := range src.Streams {
			r.TestRead(ctx, st.Name, TestLimits{MaxRecords: 10, MaxPagesPerSlice: 3, MaxSlices: 1}, nil)
		}
	})
}
