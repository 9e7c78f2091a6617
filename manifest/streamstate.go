package manifest

import (
	"maps"
	"regexp"
	"slices"
	"strings"
)

var streamStateVar = regexp.MustCompile(`\bstream_state\b`)

// refuseStreamState reports every template of the streams that reads
// stream_state: the reference CDK no longer offers it (it raises a config
// error naming stream_interval instead), so a manifest using it could not
// run there either, and rendering it empty here would silently read
// everything again.
func (d *decoder) refuseStreamState(v any, path string) {
	switch x := v.(type) {
	case string:
		if (strings.Contains(x, "{{") || strings.Contains(x, "{%")) && streamStateVar.MatchString(x) {
			d.fail(path, "stream_state is not available in templates (the reference CDK removed it): use stream_interval.start_time and stream_interval.end_time, the bounds of the slice being read")
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			d.refuseStreamState(x[k], join(path, k))
		}
	case []any:
		for i, e := range x {
			d.refuseStreamState(e, index(path, i))
		}
	}
}
