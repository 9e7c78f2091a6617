package genapi

import (
	"fmt"
	"maps"
	"slices"
)

// Helpers over JSON-like trees (map[string]any, []any, scalars).

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

func str(m map[string]any, key, def string) string {
	if s, ok := m[key].(string); ok && s != "" {
		return s
	}
	return def
}

func num(v any, def float64) float64 {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case float64:
		return x
	case int:
		return float64(x)
	}
	return def
}

// typeOf is a schema's type, the first that is not "null" when it lists
// several; "object" when it has properties and no type.
func typeOf(p map[string]any) string {
	switch t := p["type"].(type) {
	case string:
		return t
	case []any:
		for _, e := range t {
			if e != "null" {
				return fmt.Sprint(e)
			}
		}
		return "null"
	}
	if p["properties"] != nil {
		return "object"
	}
	return ""
}

// visit calls f on every value of a tree with the key it sits under ("" at
// the root and in lists); f returns false to skip the value's children.
func visit(v any, key string, f func(key string, v any) bool) {
	if !f(key, v) {
		return
	}
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			visit(e, k, f)
		}
	case []any:
		for _, e := range x {
			visit(e, "", f)
		}
	}
}

// components finds every component of type typ under v (not inside
// schemas nor $parameters).
func components(v any, typ string) []map[string]any {
	var out []map[string]any
	visit(v, "", func(key string, v any) bool {
		if key == "schema" || key == "$parameters" {
			return false
		}
		if m, ok := v.(map[string]any); ok && m["type"] == typ {
			out = append(out, m)
		}
		return true
	})
	return out
}

// deepCopy copies a JSON-like tree.
func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = deepCopy(e)
		}
		return l
	}
	return v
}
