package manifest

import (
	"fmt"
	"strings"

	"github.com/airbyte-go/source-declarative/lang/interp"
)

// isCustom tells whether a component is custom Python code: a Custom* type
// or a class_name.
func isCustom(m map[string]any) bool {
	typ, _ := m["type"].(string)
	_, hasClass := m["class_name"].(string)
	return strings.HasPrefix(typ, "Custom") || hasClass
}

// customRefusal says why a custom component cannot run, naming its class.
func customRefusal(m map[string]any) string {
	typ, _ := m["type"].(string)
	if typ == "" {
		typ = "component"
	}
	class, _ := m["class_name"].(string)
	if class == "" {
		class = "no class_name"
	} else {
		class = "class_name " + class
	}
	return fmt.Sprintf("custom component %s (%s) is not supported: custom Python code cannot run here", typ, class)
}

// refuseCustom reports every custom component of the resolved manifest,
// wherever it is (definitions, unused, are not looked at: what streams use
// is inlined in them).
func (d *decoder) refuseCustom(v any, path string) {
	switch x := v.(type) {
	case []any:
		for i, e := range x {
			d.refuseCustom(e, index(path, i))
		}
	case map[string]any:
		if isSchemaObject(x) {
			return
		}
		if isCustom(x) {
			d.fail(path, "%s", customRefusal(x))
			return
		}
		for _, k := range interp.SortedKeys(x) {
			if path == "" && (k == "definitions" || k == "spec" || k == "metadata" || k == "schemas") {
				continue
			}
			if k == "schema" || k == "$parameters" || k == "default_values" || k == "list_of_parameters_for_stream" {
				continue // data, not components
			}
			d.refuseCustom(x[k], join(path, k))
		}
	}
}
