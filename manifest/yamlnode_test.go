package manifest

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// Parse reads every document as yaml.Unmarshal into an any and plain read
// it: the catalog manifests, the example, and the YAML that only the general
// path reads (aliases, merge keys, tags, keys that are not strings or come
// twice), where it must give the same values or the same error.
func TestParseAsTheGeneralPath(t *testing.T) {
	docs := []string{
		"", "a: 1", "a: [1, 2.5, -3, 0x1F, 0o17, 1_000, 1e3, .inf, -.Inf, 9223372036854775808, 18446744073709551616]",
		"a: [true, True, TRUE, false, yes, no, on, off, y, n, ~, null, Null, '', \"\"]",
		"a: [2024-01-01, 2024-01-01T10:00:00Z, '2024-01-01', \"1\", '1.5']", "a: !!str 1", "a: !!int '7'", "a: !!binary aGk=",
		"? [1, 2]\n: x", "1: a\n2.5: b\ntrue: c\n~: d", "'1': a\n\"true\": b", "a: 1\na: 2", "a: &x {b: 1}\nc: *x", "a: &x {b: 1}\nc: {<<: *x, d: 2}",
		"a: |\n  line 1\n  line 2\nb: >\n  folded\n  text\n", "a: {b: [c, {d: e}]}", "- 1\n- 2", "just text", "a: 1\n---\nb: 2", "!!map {a: 1}",
		"a: !custom x", "a: [1, 2", "a:\n  - b: 1\n    c: [x, 'y', \"z\"]\n",
	}
	files, _ := filepath.Glob("../../shared/manifests/*.yaml")
	files = append(files, "../examples/manifest.yaml")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(b))
	}
	for _, doc := range docs {
		var general any
		generalErr := yaml.Unmarshal([]byte(doc), &general)
		var node yaml.Node
		if err := yaml.Unmarshal([]byte(doc), &node); err != nil {
			if generalErr == nil || err.Error() != generalErr.Error() {
				t.Errorf("%.60q: node: %v, general: %v", doc, err, generalErr)
			}
			continue
		}
		fast, ok := plainFromNode(&node)
		if !ok {
			continue // Parse reads it the general way
		}
		if generalErr != nil {
			t.Errorf("%.60q: read %v, the general path fails: %v", doc, fast, generalErr)
			continue
		}
		if want := plain(general); !reflect.DeepEqual(fast, want) {
			t.Errorf("%.60q:\n got %#v\nwant %#v", doc, fast, want)
		}
	}
}

// TestYAMLDatesStayAsWritten: an unquoted date is the text the user wrote,
// not Go's rendering of a time ("2024-01-01 00:00:00 +0000 UTC"), on both
// paths (the second document has an alias, read the general way).
func TestYAMLDatesStayAsWritten(t *testing.T) {
	for _, doc := range []string{
		"start: 2024-01-01\nat: 2024-01-01T10:00:00Z\nother: x",
		"start: 2024-01-01\nat: 2024-01-01T10:00:00Z\nother: &o x\nsame: *o",
	} {
		m, err := Parse([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		if m["start"] != "2024-01-01" || m["at"] != "2024-01-01T10:00:00Z" {
			t.Errorf("%q: start %#v, at %#v", doc, m["start"], m["at"])
		}
	}
}

// A key given twice keeps its last value, as PyYAML keeps it, on both paths
// (the second document has an anchor and a merge key, read the general way:
// the merged keys stay below the mapping's own), with one warning per key
// naming its path and lines; a key given once draws none.
func TestParseKeepsTheLastOfDuplicateKeys(t *testing.T) {
	for _, c := range []struct{ doc, want, warning string }{
		{"a: {b: 1, c: 2, b: 3}\nd: [x, {e: 1, e: 2}]", `{"a":{"b":3,"c":2},"d":["x",{"e":2}]}`, "a.b: the key is given 2 times in one mapping (lines 1, 1)"},
		{"base: &b {k: 1, k: 2}\nuse: {<<: *b, j: 0, j: 5}", `{"base":{"k":2},"use":{"j":5,"k":2}}`, "base.k: the key is given 2 times in one mapping (lines 1, 1)"},
		{"x: 1\ny: 2", `{"x":1,"y":2}`, ""},
	} {
		m, warnings, err := ParseWarn([]byte(c.doc))
		if err != nil {
			t.Fatalf("%q: %v", c.doc, err)
		}
		if got := jsonOf(t, m); got != c.want {
			t.Errorf("%q: got %s, want %s", c.doc, got, c.want)
		}
		if c.warning == "" && len(warnings) > 0 || c.warning != "" && (len(warnings) == 0 || !strings.HasPrefix(warnings[0], c.warning)) {
			t.Errorf("%q: warnings %q, want one starting %q", c.doc, warnings, c.warning)
		}
	}
}
