package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"iter"
	"slices"
	"strings"

	"github.com/airbyte-go/source-declarative/lang/interp"
)

// A test read infers its records' schema as Airbyte's builder does: genson's
// SchemaBuilder (integers as numbers, no required lists), then the CDK's
// SchemaInferrer, which merges a null alternative into the type list, drops
// fields that were only ever null, makes every type nullable with null
// last, and marks the primary key and cursor field required.

// schemaNode is genson's SchemaNode: the kinds of values seen at one place,
// in the order first seen.
type schemaNode struct{ kinds []*schemaKind }

// schemaKind is one kind of value seen at a place (genson's strategy): an
// object's fields in the order first seen, an array's items.
type schemaKind struct {
	name  string // null, boolean, number, string, array or object
	props []string
	prop  map[string]*schemaNode
	items *schemaNode // nil until an item was seen
}

func (n *schemaNode) kind(name string) *schemaKind {
	for _, k := range n.kinds {
		if k.name == name {
			return k
		}
	}
	k := &schemaKind{name: name}
	n.kinds = append(n.kinds, k)
	return k
}

// add adds the value the decoder is at.
func (n *schemaNode) add(dec *json.Decoder) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '[' {
			k := n.kind("array")
			for dec.More() {
				if k.items == nil {
					k.items = &schemaNode{}
				}
				if err := k.items.add(dec); err != nil {
					return err
				}
			}
		} else {
			k := n.kind("object")
			for dec.More() {
				key, err := dec.Token()
				if err != nil {
					return err
				}
				name, _ := key.(string)
				if k.prop == nil {
					k.prop = map[string]*schemaNode{}
				}
				p := k.prop[name]
				if p == nil {
					p = &schemaNode{}
					k.prop[name] = p
					k.props = append(k.props, name)
				}
				if err := p.add(dec); err != nil {
					return err
				}
			}
		}
		_, err = dec.Token() // the closing delimiter
		return err
	case nil:
		n.kind("null")
	case bool:
		n.kind("boolean")
	case json.Number:
		n.kind("number")
	case string:
		n.kind("string")
	}
	return nil
}

// schema is genson's to_schema: the kinds that are only a type are merged
// into one type (a sorted list when several), the others follow, and more
// than one schema is an anyOf.
func (n *schemaNode) schema() *Object {
	var types []string
	var generated []*Object
	for _, k := range n.kinds {
		g := k.schema()
		if len(g.keys) == 1 {
			types = append(types, k.name)
		} else {
			generated = append(generated, g)
		}
	}
	if len(types) > 0 {
		t := &Object{}
		if len(types) == 1 {
			t.set("type", types[0])
		} else {
			slices.Sort(types)
			t.set("type", stringList(types))
		}
		generated = append([]*Object{t}, generated...)
	}
	switch len(generated) {
	case 0:
		return &Object{}
	case 1:
		return generated[0]
	}
	anyOf := make([]any, len(generated))
	for i, g := range generated {
		anyOf[i] = g
	}
	out := &Object{}
	out.set("anyOf", anyOf)
	return out
}

func (k *schemaKind) schema() *Object {
	out := &Object{}
	out.set("type", k.name)
	switch {
	case k.name == "object" && len(k.props) > 0:
		props := &Object{}
		for _, p := range k.props {
			props.set(p, k.prop[p].schema())
		}
		out.set("properties", props)
	case k.name == "array" && k.items != nil:
		out.set("items", k.items.schema())
	}
	return out
}

// clean is the SchemaInferrer's _clean: an anyOf of null and one schema
// becomes that schema with a nullable type, a field only ever null is
// dropped, and every type is nullable with null last. The schemas inside an
// anyOf of several are left as genson wrote them.
func clean(node *Object) {
	if anyOf, ok := node.get("anyOf"); ok {
		alts := anyOf.([]any)
		nullAt := slices.IndexFunc(alts, func(a any) bool { return isNullSchema(a.(*Object)) })
		switch {
		case len(alts) == 2 && nullAt >= 0:
			real := alts[1-nullAt].(*Object)
			for _, k := range real.keys {
				node.set(k, real.vals[k])
			}
			node.set("type", []any{real.vals["type"], "null"})
			node.del("anyOf")
		case len(alts) > 1:
			node.set("type", []any{"null"})
		}
	}
	if props, ok := node.get("properties"); ok {
		p := props.(*Object)
		for _, k := range slices.Clone(p.keys) {
			child := p.vals[k].(*Object)
			if t, _ := child.get("type"); t == "null" {
				p.del(k)
			} else {
				clean(child)
			}
		}
	}
	if items, ok := node.get("items"); ok {
		clean(items.(*Object))
	}
	t, _ := node.get("type")
	if list, ok := t.([]any); ok {
		list = slices.DeleteFunc(slices.Clone(list), func(e any) bool { return e == "null" })
		node.set("type", append(list, "null"))
	} else {
		node.set("type", []any{t, "null"})
	}
	if _, ok := node.get("anyOf"); ok {
		node.del("type")
	}
}

// isNullSchema tells the schema {"type": "null"}.
func isNullSchema(o *Object) bool {
	t, _ := o.get("type")
	return len(o.keys) == 1 && t == "null"
}

// Infer infers the records' JSON schema as Airbyte's builder does (nil
// without records). Each primary key path and the cursor field are required
// and not nullable; a path the schema cannot mark is reported, in the
// builder's words, among the errors.
func Infer(records iter.Seq[[]byte], pk [][]string, cursorField string) (*Object, []string) {
	root := &schemaNode{}
	for rec := range records {
		dec := json.NewDecoder(bytes.NewReader(rec))
		dec.UseNumber()
		root.add(dec) // a record is JSON we wrote: it decodes
	}
	if len(root.kinds) == 0 {
		return nil, nil
	}
	schema := &Object{}
	schema.set("$schema", "http://json-schema.org/schema#")
	inferred := root.schema()
	for _, k := range inferred.keys {
		schema.set(k, inferred.vals[k])
	}
	clean(schema)
	schema.set("type", "object")
	var errs []string
	for _, composite := range [][][]string{pk, {{cursorField}}} {
		for _, path := range composite {
			if len(path) == 1 && path[0] == "" {
				continue
			}
			if err := require(schema, path, nil); err != "" {
				errs = append(errs, err)
			}
		}
	}
	return schema, errs
}

// require marks each field along path required and not nullable, as the
// SchemaInferrer's _add_field_as_required does, with its error messages.
func require(node *Object, path, traveled []string) string {
	notNull(node)
	if len(path) == 0 {
		return ""
	}
	props, ok := node.get("properties")
	if !ok {
		return "Path " + interp.Repr(stringList(traveled)) + " does not refer to an object but is `" + node.repr() + "` and hence " + interp.Repr(stringList(path)) + " can't be marked as required."
	}
	child, ok := props.(*Object).get(path[0])
	if !ok {
		return "Path " + interp.Repr(stringList(traveled)) + " does not have field `" + path[0] + "` in the schema and hence can't be marked as required."
	}
	required, _ := node.get("required")
	list, _ := required.([]any)
	if !slices.Contains(list, any(path[0])) {
		node.set("required", append(list, path[0]))
	}
	return require(child.(*Object), path[1:], append(traveled, path[0]))
}

// notNull drops null from a node's types; a single type is written alone.
func notNull(node *Object) {
	t, _ := node.get("type")
	list, ok := t.([]any)
	if !ok {
		return
	}
	list = slices.DeleteFunc(slices.Clone(list), func(e any) bool { return e == "null" })
	if len(list) == 1 {
		node.set("type", list[0])
	} else {
		node.set("type", list)
	}
}

func stringList(names []string) []any {
	out := make([]any, len(names))
	for i, n := range names {
		out[i] = n
	}
	return out
}

// Object is a JSON object that keeps its keys in the order they were set,
// as a Python dict does: the inferred schema lists the fields in the order
// the records first showed them, as the builder writes it.
type Object struct {
	keys []string
	vals map[string]any
}

func (o *Object) set(k string, v any) {
	if o.vals == nil {
		o.vals = map[string]any{}
	}
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

func (o *Object) get(k string) (any, bool) {
	v, ok := o.vals[k]
	return v, ok
}

func (o *Object) del(k string) {
	if _, ok := o.vals[k]; ok {
		delete(o.vals, k)
		o.keys = slices.DeleteFunc(o.keys, func(e string) bool { return e == k })
	}
}

// MarshalJSON writes the object with its keys in order.
func (o *Object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		key, _ := json.Marshal(k)
		val, err := json.Marshal(o.vals[k])
		if err != nil {
			return nil, err
		}
		b.Write(key)
		b.WriteByte(':')
		b.Write(val)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads an object with its keys in order, the objects in it
// as Objects too (the inferred schema of a StreamRead the CDK made, for a
// stream it reads whole).
func (o *Object) UnmarshalJSON(b []byte) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	v, err := decodeOrdered(d)
	if err != nil {
		return err
	}
	obj, ok := v.(*Object)
	if !ok {
		return fmt.Errorf("schema: %s is not a JSON object", b)
	}
	*o = *obj
	return nil
}

// decodeOrdered reads the next JSON value, objects as Objects.
func decodeOrdered(d *json.Decoder) (any, error) {
	t, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch t {
	case json.Delim('{'):
		o := &Object{}
		for d.More() {
			k, err := d.Token()
			if err != nil {
				return nil, err
			}
			v, err := decodeOrdered(d)
			if err != nil {
				return nil, err
			}
			o.set(k.(string), v)
		}
		_, err := d.Token()
		return o, err
	case json.Delim('['):
		var l []any
		for d.More() {
			v, err := decodeOrdered(d)
			if err != nil {
				return nil, err
			}
			l = append(l, v)
		}
		_, err := d.Token()
		return l, err
	}
	return t, nil
}

// repr writes the object as Python's repr writes a dict.
func (o *Object) repr() string {
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(interp.Repr(k))
		b.WriteString(": ")
		switch v := o.vals[k].(type) {
		case *Object:
			b.WriteString(v.repr())
		case []any:
			b.WriteByte('[')
			for j, e := range v {
				if j > 0 {
					b.WriteString(", ")
				}
				if eo, ok := e.(*Object); ok {
					b.WriteString(eo.repr())
				} else {
					b.WriteString(interp.Repr(e))
				}
			}
			b.WriteByte(']')
		default:
			b.WriteString(interp.Repr(v))
		}
	}
	b.WriteByte('}')
	return b.String()
}
