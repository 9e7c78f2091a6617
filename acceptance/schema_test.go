package acceptance

import "testing"

func TestCompileFormatsAsAnnotationsOrChecks(t *testing.T) {
	schema := map[string]any{"properties": map[string]any{"end_date": map[string]any{"type": "string", "format": "date"}}}
	config := map[string]any{"end_date": "23-11-2026"}
	annotations, err := compile(schema, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := annotations.Validate(config); err != nil {
		t.Errorf("formats as annotations: %v", err)
	}
	checks, err := compile(schema, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := checks.Validate(config); err == nil {
		t.Error("formats as checks: 23-11-2026 passed as a date")
	}
	if err := annotations.Validate(map[string]any{"end_date": 7}); err == nil {
		t.Error("formats as annotations: the type is no longer checked")
	}
}
