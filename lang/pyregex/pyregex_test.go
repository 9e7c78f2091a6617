package pyregex

import "testing"

func TestPythonSyntax(t *testing.T) {
	cases := []struct{ pattern, text, want string }{
		{`(?P<secs>\d+)`, "wait 42 s", "42"},
		{`(?<=wait=)\d+`, "x wait=17", "17"},
		{`(?P<q>["'])(?P<v>\d+)(?P=q)`, `a "12" b`, `"`},
		{`\d+`, "١٢٣", "١٢٣"}, // \d matches Unicode digits, as in Python 3
		{`[]a]+`, "x]]a", "]]a"},
		{`^\d+\Z`, "12", "12"},
		{`([0-9.]+)s`, "retry in 1.5s", "1.5"},
	}
	for _, c := range cases {
		re, err := Compile(c.pattern)
		if err != nil {
			t.Errorf("%s: %v", c.pattern, err)
			continue
		}
		if got, ok := Find(re, c.text); !ok || got != c.want {
			t.Errorf("%s on %q: got %q %v, want %q", c.pattern, c.text, got, ok, c.want)
		}
	}
	if _, err := Compile(`(?P<n>\d+`); err == nil {
		t.Error("an unclosed group must not compile")
	}
	re, _ := Compile(`^\d+\Z`)
	if _, ok := Find(re, "12\n"); ok {
		t.Error(`\Z must not match before a final newline, as in Python`)
	}
}
