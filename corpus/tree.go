package corpus

// visit calls f on every value of a JSON-like tree with the key it sits
// under ("" at the root and in lists); f returns false to skip the value's
// children.
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

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}
