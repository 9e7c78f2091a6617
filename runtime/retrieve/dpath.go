package retrieve

import (
	"path"
	"strconv"

	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/runtime/extract"
)

// dpathValues is what a DpathExtractor extracts from a decoded response:
// the values at the field path (dpathMatches), a list found giving its
// items.
func dpathValues(v any, fieldPath []string) []any {
	var out []any
	for _, c := range dpathMatches(v, fieldPath) {
		switch x := c.(type) {
		case nil:
		case interp.List:
			out = append(out, x...)
		default:
			out = append(out, x)
		}
	}
	return out
}

// dpathMatches are the values at the field path, as found: a segment with
// *, ? or [ matches keys or items.
func dpathMatches(v any, fieldPath []string) []any {
	cur := []any{v}
	for _, seg := range fieldPath {
		var next []any
		for _, c := range cur {
			switch x := c.(type) {
			case map[string]any:
				if !extract.IsGlob(seg) {
					if e, ok := x[seg]; ok {
						next = append(next, e)
					}
					continue
				}
				for _, k := range interp.SortedKeys(x) {
					if ok, _ := path.Match(seg, k); ok {
						next = append(next, x[k])
					}
				}
			case interp.List:
				if extract.IsGlob(seg) {
					next = append(next, x...)
				} else if i, err := strconv.Atoi(seg); err == nil && i >= 0 && i < len(x) {
					next = append(next, x[i])
				}
			}
		}
		cur = next
	}
	return cur
}
