package manifest

import (
	"testing"
)

// The schema compiles whole: every definition and every $ref in it; each
// definition is a component definition. (That schema_gen.go holds what the
// schema files say is checked by manifest/internal/schemagen's test.)
func TestSchemaCompiles(t *testing.T) {
	merged := map[string]any{}
	for _, name := range definitionNames {
		def := rawDefinition(name)
		if def == nil {
			t.Fatalf("definition %s has no value", name)
		}
		merged[name] = def
	}
	if _, err := CompileJSONSchema(map[string]any{"definitions": merged}); err != nil {
		t.Fatal(err)
	}
	for _, name := range definitionNames {
		if componentDefinition(name) == nil {
			t.Errorf("definition %s does not compile", name)
		}
	}
	if rawDefinition("NoSuchComponent") != nil || componentDefinition("NoSuchComponent") != nil {
		t.Error("an unknown type has a definition")
	}
}
