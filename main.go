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

// memoryLimit is the collector's soft limit when GOMEMLIMIT is not set: with
// a target of 400, the garbage of a body read whole (up to the 256 MiB
// limit, copied as it grows) reached 1.35 GB before the collector ran; with
// this limit it peaks at ~630 MB. A read's live heap is a few megabytes.
const memoryLimit = 512 << 20

func main() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr, genericSpec, version))
}
