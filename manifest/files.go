package manifest

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Files are the files a manifest may read besides itself (its schema files
// and the files their $refs name): those inside the folder of the manifest
// file, every symlink resolved. It is a property of where the manifest came
// from (see Find): the zero value reads none, which is what a manifest that
// came with a request gets (the config's __injected_declarative_manifest, a
// manifest server's request body), whose paths name nothing on this machine
// it could be trusted to read.
type Files struct {
	folder string // absolute, symlinks resolved; "" when no file may be read
}

// FilesIn are the files inside folder (relative or absolute); none when the
// folder cannot be resolved.
func FilesIn(folder string) Files {
	abs, err := filepath.Abs(folder)
	if err != nil {
		return Files{}
	}
	if resolved, err := filepath.EvalSymlinks(abs); err == nil {
		abs = resolved
	}
	return Files{folder: abs}
}

// None tells that no file may be read: the manifest came with a request.
func (f Files) None() bool { return f.folder == "" }

// Folder is the folder the files are read from, for messages; "" for none.
func (f Files) Folder() string { return f.folder }

// ErrNoFiles is a file asked for by a manifest that may read none.
var ErrNoFiles = errors.New("the manifest came with the request (the config's " + InjectedKey + "), not from a file, and reads no file")

// Read reads the file at name, a slash-separated path relative to the
// folder. found is false when there is no such file; a name or a symlink
// that leads out of the folder, or a manifest that may read no file
// (ErrNoFiles), is an error. full is the file's path, for messages.
func (f Files) Read(name string) (b []byte, full string, found bool, err error) {
	if f.None() {
		return nil, "", false, ErrNoFiles
	}
	clean := path.Clean(filepath.ToSlash(name))
	if path.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") || filepath.VolumeName(name) != "" {
		return nil, "", false, fmt.Errorf("%q is not a path inside the manifest's folder %s", name, f.folder)
	}
	full = filepath.Join(f.folder, filepath.FromSlash(clean))
	resolved, err := filepath.EvalSymlinks(full)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, full, false, nil
	}
	if err != nil {
		return nil, full, false, fmt.Errorf("cannot read %s: %v", full, err)
	}
	if rel, err := filepath.Rel(f.folder, resolved); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, full, false, fmt.Errorf("%s leads out of the manifest's folder %s (to %s): not read", full, f.folder, resolved)
	}
	b, err = os.ReadFile(resolved)
	if err != nil {
		return nil, full, false, fmt.Errorf("cannot read %s: %v", full, err)
	}
	return b, full, true, nil
}

// Rel is the path of full (a path Read gave) relative to the folder, with
// slashes, for naming a file beside it.
func (f Files) Rel(full string) string {
	rel, err := filepath.Rel(f.folder, full)
	if err != nil {
		return full
	}
	return filepath.ToSlash(rel)
}
