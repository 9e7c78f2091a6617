package interp

// pyList is a list a template made ([], [a, b]): Python's list, which its
// methods change in place, so that every name bound to it sees the change
// ({% set ids = [] %}{% for r in rows %}{% set _ = ids.append(r.id) %}
// {% endfor %}{{ ids }}, as bing-ads, gitlab and google-sheets write). A
// list from the data (a record's, the config's) is a []any; canon reads a
// pyList as the []any of its items.
type pyList struct{ items []any }

// element is a value read from a dict: a list the template made stays that
// list ({'x': []}.x.append(1) changes the dict's list), any other value is
// read as the engine's own.
func element(v any) any {
	if l, ok := v.(*pyList); ok {
		return l
	}
	return canon(v)
}

// mutable returns the pyList a list method was called on, or an error
// naming the method when the list came from the data.
func mutable(recv any, method string) (*pyList, error) {
	if l, ok := recv.(*pyList); ok {
		return l, nil
	}
	return nil, valueErr("list.%s() of a list from the data is not supported: copy it into a list of the template's first ({%% set l = x | list %%})", method)
}

// listMutations are the list methods that change it in place; each
// answers None, but pop, as Python's do.
func listMutations() map[string]methodFunc {
	return map[string]methodFunc{
		"append": func(_ *state, recv any, a *args) (any, error) {
			l, err := mutable(recv, "append")
			if err != nil {
				return nil, err
			}
			if len(a.pos) != 1 || len(a.names) > 0 {
				return nil, typeErr("list.append() takes exactly one argument (%d given)", len(a.pos)+len(a.names))
			}
			return nil, l.grow(a.pos...)
		},
		"extend": func(_ *state, recv any, a *args) (any, error) {
			l, err := mutable(recv, "extend")
			if err != nil {
				return nil, err
			}
			if len(a.pos) != 1 || len(a.names) > 0 {
				return nil, typeErr("list.extend() takes exactly one argument (%d given)", len(a.pos)+len(a.names))
			}
			more, err := iterate(a.pos[0])
			if err != nil {
				return nil, err
			}
			return nil, l.grow(more...)
		},
		"insert": func(_ *state, recv any, a *args) (any, error) {
			l, err := mutable(recv, "insert")
			if err != nil {
				return nil, err
			}
			if len(a.pos) != 2 || len(a.names) > 0 {
				return nil, typeErr("insert expected 2 arguments, got %d", len(a.pos)+len(a.names))
			}
			i, ok := intLike(a.pos[0])
			if !ok {
				return nil, typeErr("'%s' object cannot be interpreted as an integer", typeName(a.pos[0]))
			}
			n := int64(len(l.items))
			switch {
			case i < 0 && i+n < 0:
				i = 0
			case i < 0:
				i += n
			case i > n:
				i = n
			}
			if err := checkItems(len(l.items) + 1); err != nil {
				return nil, err
			}
			out := make([]any, 0, len(l.items)+1)
			out = append(append(append(out, l.items[:i]...), a.pos[1]), l.items[i:]...)
			l.items = out
			return nil, nil
		},
		"pop": func(_ *state, recv any, a *args) (any, error) {
			l, err := mutable(recv, "pop")
			if err != nil {
				return nil, err
			}
			if len(a.pos) > 1 || len(a.names) > 0 {
				return nil, typeErr("pop expected at most 1 argument, got %d", len(a.pos)+len(a.names))
			}
			n := int64(len(l.items))
			if n == 0 {
				return nil, valueErr("pop from empty list")
			}
			i := n - 1
			if len(a.pos) == 1 {
				var ok bool
				if i, ok = intLike(a.pos[0]); !ok {
					return nil, typeErr("'%s' object cannot be interpreted as an integer", typeName(a.pos[0]))
				}
				if i < 0 {
					i += n
				}
				if i < 0 || i >= n {
					return nil, valueErr("pop index out of range")
				}
			}
			v := l.items[i]
			l.items = append(l.items[:i:i], l.items[i+1:]...)
			return v, nil
		},
		"remove": func(_ *state, recv any, a *args) (any, error) {
			l, err := mutable(recv, "remove")
			if err != nil {
				return nil, err
			}
			if len(a.pos) != 1 || len(a.names) > 0 {
				return nil, typeErr("list.remove() takes exactly one argument (%d given)", len(a.pos)+len(a.names))
			}
			for i, e := range l.items {
				if equal(e, a.pos[0]) {
					l.items = append(l.items[:i:i], l.items[i+1:]...)
					return nil, nil
				}
			}
			return nil, valueErr("list.remove(x): x not in list")
		},
		"clear": func(_ *state, recv any, a *args) (any, error) {
			l, err := mutable(recv, "clear")
			if err != nil {
				return nil, err
			}
			l.items = nil
			return nil, nil
		},
		"reverse": func(_ *state, recv any, a *args) (any, error) {
			l, err := mutable(recv, "reverse")
			if err != nil {
				return nil, err
			}
			out := make([]any, len(l.items))
			for i, e := range l.items {
				out[len(out)-1-i] = e
			}
			l.items = out
			return nil, nil
		},
		"sort": func(s *state, recv any, a *args) (any, error) {
			l, err := mutable(recv, "sort")
			if err != nil {
				return nil, err
			}
			if len(a.pos) > 0 {
				return nil, typeErr("sort() takes no positional arguments")
			}
			if err := a.check("sort", 0, "key", "reverse"); err != nil {
				return nil, err
			}
			if key, _ := a.get(-1, "key"); key != nil {
				return nil, valueErr("list.sort(key=...) is not supported: use the sort filter's attribute")
			}
			reverse, _ := a.get(-1, "reverse")
			sorted, err := sortItems(s, l.items, func(v any) (any, error) { return v, nil }, Truthy(reverse))
			if err != nil {
				return nil, err
			}
			l.items = sorted
			return nil, nil
		},
	}
}

// grow appends items, within the engine's bound on a list's items. A value
// read before (canon hands out l.items) keeps what it held: appending
// writes past its length only, and every other change makes a new array.
func (l *pyList) grow(more ...any) error {
	if err := checkItems(len(l.items) + len(more)); err != nil {
		return err
	}
	l.items = append(l.items, more...)
	return nil
}

// settled is a template's value as it leaves the engine: each list the
// template made (at any depth) read as the []any of its items. A list or
// dict holding none is returned as it is (changed false), not copied.
func settled(v any, depth int) (out any, changed bool) {
	if depth > 4*maxNesting {
		return v, false
	}
	switch x := v.(type) {
	case *pyList:
		items := make([]any, len(x.items))
		for i, e := range x.items {
			items[i], _ = settled(e, depth+1)
		}
		return items, true
	case []any:
		var items []any
		for i, e := range x {
			se, ch := settled(e, depth+1)
			if ch && items == nil {
				items = append(make([]any, 0, len(x)), x[:i]...)
			}
			if items != nil {
				items = append(items, se)
			}
		}
		if items != nil {
			return items, true
		}
	case map[string]any:
		var m map[string]any
		for k, e := range x {
			se, ch := settled(e, depth+1)
			if !ch {
				continue
			}
			if m == nil {
				m = make(map[string]any, len(x))
				for k2, e2 := range x {
					m[k2] = e2
				}
			}
			m[k] = se
		}
		if m != nil {
			return m, true
		}
	}
	return v, false
}
