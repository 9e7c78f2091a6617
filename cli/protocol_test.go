package cli

import (
	"fmt"
	"net/http"
	"regexp"
	"testing"
)

// emittedAt stands for the time in an exact TRACE line.
var emittedAt = regexp.MustCompile(`"emitted_at":[0-9.]+`)

// TestUnreadableInputFilesAreSystemErrors: a config or catalog file the
// platform wrote that is missing, not JSON or of the wrong shape is one TRACE
// ERROR system_error, no CONNECTION_STATUS, exit 1, as Airbyte's CDK (an
// exception raised while reading the file) and the protocol's table of exit
// codes say; only the user's config values and manifest are config errors.
func TestUnreadableInputFilesAreSystemErrors(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) { fmt.Fprint(w, `{"data":[{"id":1}]}`) })
	c := newConnector(t, twoStreams(a.URL), map[string]any{"api_key": "k"}, "a")
	list := writeFile(t, c.dir, "list.json", `[1,2]`)
	garbage := writeFile(t, c.dir, "garbage.json", `garbage`)
	invalid := writeFile(t, c.dir, "invalid.json", `{"streams":[{"stream":{"name":"a","json_schema":{},"supported_sync_modes":["full_refresh"]},"sync_mode":"INVALID","destination_sync_mode":"INVALID"}]}`)
	trace := func(message string) string {
		return `{"type":"TRACE","trace":{"type":"ERROR","emitted_at":0,"error":{"message":` + message + `,"failure_type":"system_error"}}}` + "\n"
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"check", "--config", c.dir + "/none.json"}, trace(`"cannot read the config file: open ` + c.dir + `/none.json: no such file or directory"`)},
		{[]string{"check", "--config", list}, trace(`"the config file list.json must hold a JSON object"`)},
		{[]string{"discover", "--config", garbage}, trace(`"the config file garbage.json is not valid JSON: invalid character 'g' looking for beginning of value"`)},
		{[]string{"read", "--config", list, "--catalog", c.catalog}, trace(`"the config file list.json must hold a JSON object"`)},
		{[]string{"read", "--config", c.config, "--catalog", garbage}, trace(`"the catalog file is not a valid configured catalog: invalid character 'g' looking for beginning of value"`)},
		{[]string{"read", "--config", c.config, "--catalog", invalid}, trace(`"catalog streams[0].sync_mode must be full_refresh or incremental, got \"INVALID\""`)},
	} {
		res := runCLI(t, append(tc.args, "--manifest", c.manifest)...)
		if got := emittedAt.ReplaceAllString(res.stdout, `"emitted_at":0`); res.code != 1 || got != tc.want {
			t.Errorf("%v: exit %d\n got: %s\nwant: %s", tc.args, res.code, got, tc.want)
		}
	}
	if len(a.requests()) != 0 {
		t.Errorf("requests were sent: %v", a.lines())
	}
}

// TestSourceDeclarativeManifestFlags: check, discover and read take the
// flags of Airbyte's entrypoint for source-declarative-manifest,
// --manifest-path (the manifest to run) and --components-path (custom
// Python, which Airbyte loads only with AIRBYTE_ENABLE_UNSAFE_CODE, even when
// the manifest names no component of it).
func TestSourceDeclarativeManifestFlags(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) { fmt.Fprint(w, `{"data":[{"id":1}]}`) })
	c := newConnector(t, twoStreams(a.URL), map[string]any{"api_key": "k"}, "a")
	components := writeFile(t, c.dir, "components.py", "")
	t.Setenv("AIRBYTE_ENABLE_UNSAFE_CODE", "")
	res := runCLI(t, "check", "--config", c.config, "--manifest-path", c.manifest, "--components-path", components)
	if st := res.ofType("CONNECTION_STATUS"); len(st) != 1 || st[0]["connectionStatus"].(map[string]any)["message"] != notPermittedText {
		t.Errorf("check without AIRBYTE_ENABLE_UNSAFE_CODE: exit %d %s", res.code, res.stdout)
	}
	if len(a.lines()) != 0 {
		t.Fatalf("requests without permission: %v", a.lines())
	}
	t.Setenv("AIRBYTE_ENABLE_UNSAFE_CODE", "true")
	res = runCLI(t, "check", "--config", c.config, "--manifest-path", c.manifest, "--components-path", components)
	if want := `{"type":"CONNECTION_STATUS","connectionStatus":{"status":"SUCCEEDED"}}` + "\n"; res.code != 0 || res.stdout != want {
		t.Errorf("check: exit %d\n got: %s\nwant: %s", res.code, res.stdout, want)
	}
	res = runCLI(t, "discover", "--config", c.config, "--manifest-path", c.manifest)
	if res.code != 0 || len(res.ofType("CATALOG")) != 1 || len(res.msgs) != 1 {
		t.Errorf("discover: exit %d %s", res.code, res.stdout)
	}
	res = runCLI(t, "read", "--config", c.config, "--catalog", c.catalog, "--manifest-path", c.manifest, "--components-path", components)
	if res.code != 0 {
		t.Errorf("read: exit %d %s", res.code, res.stdout)
	}
	equalLists(t, "records", res.records("a"), []string{`{"id":1}`})
	equalLists(t, "requests", a.lines(), []string{"GET /a", "GET /a"})
}
