package cli

import (
	"net/http"
	"testing"
)

// A config carrying components.py as the platform injects it is refused
// while custom code cannot run here (components.Available), as a manifest's
// custom component is: check fails with a TRACE naming the config key, and
// no request is made; a config without it reads as before.
func TestInjectedComponentsCodeIsRefused(t *testing.T) {
	t.Setenv("AIRBYTE_ENABLE_UNSAFE_CODE", "true")
	a := newAPI(t, func(w http.ResponseWriter, _ *http.Request, _ string) { w.Write([]byte(`{"data":[{"id":1}]}`)) })
	m := stream("items", "url_base: "+a.URL+"\npath: /items", "[data]", "")
	c := newConnector(t, m, map[string]any{"__injected_components_py": "x = 1", "__injected_components_py_checksums": map[string]any{"md5": "3d1f7d0b5d0a7c8a1fbd3d3c2e7b8c5e"}})
	res := c.check(t)
	const want = "config key __injected_components_py: custom component code (components.py) is not supported: custom Python code cannot run here"
	errs := res.errors()
	if res.code != 0 || len(errs) != 1 || errs[0]["message"] != want || errs[0]["failure_type"] != "config_error" {
		t.Fatalf("exit %d, errors %v; want one config_error %q", res.code, errs, want)
	}
	if got := connectionStatus(res); got != "FAILED: "+want {
		t.Fatalf("connection status %q, want FAILED with %q", got, want)
	}
	if got := a.lines(); len(got) != 0 {
		t.Fatalf("requests %v, want none", got)
	}
	ok := newConnector(t, m, nil).check(t)
	if got := connectionStatus(ok); got != "SUCCEEDED: " {
		t.Fatalf("without injected code: %q", got)
	}
}

// connectionStatus is "STATUS: message" of the one CONNECTION_STATUS a run
// printed.
func connectionStatus(r result) string {
	s := r.ofType("CONNECTION_STATUS")
	if len(s) != 1 {
		return "none"
	}
	cs, _ := s[0]["connectionStatus"].(map[string]any)
	msg, _ := cs["message"].(string)
	return cs["status"].(string) + ": " + msg
}
