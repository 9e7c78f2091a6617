package retrieve

import (
	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/runtime/failure"
	"github.com/airbyte-go/source-declarative/runtime/transform"
)

// selectedProperties is the set of property names the read's configured
// catalog selects for a stream, as Airbyte's JsonSchemaPropertySelector
// makes it: the keys of the configured json_schema's properties after the
// selector's transformations ran on them as on a record. ok is false when
// there is nothing to select from (check, discover and test reads have no
// configured stream; a configured schema may list no properties at all):
// then every property is requested.
func selectedProperties(env *Env, stream string, sel *manifest.PropertySelector) (set map[string]bool, ok bool, err error) {
	schema, _ := env.Catalog[stream].(map[string]any)
	props, listed := schema["properties"].(map[string]any)
	if !listed {
		return nil, false, nil
	}
	obj, _ := transform.FromPlain(props).(*transform.Object)
	ts, err := transform.NewList(sel.Transformations)
	if err != nil {
		return nil, false, failure.Config("%v", err)
	}
	// The CDK transforms the schema's properties with no slice (None).
	vars := env.BuildVars(nil)
	vars.SliceNone()
	for _, t := range ts {
		if err := t.Apply(obj, vars); err != nil {
			return nil, false, failure.Config("%v", err) // the error names the transformation
		}
	}
	set = map[string]bool{}
	for _, f := range obj.Fields {
		set[f.Key] = true
	}
	return set, true, nil
}
