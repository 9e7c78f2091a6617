package manifest

import (
	"fmt"

	"github.com/airbyte-go/source-declarative/lang/interp"
)

// Schema loader types.
const (
	InlineSchemaLoaderType   = "InlineSchemaLoader"
	JSONFileSchemaLoaderType = "JsonFileSchemaLoader"
	DynamicSchemaLoaderType  = "DynamicSchemaLoader"
)

// SchemaLoader gives a stream's JSON schema: written inline, read from a
// file, or built from an API's description of its fields.
type SchemaLoader struct {
	Type       string
	Path       string
	Parameters map[string]any
	Schema     map[string]any   // InlineSchemaLoader
	FilePath   *interp.Template // JsonFileSchemaLoader; nil: the default path
	Dynamic    *DynamicSchema   // DynamicSchemaLoader
}

// DynamicSchema is a DynamicSchemaLoader: the first record its retriever
// reads describes the fields.
type DynamicSchema struct {
	Retriever       *Retriever
	SchemaPointer   []*interp.Template // to the list of field descriptions
	KeyPointer      []*interp.Template // to a field's name
	TypePointer     []*interp.Template // to a field's type; nil: every field is a string
	TypesMapping    []TypesMap
	Filter          *interp.Template // schema_filter's condition; nil: no filter
	FilterParams    map[string]any
	Transformations []*Transformation
}

// TypesMap replaces a field type the API reports by another.
type TypesMap struct {
	Current   []string // one type, or a pair
	Target    any      // string, []string or *ComplexFieldType
	Condition *interp.Template
}

// ComplexFieldType is an array type with the type of its items.
type ComplexFieldType struct {
	FieldType string
	Items     any // string or *ComplexFieldType; nil: none
}

var schemaLoaderTypes = []string{InlineSchemaLoaderType, JSONFileSchemaLoaderType, DynamicSchemaLoaderType}

// schemaLoaders decodes schema_loader: one loader or a list of them.
func (d *decoder) schemaLoaders(v any, path string) []*SchemaLoader {
	switch x := v.(type) {
	case nil:
		return nil
	case []any:
		var out []*SchemaLoader
		for i, e := range x {
			if l := d.schemaLoader(e, index(path, i)); l != nil {
				out = append(out, l)
			}
		}
		return out
	}
	if l := d.schemaLoader(v, path); l != nil {
		return []*SchemaLoader{l}
	}
	return nil
}

func (d *decoder) schemaLoader(v any, path string) *SchemaLoader {
	m, typ, ok := d.component(v, path, schemaLoaderTypes...)
	if !ok {
		return nil
	}
	l := &SchemaLoader{Type: typ, Path: path}
	l.Parameters, _ = m["$parameters"].(map[string]any)
	switch typ {
	case InlineSchemaLoaderType:
		l.Schema, _ = m["schema"].(map[string]any)
		if l.Schema == nil {
			l.Schema = map[string]any{}
		}
	case JSONFileSchemaLoaderType:
		if s, ok := m["file_path"].(string); ok && s != "" {
			l.FilePath = d.value(s, path+".file_path")
		}
	case DynamicSchemaLoaderType:
		l.Dynamic = d.dynamicSchema(m, path)
	}
	return l
}

func (d *decoder) dynamicSchema(m map[string]any, path string) *DynamicSchema {
	ds := &DynamicSchema{Retriever: d.simpleRetriever(m["retriever"], path+".retriever")}
	if f, ok := m["schema_filter"]; ok && f != nil {
		if fm, _, ok := d.component(f, path+".schema_filter", "RecordFilter"); ok {
			ds.Filter = d.condition(fm, path+".schema_filter") // none: every field
			ds.FilterParams, _ = fm["$parameters"].(map[string]any)
		}
	}
	ds.Transformations = d.transformations(m["schema_transformations"], path+".schema_transformations")
	ip := path + ".schema_type_identifier"
	id, _, ok := d.component(m["schema_type_identifier"], ip, "SchemaTypeIdentifier")
	if !ok {
		return ds
	}
	ds.SchemaPointer = d.templates(id["schema_pointer"], ip+".schema_pointer")
	ds.KeyPointer = d.templates(id["key_pointer"], ip+".key_pointer")
	if tp, ok := id["type_pointer"]; ok && tp != nil {
		ds.TypePointer = d.templates(tp, ip+".type_pointer")
	}
	maps, _ := id["types_mapping"].([]any)
	for i, e := range maps {
		mp := fmt.Sprintf("%s.types_mapping[%d]", ip, i)
		tm, _ := e.(map[string]any)
		t := TypesMap{Condition: d.condition(tm, mp)}
		switch c := tm["current_type"].(type) {
		case string:
			t.Current = []string{c}
		case []any:
			t.Current = strList(c)
		}
		t.Target = d.fieldType(tm["target_type"], mp+".target_type")
		ds.TypesMapping = append(ds.TypesMapping, t)
	}
	return ds
}

// fieldType decodes a TypesMap target: a type name, a pair of names, or a
// ComplexFieldType.
func (d *decoder) fieldType(v any, path string) any {
	switch x := v.(type) {
	case string:
		return x
	case []any:
		return strList(x)
	case map[string]any:
		c := &ComplexFieldType{}
		c.FieldType, _ = x["field_type"].(string)
		if c.FieldType == "" {
			d.fail(path+".field_type", "is required")
		}
		if items, ok := x["items"]; ok && items != nil {
			c.Items = d.fieldType(items, path+".items")
			if c.FieldType != "array" {
				d.fail(path+".items", "is only allowed when field_type is array")
			}
		}
		return c
	}
	d.fail(path, "must be a type name, a list of two type names or a ComplexFieldType")
	return nil
}

// templates compiles a list of templates (a path of keys).
func (d *decoder) templates(v any, path string) []*interp.Template {
	l, _ := v.([]any)
	out := make([]*interp.Template, 0, len(l))
	for i, e := range l {
		out = append(out, d.value(e, index(path, i)))
	}
	return out
}
