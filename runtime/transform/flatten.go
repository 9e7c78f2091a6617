package transform

import (
	"strconv"

	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/manifest"
)

// flattenFields is FlattenFields: the record becomes one level of scalar
// values (lists are kept whole when lists is false). A nested key keeps its
// name unless it is already taken, then it is <parent>.<key>; list items are
// <key>.<index>, and once a list has been met every later key is prefixed.
// The walk is the reference's: depth first, an object's keys last to first.
// Where the reference would overwrite a value already written under the
// same name (a nested key written before the top-level key of that name),
// the nested value moves to its prefixed name instead of being lost.
type flattenFields struct {
	lists bool
}

// flatItem is a value waiting to be written: its name, the name with its
// parent's, and whether it is a key of the record itself.
type flatItem struct {
	value  any
	name   string
	prefix string
	top    bool
}

func (f flattenFields) Apply(rec *Object, _ interp.Vars) error {
	out := &Object{}
	at := map[string]int{}          // name -> index in out
	prefixOf := map[string]string{} // name -> the prefixed name of what is written there
	add := func(name, prefix string, v any) {
		at[name] = len(out.Fields)
		prefixOf[name] = prefix
		out.Fields = append(out.Fields, Field{name, v})
	}
	write := func(it flatItem) {
		i, taken := at[it.name]
		switch {
		case !taken:
			add(it.name, it.prefix, it.value)
		case it.top && prefixOf[it.name] != it.name:
			// A clash the walk did not foresee: the record's own key keeps
			// the plain name and the nested value moves to its prefixed one.
			moved, movedTo := out.Fields[i].Value, prefixOf[it.name]
			out.Fields[i].Value, prefixOf[it.name] = it.value, it.prefix
			add(movedTo, movedTo, moved)
		default:
			if _, used := at[it.prefix]; it.prefix != it.name && !used {
				add(it.prefix, it.prefix, it.value)
			} else {
				out.Fields[i].Value = it.value
			}
		}
	}
	stack := []flatItem{{value: rec, name: "_"}}
	forcePrefix := false
	for len(stack) > 0 {
		cur := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch x := cur.value.(type) {
		case *Object:
			for _, fd := range x.Fields {
				name, prefixed := fd.Key, cur.name+"."+fd.Key
				if _, taken := at[name]; taken || forcePrefix {
					name = prefixed
				}
				stack = append(stack, flatItem{value: fd.Value, name: name, prefix: prefixed, top: x == rec})
			}
		case []any:
			if !f.lists {
				write(cur)
				continue
			}
			for i, e := range x {
				forcePrefix = true
				name := cur.name + "." + strconv.Itoa(i)
				stack = append(stack, flatItem{value: e, name: name, prefix: name})
			}
		default:
			write(cur)
		}
	}
	rec.Fields = out.Fields
	return nil
}

// dpathFlatten is DpathFlattenFields: the object found at field_path (the
// first match when the path has wildcards) has its keys, with the optional
// prefix and suffix, moved to the top of the record; or replaces the whole
// record with replace_record. Nothing happens when the value is not an
// object, or when one of its keys is already at the top (the origin is
// then kept even with delete_origin_value).
type dpathFlatten struct {
	params       map[string]any
	path         []*interp.Template
	deleteOrigin bool
	replace      bool
	prefix       *interp.Template
	suffix       *interp.Template
}

func newDpathFlatten(t *manifest.Transformation, params map[string]any) *dpathFlatten {
	d := t.DpathFlattenFields
	return &dpathFlatten{params: params, path: d.FieldPath, deleteOrigin: d.DeleteOrigin, replace: d.ReplaceRecord,
		prefix: d.KeyPrefix, suffix: d.KeySuffix}
}

func (d *dpathFlatten) Apply(rec *Object, recordVars interp.Vars) error {
	// Airbyte renders the path, prefix and suffix with the config and
	// parameters only: no record, no slice.
	vars := interp.Vars{"config": recordVars["config"], "parameters": d.params}
	path := make([]string, len(d.path))
	for i, t := range d.path {
		s, err := t.Render(vars)
		if err != nil {
			return err
		}
		path[i] = s
	}
	g, err := CompileGlob(path)
	if err != nil {
		return err
	}
	values := g.Values(rec)
	if len(values) == 0 {
		return nil
	}
	found, ok := values[0].(*Object)
	if !ok {
		return nil
	}
	prefix, err := d.prefix.Render(vars)
	if err != nil {
		return err
	}
	suffix, err := d.suffix.Render(vars)
	if err != nil {
		return err
	}
	moved := &Object{Fields: make([]Field, len(found.Fields))}
	for i, f := range found.Fields {
		moved.Fields[i] = Field{prefix + f.Key + suffix, f.Value}
	}
	if d.replace && moved.Len() > 0 {
		rec.Fields = moved.Fields
		return nil
	}
	for _, f := range moved.Fields {
		if _, clash := rec.Get(f.Key); clash {
			return nil
		}
	}
	if d.deleteOrigin {
		if _, err := g.Delete(rec, nil); err != nil {
			return err
		}
		Compact(rec)
	}
	rec.Fields = append(rec.Fields, moved.Fields...)
	return nil
}
