package cli

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestReferencesThatMultiplyAreRefused: definitions that each point twice at
// the next one double the resolved manifest at every step (2^40 values here).
// Resolving stops at a bound with one config error naming where the chain
// is written, instead of running until memory ends.
func TestReferencesThatMultiplyAreRefused(t *testing.T) {
	a := dataAPI(t)
	var defs strings.Builder
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&defs, "  d%d: {a: {$ref: '#/definitions/d%d'}, b: {$ref: '#/definitions/d%d'}}\n", i, i+1, i+1)
	}
	defs.WriteString("  d40: {type: InlineSchemaLoader, schema: {type: object}}\n")
	m := strings.Replace(stream("s", "url_base: "+a.URL+"\npath: /s", "[data]", ""),
		"    primary_key: [id]\n", "    primary_key: [id]\n    schema_loader: {$ref: '#/definitions/d0'}\n", 1)
	m = strings.Replace(m, "streams:\n", "definitions:\n"+defs.String()+"streams:\n", 1)
	c := newConnector(t, m, nil, "s")
	want := regexp.MustCompile(`^invalid manifest: (definitions\.d\d+\.[ab]|streams\[0\]\.schema_loader)\.\$ref: the manifest grows past 1000000 values once its references are resolved \(references that each point at others several times\?\)$`)
	for _, args := range [][]string{
		{"spec", "--manifest", c.manifest},
		{"discover", "--manifest", c.manifest, "--config", c.config},
		{"read", "--manifest", c.manifest, "--config", c.config, "--catalog", c.catalog},
	} {
		res := runCLI(t, args...)
		errs := res.errors()
		if res.code != 1 || len(errs) != 1 || errs[0]["failure_type"] != "config_error" || !want.MatchString(errs[0]["message"].(string)) {
			t.Fatalf("%s: exit %d, errors %v", args[0], res.code, errs)
		}
	}
	if got := a.lines(); len(got) != 0 {
		t.Errorf("requests sent: %v", got)
	}
}

// TestParametersThatAreNotAMappingAreRefused: Airbyte fails on a $parameters
// it cannot merge; they were passed over without a word.
func TestParametersThatAreNotAMappingAreRefused(t *testing.T) {
	a := dataAPI(t)
	for _, tc := range []struct{ params, want string }{
		{"5", "invalid manifest: streams[0].$parameters: expected object, but got a number"},
		{"[a, b]", "invalid manifest: streams[0].$parameters: expected object, but got a list"},
		{"text", "invalid manifest: streams[0].$parameters: expected object, but got a string"},
	} {
		m := strings.Replace(stream("s", "url_base: "+a.URL+"\npath: /s", "[data]", ""),
			"    primary_key: [id]\n", "    primary_key: [id]\n    $parameters: "+tc.params+"\n", 1)
		c := newConnector(t, m, nil, "s")
		res := c.read(t)
		errs := res.errors()
		if res.code != 1 || len(errs) != 1 || errs[0]["failure_type"] != "config_error" || errs[0]["message"] != tc.want {
			t.Errorf("$parameters %s: exit %d, errors %v; want %q", tc.params, res.code, errs, tc.want)
		}
		check := c.check(t)
		if st := check.ofType("CONNECTION_STATUS"); check.code != 0 || len(st) != 1 || st[0]["connectionStatus"].(map[string]any)["message"] != tc.want {
			t.Errorf("$parameters %s: check exit %d, %v", tc.params, check.code, st)
		}
	}
	if got := a.lines(); len(got) != 0 {
		t.Errorf("requests sent: %v", got)
	}
}

// TestSecretGivenAsAnObjectIsMasked: an airbyte_secret config value that is
// an object reaches the request as the object's text; each of its values
// is masked where the API echoes it back, and so is the header as sent.
func TestSecretGivenAsAnObjectIsMasked(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		w.WriteHeader(403)
		fmt.Fprintf(w, `{"error":"bad key %s"}`, r.Header.Get("X-Api-Key"))
	})
	m := authManifest(a.URL, "GET", "type: ApiKeyAuthenticator\napi_token: \"{{ config['api_key'] }}\"\ninject_into: {type: RequestOption, inject_into: header, field_name: X-Api-Key}", "")
	m += `spec:
  type: Spec
  connection_specification:
    type: object
    properties:
      api_key: {airbyte_secret: true}
`
	res := newConnector(t, m, map[string]any{"api_key": map[string]any{"user": "u-s3cr3t", "key": "k-s3cr3t"}}, "s").read(t)
	if got := a.requests(); len(got) != 1 || got[0].Header.Get("X-Api-Key") != "{'key': 'k-s3cr3t', 'user': 'u-s3cr3t'}" {
		t.Fatalf("requests: %+v", got)
	}
	want := fmt.Sprintf(`stream s: HTTP 403 Forbidden from GET %s/s: {"error":"bad key ****"}`, a.URL)
	errs := res.errors()
	if res.code != 1 || len(errs) != 2 || errs[0]["message"] != want {
		t.Errorf("exit %d, errors %v\nwant first %q", res.code, errs, want)
	}
	if strings.Contains(res.stdout, "s3cr3t") {
		t.Errorf("secret in output: %s", res.stdout)
	}
}

// TestRecordsThatAreNotUTF8BecomeValidJSON: an API sending Latin-1 bytes in
// a JSON string; the RECORD line must still be UTF-8 (JSON), with U+FFFD
// for each byte that is not, as encoding/json writes it.
func TestRecordsThatAreNotUTF8BecomeValidJSON(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		w.Write([]byte("{\"data\":[{\"id\":1,\"name\":\"caf\xe9\"},{\"id\":2,\"name\":\"ok \xc3\xa9\"}]}"))
	})
	res := newConnector(t, stream("s", "url_base: "+a.URL+"\npath: /s", "[data]", ""), nil, "s").read(t)
	if res.code != 0 || !utf8.ValidString(res.stdout) {
		t.Fatalf("exit %d, stdout valid UTF-8: %v\n%q", res.code, utf8.ValidString(res.stdout), res.stdout)
	}
	equalLists(t, "records", res.records("s"), []string{`{"id":1,"name":"caf` + "\uFFFD" + `"}`, `{"id":2,"name":"ok é"}`})
	equalLists(t, "requests", a.lines(), []string{"GET /s"})
}

// TestUnreadableConfigAndCatalogFilesAreSystemErrors: the platform writes the
// config and catalog files; one that is not the JSON expected is a
// system_error TRACE and exit 1 on every command, as Airbyte reports it
// (a manifest the user wrote stays a config_error).
func TestUnreadableConfigAndCatalogFilesAreSystemErrors(t *testing.T) {
	a := dataAPI(t)
	c := newConnector(t, stream("s", "url_base: "+a.URL+"\npath: /s", "[data]", ""), nil, "s")
	notJSON := writeFile(t, c.dir, "broken.json", "{oops")
	list := writeFile(t, c.dir, "list.json", "[1]")
	badMode := writeFile(t, c.dir, "mode.json", `{"streams":[{"stream":{"name":"s","json_schema":{}},"sync_mode":"sometimes","destination_sync_mode":"overwrite"}]}`)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"check", "--manifest", c.manifest, "--config", notJSON}, "the config file broken.json is not valid JSON: invalid character 'o' looking for beginning of object key string"},
		{[]string{"discover", "--manifest", c.manifest, "--config", list}, "the config file list.json must hold a JSON object"},
		{[]string{"read", "--manifest", c.manifest, "--config", list, "--catalog", c.catalog}, "the config file list.json must hold a JSON object"},
		{[]string{"read", "--manifest", c.manifest, "--config", c.config, "--catalog", notJSON}, "the catalog file is not a valid configured catalog: invalid character 'o' looking for beginning of object key string"},
		{[]string{"read", "--manifest", c.manifest, "--config", c.config, "--catalog", badMode}, `catalog streams[0].sync_mode must be full_refresh or incremental, got "sometimes"`},
	} {
		res := runCLI(t, tc.args...)
		errs := res.errors()
		if res.code != 1 || len(res.msgs) != 1 || len(errs) != 1 || errs[0]["failure_type"] != "system_error" || errs[0]["message"] != tc.want {
			t.Errorf("%v: exit %d, output %s\nwant one system_error %q", tc.args, res.code, res.stdout, tc.want)
		}
	}
	if got := a.lines(); len(got) != 0 {
		t.Errorf("requests sent: %v", got)
	}
}
