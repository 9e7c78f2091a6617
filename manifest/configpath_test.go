package manifest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// ConfigPath reads what the regular expressions it replaced read: the same
// templates are config references, with the same keys. The inputs are the
// catalog manifests' templates and edge cases.
func TestConfigPathAsTheRegexpDid(t *testing.T) {
	ref := regexp.MustCompile(`^\s*\{\{\s*config((?:\[\s*['"][^'"\]]+['"]\s*\]|\.[A-Za-z_][A-Za-z0-9_]*)+)\s*\}\}\s*$`)
	step := regexp.MustCompile(`\[\s*['"]([^'"\]]+)['"]\s*\]|\.([A-Za-z_][A-Za-z0-9_]*)`)
	inputs := []string{"", "{{ config }}", "{{ config['a'] }}", `{{ config["a"]["b"] }}`, "{{ config.a.b }}", " \t{{config['a']}}\n ", "{{ config['a'] }} x",
		"{{ config['a'] | x }}", "{{ config[ 'a b' ] }}", `{{ config['a"] }}`, "{{ config[''] }}", "{{ config['a]'] }}", "{{ config.1a }}", "{{ config._a1 }}",
		"{{ config.a['b'].c }}", "{{ config.a. }}", "{{ config['a'] }}}", "{{config.a}}", "{ { config.a }}", "{{ config ['a'] }}", "{{ config['a'] ['b'] }}",
		"{{ configx.a }}", "{{ config.é }}", "{{ config['é'] }}", "\v{{ config.a }}", "{{ config['a'\n] }}", "{{ config.a }}\f", "{{ config[\"a'] }}"}
	files, _ := filepath.Glob("../../shared/manifests/*.yaml")
	for _, f := range files {
		text, _ := os.ReadFile(f)
		for _, line := range strings.Split(string(text), "\n") {
			if i := strings.Index(line, "{{"); i >= 0 {
				inputs = append(inputs, strings.Trim(strings.TrimSpace(line[i:]), `"'`), line[strings.Index(line, ":")+1:])
			}
		}
	}
	for _, tpl := range inputs {
		var want []string
		m := ref.FindStringSubmatch(tpl)
		if m != nil {
			for _, s := range step.FindAllStringSubmatch(m[1], -1) {
				want = append(want, s[1]+s[2])
			}
		}
		got, ok := ConfigPath(tpl)
		if ok != (m != nil) || strings.Join(got, "\x00") != strings.Join(want, "\x00") {
			t.Errorf("%q: %q %v, the regexp read %q %v", tpl, got, ok, want, m != nil)
		}
	}
}
