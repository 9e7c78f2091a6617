package manifest

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

func parse(t *testing.T, y string) map[string]any {
	t.Helper()
	m, err := Parse([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestRefResolution(t *testing.T) {
	m := parse(t, `
definitions:
  base: {type: HttpRequester, url_base: "https://a", http_method: GET, request_headers: {A: "1"}}
  name: users
  list: [a, b]
  nested: {$ref: "#/definitions/base", http_method: POST}
  "a/b": slash
streams:
  - requester: {$ref: "#/definitions/nested", path: /x}
    name: "#/definitions/name"
    items: "#/definitions/list/1"
    slash: "#/definitions/a/b"
`)
	r, err := Resolve(m)
	if err != nil {
		t.Fatal(err)
	}
	s := r["streams"].([]any)[0].(map[string]any)
	got, _ := json.Marshal(s)
	want := `{"items":"b","name":"users","requester":{"http_method":"POST","path":"/x","request_headers":{"A":"1"},"type":"HttpRequester","url_base":"https://a"},"slash":"slash"}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if r["type"] != "DeclarativeSource" {
		t.Errorf("type not defaulted")
	}
	for src, msg := range map[string]string{
		`a: {$ref: "#/b"}` + "\nb: {$ref: \"#/a\"}": "circular reference",
		`a: {$ref: "#/missing"}`:                    `a.$ref: reference "#/missing" points at nothing`,
	} {
		if _, err := Resolve(parse(t, src)); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: got %v, want %q", src, err, msg)
		}
	}
}

func TestParametersPropagation(t *testing.T) {
	m := parse(t, `
type: DeclarativeSource
streams:
  - type: DeclarativeStream
    $parameters: {name: users, path: /users, primary_key: id, page: 1}
    retriever:
      requester: {url_base: "https://a", $parameters: {path: /override}}
      record_selector: {extractor: {field_path: []}}
      paginator:
        type: DefaultPaginator
        pagination_strategy: {type: PageIncrement, page_size: 2}
        page_token_option: {inject_into: request_parameter, field_name: p, type: RequestOption}
`)
	Propagate(m)
	s := m["streams"].([]any)[0].(map[string]any)
	ret := s["retriever"].(map[string]any)
	req := ret["requester"].(map[string]any)
	checks := map[string]any{
		"stream name":              s["name"],
		"stream primary_key":       s["primary_key"],
		"retriever type":           ret["type"],
		"requester type":           req["type"],
		"requester path (own)":     req["path"],
		"requester name":           req["name"],
		"extractor type":           ret["record_selector"].(map[string]any)["extractor"].(map[string]any)["type"],
		"selector type":            ret["record_selector"].(map[string]any)["type"],
		"strategy param as field":  ret["paginator"].(map[string]any)["pagination_strategy"].(map[string]any)["page"],
		"request option untouched": ret["paginator"].(map[string]any)["page_token_option"].(map[string]any)["name"],
	}
	want := map[string]any{"stream name": "users", "stream primary_key": "id", "retriever type": "SimpleRetriever", "requester type": "HttpRequester",
		"requester path (own)": "/override", "requester name": "users", "extractor type": "DpathExtractor", "selector type": "RecordSelector",
		"strategy param as field": int64(1), "request option untouched": nil}
	for k, w := range want {
		if checks[k] != w {
			t.Errorf("%s = %v, want %v", k, checks[k], w)
		}
	}
}

const good = `version: 6.0.0
check: {stream_names: [s]}
streams:
  - type: DeclarativeStream
    name: s
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: "https://a", path: /s, http_method: GET}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
`

func TestManifestErrors(t *testing.T) {
	cases := []struct{ from, to, want string }{
		{"http_method: GET", "http_method: PUT", "streams[0].retriever.requester.http_method: must be GET or POST"},
		{"type: HttpRequester", "type: HttpRequestor", `streams[0].retriever.requester.type: unknown component type "HttpRequestor" (supported: HttpRequester)`},
		{"field_path: [data]", "field_path: data", "streams[0].retriever.record_selector.extractor.field_path: expected array, but got string"},
		{"name: s", "name: s\n    state_migrations: [{type: LegacyToPerPartitionStateMigration}]", "streams[0].state_migrations[0]: LegacyToPerPartitionStateMigration applies to a stream whose retriever has a SubstreamPartitionRouter, as in Airbyte"},
		{"url_base: \"https://a\", ", "", "streams[0].retriever.requester.url_base: is required (or url)"},
		{"stream_names: [s]", "stream_names: [t]", `check.stream_names[0]: stream "t" is not defined in streams`},
		{"type: DpathExtractor", "type: CustomRecordExtractor", "streams[0].retriever.record_selector.extractor.class_name: is required: a custom component CustomRecordExtractor names the Python class that implements it"},
		{"path: /s, http_method: GET}", "path: /s, http_method: GET, authenticator: {type: OAuthAuthenticator, token_refresh_endpoint: 'https://t', client_id: a, client_secret: b, grant_type: authorization_code}}",
			`streams[0].retriever.requester.authenticator.grant_type: grant type "authorization_code" is not supported: only refresh_token, client_credentials and password are (PKCE, authorization code and other flows need custom code)`},
		{"path: /s, http_method: GET}", "path: /s, http_method: GET, authenticator: {type: SessionTokenAuthenticator, session_token_path: [t], request_authentication: {type: Bearer}, login_requester: {type: HttpRequester, url_base: 'https://l', authenticator: {type: OAuthAuthenticator, token_refresh_endpoint: 'https://t', client_id: a, client_secret: b, refresh_token: c}}}}",
			"streams[0].retriever.requester.authenticator.login_requester.authenticator: OAuthAuthenticator is not supported here (supported: NoAuth, BasicHttpAuthenticator, BearerAuthenticator, ApiKeyAuthenticator)"},
		{"path: /s, http_method: GET}", "path: /s, http_method: GET, authenticator: {type: SessionTokenAuthenticator, session_token_path: [t], expiration_duration: one hour, request_authentication: {type: Bearer}, login_requester: {type: HttpRequester, url_base: 'https://l'}}}",
			`streams[0].retriever.requester.authenticator.expiration_duration: "one hour" is not an ISO 8601 duration (such as PT1H or P1D)`},
		{"field_path: [data]}}", "field_path: [data]}}\n      paginator: {type: DefaultPaginator, pagination_strategy: {type: PageIncrement, page_size: 0}}",
			"streams[0].retriever.paginator.pagination_strategy.page_size: must be a positive integer, got 0"},
		{"field_path: [data]}}", "field_path: [data]}}\n      paginator: {type: DefaultPaginator, pagination_strategy: {type: OffsetIncrement, page_size: ten}}",
			`streams[0].retriever.paginator.pagination_strategy.page_size: must be a positive integer, got "ten"`},
		{"field_path: [data]}}", "field_path: [data]}}\n      paginator: {type: DefaultPaginator, pagination_strategy: {type: OffsetIncrement, page_size: 5}, page_size_option: {type: RequestOption, inject_into: request_parameter, field_name: limit}, page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: limit}}",
			`streams[0].retriever.paginator.page_token_option: request_parameter "limit" collides with page_size_option's "limit": the page size and the page token cannot go to one key`},
		{"field_path: [data]}}", "field_path: [data]}}\n      paginator: {type: DefaultPaginator, pagination_strategy: {type: OffsetIncrement, page_size: 5}, page_size_option: {type: RequestOption, inject_into: body_json, field_path: [variables]}, page_token_option: {type: RequestOption, inject_into: body_json, field_path: [variables, after]}}",
			`streams[0].retriever.paginator.page_token_option: body_json "variables.after" collides with page_size_option's "variables": the page size and the page token cannot go to one key`},
		{"field_path: [data]}}", "field_path: [data]}}\n      paginator: {type: DefaultPaginator, pagination_strategy: {type: CursorPagination, cursor_value: '{{ response.next }}'}, page_size_option: {type: RequestOption, inject_into: header, field_name: X}}",
			"streams[0].retriever.paginator.page_size_option: needs pagination_strategy.page_size to be set"},
		{"field_path: [data]}}", "field_path: [data]}}\n      paginator: {type: DefaultPaginator, pagination_strategy: {type: OffsetIncrement, page_size: 5}, page_token_option: {type: RequestOption, inject_into: query, field_name: o}}",
			"streams[0].retriever.paginator.page_token_option.inject_into: must be request_parameter, header, body_data or body_json"},
		{"field_path: [data]}}", "field_path: [data]}}\n      paginator: {type: DefaultPaginator, pagination_strategy: {type: OffsetIncrement, page_size: 5}, page_token_option: {type: RequestOption, inject_into: header, field_path: [a]}}",
			"streams[0].retriever.paginator.page_token_option.field_path: is only allowed with inject_into: body_json"},
		{"version: 6.0.0\n", "", "manifest.version: is required"},
	}
	for _, tc := range cases {
		src := strings.Replace(good, tc.from, tc.to, 1)
		if src == good {
			t.Fatalf("replacement %q did not apply", tc.from)
		}
		_, err := Load(parse(t, src))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s\n got: %v\nwant: %s", tc.to, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("error is not one line: %q", err)
		}
	}
	if _, err := Load(parse(t, good)); err != nil {
		t.Fatalf("good manifest: %v", err)
	}
}

// Every real manifest loads, or is refused with one line naming each
// unsupported component and its path.
func TestRealManifests(t *testing.T) {
	files, _ := filepath.Glob("../../shared/manifests/*.yaml")
	if len(files) == 0 {
		t.Skip("catalog manifests not found: expected at ../../shared/manifests/*.yaml (the shared folder beside the repository)")
	}
	loaded := 0
	for _, f := range files {
		raw, err := ReadFile(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		src, err := Load(raw)
		if err != nil {
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("%s: not one line: %q", f, msg)
			}
			for _, part := range strings.Split(msg, "; ") {
				if !strings.HasPrefix(part, "streams[") || !strings.Contains(part, "not supported") {
					t.Errorf("%s: refusal %q does not name a path and an unsupported component", filepath.Base(f), part)
				}
			}
			continue
		}
		loaded++
		if len(src.Streams) == 0 {
			t.Errorf("%s: no streams", f)
		}
		resolved, _ := ResolveOnly(raw)
		if spec, _ := Spec(resolved); spec["connectionSpecification"] == nil {
			t.Errorf("%s: no spec", f)
		}
	}
	if loaded < 8 {
		t.Errorf("only %d of %d real manifests load", loaded, len(files))
	}
}

func TestConfigKeyForms(t *testing.T) {
	for tpl, want := range map[string]string{`{{ config['a'] }}`: "a", `{{ config["b_2"] }}`: "b_2", `{{config.c}}`: "c", ` {{ config[ 'd' ] }} `: "d"} {
		if got, ok := ConfigKey(tpl); !ok || got != want {
			t.Errorf("%s: %q %v", tpl, got, ok)
		}
	}
	for _, tpl := range []string{`Token {{ config['a'] }}`, `{{ config['a'] | upper }}`, `abc`} {
		if _, ok := ConfigKey(tpl); ok {
			t.Errorf("%s must not be a config reference", tpl)
		}
	}
}

// TestBrokenTemplatesWarnAtLoad: a template that does not compile (a file
// tag among them) is a WARN naming it, and the manifest loads: it fails when
// it is evaluated, as in Airbyte's runtime, which compiles a template when
// it first evaluates it.
func TestBrokenTemplatesWarnAtLoad(t *testing.T) {
	cases := []struct{ from, to, want string }{
		{"field_path: [data]}}", "field_path: [data]}}\n      paginator: {type: DefaultPaginator, pagination_strategy: {type: CursorPagination, cursor_value: '{{ response.next '}}",
			`streams[0].retriever.paginator.pagination_strategy.cursor_value: invalid template "{{ response.next "`},
		{"field_path: [data]}}", "field_path: [data]}}\n      paginator: {type: DefaultPaginator, pagination_strategy: {type: CursorPagination, cursor_value: '{% include \"/etc/passwd\" %}'}}",
			`streams[0].retriever.paginator.pagination_strategy.cursor_value: invalid template`},
		{"field_path: [data]}}", "field_path: [data]}}\n      paginator: {type: DefaultPaginator, pagination_strategy: {type: OffsetIncrement, page_size: 5}, page_token_option: {type: RequestOption, inject_into: body_json, field_path: [a, '{{ b ']}}",
			`streams[0].retriever.paginator.page_token_option.field_path[1]: invalid template "{{ b "`},
	}
	for _, tc := range cases {
		src, err := Load(parse(t, strings.Replace(good, tc.from, tc.to, 1)))
		if err != nil {
			t.Fatalf("%s: %v", tc.to, err)
		}
		found := false
		for _, w := range src.Warnings {
			found = found || strings.Contains(w, tc.want) && strings.HasSuffix(w, "it fails when it is evaluated, as in Airbyte's runtime")
		}
		if !found {
			t.Errorf("%s: warnings %q, want one holding %s", tc.to, src.Warnings, tc.want)
		}
	}
}
