package main

import (
	"os"
	"testing"
)

// schema_gen.go is what the schema files say: run go generate ./manifest
// after changing one.
func TestGeneratedFileIsCurrent(t *testing.T) {
	want, err := Generate("../../schema")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../../schema_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatal("manifest/schema_gen.go is behind manifest/schema/*.json: run go generate ./manifest")
	}
}

// A definition in two files is refused.
func TestDuplicateDefinition(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"a.json", "b.json"} {
		if err := os.WriteFile(dir+"/"+f, []byte(`{"definitions": {"X": {"type": "object"}}}`), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Generate(dir); err == nil || err.Error() != "definition X is in a.json and in b.json" {
		t.Errorf("%v", err)
	}
}
