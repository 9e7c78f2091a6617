package manifest

import (
	"strings"

	"github.com/airbyte-go/source-declarative/lang/interp"
)

// brokenTemplate is a string of a component that does not compile as a
// template: its path, and why without the path.
type brokenTemplate struct{ path, err string }

// brokenTemplates lists the strings under v that do not compile as
// templates, in path order.
func brokenTemplates(v any, path string) []brokenTemplate {
	var out []brokenTemplate
	switch x := v.(type) {
	case string:
		if _, err := interp.Compile(x, path); err != nil {
			out = append(out, brokenTemplate{path, strings.TrimPrefix(err.Error(), path+": ")})
		}
	case map[string]any:
		for _, k := range interp.SortedKeys(x) {
			out = append(out, brokenTemplates(x[k], join(path, k))...)
		}
	case []any:
		for i, e := range x {
			out = append(out, brokenTemplates(e, index(path, i))...)
		}
	}
	return out
}

// withoutBroken is a copy of the component v (at path) with its broken
// templates replaced by a text, so that the rest of it is decoded and
// checked as any other (the copy is never run: see SelectiveConfig.Broken).
func withoutBroken(v any, path string, broken []brokenTemplate) any {
	bad := map[string]bool{}
	for _, b := range broken {
		bad[b.path] = true
	}
	var walk func(v any, path string) any
	walk = func(v any, path string) any {
		switch x := v.(type) {
		case string:
			if bad[path] {
				return "(a template that does not compile)"
			}
		case map[string]any:
			out := make(map[string]any, len(x))
			for k, e := range x {
				out[k] = walk(e, join(path, k))
			}
			return out
		case []any:
			out := make([]any, len(x))
			for i, e := range x {
				out[i] = walk(e, index(path, i))
			}
			return out
		}
		return v
	}
	return walk(v, path)
}
