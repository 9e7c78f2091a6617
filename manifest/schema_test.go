package manifest

import (
	"encoding/json"
	"io/fs"
	"reflect"
	"testing"

	"github.com/airbyte-go/source-declarative/manifest/jsonschema"
)

// The one-pass index of the embedded schema cuts out exactly the definitions
// a JSON decoder reads, and the merged document compiles whole: every
// definition and every $ref in it.
func TestEmbeddedSchema(t *testing.T) {
	files, _ := fs.Glob(schemaFiles, "schema/*.json")
	merged := map[string]any{}
	for _, f := range files {
		b, _ := schemaFiles.ReadFile(f)
		var doc struct {
			Definitions map[string]any `json:"definitions"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		texts, err := definitionTexts(b)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if len(texts) != len(doc.Definitions) {
			t.Errorf("%s: %d definitions indexed, %d decoded", f, len(texts), len(doc.Definitions))
		}
		for name, want := range doc.Definitions {
			var got any
			if err := json.Unmarshal(texts[name], &got); err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("%s: definition %s indexed as %.80q (%v)", f, name, texts[name], err)
			}
			if !reflect.DeepEqual(rawDefinition(name), want) {
				t.Errorf("rawDefinition(%s) differs", name)
			}
			merged[name] = want
		}
	}
	if len(schemaIndex()) != len(merged) {
		t.Errorf("index has %d definitions, files %d", len(schemaIndex()), len(merged))
	}
	if _, err := jsonschema.Compile(map[string]any{"definitions": merged}); err != nil {
		t.Fatal(err)
	}
	for name := range merged {
		if componentDefinition(name) == nil {
			t.Errorf("definition %s does not compile", name)
		}
	}
}

func TestDefinitionTextsRefusesBrokenText(t *testing.T) {
	for _, text := range []string{`[1]`, `{"definitions": {"a": {"b": [1, 2}`, `{definitions: {}}`, `{"definitions" {}}`} {
		if _, err := definitionTexts([]byte(text)); err == nil {
			t.Errorf("%s: no error", text)
		}
	}
}
