package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func specOf(t *testing.T, manifestYAML string) (string, result) {
	t.Helper()
	p := writeFile(t, t.TempDir(), "m.yaml", manifestYAML)
	res := runCLI(t, "spec", "--manifest", p)
	specs := res.ofType("SPEC")
	if res.code != 0 || len(specs) != 1 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	b, _ := json.Marshal(specs[0]["spec"])
	return string(b), res
}

func authOnly(auth string) string {
	return `version: 6.0.0
check: {stream_names: [s]}
definitions:
  base_requester:
    type: HttpRequester
    url_base: https://api.example.com
    authenticator:
` + indent(auth, 6) + `
streams:
  - type: DeclarativeStream
    name: s
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/base_requester", path: /s}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}
`
}

func TestSpecDerivedFromEachAuthMethod(t *testing.T) {
	const head = `{"connectionSpecification":{"$schema":"http://json-schema.org/draft-07/schema#","additionalProperties":true,"properties":`
	cases := []struct{ name, auth, want string }{
		{"no auth", "type: NoAuth", head + `{},"type":"object"},"supportsDBT":false,"supportsNormalization":false}`},
		{"api key", "type: ApiKeyAuthenticator\napi_token: '{{ config[\"api_key\"] }}'\ninject_into: {type: RequestOption, inject_into: header, field_name: X-Key}",
			head + `{"api_key":{"airbyte_secret":true,"order":0,"title":"API Key","type":"string"}},"required":["api_key"],"type":"object"},"supportsDBT":false,"supportsNormalization":false}`},
		{"bearer", "type: BearerAuthenticator\napi_token: \"{{ config.token }}\"",
			head + `{"token":{"airbyte_secret":true,"order":0,"title":"API Key","type":"string"}},"required":["token"],"type":"object"},"supportsDBT":false,"supportsNormalization":false}`},
		{"basic", "type: BasicHttpAuthenticator\nusername: \"{{ config['username'] }}\"\npassword: \"{{ config['password'] }}\"",
			head + `{"password":{"airbyte_secret":true,"always_show":true,"order":1,"title":"Password","type":"string"},"username":{"order":0,"title":"Username","type":"string"}},"required":["username"],"type":"object"},"supportsDBT":false,"supportsNormalization":false}`},
		{"oauth client credentials", "type: OAuthAuthenticator\ntoken_refresh_endpoint: https://x/token\nclient_id: \"{{ config['client_id'] }}\"\nclient_secret: \"{{ config['client_secret'] }}\"\ngrant_type: client_credentials",
			head + `{"client_id":{"airbyte_secret":true,"order":0,"title":"Client ID","type":"string"},"client_secret":{"airbyte_secret":true,"order":1,"title":"Client secret","type":"string"}},"required":["client_id","client_secret"],"type":"object"},"supportsDBT":false,"supportsNormalization":false}`},
		{"oauth rotation", "type: OAuthAuthenticator\ntoken_refresh_endpoint: https://x/token\nclient_id: \"{{ config['client_id'] }}\"\nclient_secret: \"{{ config['client_secret'] }}\"\nrefresh_token: \"{{ config['client_refresh_token'] }}\"\nrefresh_token_updater:\n  access_token_config_path: [oauth_access_token]\n  refresh_token_config_path: [client_refresh_token]\n  token_expiry_date_config_path: [oauth_token_expiry_date]",
			head + `{"client_id":{"airbyte_secret":true,"order":0,"title":"Client ID","type":"string"},"client_refresh_token":{"airbyte_secret":true,"order":2,"title":"Refresh token","type":"string"},"client_secret":{"airbyte_secret":true,"order":1,"title":"Client secret","type":"string"},"oauth_access_token":{"airbyte_secret":true,"description":"The current access token. This field might be overridden by the connector based on the token refresh endpoint response.","order":3,"title":"Access token","type":"string"},"oauth_token_expiry_date":{"description":"The date the current access token expires in. This field might be overridden by the connector based on the token refresh endpoint response.","format":"date-time","order":4,"title":"Token expiry date","type":"string"}},"required":["client_id","client_secret","client_refresh_token"],"type":"object"},"supportsDBT":false,"supportsNormalization":false}`},
		{"session token with basic login", "type: SessionTokenAuthenticator\nlogin_requester:\n  type: HttpRequester\n  url_base: https://x/login\n  http_method: POST\n  authenticator: {type: BasicHttpAuthenticator, username: \"{{ config['username'] }}\", password: \"{{ config['password'] }}\"}\nsession_token_path: [token]\nrequest_authentication: {type: Bearer}",
			head + `{"password":{"airbyte_secret":true,"always_show":true,"order":1,"title":"Password","type":"string"},"username":{"order":0,"title":"Username","type":"string"}},"required":["username"],"type":"object"},"supportsDBT":false,"supportsNormalization":false}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := specOf(t, authOnly(tc.auth))
			if got != tc.want {
				t.Errorf("spec\n got: %s\nwant: %s", got, tc.want)
			}
		})
	}
}

func TestSpecKeepsManifestPropertiesAndWarnsOnLiteralSecret(t *testing.T) {
	m := authOnly("type: BearerAuthenticator\napi_token: \"{{ config['api_key'] }}\"") + `
spec:
  type: Spec
  documentation_url: https://docs.example.com
  connection_specification:
    type: object
    required: [api_key, start]
    properties:
      api_key: {type: string, title: My key, airbyte_secret: true, order: 0}
      start: {type: string, order: 1}
`
	got, _ := specOf(t, m)
	// Printed as written (no $schema nor additionalProperties added), as
	// Airbyte's runtime prints it: the authenticator asks for nothing more.
	want := `{"connectionSpecification":{"properties":{"api_key":{"airbyte_secret":true,"order":0,"title":"My key","type":"string"},"start":{"order":1,"type":"string"}},"required":["api_key","start"],"type":"object"},"documentationUrl":"https://docs.example.com","supportsDBT":false,"supportsNormalization":false}`
	if got != want {
		t.Errorf("spec\n got: %s\nwant: %s", got, want)
	}
	// An input the authenticator reads and the written spec lacks is not
	// added: the spec is the connector's own, printed as Airbyte's runtime
	// prints it (the builder writes its inputs into the spec it exports).
	got, _ = specOf(t, strings.Replace(m, "api_key: {type: string, title: My key, airbyte_secret: true, order: 0}\n", "", 1))
	want = `{"connectionSpecification":{"properties":{"start":{"order":1,"type":"string"}},"required":["api_key","start"],"type":"object"},"documentationUrl":"https://docs.example.com","supportsDBT":false,"supportsNormalization":false}`
	if got != want {
		t.Errorf("spec lacking the authenticator's input\n got: %s\nwant: %s", got, want)
	}
	_, res := specOf(t, authOnly("type: BearerAuthenticator\napi_token: hard-coded-secret"))
	logs := res.ofType("LOG")
	if len(logs) != 1 || !strings.Contains(logs[0]["log"].(map[string]any)["message"].(string), "definitions.base_requester.authenticator.api_token holds a literal value") {
		t.Errorf("want one warning naming the field, got %v", logs)
	}
}

func TestGenericSpecWithoutManifestEqualsSpecJSON(t *testing.T) {
	file, err := os.ReadFile(filepath.Join("..", "spec.json"))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	var errb strings.Builder
	if code := Main([]string{"spec"}, &out, &errb, file, "test"); code != 0 {
		t.Fatalf("exit %d", code)
	}
	var want any
	json.Unmarshal(file, &want)
	var msg map[string]any
	json.Unmarshal([]byte(out.String()), &msg)
	a, _ := json.Marshal(msg["spec"])
	b, _ := json.Marshal(want)
	if msg["type"] != "SPEC" || string(a) != string(b) || strings.Count(out.String(), "\n") != 1 {
		t.Fatalf("spec output %s differs from spec.json %s", a, b)
	}
}

// TestSpecAdvancedAuthDefaultScopesJoin: an OAuth consent flow's
// oauth_connector_input_specification gets its schema's default
// scopes_join_strategy, "space", as Airbyte's runtime writes it in the
// SPEC (gong's and monday's); one written is kept.
func TestSpecAdvancedAuthDefaultScopesJoin(t *testing.T) {
	m := authOnly("type: NoAuth") + `
spec:
  type: Spec
  connection_specification: {type: object, properties: {}}
  advanced_auth:
    auth_flow_type: oauth2.0
    oauth_config_specification:
      oauth_connector_input_specification:
        consent_url: "https://example.com/authorize?client_id={{client_id_value}}"
        access_token_url: https://example.com/token
        scope: "a b"
`
	got, _ := specOf(t, m)
	want := `"advanced_auth":{"auth_flow_type":"oauth2.0","oauth_config_specification":{"oauth_connector_input_specification":{"access_token_url":"https://example.com/token","consent_url":"https://example.com/authorize?client_id={{client_id_value}}","scope":"a b","scopes_join_strategy":"space"}}}`
	if !strings.Contains(got, want) {
		t.Errorf("spec\n got: %s\nwant it to hold: %s", got, want)
	}
	got, _ = specOf(t, strings.Replace(m, `scope: "a b"`, `scope: "a b"`+"\n        scopes_join_strategy: comma", 1))
	if !strings.Contains(got, `"scopes_join_strategy":"comma"`) {
		t.Errorf("a written scopes_join_strategy is not kept: %s", got)
	}
}
