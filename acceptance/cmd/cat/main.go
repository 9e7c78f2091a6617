// Command cat runs the local acceptance tests of acceptance-test-config.yml
// against a connector command:
//
//	go run ./acceptance/cmd/cat -connector "./source-declarative --manifest examples/manifest.yaml" -example-api
//
// -example-api starts the example API and sets ${EXAMPLE_API_URL} for the
// config files; point -config and -connector at your own files otherwise.
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/airbyte-go/source-declarative/acceptance"
	"github.com/airbyte-go/source-declarative/examples/exampleapi"
)

func main() {
	config := flag.String("config", "acceptance-test-config.yml", "acceptance-test-config.yml")
	connector := flag.String("connector", "", "the connector command, e.g. \"./source-declarative --manifest manifest.yaml\"")
	example := flag.Bool("example-api", false, "start the example API and set ${EXAMPLE_API_URL}")
	flag.Parse()
	cfg, err := acceptance.LoadConfig(*config)
	if err != nil || *connector == "" {
		fmt.Fprintln(os.Stderr, "usage: cat -connector CMD [-config acceptance-test-config.yml] [-example-api]", err)
		os.Exit(2)
	}
	r := &acceptance.Runner{Connector: strings.Fields(*connector), BaseDir: filepath.Dir(*config), Vars: map[string]string{}}
	if *example {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		go http.Serve(ln, exampleapi.New(exampleapi.Options{APIKey: "demo-key"}))
		r.Vars["EXAMPLE_API_URL"] = "http://" + ln.Addr().String()
	}
	res := r.Run(cfg)
	for _, f := range res.Failures {
		fmt.Println("FAIL:", f)
	}
	fmt.Printf("%d passed, %d failed\n", res.Passed, len(res.Failures))
	if len(res.Failures) > 0 {
		os.Exit(1)
	}
}
