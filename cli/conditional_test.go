package cli

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// conditionalManifest has a users stream for the sandbox and another of the
// same name for production, each under a ConditionalStreams, and a teams
// stream under none.
func conditionalManifest(url string) string {
	return fmt.Sprintf(`version: 6.44.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [users]}
definitions:
  users:
    type: DeclarativeStream
    name: users
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: %[1]q, path: "{{ parameters.users_path }}"}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
streams:
  - type: ConditionalStreams
    condition: "{{ config['is_sandbox'] }}"
    $parameters: {users_path: /sandbox/users}
    streams: ["#/definitions/users"]
  - type: ConditionalStreams
    condition: "{{ not config['is_sandbox'] or config.get('both', false) }}"
    $parameters: {users_path: /users}
    streams: ["#/definitions/users"]
  - type: DeclarativeStream
    name: teams
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: %[1]q, path: /teams}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
`, url)
}

func TestConditionalStreamsArePartOfTheSourceWhenTheirConditionHolds(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		fmt.Fprintf(w, `{"data":[{"path":%q}]}`, r.URL.Path)
	})
	for _, c := range []struct {
		sandbox bool
		path    string
	}{{true, "/sandbox/users"}, {false, "/users"}} {
		conn := newConnector(t, conditionalManifest(a.URL), map[string]any{"is_sandbox": c.sandbox}, "users")
		disc := runCLI(t, "discover", "--manifest", conn.manifest, "--config", conn.config)
		var names []string
		for _, cat := range disc.ofType("CATALOG") {
			for _, s := range cat["catalog"].(map[string]any)["streams"].([]any) {
				names = append(names, s.(map[string]any)["name"].(string))
			}
		}
		equalLists(t, fmt.Sprintf("sandbox %v: catalog", c.sandbox), names, []string{"users", "teams"})

		before := len(a.requests())
		res := conn.read(t)
		reqs := a.requests()[before:]
		if res.code != 0 || len(reqs) != 1 || reqs[0].Method != "GET" || reqs[0].Path != c.path || reqs[0].Query != "" || reqs[0].Body != "" {
			t.Fatalf("sandbox %v: exit %d, requests %v: %s", c.sandbox, res.code, reqs, res.stdout)
		}
		equalLists(t, "records", res.records("users"), []string{fmt.Sprintf(`{"path":%q}`, c.path)})
	}
}

func TestConditionalStreamsLeftOutAreNotInTheSource(t *testing.T) {
	a := dataAPI(t)
	m := strings.Replace(conditionalManifest(a.URL), "stream_names: [users]", "stream_names: [teams]", 1)
	m = strings.Replace(m, "{{ not config['is_sandbox'] or config.get('both', false) }}", "{{ false }}", 1)
	conn := newConnector(t, m, map[string]any{"is_sandbox": false}, "users")
	res := conn.read(t)
	errs := res.errors()
	if len(errs) == 0 || errs[0]["message"] != `stream "users" of the catalog is not defined in the manifest (streams: teams)` || len(a.requests()) != 0 {
		t.Errorf("reading a stream whose condition fails: exit %d, %v, %d requests", res.code, errs, len(a.requests()))
	}
	if st := conn.check(t).ofType("CONNECTION_STATUS"); len(st) != 1 || st[0]["connectionStatus"].(map[string]any)["status"] != "SUCCEEDED" {
		t.Errorf("check of teams: %v", st)
	}
}

func TestConditionalStreamsOfTheSameNameBothKeptIsAConfigError(t *testing.T) {
	a := dataAPI(t)
	conn := newConnector(t, conditionalManifest(a.URL), map[string]any{"is_sandbox": true, "both": true}, "users")
	res := conn.read(t)
	errs := res.errors()
	want := `streams[1].streams[0].name: stream name "users" is already used by streams[0].streams[0] (both their conditions hold for this config)`
	if res.code != 1 || len(errs) != 1 || errs[0]["message"] != want || errs[0]["failure_type"] != "config_error" {
		t.Errorf("got exit %d %v, want %q", res.code, errs, want)
	}
	if len(a.requests()) != 0 {
		t.Errorf("%d requests sent", len(a.requests()))
	}
}

func TestConditionalStreamsWithoutConditionIsRefusedAtLoad(t *testing.T) {
	m := strings.Replace(conditionalManifest("http://127.0.0.1:1"), "    condition: \"{{ config['is_sandbox'] }}\"\n", "", 1)
	res := runCLI(t, "discover", "--manifest", writeFile(t, t.TempDir(), "m.yaml", m), "--config", writeFile(t, t.TempDir(), "c.json", "{}"))
	errs := res.errors()
	if res.code != 1 || len(errs) != 1 || !strings.Contains(errs[0]["message"].(string), "streams[0]") || !strings.Contains(errs[0]["message"].(string), "condition") {
		t.Errorf("got exit %d %v", res.code, errs)
	}
}

// A manifest without spec whose authenticator sits in a ConditionalStreams'
// stream: the spec derived from it asks for the authenticator's inputs.
func TestSpecDerivedFromConditionalStreamsAuthenticator(t *testing.T) {
	m := strings.Replace(conditionalManifest("https://api.example.com"), "path: \"{{ parameters.users_path }}\"}",
		"path: \"{{ parameters.users_path }}\", authenticator: {type: BearerAuthenticator, api_token: \"{{ config['token'] }}\"}}", 1)
	m = strings.Replace(m, "path: /teams}", "path: /teams, authenticator: {type: BearerAuthenticator, api_token: \"{{ config['other'] }}\"}}", 1)
	got, _ := specOf(t, m)
	want := `{"connectionSpecification":{"$schema":"http://json-schema.org/draft-07/schema#","additionalProperties":true,"properties":{"token":{"airbyte_secret":true,"order":0,"title":"API Key","type":"string"}},"required":["token"],"type":"object"},"supportsDBT":false,"supportsNormalization":false}`
	if got != want {
		t.Errorf("spec\n got: %s\nwant: %s", got, want)
	}
}

// A ConditionalStreams' condition sees config and no parameters, not even its
// own $parameters: the CDK evaluates it with parameters={} (checked with
// refcdk7).
func TestConditionalStreamsConditionHasNoParameters(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) { fmt.Fprint(w, `{"data":[]}`) })
	m := strings.Replace(conditionalManifest(a.URL), `condition: "{{ config['is_sandbox'] }}"`, `condition: "{{ config['is_sandbox'] or parameters.get('users_path') is not none }}"`, 1)
	conn := newConnector(t, m, map[string]any{"is_sandbox": false}, "users")
	var names []string
	for _, cat := range runCLI(t, "discover", "--manifest", conn.manifest, "--config", conn.config).ofType("CATALOG") {
		for _, s := range cat["catalog"].(map[string]any)["streams"].([]any) {
			names = append(names, s.(map[string]any)["name"].(string))
		}
	}
	equalLists(t, "catalog", names, []string{"users", "teams"})
	conn.read(t)
	equalLists(t, "requests", a.lines(), []string{"GET /users"})
}
