package runtime

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
)

// schemaNode gathers what the records hold at one place: the JSON types
// seen, an object's fields and an array's items.
type schemaNode struct {
	types map[string]bool
	props map[string]*schemaNode
	items *schemaNode
}

func (n *schemaNode) add(v any) {
	if n.types == nil {
		n.types = map[string]bool{}
	}
	n.types[jsonType(v)] = true
	switch x := v.(type) {
	case map[string]any:
		if n.props == nil {
			n.props = map[string]*schemaNode{}
		}
		for k, e := range x {
			if n.props[k] == nil {
				n.props[k] = &schemaNode{}
			}
			n.props[k].add(e)
		}
	case []any:
		for _, e := range x {
			if n.items == nil {
				n.items = &schemaNode{}
			}
			n.items.add(e)
		}
	}
}

// onlyNull tells a field that was never anything but null.
func (n *schemaNode) onlyNull() bool {
	return len(n.types) == 1 && n.types["null"]
}

// schema is the node as Airbyte's SchemaInferrer writes it: the types
// sorted, null last and always there.
func (n *schemaNode) schema() map[string]any {
	var types []any
	var names []string
	for t := range n.types {
		if t != "null" {
			names = append(names, t)
		}
	}
	sort.Strings(names)
	for _, t := range names {
		types = append(types, t)
	}
	out := map[string]any{"type": append(types, "null")}
	if n.types["object"] {
		props := map[string]any{}
		for k, p := range n.props {
			if !p.onlyNull() {
				props[k] = p.schema()
			}
		}
		out["properties"] = props
	}
	if n.types["array"] && n.items != nil {
		out["items"] = n.items.schema()
	}
	return out
}

// inferSchema infers the records' JSON schema as Airbyte's builder does
// (nil without records). Each primary key path and the cursor field are
// required and not nullable; a path the records do not hold is reported, as
// Airbyte's builder reports it, among the errors.
func inferSchema(pages []TestPage, pk [][]string, cursorField string) (map[string]any, []string) {
	root := &schemaNode{}
	for _, p := range pages {
		for _, rec := range p.Records {
			var v map[string]any
			if json.Unmarshal(rec, &v) == nil {
				root.add(v)
			}
		}
	}
	if root.types == nil {
		return nil, nil
	}
	schema := root.schema()
	schema["type"] = "object"
	schema["$schema"] = "http://json-schema.org/schema#"
	paths := slices.Clone(pk)
	if cursorField != "" {
		paths = append(paths, []string{cursorField})
	}
	var errs []string
	for _, path := range paths {
		if err := require(schema, path); err != "" {
			errs = append(errs, err)
		}
	}
	return schema, errs
}

// require marks each field along path required and not nullable.
func require(node map[string]any, path []string) string {
	var traveled []string
	for _, name := range path {
		props, _ := node["properties"].(map[string]any)
		if props == nil {
			return fmt.Sprintf("Path %s does not refer to an object but is `%v` and hence %s can't be marked as required.", pyList(traveled), node["type"], pyList(path))
		}
		child, ok := props[name].(map[string]any)
		if !ok {
			return fmt.Sprintf("Path %s does not have field `%s` in the schema and hence can't be marked as required.", pyList(traveled), name)
		}
		required, _ := node["required"].([]string)
		if !slices.Contains(required, name) {
			node["required"] = append(required, name)
		}
		notNull(child)
		traveled = append(traveled, name)
		node = child
	}
	return ""
}

// notNull drops null from a node's types; a single type is written alone.
func notNull(node map[string]any) {
	types, ok := node["type"].([]any)
	if !ok {
		return
	}
	types = slices.DeleteFunc(slices.Clone(types), func(t any) bool { return t == "null" })
	if len(types) == 1 {
		node["type"] = types[0]
	} else {
		node["type"] = types
	}
}

// pyList writes names as Python prints a list of strings: ['a', 'b'].
func pyList(names []string) string {
	out := "["
	for i, n := range names {
		if i > 0 {
			out += ", "
		}
		out += "'" + n + "'"
	}
	return out + "]"
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64, json.Number:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	}
	return "object"
}
