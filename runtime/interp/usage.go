package interp

import (
	"reflect"

	"github.com/nikolalohinski/gonja/v2/nodes"
)

// Usage tells how a template uses a variable: not at all, through some of its
// top-level keys only, or in any other way (All).
type Usage struct {
	Used bool
	All  bool
	Keys map[string]bool
}

// Merge adds another template's usage.
func (u *Usage) Merge(o Usage) {
	u.Used = u.Used || o.Used
	u.All = u.All || o.All
	for k := range o.Keys {
		if u.Keys == nil {
			u.Keys = map[string]bool{}
		}
		u.Keys[k] = true
	}
}

// UsageOf reports how the template uses the variable name: `name.key`,
// `name['key']` and `name.get('key', ...)` use one key; any other mention
// uses all of it. A nil or static template uses nothing.
func (t *Template) UsageOf(name string) Usage {
	u := Usage{Keys: map[string]bool{}}
	if t == nil || t.static || t.root == nil {
		return u
	}
	seen := map[uintptr]bool{}
	var visit func(v reflect.Value)
	isName := func(n nodes.Node) bool {
		x, ok := n.(*nodes.Name)
		return ok && x.Name != nil && x.Name.Val == name
	}
	key := func(k string) {
		u.Used = true
		u.Keys[k] = true
	}
	visit = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Interface:
			if !v.IsNil() {
				visit(v.Elem())
			}
			return
		case reflect.Slice, reflect.Array:
			for i := 0; i < v.Len(); i++ {
				visit(v.Index(i))
			}
			return
		case reflect.Map:
			for _, k := range v.MapKeys() {
				visit(v.MapIndex(k))
			}
			return
		case reflect.Pointer:
			if v.IsNil() || seen[v.Pointer()] {
				return
			}
			seen[v.Pointer()] = true
		default:
			return
		}
		switch n := v.Interface().(type) {
		case *nodes.Name:
			if isName(n) {
				u.Used, u.All = true, true
			}
			return
		case *nodes.Call:
			if ga, ok := n.Func.(*nodes.GetAttribute); ok && isName(ga.Node) && ga.Attribute == "get" && len(n.Args) > 0 {
				if s, ok := n.Args[0].(*nodes.String); ok {
					key(s.Val)
					for _, a := range n.Args[1:] {
						visit(reflect.ValueOf(a))
					}
					for _, a := range n.Kwargs {
						visit(reflect.ValueOf(a))
					}
					return
				}
			}
		case *nodes.GetItem:
			if isName(n.Node) {
				if s, ok := n.Arg.(*nodes.String); ok {
					key(s.Val)
					return
				}
			}
		case *nodes.GetAttribute:
			if isName(n.Node) {
				switch n.Attribute {
				case "get", "keys", "items", "values":
					u.Used, u.All = true, true
				default:
					key(n.Attribute)
				}
				return
			}
		case *nodes.Template:
			// its Parent is an inherited template; none here
		}
		e := v.Elem()
		if e.Kind() != reflect.Struct {
			return
		}
		for i := 0; i < e.NumField(); i++ {
			if e.Type().Field(i).IsExported() {
				visit(e.Field(i))
			}
		}
	}
	visit(reflect.ValueOf(t.root))
	return u
}
