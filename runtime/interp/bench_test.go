package interp

import (
	"fmt"
	"testing"
)

// BenchmarkRenderMixed renders a mixed-text template once compiled.
func BenchmarkRenderMixed(b *testing.B) {
	t := MustCompile(`{{ next_page_token['next_page_token'] or '0' }},50`)
	vars := Vars{"next_page_token": map[string]any{"next_page_token": int64(100)}}
	for i := 0; i < b.N; i++ {
		if _, err := t.Eval(vars); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRenderCursor evaluates a typical cursor stop condition.
func BenchmarkRenderCursor(b *testing.B) {
	t := MustCompile(`{{ response.meta.has_more is false }}`)
	vars := Vars{"response": map[string]any{"meta": map[string]any{"has_more": true}}}
	for i := 0; i < b.N; i++ {
		if _, err := t.Bool(vars); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRenderBaseline is what the mixed template does in plain Go.
func BenchmarkRenderBaseline(b *testing.B) {
	vars := Vars{"next_page_token": map[string]any{"next_page_token": int64(100)}}
	for i := 0; i < b.N; i++ {
		tok := vars["next_page_token"].(map[string]any)["next_page_token"]
		_ = fmt.Sprintf("%v,50", tok)
	}
}
