package schema

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/runtime/failure"
)

// imageFolder is where the source-declarative-manifest image keeps its
// manifest and the files next to it.
var imageFolder = filepath.Dir(manifest.ImagePath)

const draft07 = "http://json-schema.org/draft-07/schema#"

// emptySchema is the schema of a stream that declares none and has no
// schema file: the empty schema, which any record matches, as the
// reference's DefaultSchemaLoader gives.
func emptySchema() map[string]any {
	return map[string]any{}
}

// Loader loads the JSON schemas of a manifest's streams from their schema
// loaders: inline, JSON files next to the manifest (their $refs resolved)
// and dynamic schemas read from an API.
type Loader struct {
	// Folder is the manifest's folder, where schema files are looked for
	// first.
	Folder string
	// Vars are the template variables of a loader with its parameters.
	Vars func(params map[string]any) interp.Vars
	// Log takes the warnings about schemas.
	Log func(level, msg string)
	// FirstRecord reads the first record of a DynamicSchemaLoader's
	// retriever (nil: it has none), st naming the loader's stream.
	FirstRecord func(ctx context.Context, st *manifest.Stream) ([]byte, error)
	// Python gives the schema of a stream whose schema the CDK makes
	// (manifest.Stream.PythonSchema), in the components host.
	Python  func(ctx context.Context, st *manifest.Stream) (map[string]any, error)
	schemas sync.Map // *manifest.Stream -> its JSON schema
}

// Stream returns a stream's JSON schema from its schema loaders, computed
// once per run.
func (ld *Loader) Stream(ctx context.Context, st *manifest.Stream) (map[string]any, error) {
	if s, ok := ld.schemas.Load(st); ok {
		return s.(map[string]any), nil
	}
	var s map[string]any
	var err error
	if st.PythonSchema != nil && ld.Python != nil {
		s, err = ld.Python(ctx, st)
	} else {
		s, err = ld.loadSchema(ctx, st)
	}
	if err != nil {
		return nil, err
	}
	for _, p := range fillNullProperties(s, "") {
		ld.Log("WARN", fmt.Sprintf("Stream %s: schema property %s is null, which is not a schema; it is given the empty schema (any value)", st.Name, p))
	}
	ld.schemas.Store(st, s)
	return s, nil
}

// fillNullProperties gives the empty schema to every property written
// without one (`officialSite:` with nothing after it, a null), so that the
// catalog holds a valid schema; it returns their dotted paths, sorted.
func fillNullProperties(schema map[string]any, prefix string) []string {
	var filled []string
	props, _ := schema["properties"].(map[string]any)
	for _, k := range slices.Sorted(maps.Keys(props)) {
		switch sub := props[k].(type) {
		case nil:
			props[k] = map[string]any{}
			filled = append(filled, prefix+k)
		case map[string]any:
			filled = append(filled, fillNullProperties(sub, prefix+k+".")...)
		}
	}
	if items, ok := schema["items"].(map[string]any); ok {
		filled = append(filled, fillNullProperties(items, prefix)...)
	}
	return filled
}

func (ld *Loader) loadSchema(ctx context.Context, st *manifest.Stream) (map[string]any, error) {
	switch len(st.SchemaLoaders) {
	case 0:
		s, found, err := ld.fileSchema(defaultSchemaPath(st.Name), st.Path+".schema_loader", false)
		if err != nil || found {
			return s, err
		}
		return emptySchema(), nil
	case 1:
		return ld.runLoader(ctx, st, st.SchemaLoaders[0])
	}
	// Several loaders: their properties merged, the first one winning a clash.
	props := map[string]any{}
	for _, l := range st.SchemaLoaders {
		s, err := ld.runLoader(ctx, st, l)
		if err != nil {
			return nil, err
		}
		p, ok := s["properties"].(map[string]any)
		if !ok {
			return nil, failure.Config("%s: the schema has no properties to merge with the other loaders' schemas", l.Path)
		}
		for k, v := range p {
			if _, taken := props[k]; !taken {
				props[k] = v
			}
		}
	}
	return map[string]any{"$schema": draft07, "type": []any{"null", "object"}, "properties": props}, nil
}

func (ld *Loader) runLoader(ctx context.Context, st *manifest.Stream, l *manifest.SchemaLoader) (map[string]any, error) {
	switch l.Type {
	case manifest.InlineSchemaLoaderType:
		return l.Schema, nil
	case manifest.JSONFileSchemaLoaderType:
		p := defaultSchemaPath(st.Name)
		if l.FilePath != nil {
			var err error
			if p, err = l.FilePath.Render(ld.Vars(l.Parameters)); err != nil {
				return nil, failure.Config("%v", err)
			}
		}
		s, found, err := ld.fileSchema(p, l.Path+".file_path", l.FilePath != nil)
		if err != nil {
			return nil, err
		}
		if !found {
			return nil, failure.Config("%s.file_path: schema file %q not found next to the manifest (%s)", l.Path, p, strings.Join(ld.schemaFolders(), " or "))
		}
		return s, nil
	case manifest.DynamicSchemaLoaderType:
		return ld.dynamicSchema(ctx, st, l)
	}
	return nil, failure.Config("%s: %s is not supported", l.Path, l.Type)
}

// defaultSchemaPath is the reference's default JSON file of a stream, in
// the schemas folder next to the manifest (the reference's
// ./<package>/schemas/<stream>.json, its package being the manifest's folder).
func defaultSchemaPath(stream string) string {
	return "./schemas/" + stream + ".json"
}

// schemaFolders are where schema files are looked for: the manifest's
// folder, then the image's manifest folder.
func (ld *Loader) schemaFolders() []string {
	var out []string
	for _, d := range []string{ld.Folder, imageFolder} {
		if d != "" && (len(out) == 0 || out[0] != d) {
			out = append(out, d)
		}
	}
	return out
}

// fileSchema reads a schema file named relative to the manifest. In a path
// the manifest wrote (packaged), the reference's package convention is
// understood: in ./source_x/schemas/a.json the first folder names the
// connector's package, which is the manifest's folder. (Not in the default
// path: a stream named config must not take config.json next to the
// manifest as its schema.) Files outside the manifest's folders are
// refused. found is false when no candidate exists.
func (ld *Loader) fileSchema(p, where string, packaged bool) (map[string]any, bool, error) {
	clean := path.Clean(filepath.ToSlash(p))
	if path.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") {
		return nil, false, failure.Config("%s: schema file %q must be a path inside the manifest's folder", where, p)
	}
	candidates := []string{clean}
	if _, rest, ok := strings.Cut(clean, "/"); ok && packaged {
		candidates = append(candidates, rest)
	}
	for _, dir := range ld.schemaFolders() {
		for _, c := range candidates {
			full := filepath.Join(dir, filepath.FromSlash(c))
			b, err := os.ReadFile(full)
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			if err != nil {
				return nil, false, failure.Config("%s: cannot read schema file %s: %v", where, full, err)
			}
			s, err := decodeSchemaFile(b, full)
			if err != nil {
				return nil, false, failure.Config("%s: %v", where, err)
			}
			return s, true, nil
		}
	}
	return nil, false, nil
}
