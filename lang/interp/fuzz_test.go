package interp

import "testing"

func FuzzTemplate(f *testing.F) {
	for _, s := range []string{`{{ config['api_key'] }}`, `{{ last_records[-1]['id'] }}`, `{% for x in config.list %}{{ x }}{% endfor %}`,
		`{{ response.has_more is false }}`, `{{ format_datetime(now_utc(), '%Y') }}`, `{{ 'a' | hash('sha1') }}`, `{{ [1,2][5] }}`,
		`{% macro m(a, b=2) %}{{ a }}{{ varargs }}{% endmacro %}{{ m(1, 3) }}`, `{{ {1: 2, none: 3}[1] }}`, `{{ 10 ** 20 // 7 }}`,
		`{{ [[1, 2]] | batch(2, 0) | list }}`, `{{ config.list | groupby(0) }}`, `{{ 'é'.encode()[0] }}`, `{{ '\N{BULLET}' }}`} {
		f.Add(s)
	}
	vars := testVars()
	f.Fuzz(func(t *testing.T, src string) {
		tpl, err := Compile(src, "fuzz")
		if err != nil {
			return
		}
		tpl.Eval(vars)
		tpl.Bool(vars)
	})
}
