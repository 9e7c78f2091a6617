package manifest

import "testing"

// TestJSONManifestWithCharactersYAMLRefuses: a JSON manifest is read as
// JSON: a raw C1 control character in a string (tmdb's schema, written
// back as JSON) is text, where YAML refuses the document.
func TestJSONManifestWithCharactersYAMLRefuses(t *testing.T) {
	m, err := Parse([]byte("{\"version\": \"6.0.0\", \"n\": 5, \"x\": 1.5, \"name\": \"Lietuvi\u009akai\"}"))
	if err != nil {
		t.Fatal(err)
	}
	if m["name"] != "Lietuvi\u009akai" || m["n"] != int64(5) || m["x"] != 1.5 {
		t.Errorf("got %#v", m)
	}
	if _, err := Parse([]byte("name: \"\u009a\"\n")); err == nil {
		t.Error("YAML holding a raw C1 control was read; YAML refuses it")
	}
}
