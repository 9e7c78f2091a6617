package cli

import (
	"fmt"
	"testing"
)

// A request parameter or form field whose value is a list of pairs
// (.items(), dictsort) or nested lists is sent as the reference's requests
// sends it: each item, and each element of a nested list (or tuple, or a
// dict's keys) on its own, anything deeper as its Python text. Airbyte's
// runtime, run on this manifest against a server recording its requests
// (with the config's keys in this order: it keeps a dict's insertion order),
// sends GET /items?pairs=a&pairs=1&pairs=b&pairs=x+y&sorted=a&sorted=1&sorted=b&sorted=x+y&nested=1&nested=2&nested=3&deeper=%5B1%5D&deeper=x&deeper=1.5&deeper=k&tup=%28%27a%27%2C+%27b%27%29&emptyinner=y&strs=ab&strs=cd
// and POST /form with the body pairs=a&pairs=1&pairs=b&pairs=x+y&nested=1&nested=2&nested=3:
// the same values as here (our query is in key order).
func TestListParametersAreSentAsRequestsSendsThem(t *testing.T) {
	a := fixedAPI(t, `{"data":[{"id":1}]}`)
	m := stream("s", fmt.Sprintf(`url_base: %s
path: /items
request_parameters:
  pairs: "{{ config.obj.items() | list }}"
  sorted: "{{ config.obj | dictsort }}"
  nested: "{{ [[1, 2], [3]] }}"
  deeper: "{{ [[[1]], 'x', none, 1.5, {'k': 1}] }}"
  tup: "{{ ('a', 'b') }}"
  empty: "{{ [] }}"
  emptyinner: "{{ [[], 'y'] }}"
  strs: "{{ ['ab', ['cd']] }}"`, a.URL), "[data]", "")
	res := newConnector(t, m, map[string]any{"obj": map[string]any{"a": 1, "b": "x y"}}, "s").read(t)
	equalLists(t, "requests", a.lines(), []string{"GET /items?deeper=%5B1%5D&deeper=x&deeper=1.5&deeper=k&emptyinner=y&nested=1&nested=2&nested=3&pairs=a&pairs=1&pairs=b&pairs=x+y&sorted=a&sorted=1&sorted=b&sorted=x+y&strs=ab&strs=cd&tup=%28%27a%27%2C+%27b%27%29"})
	if res.code != 0 || len(res.errors()) != 0 {
		t.Errorf("exit %d, errors %v", res.code, res.errors())
	}

	form := stream("s", fmt.Sprintf(`url_base: %s
path: /form
http_method: POST
request_body_data:
  pairs: "{{ config.obj.items() | list }}"
  nested: "{{ [[1, 2], [3]] }}"`, a.URL), "[data]", "")
	newConnector(t, form, map[string]any{"obj": map[string]any{"a": 1, "b": "x y"}}, "s").read(t)
	reqs := a.requests()
	if last := reqs[len(reqs)-1]; last.Method != "POST" || last.Path != "/form" || last.Body != "nested=1&nested=2&nested=3&pairs=a&pairs=1&pairs=b&pairs=x+y" {
		t.Errorf("form request: %s %s %q", last.Method, last.Path, last.Body)
	}
}
