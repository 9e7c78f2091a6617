// Command demo starts the example API on a free local port and reads every
// stream of the example manifest with the connector, printing the Airbyte
// messages; then it reads the incremental stream again from the states the
// first read wrote. No internet and no account are needed.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/airbyte-go/source-declarative/cli"
	"github.com/airbyte-go/source-declarative/examples/exampleapi"
)

func main() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	go http.Serve(ln, exampleapi.New(exampleapi.Options{APIKey: "demo-key"}))
	dir, err := os.MkdirTemp("", "demo")
	check(err)
	defer os.RemoveAll(dir)
	config := filepath.Join(dir, "config.json")
	b, _ := json.Marshal(map[string]string{"base_url": "http://" + ln.Addr().String(), "api_key": "demo-key", "end_date": "2024-01-08T00:00:00Z"})
	check(os.WriteFile(config, b, 0o600))
	root := "examples"
	if _, err := os.Stat(filepath.Join(root, "manifest.yaml")); err != nil {
		root = "."
	}
	manifest := filepath.Join(root, "manifest.yaml")

	fmt.Fprintln(os.Stderr, "# first read: every stream")
	var first bytes.Buffer
	code := cli.Main([]string{"read", "--manifest", manifest, "--config", config, "--catalog", filepath.Join(root, "catalog.json")}, &first, os.Stderr, nil, "demo")
	os.Stdout.Write(first.Bytes())
	if code != 0 {
		os.Exit(code)
	}
	states := lastStates(first.Bytes())
	state := filepath.Join(dir, "state.json")
	b, _ = json.Marshal(states)
	check(os.WriteFile(state, b, 0o600))
	catalog := filepath.Join(dir, "catalog.json")
	check(os.WriteFile(catalog, []byte(`{"streams":[{"stream":{"name":"activities","json_schema":{},"supported_sync_modes":["full_refresh","incremental"]},"sync_mode":"incremental","destination_sync_mode":"append"}]}`), 0o600))
	fmt.Fprintf(os.Stderr, "# second read: activities from the first read's state %s\n", b)
	os.Exit(cli.Main([]string{"read", "--manifest", manifest, "--config", config, "--catalog", catalog, "--state", state}, os.Stdout, os.Stderr, nil, "demo"))
}

// lastStates keeps the last STATE of each incremental stream, as the
// platform stores it for the next sync.
func lastStates(out []byte) []any {
	last := map[string]any{}
	var order []string
	for _, line := range strings.Split(string(out), "\n") {
		var m struct {
			Type  string `json:"type"`
			State struct {
				Stream struct {
					Descriptor struct {
						Name string `json:"name"`
					} `json:"stream_descriptor"`
					State map[string]any `json:"stream_state"`
				} `json:"stream"`
			} `json:"state"`
		}
		if json.Unmarshal([]byte(line), &m) != nil || m.Type != "STATE" {
			continue
		}
		s := m.State.Stream
		if s.State["__ab_no_cursor_state_message"] != nil {
			continue
		}
		if _, seen := last[s.Descriptor.Name]; !seen {
			order = append(order, s.Descriptor.Name)
		}
		last[s.Descriptor.Name] = map[string]any{"type": "STREAM", "stream": map[string]any{"stream_descriptor": map[string]any{"name": s.Descriptor.Name}, "stream_state": s.State}}
	}
	var list []any
	for _, name := range order {
		list = append(list, last[name])
	}
	return list
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
