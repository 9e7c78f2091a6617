package retrieve

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
)

// The staging directory Airbyte's CDK writes the files of file_uploader to:
// AIRBYTE_STAGING_DIRECTORY (or its default) when it exists, else the local
// one.
const (
	stagingDirEnv     = "AIRBYTE_STAGING_DIRECTORY"
	defaultStagingDir = "/staging/files"
	localStagingDir   = "/tmp/airbyte-file-transfer"
)

// stagingDir is the directory a sync stages files in, as pathlib writes it.
func stagingDir() string {
	dir, set := os.LookupEnv(stagingDirEnv)
	if !set {
		dir = defaultStagingDir
	}
	if _, err := os.Stat(dir); err != nil {
		dir = localStagingDir
	}
	return pathlibJoin(dir)
}

// stagedPath is the path of a stream's file relative to the staging
// directory, as the CDK makes it: the stream's name joined with the file
// name without its leading slashes, as pathlib joins them. inside is false
// for a path that names no file inside the directory: one that is absolute
// or climbs out of it with "..", which pathlib keeps and the CDK writes
// wherever it leads.
func stagedPath(stream, name string) (rel string, inside bool) {
	rel = pathlibJoin(stream, strings.TrimLeft(name, "/"))
	clean := path.Clean(rel)
	return rel, !path.IsAbs(rel) && clean != "." && clean != ".." && !strings.HasPrefix(clean, "../")
}

// pathlibJoin joins paths as Python's pathlib does: empty and "." segments
// are dropped, ".." is kept, and an absolute path starts the path again.
func pathlibJoin(paths ...string) string {
	root := ""
	var segments []string
	for _, p := range paths {
		if strings.HasPrefix(p, "/") {
			root, segments = "/", nil
		}
		for _, s := range strings.Split(p, "/") {
			if s != "" && s != "." {
				segments = append(segments, s)
			}
		}
	}
	if root == "" && len(segments) == 0 {
		return "."
	}
	return root + strings.Join(segments, "/")
}

// stageFile writes body to the file rel (from stagedPath) of the staging
// directory dir, making the directories it needs, and returns its size.
// Nothing is written outside dir: the file is opened through an os.Root,
// which no ".." and no symbolic link leaves. A file not written whole is
// removed.
func stageFile(dir, rel string, body io.Reader) (int64, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return 0, err
	}
	defer root.Close()
	if err := makeFolders(root, rel[:max(strings.LastIndexByte(rel, '/'), 0)]); err != nil {
		return 0, err
	}
	f, err := root.Create(rel)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(f, body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		root.Remove(rel)
		return 0, err
	}
	return n, nil
}

// makeFolders makes the folder dir of root and the ones before it, each in
// turn as written: a ".." goes up from a folder made first, as pathlib's
// mkdir(parents=True) makes it (MkdirAll would clean "a/.." to nothing).
func makeFolders(root *os.Root, dir string) error {
	if dir == "" {
		return nil
	}
	segments := strings.Split(dir, "/")
	for i := range segments {
		if err := root.Mkdir(strings.Join(segments[:i+1], "/"), 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
	}
	return nil
}
