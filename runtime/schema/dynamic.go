package schema

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/runtime/failure"
	"github.com/airbyte-go/source-declarative/runtime/transform"
)

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

// dynamicSchema builds a schema from the first record its retriever reads:
// a list of field descriptions, each with a name and a type. An answer the
// manifest cannot read (no list there, a type it does not map) is a
// system_error, as in the reference: no config fixes it.
func (ld *Loader) dynamicSchema(ctx context.Context, st *manifest.Stream, l *manifest.SchemaLoader) (map[string]any, error) {
	ds := l.Dynamic
	first, err := ld.FirstRecord(ctx, &manifest.Stream{Name: st.Name, Path: l.Path, Retriever: ds.Retriever})
	if err != nil {
		return nil, err
	}
	vars := ld.Vars(l.Parameters)
	props := &transform.Object{}
	if first != nil {
		rec, err := transform.Decode(first)
		if err != nil {
			return nil, failure.System("%s: %v", l.Path, err)
		}
		fields, err := pointAt(rec, ds.SchemaPointer, vars)
		if err != nil {
			return nil, failure.System("%s.schema_type_identifier.schema_pointer: %v", l.Path, err)
		}
		list, ok := fields.([]any)
		if fields != nil && !ok {
			return nil, failure.System("%s.schema_type_identifier.schema_pointer: the field descriptions are %s, not a list", l.Path, describe(fields))
		}
		for _, item := range list {
			name, fragment, err := ld.fieldSchema(item, ds, vars)
			if err != nil {
				return nil, failure.System("%s.schema_type_identifier: %v", l.Path, err)
			}
			props.Set(name, transform.FromPlain(fragment))
		}
	}
	if ds.Filter != nil {
		f := transform.NewFilter(ds.Filter, ds.FilterParams)
		kept := &transform.Object{}
		for _, fd := range props.Fields {
			fv := unslicedVars(vars)
			fv["next_page_token"] = nil
			ok, err := f.Keep(&transform.Object{Fields: []transform.Field{fd}}, fv)
			if err != nil {
				return nil, failure.Config("%v", err)
			}
			if ok {
				kept.Fields = append(kept.Fields, fd)
			}
		}
		props = kept
	}
	ts, err := transform.NewList(ds.Transformations)
	if err != nil {
		return nil, failure.Config("%v", err)
	}
	for _, t := range ts {
		if err := t.Apply(props, unslicedVars(vars)); err != nil {
			return nil, failure.Config("%v", err)
		}
	}
	// The reference's DynamicSchemaLoader names draft-07 with https (its
	// other schemas, and ours, say http): written as it writes it.
	return map[string]any{"$schema": "https://json-schema.org/draft-07/schema#", "type": "object", "additionalProperties": true, "properties": transform.ToPlain(props)}, nil
}

// unslicedVars are the variables of the schema's filter and transformations:
// the CDK runs them over the properties with the config and no slice (None).
func unslicedVars(v interp.Vars) interp.Vars {
	out := interp.Vars{"config": v["config"], "parameters": v["parameters"]}
	out.SliceNone()
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
func (ld *Loader) fieldSchema(item any, ds *manifest.DynamicSchema, vars interp.Vars) (string, any, error) {
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
	typ, err = ld.mapType(typ, item, ds, vars)
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
func (ld *Loader) mapType(typ any, item any, ds *manifest.DynamicSchema, vars interp.Vars) (any, error) {
	have := typeNames(typ)
	for _, tm := range ds.TypesMapping {
		if strings.Join(tm.Current, "\x00") != strings.Join(have, "\x00") || have == nil {
			continue
		}
		if tm.Condition != nil {
			// The CDK gives the condition no parameters.
			v := interp.Vars{"config": vars["config"], "parameters": map[string]any{}, "raw_schema": transform.ToPlain(item)}
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
	b, _ := json.Marshal(t)
	return nil, fmt.Errorf("type %s must be a type name or a list of two", b)
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
