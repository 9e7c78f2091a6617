package interp

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func testVars() Vars {
	return Native(map[string]any{
		"config": map[string]any{"api_key": "abc", "n": int64(5), "big": 1e10, "flag": true, "nothing": nil,
			"list": []any{int64(1), int64(2)}, "obj": map[string]any{"a": int64(1)}, "num_str": "7", "key1e10": "1e10"},
		"parameters":      map[string]any{"name": "users", "page_size": int64(3)},
		"next_page_token": map[string]any{"next_page_token": int64(100)},
		"response":        map[string]any{"has_more": false, "data": []any{map[string]any{"id": int64(7)}}, "next": "https://x/2", "meta": map[string]any{"cursor": "c1"}},
		"headers":         map[string]any{"link": map[string]any{"next": map[string]any{"url": "https://x/3", "rel": "next"}}},
		"last_records":    []any{map[string]any{"id": int64(7)}, map[string]any{"id": int64(9)}},
		"last_record":     map[string]any{"id": int64(9)},
		"last_page_size":  int64(2),
	}).(map[string]any)
}

func TestTemplateSemantics(t *testing.T) {
	Now = func() time.Time { return time.Date(2021, 9, 1, 0, 0, 0, 0, time.UTC) }
	defer func() { Now = func() time.Time { return time.Now().UTC() } }()
	cases := []struct {
		src  string
		want any
	}{
		{`{{ config['api_key'] }}`, "abc"},
		{`{{ config["api_key"] }}`, "abc"},
		{`{{ config.api_key }}`, "abc"},
		{`Bearer {{ config.api_key }}`, "Bearer abc"},
		{`{{ config.n }}`, int64(5)},
		{`{{ config.n + 1 }}`, int64(6)},
		{`{{ config.big }}`, 1e10},
		{`k={{ config.big }}`, "k=10000000000"},
		{`{{ config.key1e10 }}`, "1e10"},
		{`{{ config.flag }}`, true},
		{`flag={{ config.flag }}`, "flag=true"},
		{`{{ config.nothing }}`, nil},
		{`x{{ config.nothing }}y`, "xy"},
		{`{{ config.list }}`, []any{int64(1), int64(2)}},
		{`{{ config.obj }}`, map[string]any{"a": int64(1)}},
		{`q={{ config.list }}`, "q=[1,2]"},
		{`{{ config.missing }}`, nil},
		{`a{{ config.missing }}b`, "ab"},
		{`{{ config.missing.deep }}`, nil},
		{`{{ config.missing is none }}`, true},
		{`{{ config.nothing is none }}`, true},
		{`{{ response.has_more is false }}`, true},
		{`{{ response.has_more }}`, false},
		{`{{ not response.get('next') }}`, false},
		{`{{ response.get('next') }}`, "https://x/2"},
		{`{{ response.get('absent', 'dflt') }}`, "dflt"},
		{`{{ response['data'][-1]['id'] }}`, int64(7)},
		{`{{ last_records[-1]['id'] }}`, int64(9)},
		{`{{ last_records[0].id }}`, int64(7)},
		{`{{ last_record.id }}`, int64(9)},
		{`{{ last_page_size }}`, int64(2)},
		{`{{ next_page_token['next_page_token'] or '0' }},50`, "100,50"},
		{`{{ next_page_token['next_page_token'] }}`, int64(100)},
		{`{{ headers['link']['next']['url'] }}`, "https://x/3"},
		{`{{ headers.link.next.url }}`, "https://x/3"},
		{`{{ 'next' not in headers['link'] }}`, false},
		{`{{ 'prev' not in headers['link'] }}`, true},
		{`{{ 'api_key' in config }}`, true},
		{`{{ config.missing or 'fallback' }}`, "fallback"},
		{`{{ config.n or 'fallback' }}`, int64(5)},
		{`{{ parameters.name }}`, "users"},
		{`{{ parameters['page_size'] * 2 }}`, int64(6)},
		{`{{ response.meta.cursor }}`, "c1"},
		{`{{ 1 if config.flag else 2 }}`, int64(1)},
		{`{{ config.num_str | int + 1 }}`, int64(8)},
		{`{{ 'abc' | upper }}`, "ABC"},
		{`{{ 'a b' | replace(' ', '_') }}`, "a_b"},
		{`{{ [1, 2, 3] | length }}`, int64(3)},
		{`{% if config.flag %}yes{% else %}no{% endif %}`, "yes"},
		{`{% for i in config.list %}{{ i }},{% endfor %}`, "1,2,"},
		{`plain text`, "plain text"},
		{`100`, "100"},
		{`{{ 100 }}`, int64(100)},
		{`{{ 1.5 }}`, 1.5},
		{`{{ now_utc() }}`, time.Date(2021, 9, 1, 0, 0, 0, 0, time.UTC)},
		{`{{ today_utc() }}`, "2021-09-01"},
		{`{{ day_delta(1) }}`, "2021-09-02T00:00:00.000000+0000"},
		{`{{ duration('P6DT23H') }}`, 6*24*time.Hour + 23*time.Hour},
		{`d={{ duration('P6DT23H') }}`, "d=6 days, 23:00:00"},
		{`{{ timestamp('2022-02-28T00:00:00-08:00') }}`, int64(1646035200)},
		{`{{ timestamp(100.9) }}`, int64(100)},
		{`{{ max(1, 5, 3) }}`, int64(5)},
		{`{{ min([4, 2, 8]) }}`, int64(2)},
		{`{{ format_datetime('2022-01-01T01:01:01-0800', '%Y-%m-%dT%H:%M:%SZ') }}`, "2022-01-01T09:01:01Z"},
		{`{{ format_datetime(1640998861000, '%Y-%m-%dT%H:%M:%SZ', '%ms') }}`, "2022-01-01T01:01:01Z"},
		{`{{ str_to_datetime('2022-01-01') }}`, time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC)},
		{`{{ sanitize_url('a b/c') }}`, "a+b%2Fc"},
		{`{{ 'Test client_secret' | hash('md5') }}`, "3032d57a12f76b61a820e47b9a5a0cbb"},
		{`{{ 'abc' | base64encode }}`, "YWJj"},
		{`{{ 'YWJj' | base64decode }}`, "abc"},
		{`{{ config.flag | string }}`, "true"},
		{`{{ 'id=42;x' | regex_search("id=([0-9]+)") }}`, "42"},
		{`{{ camel_case_to_snake_case('CamelCase') }}`, "camel_case"},
	}
	vars := testVars()
	for _, c := range cases {
		tpl, err := Compile(c.src, "test")
		if err != nil {
			t.Errorf("%s: compile: %v", c.src, err)
			continue
		}
		got, err := tpl.Eval(vars)
		if err != nil {
			t.Errorf("%s: eval: %v", c.src, err)
			continue
		}
		gj, _ := json.Marshal(got)
		wj, _ := json.Marshal(c.want)
		if string(gj) != string(wj) {
			t.Errorf("%s = %s (%T), want %s (%T)", c.src, gj, got, wj, c.want)
		}
	}
}

func TestTemplateBool(t *testing.T) {
	vars := testVars()
	for src, want := range map[string]bool{
		`{{ response.has_more is false }}`: true,
		`{{ False }}`:                      false,
		`{{ 0 }}`:                          false,
		`{{ config.missing }}`:             false,
		`{{ config.missing.deep }}`:        false,
		`{{ [] }}`:                         false,
		`{{ 'x' }}`:                        true,
		`{{ "false" }}`:                    false,
	} {
		got, err := MustCompile(src).Bool(vars)
		if err != nil || got != want {
			t.Errorf("%s: got %v %v, want %v", src, got, err, want)
		}
	}
}

func TestSandbox(t *testing.T) {
	for _, src := range []string{`{% include '/etc/passwd' %}`, `{% import 'x.html' as x %}`, `{% extends 'base.html' %}`, `{% from 'x' import y %}`} {
		if _, err := Compile(src, "streams[0].path"); err == nil || !strings.Contains(err.Error(), "streams[0].path") {
			t.Errorf("%s: want a compile error naming the path, got %v", src, err)
		}
	}
	_, err := MustCompile(`{{ range(10) }}`).Eval(Vars{})
	if err == nil {
		t.Errorf("range must not be available")
	}
	huge := `{% for a in x %}{% for b in x %}{% for c in x %}{{ 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx' }}{% endfor %}{% endfor %}{% endfor %}`
	list := make([]any, 200)
	_, err = MustCompile(huge).Eval(Vars{"x": list})
	if err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("output bound: got %v", err)
	}
}

func TestUsageOf(t *testing.T) {
	cases := map[string]string{
		`{{ response.next_cursor }}`:                      "next_cursor",
		`{{ response['meta']['next'] is none }}`:          "meta",
		`{{ not response.get('next') }}`:                  "next",
		`{{ response.get("meta", {}).get("token", {}) }}`: "meta",
		`{{ response['data'][-1]['id'] }}`:                "data",
		`{{ response | tojson }}`:                         "ALL",
		`{{ 'next' in response }}`:                        "ALL",
		`{% for k in response %}{{ k }}{% endfor %}`:      "ALL",
		`{{ headers['link']['next']['url'] }}`:            "",
		`{{ response.a if response.b else config.c }}`:    "a,b",
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
