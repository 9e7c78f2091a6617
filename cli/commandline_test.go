package cli

import (
	"strings"
	"testing"
)

// The command line (cobra): global flags before or after the command,
// --flag=value, a long flag with one dash as the standard flag package took
// it, help and version on stderr with exit 0, every usage mistake exit 2
// with one error line and nothing on stdout.
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
		"":             "Usage:\n  source-declarative [command]\n\nAvailable Commands:\n  check ",
		"--help":       "Usage:\n  source-declarative [command]",
		"help":         "Usage:\n  source-declarative [command]",
		"help read":    "Usage:\n  source-declarative read [flags]",
		"read --help":  "Usage:\n  source-declarative read [flags]\n\nFlags:\n      --catalog string ",
		"check --help": "--components-path string   the components.py of the manifest's custom components (run only with AIRBYTE_ENABLE_UNSAFE_CODE=true, as in Airbyte)",
		"spec --help":  "--config string       path of a config JSON: its __injected_declarative_manifest",
		"--version":    "source-declarative version test\n",
		"test-read -h": "--max-pages int         pages to read at most (default 5)",
		"discover -h":  "Global Flags:\n      --debug[=true|false]     print DEBUG LOG messages",
		"-h":           "--manifest-path string   the same as --manifest",
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
		"check --config":          `error: flag needs an argument: --config`,
		"--catalog c.json check":  `error: unknown flag: --catalog`,
		"completion bash":         `error: unknown command "completion" for "source-declarative"`,
		"test-read --max-pages x": `error: invalid argument "x" for "--max-pages" flag: must be a whole number of at least 1`,
		"test-read --config c.json --stream s --max-pages 0":    `error: invalid argument "0" for "--max-pages" flag: must be a whole number of at least 1`,
		"test-read --config c.json --stream s --max-records -1": `error: invalid argument "-1" for "--max-records" flag: must be a whole number of at least 1`,
		"test-read --config c.json --stream s --max-slices 0":   `error: invalid argument "0" for "--max-slices" flag: must be a whole number of at least 1`,
	} {
		res := runCLI(t, strings.Fields(args)...)
		lines := strings.Split(strings.TrimSuffix(res.stderr, "\n"), "\n")
		if res.code != 2 || res.stdout != "" || lines[0] != want || len(lines) != 2 || !strings.HasPrefix(lines[1], "Run 'source-declarative") || !strings.HasSuffix(lines[1], " --help' for usage.") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, res.code, res.stdout, res.stderr)
		}
	}
}
