package interp

import (
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Attribute and item access as Jinja's sandbox does it: x.name looks for a
// Python attribute (a method) first and then for an item; x[key] looks for an
// item first and then for an attribute. A miss is undefined, not an error.

// callable is a global function (the CDK's macros, dict, namespace...).
type callable struct {
	name string
	fn   func(s *state, a *args) (any, error)
}

// methodFunc is a method of a value's type.
type methodFunc func(s *state, recv any, a *args) (any, error)

// boundMethod is a method read without calling it (x.get).
type boundMethod struct {
	recv any
	name string
	fn   methodFunc
}

// namespace is Jinja's namespace(): attributes that {% set ns.x %} changes.
type namespace struct{ attrs map[string]any }

// templateRef is Jinja's `self`, the template's reference to its blocks:
// there are none here, so every attribute of it is undefined
// (linkedin-ads' error message writes {{ self.name }}, which renders "").
type templateRef struct{}

// loopInfo is the `loop` variable of a for loop.
type loopInfo struct {
	items []any
	index int
	depth int
}

func typeRepr(v any) string {
	if v == nil {
		return "None"
	}
	return "'" + typeName(v) + " object'"
}

func noAttr(v any, name string) *undefined {
	return &undefined{hint: typeRepr(v) + " has no attribute '" + name + "'"}
}

func getattr(v any, name string) (any, error) {
	if g, ok := v.(groupTuple); ok && (name == "grouper" || name == "list") {
		return g[map[string]int{"grouper": 0, "list": 1}[name]], nil
	}
	if m := findMethod(v, name); m != nil {
		if _, ok := v.(*pyList); !ok {
			v = canon(v)
		}
		return &boundMethod{recv: v, name: name, fn: m}, nil // a list's methods change the list itself
	}
	v = canon(v)
	if u, ok := v.(*undefined); ok {
		return nil, u.err()
	}
	if strings.HasPrefix(name, "__") {
		return &undefined{hint: "access to attribute '" + name + "' of '" + typeName(v) + "' object is unsafe", unsafe: true}, nil
	}
	switch x := v.(type) {
	case map[string]any:
		if e, ok := x[name]; ok {
			return element(e), nil
		}
	case *namespace:
		if e, ok := x.attrs[name]; ok {
			return e, nil
		}
	case *loopInfo:
		return x.attr(name), nil
	case time.Time:
		if a, ok := datetimeAttr(x, name); ok {
			return a, nil
		}
	case date:
		if a, ok := datetimeAttr(x.t, name); ok && (name == "year" || name == "month" || name == "day") {
			return a, nil
		}
	case time.Duration:
		if a, ok := timedeltaAttr(x, name); ok {
			return a, nil
		}
	}
	return noAttr(v, name), nil
}

func getitem(v, key any) (any, error) {
	if g, ok := v.(groupTuple); ok && (key == "grouper" || key == "list") {
		return getattr(g, key.(string))
	}
	v = canon(v)
	if u, ok := v.(*undefined); ok {
		return nil, u.err()
	}
	if u, ok := key.(*undefined); ok {
		return nil, u.err()
	}
	switch x := v.(type) {
	case map[string]any:
		if k, ok := key.(string); ok {
			if e, ok := x[k]; ok {
				return element(e), nil
			}
		}
	case []any:
		if e, ok := index(x, key); ok {
			return e, nil
		}
		if _, isInt := intLike(key); isInt {
			return &undefined{hint: "'list object' has no element " + pyStr(key), pastEnd: true}, nil
		}
	case tuple:
		if e, ok := index(x, key); ok {
			return e, nil
		}
	case string:
		if i, ok := intLike(key); ok {
			if utf8.RuneCountInString(x) == len(x) {
				if i < 0 {
					i += int64(len(x))
				}
				if i >= 0 && i < int64(len(x)) {
					return x[i : i+1], nil
				}
			} else if e, ok := index(runesOf(x), key); ok {
				return e, nil
			}
			return &undefined{hint: "'str object' has no element " + pyStr(key), pastEnd: true}, nil
		}
	case pyBytes:
		if e, ok := index(byteItems(x), key); ok {
			return e, nil
		}
	case *pyDict:
		if e, ok := x.get(key); ok {
			return e, nil
		}
	case *view:
		// views are not subscriptable
	}
	if name, ok := key.(string); ok {
		return getattr(v, name)
	}
	return &undefined{hint: typeRepr(v) + " has no element " + repr(key)}, nil
}

func runesOf(s string) []any {
	out := make([]any, 0, len(s))
	for _, r := range s {
		out = append(out, string(r))
	}
	return out
}

// index reads items[key] with Python's negative indexes.
func index(items []any, key any) (any, bool) {
	i, ok := intLike(key)
	if !ok {
		return nil, false
	}
	if i < 0 {
		i += int64(len(items))
	}
	if i < 0 || i >= int64(len(items)) {
		return nil, false
	}
	return canon(items[i]), true
}

func (l *loopInfo) attr(name string) any {
	n := len(l.items)
	switch name {
	case "index":
		return int64(l.index + 1)
	case "index0":
		return int64(l.index)
	case "revindex":
		return int64(n - l.index)
	case "revindex0":
		return int64(n - l.index - 1)
	case "first":
		return l.index == 0
	case "last":
		return l.index == n-1
	case "length":
		return int64(n)
	case "depth":
		return int64(l.depth)
	case "depth0":
		return int64(l.depth - 1)
	case "previtem":
		if l.index == 0 {
			return &undefined{hint: "there is no previous item"}
		}
		return l.items[l.index-1]
	case "nextitem":
		if l.index == n-1 {
			return &undefined{hint: "there is no next item"}
		}
		return l.items[l.index+1]
	case "cycle":
		return &boundMethod{recv: l, name: "cycle", fn: func(_ *state, recv any, a *args) (any, error) {
			if len(a.pos) == 0 {
				return nil, typeErr("no items for cycling given")
			}
			return a.pos[recv.(*loopInfo).index%len(a.pos)], nil
		}}
	}
	return noAttr(l, name)
}

func datetimeAttr(t time.Time, name string) (any, bool) {
	switch name {
	case "year":
		return int64(t.Year()), true
	case "month":
		return int64(t.Month()), true
	case "day":
		return int64(t.Day()), true
	case "hour":
		return int64(t.Hour()), true
	case "minute":
		return int64(t.Minute()), true
	case "second":
		return int64(t.Second()), true
	case "microsecond":
		return int64(t.Nanosecond() / 1000), true
	}
	return nil, false
}

func timedeltaAttr(d time.Duration, name string) (any, bool) {
	days := floorDays(d)
	rest := d - time.Duration(days)*24*time.Hour
	switch name {
	case "days":
		return days, true
	case "seconds":
		return int64(rest / time.Second), true
	case "microseconds":
		return int64(rest % time.Second / time.Microsecond), true
	}
	return nil, false
}

// methodTables are the methods of dicts, lists, tuples, datetimes, dates
// and timedeltas, built on first use rather than at package init, as the
// filter, test and string method tables are.
type methodTables struct {
	dict, list, tuple, datetime, date, timedelta, pyDict map[string]methodFunc
}

var (
	methodTablesValue methodTables
	methodTablesOnce  sync.Once
)

func methods() *methodTables {
	methodTablesOnce.Do(func() {
		methodTablesValue = methodTables{dict: dictMethods(), list: listMethods(), tuple: tupleMethods(),
			datetime: datetimeMethods(), date: dateMethods(), timedelta: timedeltaMethods(), pyDict: pyDictMethods()}
	})
	return &methodTablesValue
}

// findMethod finds the method name of v's type, or nil.
func findMethod(v any, name string) methodFunc {
	var table map[string]methodFunc
	switch canon(v).(type) {
	case string:
		table = strMethods()
	case map[string]any:
		table = methods().dict
	case []any:
		table = methods().list
	case tuple:
		table = methods().tuple
	case time.Time:
		table = methods().datetime
	case date:
		table = methods().date
	case time.Duration:
		table = methods().timedelta
	case pyBytes:
		if name == "decode" {
			return bytesDecode
		}
		return nil
	case *pyDict:
		table = methods().pyDict
	default:
		return nil
	}
	return table[name]
}

// Helpers for methods and filters: positional or named arguments of a type.

func argStr(a *args, i int, name, fn string) (string, bool, error) {
	v, ok := a.get(i, name)
	if !ok || v == nil {
		return "", false, nil
	}
	s, isStr := v.(string)
	if !isStr {
		if u, isU := v.(*undefined); isU {
			return "", false, u.err()
		}
		return "", false, typeErr("%s() argument must be str, not %s", fn, typeName(v))
	}
	return s, true, nil
}

func argInt(a *args, i int, name, fn string, def int64) (int64, error) {
	v, ok := a.get(i, name)
	if !ok || v == nil {
		return def, nil
	}
	n, isInt := intLike(v)
	if !isInt {
		if u, isU := v.(*undefined); isU {
			return 0, u.err()
		}
		return 0, typeErr("%s(): '%s' object cannot be interpreted as an integer", fn, typeName(v))
	}
	return n, nil
}

// dict methods.

func dictMethods() map[string]methodFunc {
	return map[string]methodFunc{
		"get": func(_ *state, recv any, a *args) (any, error) {
			if len(a.pos) < 1 || len(a.pos) > 2 || len(a.names) > 0 {
				return nil, typeErr("get expected 1 or 2 arguments, got %d", len(a.pos))
			}
			k, ok := a.pos[0].(string)
			if !ok {
				if _, err := dictKey(a.pos[0]); err != nil {
					return nil, err
				}
			}
			if v, found := recv.(map[string]any)[k]; found && ok {
				return canon(v), nil
			}
			if len(a.pos) == 2 {
				return a.pos[1], nil
			}
			return nil, nil
		},
		"keys": func(_ *state, recv any, a *args) (any, error) {
			return dictView(recv.(map[string]any), "keys"), nil
		},
		"values": func(_ *state, recv any, a *args) (any, error) {
			return dictView(recv.(map[string]any), "values"), nil
		},
		"items": func(_ *state, recv any, a *args) (any, error) {
			return dictView(recv.(map[string]any), "items"), nil
		},
		"copy": func(_ *state, recv any, a *args) (any, error) {
			m := recv.(map[string]any)
			out := make(map[string]any, len(m))
			for k, v := range m {
				out[k] = v
			}
			return out, nil
		},
		"update": func(_ *state, recv any, a *args) (any, error) {
			m := recv.(map[string]any)
			for _, p := range a.pos {
				src, ok := canon(p).(map[string]any)
				if !ok {
					return nil, typeErr("dict.update() needs a dict, not %s", typeName(p))
				}
				for k, v := range src {
					m[k] = v
				}
			}
			for i, n := range a.names {
				m[n] = a.kw[i]
			}
			return nil, nil
		},
		"pop": func(_ *state, recv any, a *args) (any, error) {
			m := recv.(map[string]any)
			if len(a.pos) < 1 {
				return nil, typeErr("pop expected at least 1 argument, got 0")
			}
			k, _ := a.pos[0].(string)
			if v, ok := m[k]; ok {
				delete(m, k)
				return canon(v), nil
			}
			if len(a.pos) > 1 {
				return a.pos[1], nil
			}
			return nil, valueErr("pop: the key is not in the dict")
		},
		"setdefault": func(_ *state, recv any, a *args) (any, error) {
			m := recv.(map[string]any)
			if len(a.pos) < 1 {
				return nil, typeErr("setdefault expected at least 1 argument, got 0")
			}
			k, err := dictKey(a.pos[0])
			if err != nil {
				return nil, err
			}
			if v, ok := m[k]; ok {
				return canon(v), nil
			}
			var def any
			if len(a.pos) > 1 {
				def = a.pos[1]
			}
			m[k] = def
			return def, nil
		},
	}
}

func dictView(m map[string]any, kind string) *view {
	keys := SortedKeys(m)
	items := make([]any, len(keys))
	for i, k := range keys {
		switch kind {
		case "keys":
			items[i] = k
		case "values":
			items[i] = canon(m[k])
		default:
			items[i] = tuple{k, canon(m[k])}
		}
	}
	return &view{kind: kind, items: items}
}

// list and tuple methods.

func listMethods() map[string]methodFunc {
	table := listMutations()
	table["index"], table["count"] = seqIndex, seqCount
	table["copy"] = func(_ *state, recv any, a *args) (any, error) {
		return &pyList{items: append([]any{}, items(recv)...)}, nil
	}
	return table
}

func tupleMethods() map[string]methodFunc {
	return map[string]methodFunc{"index": seqIndex, "count": seqCount}
}

func items(v any) []any {
	switch x := canon(v).(type) {
	case []any:
		return x
	case tuple:
		return x
	}
	return nil
}

func seqIndex(_ *state, recv any, a *args) (any, error) {
	if len(a.pos) < 1 {
		return nil, typeErr("index expected at least 1 argument, got 0")
	}
	for i, e := range items(recv) {
		if equal(e, a.pos[0]) {
			return int64(i), nil
		}
	}
	return nil, valueErr("index: the value is not in the list")
}

func seqCount(_ *state, recv any, a *args) (any, error) {
	if len(a.pos) != 1 {
		return nil, typeErr("count() takes exactly one argument (%d given)", len(a.pos))
	}
	n := int64(0)
	for _, e := range items(recv) {
		if equal(e, a.pos[0]) {
			n++
		}
	}
	return n, nil
}

func joinStrings(s *state, sep string, it any) (string, error) {
	parts, err := iterate(it)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for i, p := range parts {
		str, ok := p.(string)
		if !ok {
			return "", typeErr("sequence item %d: expected str instance, %s found", i, typeName(p))
		}
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(str)
		if err := checkLen(b.Len()); err != nil {
			return "", err
		}
	}
	return b.String(), s.charge(b.Len() + len(parts))
}
