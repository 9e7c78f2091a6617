package manifest

import (
	"fmt"

	"github.com/airbyte-go/source-declarative/lang/interp"
)

// Transformation types.
const (
	AddFieldsType          = "AddFields"
	RemoveFieldsType       = "RemoveFields"
	KeysToLowerType        = "KeysToLower"
	KeysToSnakeCaseType    = "KeysToSnakeCase"
	KeysReplaceType        = "KeysReplace"
	FlattenFieldsType      = "FlattenFields"
	DpathFlattenFieldsType = "DpathFlattenFields"
)

var transformationTypes = []string{AddFieldsType, RemoveFieldsType, KeysToLowerType, KeysToSnakeCaseType,
	KeysReplaceType, FlattenFieldsType, DpathFlattenFieldsType}

// Transformation is one record transformation: exactly one of the typed
// fields is set, as Type says.
type Transformation struct {
	Type       string
	Path       string // manifest path, e.g. streams[0].transformations[1]
	Parameters map[string]any

	AddFields          *AddFields
	RemoveFields       *RemoveFields
	Custom             *Custom // a CustomTransformation, run by the components host
	KeysReplace        *KeysReplace
	FlattenFields      *FlattenFields
	DpathFlattenFields *DpathFlattenFields
}

// AddFields adds fields whose values are templates over the record.
type AddFields struct {
	Fields    []AddedField
	Condition *interp.Template // nil: every field is added
}

// AddedField is an AddedFieldDefinition.
type AddedField struct {
	Path      []string
	Value     *interp.Template
	ValueType string // "", string, number, integer or boolean
}

// RemoveFields removes the fields its dpath globs match.
type RemoveFields struct {
	FieldPointers [][]string
	Condition     *interp.Template // nil: every match is removed
}

// KeysReplace replaces text in every key.
type KeysReplace struct {
	Old, New *interp.Template
}

// FlattenFields makes the record one level deep.
type FlattenFields struct {
	FlattenLists bool
}

// DpathFlattenFields moves the keys of one nested object to the top.
type DpathFlattenFields struct {
	FieldPath     []*interp.Template
	DeleteOrigin  bool
	ReplaceRecord bool
	KeyPrefix     *interp.Template
	KeySuffix     *interp.Template
}

// transformations decodes a list of record transformations.
func (d *decoder) transformations(v any, path string) []*Transformation {
	list, ok := v.([]any)
	if !ok {
		if v != nil {
			d.fail(path, "must be a list of transformations")
		}
		return nil
	}
	var out []*Transformation
	for i, e := range list {
		if t := d.transformation(e, index(path, i)); t != nil {
			out = append(out, t)
		}
	}
	return out
}

func (d *decoder) transformation(v any, path string) *Transformation {
	if c := d.custom(v, path); c != nil {
		return &Transformation{Type: c.Type, Path: path, Custom: c}
	}
	m, typ, ok := d.component(v, path, transformationTypes...)
	if !ok {
		return nil
	}
	t := &Transformation{Type: typ, Path: path}
	t.Parameters, _ = m["$parameters"].(map[string]any)
	switch typ {
	case AddFieldsType:
		t.AddFields = &AddFields{Condition: d.condition(m, path)}
		fields, _ := m["fields"].([]any)
		for i, f := range fields {
			fp := fmt.Sprintf("%s.fields[%d]", path, i)
			fm, _, ok := d.component(f, fp, "AddedFieldDefinition")
			if !ok {
				continue
			}
			af := AddedField{Path: strList(fm["path"]), ValueType: str(fm, "value_type", "")}
			af.Value = d.tpl(fm, "value", fp)
			t.AddFields.Fields = append(t.AddFields.Fields, af)
		}
	case RemoveFieldsType:
		t.RemoveFields = &RemoveFields{Condition: d.condition(m, path)}
		pointers, _ := m["field_pointers"].([]any)
		for i, p := range pointers {
			pointer := strList(p)
			if n := countOf(pointer, "**"); n > 1 {
				d.fail(fmt.Sprintf("%s.field_pointers[%d]", path, i), "has %d ** segments; a path may have only one", n)
			}
			t.RemoveFields.FieldPointers = append(t.RemoveFields.FieldPointers, pointer)
		}
	case KeysReplaceType:
		t.KeysReplace = &KeysReplace{Old: d.tpl(m, "old", path), New: d.tpl(m, "new", path)}
	case FlattenFieldsType:
		t.FlattenFields = &FlattenFields{FlattenLists: true}
		if b, ok := m["flatten_lists"].(bool); ok {
			t.FlattenFields.FlattenLists = b
		}
	case DpathFlattenFieldsType:
		df := &DpathFlattenFields{}
		df.DeleteOrigin, _ = m["delete_origin_value"].(bool)
		df.ReplaceRecord, _ = m["replace_record"].(bool)
		for i, seg := range m["field_path"].([]any) {
			df.FieldPath = append(df.FieldPath, d.value(seg, fmt.Sprintf("%s.field_path[%d]", path, i)))
		}
		if kt, ok := m["key_transformation"]; ok && kt != nil {
			if km, _, ok := d.component(kt, path+".key_transformation", "KeyTransformation"); ok {
				df.KeyPrefix = d.tpl(km, "prefix", path+".key_transformation")
				df.KeySuffix = d.tpl(km, "suffix", path+".key_transformation")
			}
		}
		t.DpathFlattenFields = df
	}
	return t
}

// condition compiles an optional condition; empty means none.
func (d *decoder) condition(m map[string]any, path string) *interp.Template {
	if s, ok := m["condition"].(string); !ok || s == "" {
		return nil
	}
	return d.tpl(m, "condition", path)
}

func countOf(l []string, s string) int {
	n := 0
	for _, e := range l {
		if e == s {
			n++
		}
	}
	return n
}
