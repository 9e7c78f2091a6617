package genapi

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestOffline runs a process (this test binary) with Offline's environment,
// a proxy of the caller's own set before: it reaches the API on loopback,
// and a request to any other host fails at the closed proxy port, never
// reaching the caller's proxy.
func TestOffline(t *testing.T) {
	if os.Getenv("GENAPI_OFFLINE_CHILD") != "" {
		for _, u := range strings.Fields(os.Getenv("GENAPI_OFFLINE_CHILD")) {
			resp, err := http.Get(u)
			if err != nil {
				fmt.Printf("%s: error %v\n", u, err)
				continue
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			fmt.Printf("%s: %d %s\n", u, resp.StatusCode, b)
		}
		return
	}
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "api") }))
	defer api.Close()
	asked := 0
	caller := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { asked++; fmt.Fprint(w, "proxied") }))
	defer caller.Close()
	env := append(os.Environ(), "HTTP_PROXY="+caller.URL, "http_proxy="+caller.URL, "ALL_PROXY="+caller.URL, "NO_PROXY=")
	cmd := exec.Command(os.Args[0], "-test.run=^TestOffline$")
	cmd.Env = append(Offline(env), "GENAPI_OFFLINE_CHILD="+api.URL+"/x http://api.example.com/v1 https://api.example.com/v1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 3 || lines[0] != api.URL+"/x: 200 api" {
		t.Fatalf("the API is not reached directly: %q", out)
	}
	port := closedPort()
	for _, l := range lines[1:3] {
		if !strings.Contains(l, "error") || !strings.Contains(l, "127.0.0.1:"+port) || !strings.Contains(l, "connection refused") {
			t.Errorf("a request to another host is not refused at the closed proxy port %s: %s", port, l)
		}
	}
	if asked != 0 {
		t.Errorf("the caller's proxy was asked %d times", asked)
	}
	for _, kv := range Offline(env) {
		if strings.HasPrefix(strings.ToUpper(kv), "ALL_PROXY=") {
			t.Errorf("ALL_PROXY kept: %s", kv)
		}
	}
}
