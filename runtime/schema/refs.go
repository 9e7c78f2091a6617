package schema

import (
	"fmt"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/airbyte-go/source-declarative/manifest"
)

// maxRefDepth bounds how many $refs a schema file may chain (a cycle
// ends there).
const maxRefDepth = 16

// maxRefParts bounds the objects and arrays a schema file's $refs expand
// to: refs to parts holding several refs each multiply (4 refs a level, 12
// levels: 16 million copies from a 1 KB file).
const maxRefParts = 250_000

// decodeSchemaFile parses a schema file and replaces each of its $refs by
// what it points at, as the reference's schema files are read: a ref in
// the file itself ("#/definitions/x"), a file of the shared folder beside
// it ("owner.json", then beside it), or a part of one
// ("common.json#/definitions/x"). A replaced object loses its other keys,
// and the definitions of what replaces it; the file's own definitions stay.
func decodeSchemaFile(b []byte, file string, files manifest.Files) (map[string]any, error) {
	doc, err := readSchemaDoc(b, file)
	if err != nil {
		return nil, err
	}
	r := &refs{files: files}
	out, err := r.resolve(doc, doc, file, 0)
	if err != nil {
		return nil, err
	}
	return out.(map[string]any), nil
}

func readSchemaDoc(b []byte, file string) (map[string]any, error) {
	v, err := manifest.FromJSON(b)
	if err != nil {
		return nil, fmt.Errorf("schema file %s is not valid JSON: %v", file, err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("schema file %s must hold a JSON object", file)
	}
	return m, nil
}

// refs resolves the $refs of one schema file: the files they name are
// read from files (inside the manifest's folder), and parts counts the
// objects and arrays seen.
type refs struct {
	files manifest.Files
	parts int
}

// resolve replaces the $refs in v, a part of doc read from file.
func (r *refs) resolve(v, doc any, file string, depth int) (any, error) {
	switch v.(type) {
	case map[string]any, []any:
		if r.parts++; r.parts > maxRefParts {
			return nil, fmt.Errorf("schema file %s: its $refs expand to more than %d parts", file, maxRefParts)
		}
	}
	switch x := v.(type) {
	case map[string]any:
		if ref, ok := x["$ref"].(string); ok {
			return r.resolveRef(ref, doc, file, depth)
		}
		for k, e := range x {
			out, err := r.resolve(e, doc, file, depth)
			if err != nil {
				return nil, err
			}
			x[k] = out
		}
	case []any:
		for i, e := range x {
			out, err := r.resolve(e, doc, file, depth)
			if err != nil {
				return nil, err
			}
			x[i] = out
		}
	}
	return v, nil
}

// resolveRef returns what ref, found in doc read from file, points at,
// its own $refs replaced.
func (r *refs) resolveRef(ref string, doc any, file string, depth int) (any, error) {
	if depth >= maxRefDepth {
		return nil, fmt.Errorf("schema $ref %q in %s nests too deep (a cycle?)", ref, file)
	}
	name, pointer, _ := strings.Cut(ref, "#")
	if name != "" {
		var err error
		if doc, file, err = r.sharedSchemaFile(name, file); err != nil {
			return nil, fmt.Errorf("schema $ref %q: %v", ref, err)
		}
	}
	target, err := followPointer(doc, pointer)
	if err != nil {
		return nil, fmt.Errorf("schema $ref %q in %s: %v", ref, file, err)
	}
	out, err := r.resolve(manifest.DeepCopy(target), doc, file, depth+1)
	if err != nil {
		return nil, err
	}
	if m, ok := out.(map[string]any); ok {
		delete(m, "definitions")
	}
	return out, nil
}

// sharedSchemaFile reads the file a $ref names, in the shared folder beside
// the referring file, then beside it, inside the manifest's folder.
func (r *refs) sharedSchemaFile(name, from string) (any, string, error) {
	clean := path.Clean(filepath.ToSlash(name))
	if path.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") || strings.Contains(clean, ":") {
		return nil, "", fmt.Errorf("must name a file beside the schema")
	}
	dir := path.Dir(r.files.Rel(from))
	for _, c := range []string{path.Join(dir, "shared", clean), path.Join(dir, clean)} {
		b, full, found, err := r.files.Read(c)
		if err != nil {
			return nil, "", err
		}
		if found {
			doc, err := readSchemaDoc(b, full)
			return doc, full, err
		}
	}
	return nil, "", fmt.Errorf("no such file in %s", filepath.Join(filepath.Dir(from), "shared"))
}

// followPointer walks a JSON pointer ("/definitions/x"; empty: the whole
// document) into doc.
func followPointer(doc any, pointer string) (any, error) {
	if pointer == "" {
		return doc, nil
	}
	if !strings.HasPrefix(pointer, "/") {
		return nil, fmt.Errorf("#%s is not a JSON pointer", pointer)
	}
	cur := doc
	for _, seg := range strings.Split(pointer[1:], "/") {
		seg = strings.NewReplacer("~1", "/", "~0", "~").Replace(seg)
		switch x := cur.(type) {
		case map[string]any:
			next, ok := x[seg]
			if !ok {
				return nil, fmt.Errorf("#%s: no %q", pointer, seg)
			}
			cur = next
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(x) {
				return nil, fmt.Errorf("#%s: no item %q", pointer, seg)
			}
			cur = x[i]
		default:
			return nil, fmt.Errorf("#%s: no %q", pointer, seg)
		}
	}
	return cur, nil
}
