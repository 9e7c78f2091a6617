package runtime

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

	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/protocol"
	"github.com/airbyte-go/source-declarative/runtime/incremental"
	"github.com/airbyte-go/source-declarative/runtime/transform"
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

// streamSchema returns a stream's JSON schema from its schema loaders,
// computed once per run.
func (r *Runner) streamSchema(ctx context.Context, st *manifest.Stream) (map[string]any, error) {
	if s, ok := r.schemas.Load(st); ok {
		return s.(map[string]any), nil
	}
	s, err := r.loadSchema(ctx, st)
	if err != nil {
		return nil, err
	}
	for _, p := range fillNullProperties(s, "") {
		r.log("WARN", fmt.Sprintf("Stream %s: schema property %s is null, which is not a schema; it is given the empty schema (any value)", st.Name, p))
	}
	r.schemas.Store(st, s)
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

func (r *Runner) loadSchema(ctx context.Context, st *manifest.Stream) (map[string]any, error) {
	switch len(st.SchemaLoaders) {
	case 0:
		s, found, err := r.fileSchema(defaultSchemaPath(st.Name), st.Path+".schema_loader", false)
		if err != nil || found {
			return s, err
		}
		return emptySchema(), nil
	case 1:
		return r.runLoader(ctx, st, st.SchemaLoaders[0])
	}
	// Several loaders: their properties merged, the first one winning a clash.
	props := map[string]any{}
	for _, l := range st.SchemaLoaders {
		s, err := r.runLoader(ctx, st, l)
		if err != nil {
			return nil, err
		}
		p, ok := s["properties"].(map[string]any)
		if !ok {
			return nil, ConfigErr("%s: the schema has no properties to merge with the other loaders' schemas", l.Path)
		}
		for k, v := range p {
			if _, taken := props[k]; !taken {
				props[k] = v
			}
		}
	}
	return map[string]any{"$schema": draft07, "type": []any{"null", "object"}, "properties": props}, nil
}

func (r *Runner) runLoader(ctx context.Context, st *manifest.Stream, l *manifest.SchemaLoader) (map[string]any, error) {
	switch l.Type {
	case manifest.InlineSchemaLoaderType:
		return l.Schema, nil
	case manifest.JSONFileSchemaLoaderType:
		p := defaultSchemaPath(st.Name)
		if l.FilePath != nil {
			var err error
			if p, err = l.FilePath.Render(r.vars(l.Parameters, nil)); err != nil {
				return nil, ConfigErr("%v", err)
			}
		}
		s, found, err := r.fileSchema(p, l.Path+".file_path", l.FilePath != nil)
		if err != nil {
			return nil, err
		}
		if !found {
			return nil, ConfigErr("%s.file_path: schema file %q not found next to the manifest (%s)", l.Path, p, strings.Join(r.schemaFolders(), " or "))
		}
		return s, nil
	case manifest.DynamicSchemaLoaderType:
		return r.dynamicSchema(ctx, st, l)
	}
	return nil, ConfigErr("%s: %s is not supported", l.Path, l.Type)
}

// defaultSchemaPath is the reference's default JSON file of a stream, in
// the schemas folder next to the manifest (the reference's
// ./<package>/schemas/<stream>.json, its package being the manifest's folder).
func defaultSchemaPath(stream string) string {
	return "./schemas/" + stream + ".json"
}

// schemaFolders are where schema files are looked for: the manifest's
// folder, then the image's manifest folder.
func (r *Runner) schemaFolders() []string {
	var out []string
	for _, d := range []string{r.Source.Folder, imageFolder} {
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
func (r *Runner) fileSchema(p, where string, packaged bool) (map[string]any, bool, error) {
	clean := path.Clean(filepath.ToSlash(p))
	if path.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") {
		return nil, false, ConfigErr("%s: schema file %q must be a path inside the manifest's folder", where, p)
	}
	candidates := []string{clean}
	if _, rest, ok := strings.Cut(clean, "/"); ok && packaged {
		candidates = append(candidates, rest)
	}
	for _, dir := range r.schemaFolders() {
		for _, c := range candidates {
			full := filepath.Join(dir, filepath.FromSlash(c))
			b, err := os.ReadFile(full)
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			if err != nil {
				return nil, false, ConfigErr("%s: cannot read schema file %s: %v", where, full, err)
			}
			s, err := decodeSchemaFile(b, full)
			if err != nil {
				return nil, false, ConfigErr("%s: %v", where, err)
			}
			return s, true, nil
		}
	}
	return nil, false, nil
}

// airbyteTypes are the field types a DynamicSchemaLoader may name.
var airbyteTypes = map[string]map[string]any{
	"string":                     {"type": []any{"null", "string"}},
	"boolean":                    {"type": []any{"null", "boolean"}},
	"date":                       {"type": []any{"null", "string"}, "format": "date"},
	"timestamp_without_timezone": {"type": []any{"null", "string"}, "format": "date-time", "airbyte_type": "timestamp_without_timezone"},
	"timestamp_with_timezone":    {"type": []any{"null", "string"}, "format": "date-time"},
	"time_without_timezone":      {"type": []any{"null", "string"}, "format": "time", "airbyte_type": "time_without_timezone"},
	"time_with_timezone":         {"type": []any{"null", "string"}, "format": "time", "airbyte_type": "time_with_timezone"},
	"integer":                    {"type": []any{"null", "integer"}},
	"number":                     {"type": []any{"null", "number"}},
	"array":                      {"type": []any{"null", "array"}},
	"object":                     {"type": []any{"null", "object"}},
}

// errFirstRecord stops a dynamic schema read at its first record.
var errFirstRecord = errors.New("first record read")

// dynamicSchema builds a schema from the first record its retriever reads:
// a list of field descriptions, each with a name and a type.
func (r *Runner) dynamicSchema(ctx context.Context, st *manifest.Stream, l *manifest.SchemaLoader) (map[string]any, error) {
	ds := l.Dynamic
	sr, err := r.streamReader(&manifest.Stream{Name: st.Name, Path: l.Path, Retriever: ds.Retriever}, incremental.FullRefresh{})
	if err != nil {
		return nil, err
	}
	var first []byte
	err = sr.read(ctx, nil, 0, func(records [][]byte) error {
		first = records[0]
		return errFirstRecord
	})
	if err != nil && !errors.Is(err, errFirstRecord) {
		return nil, err
	}
	vars := r.vars(l.Parameters, nil)
	props := &transform.Object{}
	if first != nil {
		rec, err := transform.Decode(first)
		if err != nil {
			return nil, &Error{Failure: protocol.SystemError, Message: fmt.Sprintf("%s: %v", l.Path, err)}
		}
		fields, err := pointAt(rec, ds.SchemaPointer, vars)
		if err != nil {
			return nil, ConfigErr("%s.schema_type_identifier.schema_pointer: %v", l.Path, err)
		}
		list, ok := fields.([]any)
		if fields != nil && !ok {
			return nil, ConfigErr("%s.schema_type_identifier.schema_pointer: the field descriptions are %s, not a list", l.Path, describe(fields))
		}
		for _, item := range list {
			name, fragment, err := r.fieldSchema(item, ds, vars)
			if err != nil {
				return nil, ConfigErr("%s.schema_type_identifier: %v", l.Path, err)
			}
			props.Set(name, transform.FromPlain(fragment))
		}
	}
	if ds.Filter != nil {
		f := transform.NewFilter(ds.Filter, ds.FilterParams)
		kept := &transform.Object{}
		for _, fd := range props.Fields {
			ok, err := f.Keep(&transform.Object{Fields: []transform.Field{fd}}, copyVars(vars))
			if err != nil {
				return nil, ConfigErr("%v", err)
			}
			if ok {
				kept.Fields = append(kept.Fields, fd)
			}
		}
		props = kept
	}
	ts, err := transform.NewList(ds.Transformations)
	if err != nil {
		return nil, ConfigErr("%v", err)
	}
	for _, t := range ts {
		if err := t.Apply(props, copyVars(vars)); err != nil {
			return nil, ConfigErr("%v", err)
		}
	}
	return map[string]any{"$schema": draft07, "type": "object", "additionalProperties": true, "properties": transform.ToPlain(props)}, nil
}

func copyVars(v interp.Vars) interp.Vars {
	out := make(interp.Vars, len(v)+2)
	for k, e := range v {
		out[k] = e
	}
	return out
}

// pointAt follows a pointer of templates (rendered with config) into v.
func pointAt(v any, pointer []*interp.Template, vars interp.Vars) (any, error) {
	keys := make([]string, len(pointer))
	for i, t := range pointer {
		s, err := t.Render(vars)
		if err != nil {
			return nil, err
		}
		keys[i] = s
	}
	g, err := transform.CompileGlob(keys)
	if err != nil {
		return nil, err
	}
	if values := g.Values(v); len(values) > 0 {
		return values[0], nil
	}
	return nil, nil
}

// fieldSchema reads one field description: its name and its schema.
func (r *Runner) fieldSchema(item any, ds *manifest.DynamicSchema, vars interp.Vars) (string, any, error) {
	k, err := pointAt(item, ds.KeyPointer, vars)
	if err != nil {
		return "", nil, err
	}
	name, ok := k.(string)
	if !ok {
		return "", nil, fmt.Errorf("key_pointer: a field name must be text, got %s", describe(transform.ToPlain(k)))
	}
	var typ any = "string"
	if ds.TypePointer != nil {
		t, err := pointAt(item, ds.TypePointer, vars)
		if err != nil {
			return "", nil, err
		}
		if t != nil {
			typ = transform.ToPlain(t)
		}
	}
	typ, err = r.mapType(typ, item, ds, vars)
	if err != nil {
		return "", nil, err
	}
	s, err := typeSchema(typ)
	if err != nil {
		return "", nil, fmt.Errorf("field %q: %v", name, err)
	}
	return name, s, nil
}

// mapType applies the first types_mapping entry that matches the type and
// whose condition (over raw_schema, the description) holds.
func (r *Runner) mapType(typ any, item any, ds *manifest.DynamicSchema, vars interp.Vars) (any, error) {
	have := typeNames(typ)
	for _, tm := range ds.TypesMapping {
		if strings.Join(tm.Current, "\x00") != strings.Join(have, "\x00") || have == nil {
			continue
		}
		if tm.Condition != nil {
			v := copyVars(vars)
			v["raw_schema"] = transform.ToPlain(item)
			ok, err := tm.Condition.Bool(v)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
		}
		return tm.Target, nil
	}
	return typ, nil
}

func typeNames(t any) []string {
	switch x := t.(type) {
	case string:
		return []string{x}
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil
			}
			out = append(out, s)
		}
		return out
	case []string:
		return x
	}
	return nil
}

// typeSchema is the schema fragment of a type: a name, a pair of names
// (oneOf), or an array type with its items.
func typeSchema(t any) (map[string]any, error) {
	switch x := t.(type) {
	case string:
		s, ok := airbyteTypes[x]
		if !ok {
			return nil, fmt.Errorf("type %q is not one of string, boolean, integer, number, array, object, date, timestamp_with_timezone, timestamp_without_timezone, time_with_timezone, time_without_timezone; map it with types_mapping", x)
		}
		return manifest.DeepCopy(s).(map[string]any), nil
	case *manifest.ComplexFieldType:
		s, err := typeSchema(x.FieldType)
		if err != nil || x.Items == nil {
			return s, err
		}
		items, err := typeSchema(x.Items)
		if err != nil {
			return nil, err
		}
		s["items"] = items
		return s, nil
	}
	if names := typeNames(t); len(names) == 2 {
		a, err := typeSchema(names[0])
		if err != nil {
			return nil, err
		}
		b, err := typeSchema(names[1])
		if err != nil {
			return nil, err
		}
		return map[string]any{"oneOf": []any{a, b}}, nil
	}
	return nil, fmt.Errorf("type %s must be a type name or a list of two", jsonText(t))
}

func describe(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "text"
	case []any:
		return "a list"
	case map[string]any, *transform.Object:
		return "an object"
	case bool:
		return "a boolean"
	}
	return "a number"
}
