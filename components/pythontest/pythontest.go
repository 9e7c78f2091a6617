// Package pythontest finds, for tests, a Python with airbyte-cdk 7.x: the
// reference runtime's (../shared/refcdk7, built by its build.sh), or
// AIRBYTE_PYTHON. Without one a test skips, saying so; under CI=true it fails.
package pythontest

import (
	"os"
	"path/filepath"
	"testing"
)

// Python returns an interpreter path for the components host.
func Python(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("AIRBYTE_PYTHON"); p != "" {
		return p
	}
	dir := os.Getenv("REFCDK7")
	if dir == "" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".cache", "refcdk7")
	}
	ref := filepath.Join(dir, "refcdk7")
	if _, err := os.Stat(ref); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no Python with airbyte-cdk: the reference is not built at %s (bash ../shared/refcdk7/build.sh), and AIRBYTE_PYTHON is not set", ref)
		}
		t.Skipf("no Python with airbyte-cdk: the reference is not built at %s (bash ../shared/refcdk7/build.sh), and AIRBYTE_PYTHON is not set", ref)
	}
	wrapper := filepath.Join(t.TempDir(), "python")
	script := "#!/bin/sh\nexec " + ref + " --python \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return wrapper
}
