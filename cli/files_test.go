package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 30: a schema file is read only from inside the manifest's folder,
// symlinks resolved; a manifest that came in the config reads no file.

const outsideSchema = `{"type":"object","properties":{"outside_0451":{"type":"string"}}}`

// outside is a folder beside the connector's, holding a schema file.
func outside(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, dir, "secret.json", outsideSchema)
	return dir
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func TestSchemaFileSymlinksStayInTheManifestsFolder(t *testing.T) {
	for _, tc := range []struct {
		name, loader string
		layout       func(t *testing.T, dir, out string)
		want         string // the error's start; "" for a schema read
	}{
		{"a file linked out", `schema_loader: {type: JsonFileSchemaLoader, file_path: schemas/inline.json}`, func(t *testing.T, dir, out string) {
			symlink(t, filepath.Join(out, "secret.json"), filepath.Join(dir, "schemas", "inline.json"))
		}, `streams[0].schema_loader.file_path: schema file "schemas/inline.json": ` + "%DIR%/schemas/inline.json leads out of the manifest's folder"},
		{"a folder linked out, default path", ``, func(t *testing.T, dir, out string) {
			writeFile(t, out, "inline.json", outsideSchema)
			symlink(t, out, filepath.Join(dir, "schemas"))
		}, `streams[0].schema_loader: schema file "./schemas/inline.json": ` + "%DIR%/schemas/inline.json leads out of the manifest's folder"},
		{"a $ref linked out", `schema_loader: {type: JsonFileSchemaLoader, file_path: schemas/inline.json}`, func(t *testing.T, dir, out string) {
			symlink(t, filepath.Join(out, "secret.json"), filepath.Join(dir, "schemas", "evil.json"))
			writeFile(t, filepath.Join(dir, "schemas"), "inline.json", `{"type":"object","properties":{"a":{"$ref":"evil.json"}}}`)
		}, `streams[0].schema_loader.file_path: schema $ref "evil.json": ` + "%DIR%/schemas/evil.json leads out of the manifest's folder"},
		{"a link inside", `schema_loader: {type: JsonFileSchemaLoader, file_path: schemas/inline.json}`, func(t *testing.T, dir, out string) {
			writeFile(t, filepath.Join(dir, "real"), "users.json", `{"type":"object","properties":{"inside":{"type":"string"}}}`)
			symlink(t, filepath.Join("..", "real", "users.json"), filepath.Join(dir, "schemas", "inline.json"))
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newConnector(t, source(namedStream("inline", "http://127.0.0.1:1", "/x", tc.loader)), nil)
			os.MkdirAll(filepath.Join(c.dir, "real"), 0o700)
			tc.layout(t, c.dir, outside(t))
			res := discover(c, t)
			if strings.Contains(res.stdout, "outside_0451") {
				t.Errorf("the outside file was read: %s", res.stdout)
			}
			if tc.want == "" {
				if res.code != 0 || !strings.Contains(res.stdout, `"inside":{"type":"string"}`) {
					t.Errorf("exit %d: %s", res.code, res.stdout)
				}
				return
			}
			dir, _ := filepath.EvalSymlinks(c.dir)
			want := strings.ReplaceAll(tc.want, "%DIR%", dir)
			errs := res.errors()
			if res.code != 1 || len(errs) != 1 || !strings.HasPrefix(errs[0]["message"].(string), want) || errs[0]["failure_type"] != "config_error" {
				t.Errorf("exit %d %v\nwant a config_error starting %q", res.code, errs, want)
			}
		})
	}
}

// A manifest in the config (as the platform and the manifest server send
// it) reads no file: a JsonFileSchemaLoader is a config_error naming the
// loader, even for a file that exists in the working folder, and a stream
// without a loader has the empty schema.
func TestInjectedManifestReadsNoFile(t *testing.T) {
	cwd, _ := os.Getwd()
	if _, err := os.Stat(filepath.Join(cwd, "harness_test.go")); err != nil {
		t.Fatal(err)
	}
	for loader, want := range map[string]string{
		`schema_loader: {type: JsonFileSchemaLoader, file_path: harness_test.go}`: `streams[0].schema_loader: schema file "harness_test.go" is not read: the manifest came with the request (the config's __injected_declarative_manifest), not from a file, and reads no file; give the schema inline (InlineSchemaLoader)`,
		``: "",
	} {
		m, err := yamlToMap(source(namedStream("inline", "http://127.0.0.1:1", "/x", loader)))
		if err != nil {
			t.Fatal(err)
		}
		c := newConnector(t, "", map[string]any{"__injected_declarative_manifest": m})
		res := runCLI(t, "discover", "--config", c.config)
		errs := res.errors()
		if want == "" {
			if res.code != 0 || !strings.Contains(res.stdout, `"json_schema":{}`) {
				t.Errorf("exit %d: %s", res.code, res.stdout)
			}
			continue
		}
		if res.code != 1 || len(errs) != 1 || errs[0]["message"] != want || errs[0]["failure_type"] != "config_error" {
			t.Errorf("exit %d %v\nwant %q", res.code, errs, want)
		}
	}
}
