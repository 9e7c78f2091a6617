package cli

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"
)

// Issue 30: bounded by the work, not by the manifest's numbers, through the
// CLI against a real API: what the API received and what we printed.

// A template function's output counts against the 1 MiB bound: a
// format_datetime that would write 12 MB fails the stream as a config_error
// naming the field, before any request.
func TestTemplateFunctionOutputIsBoundedBeforeAnyRequest(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) { fmt.Fprint(w, `{"data":[]}`) })
	m := stream("s", "url_base: "+a.URL+"\npath: /s\nrequest_parameters:\n  since: \"{{ format_datetime('9999-12-31', '%c' * 500000) }}\"", "[data]", "")
	res := newConnector(t, m, nil, "s").read(t)
	if got := a.requests(); len(got) != 0 {
		t.Errorf("requests sent: %v", a.lines())
	}
	errs := res.errors()
	if res.code == 0 || len(errs) == 0 || errs[0]["failure_type"] != "config_error" ||
		!strings.Contains(errs[0]["message"].(string), "streams[0].retriever.requester.request_parameters.since") || !strings.Contains(errs[0]["message"].(string), "a string longer than 1048576 bytes") {
		t.Errorf("exit %d, errors %v", res.code, errs)
	}
	if len(res.stdout) > 64<<10 {
		t.Errorf("we printed %d bytes", len(res.stdout))
	}
}

// A page token of more than 4,300 digits is an error, as Python's int
// refuses it: never a request with c=inf (or any other c).
func TestPageTokenPastPythonsIntegerLimitIsAnError(t *testing.T) {
	long := strings.Repeat("9", 5000)
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		fmt.Fprintf(w, `{"data":[{"id":1}],"next":%s}`, long)
	})
	m := stream("s", "url_base: "+a.URL+"\npath: /s", "[data]", `paginator:
  type: DefaultPaginator
  page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: c}
  pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next }}"}`)
	res := newConnector(t, m, nil, "s").read(t)
	equalLists(t, "requests", a.lines(), []string{"GET /s"})
	errs := res.errors()
	if res.code == 0 || len(errs) == 0 || !strings.Contains(errs[0]["message"].(string), "Exceeds the limit (4300 digits) for integer string conversion") {
		t.Errorf("exit %d, errors %v", res.code, errs)
	}
}

// JSON nested deeper than it is read is named as such, with the depth,
// not "not valid JSON", and not fetched again as a body cut short would be.
func TestTooDeepJSONIsNamedAsSuch(t *testing.T) {
	deep := `{"data":[` + strings.Repeat("[", 1000) + strings.Repeat("]", 1000) + `]}`
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) { fmt.Fprint(w, deep) })
	res := newConnector(t, stream("s", "url_base: "+a.URL+"\npath: /s", "[data]", ""), nil, "s").read(t)
	equalLists(t, "requests", a.lines(), []string{"GET /s"}) // whole: not fetched again
	errs := res.errors()
	if res.code == 0 || len(errs) == 0 || !strings.Contains(errs[0]["message"].(string), "the response body is JSON nested more than 1000 levels deep, deeper than it is read") {
		t.Errorf("exit %d, errors %v", res.code, errs)
	}
	if strings.Contains(res.stdout, "not valid JSON") {
		t.Errorf("called not valid JSON: %s", res.stdout)
	}
}

// A test read shows a page body up to 1 MiB and says it cut it.
func TestTestReadCutsALargePageBody(t *testing.T) {
	served := fmt.Sprintf(`{"data":[{"id":1}],"filler":%q}`, strings.Repeat("é", 1<<20)) // 2 MiB of text
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) { fmt.Fprint(w, served) })
	read := builderRead(t, stream("s", "url_base: "+a.URL+"\npath: /s", "[data]", ""), nil, "s")
	page := read["slices"].([]any)[0].(map[string]any)["pages"].([]any)[0].(map[string]any)
	body := page["response"].(map[string]any)["body"].(string)
	cut := 1 << 20
	for !utf8.RuneStart(served[cut]) {
		cut--
	}
	want := served[:cut] + fmt.Sprintf("... (cut by the test read: the first %d of %d bytes are shown)", cut, len(served))
	if body != want {
		t.Errorf("body of %d bytes, want %d: ... %s", len(body), len(want), body[max(0, len(body)-100):])
	}
	if recs := page["records"].([]any); len(recs) != 1 {
		t.Errorf("records %v", recs)
	}
}
