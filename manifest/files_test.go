package manifest

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// The zero Files, what a manifest that came with a request has (a manifest
// server's body included), reads no file; FilesIn reads inside its folder
// only, symlinks resolved.
func TestFiles(t *testing.T) {
	if _, _, _, err := (Files{}).Read("schemas/a.json"); !(Files{}).None() || !errors.Is(err, ErrNoFiles) {
		t.Errorf("the zero Files read: %v", err)
	}
	root, out := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(root, "in.json"), []byte("in"), 0o600)
	os.WriteFile(filepath.Join(out, "out.json"), []byte("out"), 0o600)
	os.Symlink(filepath.Join(out, "out.json"), filepath.Join(root, "link.json"))
	os.Symlink("in.json", filepath.Join(root, "inner.json"))
	f := FilesIn(root)
	for name, want := range map[string]string{"in.json": "in", "inner.json": "in", "./sub/../in.json": "in"} {
		if b, _, found, err := f.Read(name); err != nil || !found || string(b) != want {
			t.Errorf("%s: %q %v %v", name, b, found, err)
		}
	}
	if _, _, found, err := f.Read("missing.json"); err != nil || found {
		t.Errorf("missing: %v %v", found, err)
	}
	for _, name := range []string{"link.json", "../out.json", "/etc/passwd"} {
		if b, _, _, err := f.Read(name); err == nil {
			t.Errorf("%s read: %q", name, b)
		}
	}
}
