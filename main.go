// Command source-declarative runs an Airbyte declarative connector manifest
// and speaks the Airbyte protocol: spec, check, discover and read.
package main

import (
	_ "embed"
	"os"
	"runtime/debug"

	"github.com/airbyte-go/source-declarative/cli"
)

//go:embed spec.json
var genericSpec []byte

// version is stamped at build time with -ldflags "-X main.version=...".
var version = "dev"

// gcPercent is the collector's target when GOGC is not set: a read's live
// heap is a few megabytes, and at Go's default of 100 a collection came
// every few megabytes of garbage (a read with transformations spent about
// half its CPU time collecting; README, Performance).
const gcPercent = 400

func main() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr, genericSpec, version))
}
