// Command source-declarative runs an Airbyte declarative connector manifest
// and speaks the Airbyte protocol: spec, check, discover and read.
package main

import (
	_ "embed"
	"os"

	"github.com/airbyte-go/source-declarative/cli"
)

//go:embed spec.json
var genericSpec []byte

// version is stamped at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr, genericSpec, version))
}
