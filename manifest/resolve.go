package manifest

import (
	"fmt"
	"strconv"
	"strings"
)

// Resolve replaces every "#/..." string and every {$ref: "#/..."} mapping by
// what it points to, as the reference does: the referenced mapping is
// shallow-merged under the local keys, which win.
func Resolve(root map[string]any) (map[string]any, error) {
	r := &resolver{root: root, budget: maxResolvedValues}
	out, err := r.resolve(root, "", nil)
	if err != nil {
		return nil, err
	}
	m := out.(map[string]any)
	if _, ok := m["type"]; !ok {
		m["type"] = "DeclarativeSource"
	}
	return m, nil
}

// maxResolvedValues bounds the resolved manifest: references that each
// point twice at the next definition double it at every step (a "billion
// laughs"), which would otherwise run until memory ends. The largest catalog
// manifest resolves to under 10,000 values.
const maxResolvedValues = 1_000_000

type resolver struct {
	root   map[string]any
	budget int // values still allowed in the resolved manifest
}

func (r *resolver) resolve(v any, path string, seen []string) (any, error) {
	if r.budget--; r.budget < 0 {
		if i := strings.Index(path, ".$ref"); i >= 0 {
			path = path[:i+len(".$ref")] // where the first reference of the chain is written
		}
		return nil, fmt.Errorf("%s: the manifest grows past %d values once its references are resolved (references that each point at others several times?)", path, maxResolvedValues)
	}
	switch x := v.(type) {
	case string:
		if strings.HasPrefix(x, "#/") {
			return r.follow(x, path, seen)
		}
		return x, nil
	case map[string]any:
		out := map[string]any{}
		if ref, ok := x["$ref"]; ok {
			rs, ok := ref.(string)
			if !ok {
				return nil, fmt.Errorf("%s.$ref: must be a string like \"#/definitions/name\"", path)
			}
			target, err := r.follow(rs, join(path, "$ref"), seen)
			if err != nil {
				return nil, err
			}
			tm, ok := target.(map[string]any)
			if !ok {
				return target, nil
			}
			for k, e := range tm {
				out[k] = e
			}
		}
		for k, e := range x {
			if k == "$ref" {
				continue
			}
			if k == "config_overrides" {
				out[k] = e
				continue
			}
			res, err := r.resolve(e, join(path, k), seen)
			if err != nil {
				return nil, err
			}
			out[k] = res
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			res, err := r.resolve(e, index(path, i), seen)
			if err != nil {
				return nil, err
			}
			out[i] = res
		}
		return out, nil
	}
	return v, nil
}

func (r *resolver) follow(ref, path string, seen []string) (any, error) {
	for _, s := range seen {
		if s == ref {
			return nil, fmt.Errorf("%s: circular reference %s", path, strings.Join(append(seen, ref), " -> "))
		}
	}
	target, ok := lookup(r.root, strings.TrimPrefix(ref, "#/"))
	if !ok {
		return nil, fmt.Errorf("%s: reference %q points at nothing", path, ref)
	}
	return r.resolve(target, path, append(seen, ref))
}

// lookup follows a slash path; a key may itself contain slashes.
func lookup(v any, path string) (any, bool) {
	if path == "" {
		return v, true
	}
	switch x := v.(type) {
	case map[string]any:
		if e, ok := x[path]; ok {
			return e, true
		}
		head, rest, _ := strings.Cut(path, "/")
		e, ok := x[head]
		if !ok {
			return nil, false
		}
		return lookup(e, rest)
	case []any:
		head, rest, _ := strings.Cut(path, "/")
		i, err := strconv.Atoi(head)
		if err != nil || i < 0 || i >= len(x) {
			return nil, false
		}
		return lookup(x[i], rest)
	}
	return nil, false
}
