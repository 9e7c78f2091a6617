// Package components says whether a manifest's custom Python components
// (its components.py) can run here.
package components

import (
	"fmt"
	"os"
	"strings"
)

// CodeKey is the config key holding a components.py as the platform injects
// it (with its checksums beside it, under CodeChecksumsKey), and as the manifest
// server passes a request's custom_components_code.
const (
	CodeKey          = "__injected_components_py"
	CodeChecksumsKey = "__injected_components_py_checksums"
)

// unsafeCodeEnv, set to true (any case), lets custom code from outside a
// connector image run, as in Airbyte's runtime (custom_code_compiler.py).
const unsafeCodeEnv = "AIRBYTE_ENABLE_UNSAFE_CODE"

// Permitted tells whether Airbyte's rule lets custom code run:
// AIRBYTE_ENABLE_UNSAFE_CODE is true (custom_code_execution_permitted).
func Permitted() bool { return strings.EqualFold(os.Getenv(unsafeCodeEnv), "true") }

// hostBuilt tells whether this build has a components host to run custom
// code in; none yet (issue 27 brings it).
const hostBuilt = false

// Available tells whether custom components can run in this process: they
// are permitted and a components host runs them. The manifest server's
// /capabilities/ answers it as custom_code_execution; a request carrying
// custom code is refused while it is false.
func Available() bool { return hostBuilt && Permitted() }

// Refusal is why a config carrying custom code (CodeKey) cannot run while
// Available is false: the same words as a manifest's custom component gets.
func Refusal() string {
	return fmt.Sprintf("config key %s: custom component code (components.py) is not supported: custom Python code cannot run here", CodeKey)
}
