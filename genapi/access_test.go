package genapi

import (
	"reflect"
	"testing"
)

func TestAccesses(t *testing.T) {
	for _, c := range []struct {
		template, root string
		want           [][]string
	}{
		{`{{ config['a']['b'] }}`, "config", [][]string{{"a", "b"}}},
		{`{{ config.a.b }}/{{ config["c"] }}`, "config", [][]string{{"a", "b"}, {"c"}}},
		{`{{ config.get('start_date', '2013-01-01') }}`, "config", [][]string{{"start_date"}}},
		{`{{ config['web'].replace('global', '') }}`, "config", [][]string{{"web"}}},
		{`{{ response.get("pagination", {}).get("next_page_token", {}) }}`, "response", [][]string{{"pagination", "next_page_token"}}},
		{`{{ response['entries'][-1]['uuid'] }}`, "response", [][]string{{"entries"}}},
		{`{{ 'next' not in response['paging'] }}`, "response", [][]string{{"paging"}}},
		{`{{ headers["link"]["next"]["results"] == "false" }}`, "headers", [][]string{{"link", "next", "results"}}},
		{`{{ my_config['a'] }} {{ x.config['b'] }} {{ configs }}`, "config", nil},
	} {
		if got := Accesses(c.template, c.root); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %q, want %q", c.template, got, c.want)
		}
	}
}

func TestLiterals(t *testing.T) {
	got := literals(`{{ headers["link"]['next'] == "false" }}`)
	if want := []string{"link", "next", "false"}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
