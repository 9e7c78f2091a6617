package manifest

import (
	"os"
	"path/filepath"
	"testing"
)

func FuzzLoad(f *testing.F) {
	f.Add([]byte(good))
	f.Add([]byte(`a: {$ref: "#/a"}`))
	f.Add([]byte(`streams: [{$ref: "#/definitions/x"}]`))
	files, _ := filepath.Glob("../../shared/manifests/*.yaml")
	for _, p := range files[:min(3, len(files))] {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		raw, err := Parse(b)
		if err != nil {
			return
		}
		if src, err := Load(raw); err == nil && src == nil {
			t.Fatal("nil source without error")
		}
		if resolved, err := ResolveOnly(raw); err == nil {
			Spec(resolved)
		}
	})
}
