// Command demo starts the example API on a free local port and reads every
// stream of the example manifest with the connector, printing the Airbyte
// messages. No internet and no account are needed.
package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"

	"github.com/airbyte-go/source-declarative/cli"
	"github.com/airbyte-go/source-declarative/examples/exampleapi"
)

func main() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	go http.Serve(ln, exampleapi.New(exampleapi.Options{APIKey: "demo-key"}))
	dir, err := os.MkdirTemp("", "demo")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer os.RemoveAll(dir)
	config := filepath.Join(dir, "config.json")
	b, _ := json.Marshal(map[string]string{"base_url": "http://" + ln.Addr().String(), "api_key": "demo-key"})
	os.WriteFile(config, b, 0o600)
	root := "examples"
	if _, err := os.Stat(filepath.Join(root, "manifest.yaml")); err != nil {
		root = "."
	}
	code := cli.Main([]string{"read", "--manifest", filepath.Join(root, "manifest.yaml"), "--config", config,
		"--catalog", filepath.Join(root, "catalog.json")}, os.Stdout, os.Stderr, nil, "demo")
	os.Exit(code)
}
