package interp

import (
	"sort"
)

// pyDict is a dict with a key that is not a string ({1: 2}, {none: 1}): its
// keys, compared as Python compares them (1, 1.0 and True are one key), and
// values in insertion order. A dict whose keys are all strings is a
// map[string]any.
type pyDict struct{ keys, vals []any }

// set adds or replaces a key, as a dict display does: a key equal to one
// already there keeps its place and its first spelling.
func (d *pyDict) set(k, v any) {
	for i, e := range d.keys {
		if equal(e, k) {
			d.vals[i] = v
			return
		}
	}
	d.keys, d.vals = append(d.keys, k), append(d.vals, v)
}

func (d *pyDict) get(k any) (any, bool) {
	for i, e := range d.keys {
		if equal(e, k) {
			return d.vals[i], true
		}
	}
	return nil, false
}

// jsonKey is the key json.dumps writes for a dict key.
func jsonKey(k any) string {
	switch x := k.(type) {
	case nil:
		return "null"
	case bool:
		if x {
			return "true"
		}
		return "false"
	}
	return pyStr(k)
}

// sortedPairs are the (key, value) tuples in the order of their keys, or a
// TypeError when the keys do not compare.
func (d *pyDict) sortedPairs() ([]any, error) {
	idx := make([]int, len(d.keys))
	for i := range idx {
		idx[i] = i
	}
	var failure error
	sort.SliceStable(idx, func(x, y int) bool {
		lt, err := less(d.keys[idx[x]], d.keys[idx[y]])
		if err != nil && failure == nil {
			failure = err
		}
		return lt
	})
	out := make([]any, len(idx))
	for i, j := range idx {
		out[i] = tuple{d.keys[j], d.vals[j]}
	}
	return out, failure
}

func pyDictMethods() map[string]methodFunc {
	view := func(kind string) methodFunc {
		return func(_ *state, recv any, a *args) (any, error) {
			d := recv.(*pyDict)
			out := make([]any, len(d.keys))
			for i, k := range d.keys {
				switch kind {
				case "keys":
					out[i] = k
				case "values":
					out[i] = d.vals[i]
				default:
					out[i] = tuple{k, d.vals[i]}
				}
			}
			return &view{kind: kind, items: out}, nil
		}
	}
	return map[string]methodFunc{
		"keys": view("keys"), "values": view("values"), "items": view("items"),
		"get": func(_ *state, recv any, a *args) (any, error) {
			if len(a.pos) < 1 || len(a.pos) > 2 || len(a.names) > 0 {
				return nil, typeErr("get expected 1 or 2 arguments, got %d", len(a.pos))
			}
			if v, ok := recv.(*pyDict).get(a.pos[0]); ok {
				return v, nil
			}
			if len(a.pos) == 2 {
				return a.pos[1], nil
			}
			return nil, nil
		},
	}
}
