package corpus

import (
	"strings"
	"testing"

	"github.com/airbyte-go/source-declarative/runtime/interp"
)

func TestNewRoute(t *testing.T) {
	const mock = "http://127.0.0.1:9"
	vars := interp.Vars{"config": map[string]any{"org": "acme", "base": mock + "/api.x.com/"}, "parameters": map[string]any{"name": "users"}}
	for _, c := range []struct {
		template string
		match    []string
		miss     []string
		literal  int
	}{
		{mock + "/api.x.com/v1/{{ parameters.name }}", []string{"/api.x.com/v1/users", "/api.x.com/v1/users/"}, []string{"/api.x.com/v1/teams"}, len("/api.x.com/v1/users")},
		{"{{ config['base'] }}//orgs/{{ config.org }}/members", []string{"/api.x.com/orgs/acme/members"}, []string{"/api.x.com/orgs/other/members"}, len("/api.x.com/orgs/acme/members")},
		{mock + "/api.x.com/orgs/{{ stream_partition.id }}/members", []string{"/api.x.com/orgs/7/members", "/api.x.com/orgs/a/b/members"}, []string{"/api.x.com/orgs/7"}, len("/api.x.com/orgs//members")},
		{mock + "/auth.x.com/token?service=registry&scope={{ config.org }}", []string{"/auth.x.com/token"}, []string{"/auth.x.com/token/x"}, len("/auth.x.com/token")},
		{mock + "/q.x.com/{% if next_page_token %}/v8/{{ config.org }}{% endif %}", []string{"/q.x.com/", "/q.x.com/v8/acme"}, []string{"/other.com/"}, len("/q.x.com/")},
	} {
		r, err := NewRoute(c.template, mock, vars)
		if err != nil {
			t.Fatalf("%s: %v", c.template, err)
		}
		for _, p := range c.match {
			if !r.Match(p) {
				t.Errorf("%s (%s) must match %s", c.template, r.Pattern, p)
			}
		}
		for _, p := range c.miss {
			if r.Match(p) {
				t.Errorf("%s (%s) must not match %s", c.template, r.Pattern, p)
			}
		}
		if r.Literal != c.literal {
			t.Errorf("%s: literal %d, want %d", c.template, r.Literal, c.literal)
		}
	}
	_, err := NewRoute("https://api.x.com/v1", mock, vars)
	if err == nil || !strings.Contains(err.Error(), "does not point at the mock") {
		t.Errorf("a URL elsewhere must be refused, got %v", err)
	}
}
