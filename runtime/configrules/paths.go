package configrules

import (
	"strconv"

	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/runtime/transform"
)

// match is one value of the config a dpath glob names.
type match struct {
	path   []string
	parent any // map[string]any or []any
	key    string
	index  int
	value  any
}

// find lists the values of the config the glob matches, parents before
// children, keys in sorted order and items in order.
func find(root map[string]any, g transform.Glob) []match {
	var out []match
	var visit func(v any, path []string)
	visit = func(v any, path []string) {
		switch x := v.(type) {
		case map[string]any:
			for _, k := range interp.SortedKeys(x) {
				p := append(path[:len(path):len(path)], k)
				if g.Match(p) {
					out = append(out, match{path: p, parent: x, key: k, value: x[k]})
				}
				visit(x[k], p)
			}
		case []any:
			for i, e := range x {
				p := append(path[:len(path):len(path)], strconv.Itoa(i))
				if g.Match(p) {
					out = append(out, match{path: p, parent: x, index: i, value: e})
				}
				visit(e, p)
			}
		}
	}
	visit(root, nil)
	return out
}

// set replaces the value of a match in place.
func (m match) set(v any) {
	switch p := m.parent.(type) {
	case map[string]any:
		p[m.key] = v
	case []any:
		p[m.index] = v
	}
}

// create writes v at a literal path, making the objects missing on the way;
// a value in the way that is not an object is replaced by one (dpath's new),
// and a list index past the end pads the list with nulls.
func create(cur any, path []string, v any) any {
	if len(path) == 0 {
		return v
	}
	switch x := cur.(type) {
	case map[string]any:
		x[path[0]] = create(x[path[0]], path[1:], v)
		return x
	case []any:
		if i, err := strconv.Atoi(path[0]); err == nil && i >= 0 {
			for len(x) <= i {
				x = append(x, nil)
			}
			x[i] = create(x[i], path[1:], v)
			return x
		}
	}
	return map[string]any{path[0]: create(nil, path[1:], v)}
}

// remove deletes every value the glob matches: an object's key, or a list's
// item, which is only marked, so that the indexes of further removals are
// still those of the list as read: compact takes the marked items out.
func remove(root map[string]any, g transform.Glob) {
	for _, m := range find(root, g) {
		switch p := m.parent.(type) {
		case map[string]any:
			delete(p, m.key)
		case []any:
			p[m.index] = removed
		}
	}
}

// removed marks a list item remove took out.
var removed = &struct{ removed bool }{true}

// compact takes the marked items out of every list under v.
func compact(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = compact(e)
		}
	case []any:
		out := x[:0]
		for _, e := range x {
			if e != removed {
				out = append(out, compact(e))
			}
		}
		return out
	}
	return v
}
