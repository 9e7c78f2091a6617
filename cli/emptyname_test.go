package cli

import (
	"fmt"
	"net/http"
	"testing"
)

// A request option whose field_name renders empty (zendesk-support's
// article_attachments names its start_time_option by a $parameters key it
// never sets) goes into a query parameter with an empty name, as Airbyte
// sends it (?=value), rather than failing a stream that runs there; a header
// needs a name, so a header option fails the read naming the option.
func TestRequestOptionWithAnEmptyName(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		if r.URL.RawQuery == "" {
			fmt.Fprint(w, `{"data":[{"id":1}],"next":"p2"}`)
			return
		}
		fmt.Fprint(w, `{"data":[{"id":2}],"next":null}`)
	})
	paginator := func(into string) string {
		return `paginator:
  type: DefaultPaginator
  page_token_option: {type: RequestOption, inject_into: ` + into + `, field_name: "{{ parameters.cursor_filter }}"}
  pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next }}"}`
	}
	res := newConnector(t, stream("items", "url_base: "+a.URL+"\npath: /items", "[data]", paginator("request_parameter")), nil, "items").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "records", res.records("items"), []string{`{"id":1}`, `{"id":2}`})
	equalLists(t, "requests", a.lines(), []string{"GET /items", "GET /items?=p2"})

	res = newConnector(t, stream("items", "url_base: "+a.URL+"\npath: /items", "[data]", paginator("header")), nil, "items").read(t)
	traces := res.ofType("TRACE")
	want := "streams[0].retriever.paginator.page_token_option.field_name: renders empty, and a header needs a name"
	found := false
	for _, tr := range traces {
		if e, ok := tr["trace"].(map[string]any)["error"].(map[string]any); ok {
			found = found || (e["failure_type"] == "config_error" && fmt.Sprint(e["message"]) == "stream items: "+want)
		}
	}
	if !found || res.code == 0 {
		t.Errorf("exit %d, want a config_error TRACE %q:\n%s", res.code, want, res.stdout)
	}
}
