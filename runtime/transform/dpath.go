package transform

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// Glob is a field path in the reference's dpath syntax: each segment is a
// key or list index, or an fnmatch pattern (*, ?, [abc], [!abc]) matching
// one level; one segment may be ** (any number of levels, zero included).
type Glob struct {
	segs     []string
	patterns []*regexp.Regexp // nil for a literal segment
	star     int              // index of **, -1 when there is none
}

// CompileGlob compiles a dpath glob.
func CompileGlob(path []string) (Glob, error) {
	g := Glob{segs: path, patterns: make([]*regexp.Regexp, len(path)), star: -1}
	for i, s := range path {
		if s == "**" {
			if g.star >= 0 {
				return Glob{}, fmt.Errorf("the path [%s] has more than one **", strings.Join(path, ", "))
			}
			g.star = i
			continue
		}
		if strings.ContainsAny(s, "*?[") {
			re, err := regexp.Compile(fnmatchRegexp(s))
			if err != nil {
				return Glob{}, fmt.Errorf("the path segment %q is not a valid pattern: %v", s, err)
			}
			g.patterns[i] = re
		}
	}
	return g, nil
}

// Literal tells whether the glob names exactly one path.
func (g Glob) Literal() bool {
	if g.star >= 0 {
		return false
	}
	for _, p := range g.patterns {
		if p != nil {
			return false
		}
	}
	return true
}

// fnmatchRegexp translates a case-sensitive fnmatch pattern.
func fnmatchRegexp(pat string) string {
	var b strings.Builder
	b.WriteString(`^(?s:`)
	for i := 0; i < len(pat); i++ {
		switch c := pat[i]; c {
		case '*':
			b.WriteString(`.*`)
		case '?':
			b.WriteString(`.`)
		case '[':
			end := strings.IndexByte(pat[i+1:], ']')
			if end < 0 || (end == 0 && i+2 < len(pat) && pat[i+1] == ']') {
				b.WriteString(`\[`)
				continue
			}
			class := pat[i+1 : i+1+end]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			i += end + 1
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString(`)$`)
	return b.String()
}

// Match tells whether the glob matches a path, as dpath does: ** stands for
// as many one-level wildcards as make the lengths equal.
func (g Glob) Match(path []string) bool {
	segs, patterns := g.segs, g.patterns
	if g.star >= 0 {
		switch n := len(path) - len(g.segs) + 1; {
		case n >= 1:
			segs = make([]string, 0, len(path))
			segs = append(append(append(segs, g.segs[:g.star]...), repeat("*", n)...), g.segs[g.star+1:]...)
			patterns = make([]*regexp.Regexp, 0, len(path))
			patterns = append(append(append(patterns, g.patterns[:g.star]...), repeatRe(anything(), n)...), g.patterns[g.star+1:]...)
		case n == 0:
			segs = append(append([]string{}, g.segs[:g.star]...), g.segs[g.star+1:]...)
			patterns = append(append([]*regexp.Regexp{}, g.patterns[:g.star]...), g.patterns[g.star+1:]...)
		}
	}
	if len(segs) != len(path) {
		return false
	}
	for i, s := range path {
		if patterns[i] != nil {
			if !patterns[i].MatchString(s) {
				return false
			}
		} else if segs[i] != s {
			return false
		}
	}
	return true
}

// anything matches any key; compiled on first use, not at start-up.
var anything = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?s:.*)$`) })

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func repeatRe(re *regexp.Regexp, n int) []*regexp.Regexp {
	out := make([]*regexp.Regexp, n)
	for i := range out {
		out[i] = re
	}
	return out
}

// node is one value met by a walk: where it is and what it is.
type node struct {
	path   []string
	parent any // *Object or *[]any
	key    string
	index  int
	value  any
}

// walk lists every value under root, depth first, parents before children,
// keys and items in order (dpath's walk).
func walk(root any) []node {
	var out []node
	var visit func(v any, path []string)
	visit = func(v any, path []string) {
		switch x := v.(type) {
		case *Object:
			for _, f := range x.Fields {
				p := append(path[:len(path):len(path)], f.Key)
				out = append(out, node{path: p, parent: x, key: f.Key, value: f.Value})
				visit(f.Value, p)
			}
		case []any:
			for i, e := range x {
				p := append(path[:len(path):len(path)], strconv.Itoa(i))
				out = append(out, node{path: p, parent: x, index: i, value: e})
				visit(e, p)
			}
		}
	}
	visit(root, nil)
	return out
}

// Values lists the values matching the glob, in walk order.
func (g Glob) Values(root any) []any {
	if g.Literal() {
		if v, ok := Get(root, g.segs); ok {
			return []any{v}
		}
		return nil
	}
	var out []any
	for _, n := range walk(root) {
		if g.Match(n.path) {
			out = append(out, n.value)
		}
	}
	return out
}

// Get follows a literal path through objects and list indexes.
func Get(root any, path []string) (any, bool) {
	v := root
	for _, seg := range path {
		switch x := v.(type) {
		case *Object:
			e, ok := x.Get(seg)
			if !ok {
				return nil, false
			}
			v = e
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// SetExisting replaces the value of every existing path matching the glob
// (dpath's set) and returns how many it replaced.
func (g Glob) SetExisting(root any, v any) int {
	n := 0
	for _, nd := range walk(root) {
		if !g.Match(nd.path) {
			continue
		}
		switch p := nd.parent.(type) {
		case *Object:
			p.Set(nd.key, v)
		case []any:
			p[nd.index] = v
		}
		n++
	}
	return n
}

// Create sets the value at a literal path, creating what is missing on the
// way (dpath's new): objects for keys, null-padded items for a list index
// past the end; a scalar in the way is replaced by an object.
func Create(root *Object, path []string, v any) {
	setPath(root, path, v)
}

// setPath returns cur with v written at path.
func setPath(cur any, path []string, v any) any {
	if len(path) == 0 {
		return v
	}
	seg := path[0]
	switch x := cur.(type) {
	case *Object:
		child, _ := x.Get(seg)
		x.Set(seg, setPath(child, path[1:], v))
		return x
	case []any:
		if i, err := strconv.Atoi(seg); err == nil && i >= 0 {
			for len(x) <= i {
				x = append(x, nil)
			}
			x[i] = setPath(x[i], path[1:], v)
			return x
		}
	}
	o := &Object{}
	o.Set(seg, setPath(nil, path[1:], v))
	return o
}

// removed marks a list item taken out by Delete until the lists are compacted.
type tombstone struct{}

var removed = &tombstone{}

// Delete removes every path matching the glob whose value keep accepts (all
// of them when keep is nil). With keep, only scalar values are tested and
// removed, never objects or lists. A removed list item is only marked, so
// that the indexes of further deletes are still the list's as read: Compact
// takes the marked items out. It returns how many values it removed.
func (g Glob) Delete(root *Object, keep func(v any) (bool, error)) (int, error) {
	if keep == nil && g.Literal() {
		return deleteLiteral(root, g.segs), nil
	}
	count := 0
	for _, nd := range walk(root) {
		if !g.Match(nd.path) || !present(root, nd.path) {
			continue
		}
		if keep != nil {
			if !isScalar(nd.value) {
				continue
			}
			ok, err := keep(nd.value)
			if err != nil {
				return count, err
			}
			if !ok {
				continue
			}
		}
		switch p := nd.parent.(type) {
		case *Object:
			p.Delete(nd.key)
		case []any:
			p[nd.index] = removed
		}
		count++
	}
	return count, nil
}

func isScalar(v any) bool {
	switch v.(type) {
	case *Object, []any:
		return false
	}
	return true
}

// present tells whether a path still leads somewhere (an ancestor may have
// been removed already).
func present(root *Object, path []string) bool {
	v, ok := Get(root, path)
	return ok && v != removed
}

// Compact takes the items Delete marked out of every list under root.
func Compact(root *Object) {
	compact(root)
}

func compact(v any) any {
	switch x := v.(type) {
	case *Object:
		for i := range x.Fields {
			x.Fields[i].Value = compact(x.Fields[i].Value)
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

// deleteLiteral removes one exact path.
func deleteLiteral(root *Object, path []string) int {
	if len(path) == 0 {
		return 0
	}
	parent, ok := Get(root, path[:len(path)-1])
	if !ok {
		return 0
	}
	last := path[len(path)-1]
	switch p := parent.(type) {
	case *Object:
		if p.Delete(last) {
			return 1
		}
	case []any:
		if i, err := strconv.Atoi(last); err == nil && i >= 0 && i < len(p) && p[i] != removed {
			p[i] = removed
			return 1
		}
	}
	return 0
}
