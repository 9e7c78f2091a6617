package interp

import (
	"fmt"
	"strings"
	"testing"
)

func benchRecord() Vars {
	return Vars{"config": map[string]any{}, "parameters": map[string]any{}, "record": map[string]any{
		"status": "active", "n": int64(7), "name": "Ditto", "id": int64(132),
		"uri": "https://api.calendly.com/scheduled_events/AAAA-1234"}}
}

func benchEval(b *testing.B, src string, bool bool) {
	t := MustCompile(src)
	vars := benchRecord()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		var err error
		if bool {
			_, err = t.Bool(vars)
		} else {
			_, err = t.Eval(vars)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRecordFilter is a typical RecordFilter condition, per record.
func BenchmarkRecordFilter(b *testing.B) {
	benchEval(b, `{{ record['status'] == 'active' and record['n'] > 3 }}`, true)
}

// BenchmarkAddFieldsValue is a typical AddFields value, per record.
func BenchmarkAddFieldsValue(b *testing.B) {
	benchEval(b, `{{ record['name'] }}-{{ record['id'] }}`, false)
}

// BenchmarkAddFieldsRegex is an AddFields value with a regex_search.
func BenchmarkAddFieldsRegex(b *testing.B) {
	benchEval(b, `{{ record['uri'] | regex_search("\/([a-zA-Z0-9-]*)$") }}`, false)
}

// BenchmarkRenderMixed renders a mixed-text template once compiled.
func BenchmarkRenderMixed(b *testing.B) {
	t := MustCompile(`{{ next_page_token['next_page_token'] or '0' }},50`)
	vars := Vars{"next_page_token": map[string]any{"next_page_token": int64(100)}}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := t.Render(vars); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRenderBaseline is what the mixed template does in plain Go.
func BenchmarkRenderBaseline(b *testing.B) {
	vars := Vars{"next_page_token": map[string]any{"next_page_token": int64(100)}}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		tok := vars["next_page_token"].(map[string]any)["next_page_token"]
		_ = fmt.Sprintf("%v,50", tok)
	}
}

// BenchmarkCompile compiles a cursor template, as a manifest loads.
func BenchmarkCompile(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := Compile(`{{ response.get("pagination", {}).get("next_page_token", {}) }}`, "x"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBoundedOutput is a template whose output passes the 1 MiB bound
// (issue 30: format_datetime('9999-12-31', '%c' * 500000) wrote 12 MB),
// stopped at the bound, against the baseline of one format_datetime that
// writes 1 MiB within it: a stopped output costs what writing to the
// bound costs, whatever the format asks for past it.
func BenchmarkBoundedOutput(b *testing.B) {
	for _, c := range []struct{ name, src string }{
		{"baseline-1MiB", `{{ format_datetime('9999-12-31', '%Y' * 262000) }}`},
		{"format_datetime-c-x500000", `{{ format_datetime('9999-12-31', '%c' * 500000) }}`},
		{"format_datetime-width-1e8", `{{ format_datetime('9999-12-31', '%99999999Y') }}`},
		{"strftime-c-x500000", `{{ now_utc().strftime('%c' * 500000) }}`},
		{"list-repeating-1MiB-x1000", `{{ ([mb] * 1000) | join(',') }}`},
	} {
		b.Run(c.name, func(b *testing.B) {
			t := MustCompile(c.src)
			vars := Vars{"config": map[string]any{}, "mb": strings.Repeat("x", 1<<20-10)}
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				t.Eval(vars)
			}
		})
	}
}
