package cli

import (
	"strings"
	"testing"
)

// The command line: global flags before or after the command, --flag=value,
// help and version on stderr with exit 0, every usage mistake exit 2 with one
// error line and nothing on stdout.
func TestCommandLine(t *testing.T) {
	dir := t.TempDir()
	m := writeFile(t, dir, "m.yaml", authOnly("type: ApiKeyAuthenticator\napi_token: \"{{ config['api_key'] }}\"\nheader: X-Key"))
	for _, args := range [][]string{{"--manifest", m, "spec"}, {"spec", "--manifest", m}, {"spec", "--manifest=" + m}, {"--debug", "spec", "-manifest", m}} {
		res := runCLI(t, args...)
		if res.code != 0 || len(res.ofType("SPEC")) != 1 || !strings.Contains(res.stdout, `"api_key"`) {
			t.Errorf("%q: exit %d %s", args, res.code, res.stdout)
		}
	}
	for args, want := range map[string]string{
		"":             "Usage:\n  source-declarative [command] [flags]",
		"--help":       "Usage:\n  source-declarative [command] [flags]",
		"help":         "Usage:\n  source-declarative [command] [flags]",
		"read --help":  "Usage:\n  source-declarative read [flags]",
		"--version":    "source-declarative version test\n",
		"test-read -h": "--max-pages int\n        pages to read at most (default 5)",
	} {
		res := runCLI(t, strings.Fields(args)...)
		if res.code != 0 || res.stdout != "" || !strings.Contains(res.stderr, want) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, res.code, res.stdout, res.stderr)
		}
	}
	for args, want := range map[string]string{
		"frob":                    `error: unknown command "frob" for "source-declarative"`,
		"spec extra":              `error: unknown command "extra" for "source-declarative spec"`,
		"check":                   `error: required flag(s) "config" not set`,
		"read --config c.json":    `error: required flag(s) "catalog" not set`,
		"test-read":               `error: required flag(s) "config", "stream" not set`,
		"check --config":          `error: flag needs an argument: -config`,
		"--config c.json check":   `error: flag provided but not defined: -config`,
		"test-read --max-pages x": `error: invalid value "x" for flag -max-pages: parse error`,
		"test-read --config c.json --stream s --max-pages 0":    `error: --max-pages must be at least 1, got 0`,
		"test-read --config c.json --stream s --max-records -1": `error: --max-records must be at least 1, got -1`,
		"test-read --config c.json --stream s --max-slices 0":   `error: --max-slices must be at least 1, got 0`,
	} {
		res := runCLI(t, strings.Fields(args)...)
		if res.code != 2 || res.stdout != "" || !strings.HasPrefix(res.stderr, want+"\n") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, res.code, res.stdout, res.stderr)
		}
	}
}
