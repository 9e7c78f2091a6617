package interp

import (
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

func testVars() Vars {
	v, err := FromJSON([]byte(`{
		"config": {"api_key": "abc", "n": 5, "big": 1e10, "flag": true, "nothing": null, "list": [1, 2], "obj": {"a": 1},
			"num_str": "7", "key1e10": "1e10", "secret": "hunter2", "category": ["a", "b"]},
		"parameters": {"name": "users", "page_size": 3},
		"next_page_token": {"next_page_token": 100},
		"response": {"has_more": false, "data": [{"id": 7}], "next": "https://x/2", "meta": {"cursor": "c1"}},
		"headers": {"link": {"next": {"url": "https://x/3", "rel": "next"}}},
		"last_records": [{"id": 7}, {"id": 9}],
		"last_record": {"id": 9},
		"last_page_size": 2,
		"record": {"status": "active", "n": 4}
	}`))
	if err != nil {
		panic(err)
	}
	return Vars(v.(map[string]any))
}

func frozen(t *testing.T) {
	saved := Now
	Now = func() time.Time { return time.Date(2021, 9, 1, 0, 0, 0, 0, time.UTC) }
	t.Cleanup(func() { Now = saved })
}

func asJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestEval: the typed value, as the reference types results (literal_eval).
func TestEval(t *testing.T) {
	frozen(t)
	cases := []struct {
		src  string
		want any
	}{
		{`{{ config['api_key'] }}`, "abc"},
		{`{{ config.n }}`, int64(5)},
		{`{{ config.n + 1 }}`, int64(6)},
		{`{{ config.big }}`, 1e10},
		{`{{ config.key1e10 }}`, 1e10},
		{`{{ config.num_str }}`, int64(7)},
		{`{{ '5' }}`, int64(5)},
		{`{{ '01' }}`, "01"},
		{`{{ config.flag }}`, true},
		{`{{ config.nothing }}`, nil},
		{`{{ config.missing }}`, ""},
		{`{{ config.list }}`, []any{int64(1), int64(2)}},
		{`{{ config.obj }}`, map[string]any{"a": int64(1)}},
		{`{{ 6 / 2 }}`, 3.0},
		{`{{ -7 // 2 }}`, int64(-4)},
		{`{{ '%s-%s' % (config.n, config.api_key) }}`, "5-abc"},
		{`{{ (response.get('error') or {}).get('info') }}`, nil},
		{`{{ ','.join(config['category']) }}`, "a,b"},
		{`{{ response['data'][-1]['id'] }}`, int64(7)},
		{`{{ last_records[-1].id }}`, int64(9)},
		{`{{ now_utc() }}`, "2021-09-01 00:00:00+00:00"},
		{`{{ now_utc().strftime('%Y-%m-%d') }}`, "2021-09-01"},
		{`{{ (now_utc() - duration('P1D')).strftime('%Y-%m-%dT%H:%M:%SZ') }}`, "2021-08-31T00:00:00Z"},
		{`{{ timestamp('2022-02-28') }}`, 1646006400.0},
		{`{{ timestamp(100.9) }}`, int64(100)},
		{`{{ duration('P6DT23H') }}`, "6 days, 23:00:00"},
		{`{{ config.n | string }}`, "5"},
		{`{{ 'x' | regex_search('\$skiptoken=([^&]+)') }}`, ""},
		{`{{ 'a?$skiptoken=s1&b' | regex_search('\$skiptoken=([^&]+)') }}`, "s1"},
		{`100`, int64(100)},
		{`plain text`, "plain text"},
		{`{{ config.n }},50`, []any{int64(5), int64(50)}},
		{`{% for i in config.list %}{{ i }}-{% endfor %}`, "1-2-"},
	}
	vars := testVars()
	for _, c := range cases {
		got, err := MustCompile(c.src).Eval(vars)
		if err != nil {
			t.Errorf("%s: %v", c.src, err)
			continue
		}
		if asJSON(got) != asJSON(c.want) || (got != nil && c.want != nil && typeName(got) != typeName(c.want)) {
			t.Errorf("%s = %s (%T), want %s (%T)", c.src, asJSON(got), got, asJSON(c.want), c.want)
		}
	}
}

// TestEvalOrNil: a body field is left out (nil) when its template renders
// nothing or reaches an undefined value.
// TestWithClock: the date macros of variables made WithClock read its
// clock, not Now; the other variables are kept.
func TestWithClock(t *testing.T) {
	frozen(t)
	vars := WithClock(testVars(), func() time.Time { return time.Date(2030, 1, 2, 3, 4, 5, 6000, time.FixedZone("X", 3600)) })
	for src, want := range map[string]string{
		`{{ now_utc().isoformat() }}`:             "2030-01-02T02:04:05.000006+00:00",
		`{{ today_utc() }}`:                       "2030-01-02",
		`{{ today_with_timezone('Asia/Tokyo') }}`: "2030-01-02",
		`{{ day_delta(1, '%Y-%m-%dT%H:%M:%S') }}`: "2030-01-03T02:04:05",
		`{{ config.api_key }}`:                    "abc",
	} {
		if got, err := MustCompile(src).Render(vars); err != nil || got != want {
			t.Errorf("%s: got %q (%v), want %q", src, got, err, want)
		}
	}
	if got, _ := MustCompile(`{{ now_utc().year }}`).Render(testVars()); got != "2021" {
		t.Errorf("without a clock: now_utc().year %s, want Now's 2021", got)
	}
}

func TestEvalOrNil(t *testing.T) {
	vars := testVars()
	for src, want := range map[string]any{
		`{{ config.missing }}`:      nil,
		`{{ config.missing.deep }}`: nil,
		`{{ config.nothing }}`:      nil,
		``:                          nil,
		`{{ config.n }}`:            int64(5),
		`{{ '' }}`:                  nil,
	} {
		got, err := MustCompile(src).EvalOrNil(vars)
		if err != nil || asJSON(got) != asJSON(want) {
			t.Errorf("%s: got %s, %v; want %s", src, asJSON(got), err, asJSON(want))
		}
	}
}

// TestRender: the text, with the project's decisions: None is empty,
// booleans are true/false, a text such as 1e10 stays as written.
func TestRender(t *testing.T) {
	frozen(t)
	cases := map[string]string{
		`Bearer {{ config.api_key }}`:                 "Bearer abc",
		`{{ config.key1e10 }}`:                        "1e10",
		`k={{ config.big }}`:                          "k=10000000000.0",
		`flag={{ config.flag }}`:                      "flag=true",
		`x{{ config.nothing }}y`:                      "xy",
		`a{{ config.missing }}b`:                      "ab",
		`q={{ config.list }}`:                         "q=[1, 2]",
		`d={{ duration('P1D') }}`:                     "d=1 day, 0:00:00",
		`{{ now_utc() }}`:                             "2021-09-01 00:00:00+00:00",
		`{{ today_utc() }}`:                           "2021-09-01",
		`{{ day_delta(1) }}`:                          "2021-09-02T00:00:00.000000+0000",
		`{{ 'a b&c' | urlencode }}`:                   "a%20b%26c",
		`{{ sanitize_url('a b/c') }}`:                 "a+b%2Fc",
		`{{ 'Test client_secret' | hash('md5') }}`:    "3032d57a12f76b61a820e47b9a5a0cbb",
		`{{ 'abc' | base64encode }}`:                  "YWJj",
		`{{ 'YWJj' | base64decode }}`:                 "abc",
		`{{ camel_case_to_snake_case('CamelCase') }}`: "camel_case",
		`{%- if config.flag -%}  yes  {%- endif %}`:   "yes",
		"{{ config.n }}\n":                            "5",
		`{% set ns = namespace(n=0) %}{% for x in config.list %}{% set ns.n = ns.n + x %}{% endfor %}{{ ns.n }}`: "3",
	}
	vars := testVars()
	for src, want := range cases {
		got, err := MustCompile(src).Render(vars)
		if err != nil || got != want {
			t.Errorf("%s: got %q, %v; want %q", src, got, err, want)
		}
	}
}

// TestParam: request parameters, headers and form fields keep their text,
// except lists, and drop null and undefined values.
func TestParam(t *testing.T) {
	cases := map[string]any{
		`{{ config.key1e10 }}`:      "1e10",
		`{{ config.n }}`:            "5",
		`{{ config.flag }}`:         "true",
		`{{ config.nothing }}`:      nil,
		`{{ config.missing.deep }}`: nil,
		`{{ config.list }}`:         []any{int64(1), int64(2)},
		`[1, 2]`:                    []any{int64(1), int64(2)},
		`1,2`:                       "1,2",
		`{{ next_page_token.next_page_token }},50`: "100,50",
		`{{ config.obj }}`:                         "{'a': 1}",
		`{{ '' }}`:                                 nil,
	}
	vars := testVars()
	for src, want := range cases {
		got, err := MustCompile(src).Param(vars)
		if err != nil || asJSON(got) != asJSON(want) {
			t.Errorf("%s: got %s, %v; want %s", src, asJSON(got), err, asJSON(want))
		}
	}
}

// TestTemplateBool: conditions follow the reference's InterpolatedBoolean:
// None, 'FALSE' and ' ' are true; 'false', 0, empty things and undefined
// chains are false.
func TestTemplateBool(t *testing.T) {
	vars := testVars()
	for src, want := range map[string]bool{
		`{{ response.has_more is false }}`:  true,
		`{{ False }}`:                       false,
		`{{ 0 }}`:                           false,
		`{{ '0.0' }}`:                       false,
		`{{ config.missing }}`:              false,
		`{{ config.missing.deep }}`:         false,
		`{{ [] }}`:                          false,
		`{{ 'x' }}`:                         true,
		`{{ "false" }}`:                     false,
		`{{ "FALSE" }}`:                     true,
		`{{ ' ' }}`:                         true,
		`{{ none }}`:                        true,
		`{{ config.nothing }}`:              true,
		`{{ not response.get("num", {}) }}`: true,
		`{{ record['status'] == 'active' and record['n'] > 3 }}`: true,
	} {
		got, err := MustCompile(src).Bool(vars)
		if err != nil || got != want {
			t.Errorf("%s: got %v %v, want %v", src, got, err, want)
		}
	}
	if got, _ := Constant(false, "x").Bool(vars); got {
		t.Errorf("a false constant is false")
	}
}

// TestErrors: undefined values used further than rendering, undeclared
// names, and failures name the place and never a value.
func TestErrors(t *testing.T) {
	vars := testVars()
	_, err := MustCompile(`{{ config.missing.deep }}`).Eval(vars)
	if !IsUndefined(err) || !strings.Contains(err.Error(), "has no attribute 'missing'") {
		t.Errorf("undefined chain: got %v", err)
	}
	tpl, _ := Compile(`{{ unknown_name ~ config.secret }}`, "streams[0].path")
	_, err = tpl.Render(vars)
	if err == nil || !strings.Contains(err.Error(), "streams[0].path") || !strings.Contains(err.Error(), "unknown_name") || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("undeclared: got %v", err)
	}
	tpl, _ = Compile(`{{ config.secret | int(base=99) + config.missing }}`, "streams[0].path")
	_, err = tpl.Eval(vars)
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("failure: got %v", err)
	}
	_, err = MustCompile(`{{ 1 / 0 }}`).Eval(vars)
	if err == nil || !strings.Contains(err.Error(), "division by zero") {
		t.Errorf("division by zero: got %v", err)
	}
}

func TestRefusedAtLoad(t *testing.T) {
	for _, src := range []string{`{% include '/etc/passwd' %}`, `{% import 'x.html' as x %}`, `{% extends 'base.html' %}`,
		`{% from 'x' import y %}`, `{% macro m(a=1, b) %}{% endmacro %}`, `{{ x | nofilter }}`, `{{ x is notatest }}`,
		`{{ 'a' | regex_search('(') }}`, `{{ 1 +`, `{% if x %}`, `{% for x in y %}{% break %}{% endfor %}`,
		"{{ " + strings.Repeat("(", 100) + "1" + strings.Repeat(")", 100) + " }}"} {
		_, err := Compile(src, "streams[0].path")
		if err == nil || !strings.Contains(err.Error(), "streams[0].path") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: want a one-line error naming the path, got %v", src, err)
		}
	}
}

// TestLimits: work, output, strings and lists are bounded by the evaluator
// itself; no goroutine is started.
func TestLimits(t *testing.T) {
	before := runtime.NumGoroutine()
	big := make([]any, 2000)
	huge := make([]any, 100000)
	vars := Vars{"x": big, "y": huge, "config": map[string]any{}}
	for src, want := range map[string]string{
		`{% for a in x %}{% for b in x %}{{ 1 }}{% endfor %}{% endfor %}`:                               "steps",
		`{% for a in x %}{% for b in x %}{{ 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxx' }}{% endfor %}{% endfor %}`: "larger than",
		`{{ 'x' * 100000000 }}`:                   "longer than",
		`{{ [1] * 100000000 }}`:                   "longer than",
		`{{ ('x' * 1000000) ~ ('x' * 1000000) }}`: "longer than",
		`{{ '%99999999s' % 'x' }}`:                "longer than",
		`{{ 'x'.center(99999999) }}`:              "longer than",
		`{{ 2 ** 100000 }}`:                       "digits",
		`{{ 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!' | regex_search('^(a+)+$') }}`:           "took longer",
		`{% for i in x %}{{ 'aaaaaaaaaaaaaaaaaa!' | regex_search('^(a+)+$') }}{% endfor %}`:                                 "steps",
		`{% for a in y %}{% if a in y %}{% endif %}{% endfor %}`:                                                            "steps",
		`{% for a in y %}{{ y | unique | length }}{% endfor %}`:                                                             "steps",
		`{% macro m(n) %}{{ m(n) }}{% endmacro %}{{ m(1) }}`:                                                                "nest deeper",
		`{% macro m(n) %}{% if n %}{{ m(n-1) }}{{ m(n-1) }}{% endif %}{% endmacro %}{{ m(30) }}`:                            "steps",
		`{% macro m(n) %}{% if n %}{{ m(n-1) }}{{ m(n-1) }}{% else %}{{ 'x' * 100000 }}{% endif %}{% endmacro %}{{ m(5) }}`: "larger than",
	} {
		start := time.Now()
		_, err := MustCompile(src).Render(vars)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: want an error with %q, got %v", src, want, err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: took %s", src, d)
		}
	}
	if after := runtime.NumGoroutine(); after > before+1 {
		t.Errorf("goroutines: %d before, %d after", before, after)
	}
}

func TestUsageOf(t *testing.T) {
	cases := map[string]string{
		`{{ response.next_cursor }}`:                      "next_cursor",
		`{{ response['meta']['next'] is none }}`:          "meta",
		`{{ not response.get('next') }}`:                  "next",
		`{{ response.get("meta", {}).get("token", {}) }}`: "meta",
		`{{ response['data'][-1]['id'] }}`:                "data",
		`{{ (response.get('error') or {}).get('info') }}`: "error",
		`{{ response | tojson }}`:                         "ALL",
		`{{ 'next' in response }}`:                        "ALL",
		`{{ response.items() }}`:                          "ALL",
		`{% for k in response %}{{ k }}{% endfor %}`:      "ALL",
		`{{ headers['link']['next']['url'] }}`:            "",
		`{{ response.a if response.b else config.c }}`:    "a,b",
		`{% if response.a %}{{ response.b }}{% endif %}`:  "a,b",
	}
	for src, want := range cases {
		u := MustCompile(src).UsageOf("response")
		got := strings.Join(SortedKeys(u.Keys), ",")
		if u.All {
			got = "ALL"
		}
		if got != want || u.Used != (want != "") {
			t.Errorf("%s: got %q (used %v), want %q", src, got, u.Used, want)
		}
	}
}

func TestFromJSON(t *testing.T) {
	v, err := FromJSON([]byte(` {"i": 12, "f": 1.5, "e": 1e3, "big": 123456789012345678901, "s": "a\u00e9\ud83d\ude00\n", "l": [true, null, -0], "o": {}} `))
	if err != nil {
		t.Fatal(err)
	}
	m := v.(map[string]any)
	if m["i"] != int64(12) || m["f"] != 1.5 || m["e"] != 1000.0 || String(m["big"]) != "123456789012345678901" || m["s"] != "aé😀\n" {
		t.Errorf("got %#v", m)
	}
	if asJSON(m["l"]) != `[true,null,0]` || asJSON(m["o"]) != `{}` {
		t.Errorf("got %#v", m)
	}
	got, _ := MustCompile(`{{ l[-1] }}`).Eval(Vars{"l": m["l"]})
	if got != int64(0) {
		t.Errorf("negative index: got %v", got)
	}
	for _, bad := range []string{``, `{`, `[1,]`, `{"a" 1}`, `01`, `"x`, `1 2`, `nul`, strings.Repeat("7", 4301)} {
		if _, err := FromJSON([]byte(bad)); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
}

// TestTypeErrorFails: a template whose evaluation raises a TypeError fails in
// every mode with an error naming its path and the TypeError, where the
// reference would take the template's own text (and send it, keep every
// record, stop a pagination).
func TestTypeErrorFails(t *testing.T) {
	vars := Vars{"config": map[string]any{"n": int64(5)}, "response": map[string]any{"value": []any{}}}
	for src, want := range map[string]string{
		`{{ config.n > 'x' }}`: `streams[0].x: template "{{ config.n > 'x' }}": TypeError: '>' not supported between instances of 'int' and 'str'`,
		`{{ response.get('@odata.nextLink') | regex_search('skiptoken=(.*)') }}`: `streams[0].x: template "{{ response.get('@odata.nextLink') | regex_search('skiptoken=(.*)') }}": TypeError: filter regex_search: expected string or bytes-like object, got 'NoneType'`,
		`a{{ config.n + 'x' }}b`: `streams[0].x: template "a{{ config.n + 'x' }}b": TypeError: unsupported operand type(s) for +: 'int' and 'str'`,
	} {
		tpl, err := Compile(src, "streams[0].x")
		if err != nil {
			t.Fatal(err)
		}
		modes := map[string]func() (any, error){
			"Eval":      func() (any, error) { return tpl.Eval(vars) },
			"EvalOrNil": func() (any, error) { return tpl.EvalOrNil(vars) },
			"Render":    func() (any, error) { return tpl.Render(vars) },
			"Param":     func() (any, error) { return tpl.Param(vars) },
			"Bool":      func() (any, error) { return tpl.Bool(vars) },
		}
		for name, f := range modes {
			v, err := f()
			if err == nil || err.Error() != want {
				t.Errorf("%s %s: got %v, %v; want the error %s", name, src, v, err, want)
			}
			if IsUndefined(err) {
				t.Errorf("%s %s: a TypeError is not an UndefinedError", name, src)
			}
		}
	}
}

// TestEveryOutputIsBounded: what any function, method, filter or operator
// makes counts against the 1 MiB bound as it is made, whatever it is
// (issue 30: format_datetime made 12 MB), and the text of a value (a list
// repeating a long string, small in memory) is bounded before it is
// written: it allocates little more than the bound (its time is
// BenchmarkBoundedOutput's).
func TestEveryOutputIsBounded(t *testing.T) {
	vars := Vars{"config": map[string]any{}, "mb": strings.Repeat("x", 1<<20-10)}
	for _, src := range []string{
		`{{ format_datetime('9999-12-31', '%c' * 500000) }}`,
		`{{ format_datetime('9999-12-31', '%_ms%c' * 300000) }}`,
		`{{ format_datetime('9999-12-31', '%999999999Y') }}`,
		`{{ format_datetime('9999-12-31', '%99999999999999999999999999c') }}`,
		`{{ now_utc().strftime('%c' * 500000) }}`,
		`{{ today_utc().strftime('%A' * 200000) }}`,
		`{{ day_delta(1, '%c' * 500000) }}`,
		`{{ ('{:' ~ '%c' * 500000 ~ '}').format(now_utc()) }}`,
		`{{ [mb] * 1000 }}`,
		`x{{ [mb] * 1000 }}`,
		`{{ 'a' ~ [mb] * 1000 }}`,
		`{{ ([mb] * 1000) | string }}`,
		`{{ ([mb] * 1000) | tojson }}`,
		`{{ ([mb] * 1000) | join(',') }}`,
		`{{ ([mb] * 1000) | hash('md5') }}`,
		`{{ ([mb] * 1000) | trim }}`,
		`{{ ([mb] * 1000) | truncate(10) }}`,
		`{{ {'a': mb, 'b': mb} | urlencode }}`,
		`{{ ([mb] * 1000) | wordcount }}`,
		`{{ '%s' % [[mb] * 1000] }}`,
		`{{ '{}'.format([mb] * 1000) }}`,
		`{{ {'a': mb, 'b': mb} }}`,
		`{{ mb | base64encode }}`,
		`{{ mb | replace('x', 'yy') }}`,
		`{{ (mb[:10] ~ '-' ~ mb[:10]) | regex_replace('-', mb) }}`,
		`{{ ('<' * 300000) | escape }}`,
		`{{ mb ~ mb }}`,
		`{{ mb * 2 }}`,
		`{{ mb.upper() * 2 }}`,
		`{{ ('é' * 500000) | urlencode }}`,
		`{{ ('x' * 1000000).zfill(99999999) }}`,
		`{{ mb | center(99999999) }}`,
		`{{ ('x\n' * 500000) | indent(100) }}`,
	} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := MustCompile(src).Eval(vars)
		runtime.ReadMemStats(&after)
		if err == nil || !strings.Contains(err.Error(), "longer than 1048576") && !strings.Contains(err.Error(), "larger than 1048576") && !strings.Contains(err.Error(), "steps") {
			t.Errorf("%s: want an error of the 1 MiB bound (or of the steps), got %v", src, err)
		}
		if made := after.TotalAlloc - before.TotalAlloc; made > 64<<20 {
			t.Errorf("%s: allocated %d bytes", src, made)
		}
	}
}

// TestIntegersPastPythonsLimit: an integer of more than 4,300 digits that
// comes from JSON (a response's page token) is exact, and writing it or
// computing with it is an error, as in Python: never inf.
func TestIntegersPastPythonsLimit(t *testing.T) {
	long := strings.Repeat("7", 4301)
	n, ok := Integer(long)
	if !ok || String(n) != long {
		t.Fatalf("Integer(%d digits) = %T, %v", len(long), n, ok)
	}
	vars := Vars{"response": Native(map[string]any{"c": json.Number(long), "ok": json.Number("123456789012345678901234567890")})}
	for _, src := range []string{`{{ response.c }}`, `c={{ response.c }}`, `{{ response.c + 1 }}`, `{{ response.c | string }}`, `{{ [response.c] }}`, `{{ ('1' * 5000) | int }}`} {
		v, err := MustCompile(src).Eval(vars)
		if err == nil || !strings.Contains(err.Error(), "4300 digits") {
			t.Errorf("%s: want an error naming 4300 digits, got %v %v", src, v, err)
		}
	}
	for src, want := range map[string]string{
		`{{ response.ok }}`:                   "123456789012345678901234567890",
		`{{ response.ok + 1 }}`:               "123456789012345678901234567891",
		`{{ response.c > 5 }}`:                "True",
		`{{ '123456789012345678901' | int }}`: "123456789012345678901",
	} {
		v, err := MustCompile(src).Eval(vars)
		if err != nil || pyStr(v) != want {
			t.Errorf("%s: got %v %v, want %s", src, v, err, want)
		}
	}
	// A template's output of digits is read as an integer as the CDK's
	// literal_eval reads it: up to 4,300 digits; past them Python's parser
	// refuses the literal and the text stays a string (a format_datetime
	// of 1 MiB of digits took 3.5 s to be read as one number).
	for src, want := range map[string]string{
		`{{ '9' * 4300 }}`:        "json.Number",
		`{{ '9' * 4301 }}`:        "string",
		`{{ '-' ~ '9' * 5000 }}`:  "string",
		`{{ '0x' ~ 'f' * 5000 }}`: "json.Number",
	} {
		v, err := MustCompile(src).Eval(vars)
		if got := fmt.Sprintf("%T", v); err != nil || got != want {
			t.Errorf("%s: got %s %v, want %s", src, got, err, want)
		}
	}
}

// TestDictHoldingItself: written as Python writes it ({...}), equal to
// itself, and no stack overflow anywhere.
func TestDictHoldingItself(t *testing.T) {
	for src, want := range map[string]string{
		`{% set d = {} %}{% set _ = d.update({'a': d}) %}{{ d }}`:                            `{'a': {...}}`,
		`{% set d = {} %}{% set _ = d.update({'a': [d]}) %}x{{ d }}`:                         `x{'a': [{...}]}`,
		`{% set d = {} %}{% set _ = d.update({'a': d}) %}{{ d == d }}`:                       `True`,
		`{% set d = {} %}{% set e = {'a': d} %}{% set _ = d.update({'a': e}) %}{{ d == e }}`: `False`,
	} {
		v, err := MustCompile(src).Eval(Vars{})
		if err != nil || pyStr(v) != want {
			t.Errorf("%s: got %v %v, want %s", src, v, err, want)
		}
	}
}

// TestStreamStateRefusedWhenEvaluated: a template holding the text
// stream_state (anywhere, as the CDK's `in` test finds it, braces or not)
// compiles, and every evaluation fails with a RefusedError naming its path,
// in the CDK's words.
func TestStreamStateRefusedWhenEvaluated(t *testing.T) {
	for _, src := range []string{"{{ stream_state.get('x') }}", "{{ config.my_stream_state_key }}", "stream_state", "{% if stream_state %}a{% endif %}"} {
		tpl, err := Compile(src, "streams[0].path")
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		_, evalErr := tpl.Eval(Vars{"config": map[string]any{}})
		_, renderErr := tpl.Render(Vars{"config": map[string]any{}})
		_, boolErr := tpl.Bool(Vars{"config": map[string]any{}})
		for _, err := range []error{evalErr, renderErr, boolErr} {
			var refused *RefusedError
			if !errors.As(err, &refused) || err.Error() != "streams[0].path: `stream_state` is no longer supported for interpolation. We recommend using `stream_interval` instead. Please reference the CDK Migration Guide for more information." {
				t.Errorf("%s: got %v", src, err)
			}
		}
	}
}
