package cli

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// offsetAPI serves total records, honouring offset/limit query parameters.
func offsetAPI(t *testing.T, total int) *api {
	return newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		off, _ := strconv.Atoi(r.URL.Query().Get("offset"))
		lim, _ := strconv.Atoi(r.URL.Query().Get("limit"))
		end := off + lim
		if end > total {
			end = total
		}
		if off > total {
			off = total
		}
		fmt.Fprintf(w, `{"data":%s}`, items(off, end))
	})
}

// offsetLimit10 pages with offset and limit=10 query parameters.
const offsetLimit10 = `paginator:
  type: DefaultPaginator
  page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: offset}
  page_size_option: {type: RequestOption, inject_into: request_parameter, field_name: limit}
  pagination_strategy: {type: OffsetIncrement, page_size: 10}`

func TestOffsetIncrementPagesThroughEveryRecord(t *testing.T) {
	a := offsetAPI(t, 95)
	m := stream("users", "url_base: "+a.URL+"\npath: /users", "[data]", offsetLimit10)
	c := newConnector(t, m, map[string]any{}, "users")
	res := c.read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	var want []string
	for off := 0; off <= 90; off += 10 {
		want = append(want, fmt.Sprintf("GET /users?limit=10&offset=%d", off))
	}
	equalLists(t, "requests", a.lines(), want)
	equalLists(t, "records", res.records("users"), ids(0, 95))
	equalLists(t, "statuses", res.statuses("users"), []string{"STARTED", "RUNNING", "COMPLETE"})
	states := res.ofType("STATE")
	if len(states) != 1 || !strings.Contains(res.stdout, `"sourceStats":{"recordCount":95.0}`) {
		t.Errorf("want one STREAM state with recordCount 95.0, got %v", states)
	}
}

func TestOffsetStopsAfterEmptyPageWhenLastPageIsFull(t *testing.T) {
	a := offsetAPI(t, 20)
	m := stream("users", "url_base: "+a.URL+"\npath: /users", "[data]", offsetLimit10)
	res := newConnector(t, m, nil, "users").read(t)
	equalLists(t, "requests", a.lines(), []string{"GET /users?limit=10&offset=0", "GET /users?limit=10&offset=10", "GET /users?limit=10&offset=20"})
	equalLists(t, "records", res.records("users"), ids(0, 20))
}

func TestOffsetFirstPageShortIsOneRequest(t *testing.T) {
	a := offsetAPI(t, 3)
	m := stream("users", "url_base: "+a.URL+"\npath: /users", "[data]", offsetLimit10)
	res := newConnector(t, m, nil, "users").read(t)
	equalLists(t, "requests", a.lines(), []string{"GET /users?limit=10&offset=0"})
	equalLists(t, "records", res.records("users"), ids(0, 3))
}

func TestOffsetInjectOnFirstRequestFalseAndLimitInHeaders(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		off, _ := strconv.Atoi(r.Header.Get("X-Offset"))
		end := off + 5
		if end > 12 {
			end = 12
		}
		fmt.Fprintf(w, `{"data":%s}`, items(off, end))
	})
	m := stream("users", "url_base: "+a.URL+"\npath: /users", "[data]", `paginator:
  type: DefaultPaginator
  page_token_option: {type: RequestOption, inject_into: header, field_name: X-Offset}
  page_size_option: {type: RequestOption, inject_into: header, field_name: X-Limit}
  pagination_strategy: {type: OffsetIncrement, page_size: 5, inject_on_first_request: false}`)
	res := newConnector(t, m, nil, "users").read(t)
	var got []string
	for _, r := range a.requests() {
		got = append(got, r.Header.Get("X-Limit")+"/"+r.Header.Get("X-Offset"))
	}
	equalLists(t, "limit/offset headers", got, []string{"5/", "5/5", "5/10"})
	equalLists(t, "records", res.records("users"), ids(0, 12))
}

func TestOffsetInBodies(t *testing.T) {
	for _, tc := range []struct{ place, want0, want1 string }{
		{"body_json", `{"limit":2,"offset":0}`, `{"limit":2,"offset":2}`},
		{"body_data", `limit=2&offset=0`, `limit=2&offset=2`},
	} {
		t.Run(tc.place, func(t *testing.T) {
			n := 0
			a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
				n++
				if n == 1 {
					fmt.Fprint(w, `{"data":[{"id":0},{"id":1}]}`)
				} else {
					fmt.Fprint(w, `{"data":[{"id":2}]}`)
				}
			})
			m := stream("users", "url_base: "+a.URL+"\npath: /search\nhttp_method: POST", "[data]", fmt.Sprintf(`paginator:
  type: DefaultPaginator
  page_token_option: {type: RequestOption, inject_into: %[1]s, field_name: offset}
  page_size_option: {type: RequestOption, inject_into: %[1]s, field_name: limit}
  pagination_strategy: {type: OffsetIncrement, page_size: 2}`, tc.place))
			res := newConnector(t, m, nil, "users").read(t)
			reqs := a.requests()
			if len(reqs) != 2 || reqs[0].Body != tc.want0 || reqs[1].Body != tc.want1 || reqs[0].Method != "POST" {
				t.Fatalf("bodies: %+v", reqs)
			}
			equalLists(t, "records", res.records("users"), ids(0, 3))
		})
	}
}

func TestPageIncrement(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		from := (page - 1) * 10
		end := from + 10
		if end > 25 {
			end = 25
		}
		fmt.Fprintf(w, `{"orders":%s}`, items(from, end))
	})
	m := stream("orders", "url_base: "+a.URL+"\npath: /orders", "[orders]", `paginator:
  type: DefaultPaginator
  page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}
  page_size_option: {type: RequestOption, inject_into: request_parameter, field_name: per_page}
  pagination_strategy: {type: PageIncrement, page_size: 10, start_from_page: 1}`)
	res := newConnector(t, m, nil, "orders").read(t)
	equalLists(t, "requests", a.lines(), []string{"GET /orders?page=1&per_page=10", "GET /orders?page=2&per_page=10", "GET /orders?page=3&per_page=10"})
	equalLists(t, "records", res.records("orders"), ids(0, 25))
}

func TestPageIncrementDefaultStartAndNoFirstInjection(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		page, _ := strconv.Atoi(r.URL.Query().Get("p"))
		if page < 1 {
			fmt.Fprint(w, `[{"id":0},{"id":1}]`)
		} else {
			fmt.Fprint(w, `[{"id":2}]`)
		}
	})
	m := stream("orders", "url_base: "+a.URL+"\npath: /orders", "[]", `paginator:
  type: DefaultPaginator
  page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: p}
  pagination_strategy: {type: PageIncrement, page_size: 2, inject_on_first_request: false}`)
	res := newConnector(t, m, nil, "orders").read(t)
	equalLists(t, "requests", a.lines(), []string{"GET /orders", "GET /orders?p=1"})
	equalLists(t, "records", res.records("orders"), ids(0, 3))
}

func TestCursorFromResponseBody(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		from, _ := strconv.Atoi(r.URL.Query().Get("after"))
		end := from + 10
		more := end < 95
		if !more {
			end = 95
		}
		fmt.Fprintf(w, `{"items":%s,"meta":{"has_more":%v,"next":%q}}`, items(from, end), more, strconv.Itoa(end))
	})
	m := stream("events", "url_base: "+a.URL+"\npath: /events", "[items]", `paginator:
  type: DefaultPaginator
  page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: after}
  page_size_option: {type: RequestOption, inject_into: request_parameter, field_name: size}
  pagination_strategy:
    type: CursorPagination
    page_size: 10
    cursor_value: "{{ response.meta.next }}"
    stop_condition: "{{ response.meta.has_more is false }}"`)
	res := newConnector(t, m, nil, "events").read(t)
	want := []string{"GET /events?size=10"}
	for i := 10; i < 95; i += 10 {
		want = append(want, fmt.Sprintf("GET /events?after=%d&size=10", i))
	}
	equalLists(t, "requests", a.lines(), want)
	equalLists(t, "records", res.records("events"), ids(0, 95))
}

// The seed's two examples of a cursor taken from the last record (4.1,
// cursor pagination, 6): an empty page has no last record, so it is the last
// page, and the stream completes.
func TestCursorFromLastRecordsAndMissingValueStops(t *testing.T) {
	for _, cursor := range []string{"{{ last_records[-1]['id'] }}", "{{ response['data'][-1]['id'] }}", "{{ last_record['id'] }}"} {
		t.Run(cursor, func(t *testing.T) {
			a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
				switch r.URL.Query().Get("starting_after") {
				case "":
					fmt.Fprint(w, `{"data":[{"id":1},{"id":2}]}`)
				case "2":
					fmt.Fprint(w, `{"data":[{"id":3}]}`)
				default:
					fmt.Fprint(w, `{"data":[]}`)
				}
			})
			m := stream("items", "url_base: "+a.URL+"\npath: /items", "[data]", fmt.Sprintf(`paginator:
  type: DefaultPaginator
  page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: starting_after}
  pagination_strategy:
    type: CursorPagination
    cursor_value: "%s"`, cursor))
			res := newConnector(t, m, nil, "items").read(t)
			equalLists(t, "requests", a.lines(), []string{"GET /items", "GET /items?starting_after=2", "GET /items?starting_after=3"})
			equalLists(t, "records", res.records("items"), []string{`{"id":1}`, `{"id":2}`, `{"id":3}`})
			if res.code != 0 || len(res.errors()) != 0 {
				t.Fatalf("exit %d, errors %v", res.code, res.errors())
			}
			equalLists(t, "statuses", res.statuses("items"), []string{"STARTED", "RUNNING", "COMPLETE"})
		})
	}
}

// TestCursorFromAKeyTheAnswerLacksFails: an empty page whose cursor reads
// a key the answer does not have (a GraphQL error answer without its data)
// fails the stream, as in Airbyte (UndefinedError), instead of ending it
// as if it were the last page: only an element past the end of a list (the
// last record of an empty page) ends the pages.
func TestCursorFromAKeyTheAnswerLacksFails(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		fmt.Fprint(w, `{"errors":[{"message":"unknown field"}],"data":{}}`)
	})
	m := stream("items", "url_base: "+a.URL+"\npath: /graphql", "[data, things, nodes]", `paginator:
  type: DefaultPaginator
  page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: after}
  pagination_strategy:
    type: CursorPagination
    cursor_value: "{{ response.data.things.pageInfo.endCursor }}"`)
	res := newConnector(t, m, nil, "items").read(t)
	equalLists(t, "requests", a.lines(), []string{"GET /graphql"})
	if res.code == 0 {
		t.Fatalf("exit 0: the stream ended as if its empty page were the last: %s", res.stdout)
	}
	errs := res.errors()
	if len(errs) == 0 || !strings.Contains(fmt.Sprint(errs[0]["message"]), "'dict object' has no attribute 'things'") || errs[0]["failure_type"] != "system_error" {
		t.Fatalf("errors %v, want one system_error naming the key the answer lacks", errs)
	}
	equalLists(t, "statuses", res.statuses("items"), []string{"STARTED", "RUNNING", "INCOMPLETE"})
}

func TestCursorTopLevelArrayResponseAndNotGetStop(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		if r.URL.Query().Get("c") == "" {
			fmt.Fprint(w, `{"results":[{"id":1}],"next":"abc"}`)
		} else {
			fmt.Fprint(w, `{"results":[{"id":2}],"next":null}`)
		}
	})
	m := stream("r", "url_base: "+a.URL+"\npath: /r", "[results]", `paginator:
  type: DefaultPaginator
  page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: c}
  pagination_strategy:
    type: CursorPagination
    cursor_value: "{{ response.get('next') }}"
    stop_condition: "{{ not response.get('next') }}"`)
	res := newConnector(t, m, nil, "r").read(t)
	equalLists(t, "requests", a.lines(), []string{"GET /r", "GET /r?c=abc"})
	equalLists(t, "records", res.records("r"), []string{`{"id":1}`, `{"id":2}`})
}

func TestLinkHeaderWithRequestPath(t *testing.T) {
	var base string
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		page := r.URL.Query().Get("page")
		switch page {
		case "":
			// several rels, odd spacing, unquoted rel
			w.Header().Set("Link", fmt.Sprintf(`<%s/v2/tags?page=2&per_page=2>;rel="next" ,  <%s/v2/tags?page=3&per_page=2>; rel=last`, base, base))
			fmt.Fprint(w, `[{"id":1},{"id":2}]`)
		case "2":
			w.Header().Add("Link", fmt.Sprintf(`<%s/v2/tags?page=1&per_page=2>; rel="prev"`, base))
			w.Header().Add("Link", fmt.Sprintf(`<%s/v2/tags?page=3&per_page=2>; rel="next"`, base))
			fmt.Fprint(w, `[{"id":3},{"id":4}]`)
		default:
			w.Header().Set("Link", fmt.Sprintf(`<%s/v2/tags?page=2&per_page=2>; rel="prev"`, base))
			fmt.Fprint(w, `[{"id":5}]`)
		}
	})
	base = a.URL
	m := stream("tags", "url_base: "+a.URL+"/v2\npath: /tags\nrequest_parameters: {per_page: '2'}", "[]", `paginator:
  type: DefaultPaginator
  page_token_option: {type: RequestPath}
  pagination_strategy:
    type: CursorPagination
    cursor_value: "{{ headers['link']['next']['url'] }}"
    stop_condition: "{{ 'next' not in headers['link'] }}"`)
	res := newConnector(t, m, nil, "tags").read(t)
	equalLists(t, "requests", a.lines(), []string{"GET /v2/tags?per_page=2", "GET /v2/tags?page=2&per_page=2", "GET /v2/tags?page=3&per_page=2"})
	equalLists(t, "records", res.records("tags"), ids(1, 6))
}

func TestRequestPathRelativeAddsMissingParamsOnly(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		if r.URL.Path == "/api/items" {
			fmt.Fprint(w, `{"data":[{"id":1}],"next":"/api/items/page2?cursor=x&limit=50"}`)
		} else {
			fmt.Fprint(w, `{"data":[{"id":2}],"next":null}`)
		}
	})
	m := stream("items", "url_base: "+a.URL+"/api\npath: /items\nrequest_parameters: {fields: all}", "[data]", `paginator:
  type: DefaultPaginator
  page_token_option: {type: RequestPath}
  page_size_option: {type: RequestOption, inject_into: request_parameter, field_name: limit}
  pagination_strategy:
    type: CursorPagination
    page_size: 5
    cursor_value: "{{ response.next }}"`)
	res := newConnector(t, m, nil, "items").read(t)
	equalLists(t, "requests", a.lines(), []string{"GET /api/items?fields=all&limit=5", "GET /api/items/page2?cursor=x&limit=50&fields=all"})
	equalLists(t, "records", res.records("items"), ids(1, 3))
}

func TestSeedCombinedRangeParameter(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		parts := strings.Split(r.URL.Query().Get("range"), ",")
		from, _ := strconv.Atoi(parts[0])
		end := from + 50
		if end > 120 {
			end = 120
		}
		fmt.Fprintf(w, `{"products":%s}`, items(from, end))
	})
	m := stream("products", `url_base: `+a.URL+`
path: /products
request_parameters:
  range: "{{ next_page_token['next_page_token'] or '0' }},50"`, "[products]", `paginator:
  type: DefaultPaginator
  pagination_strategy: {type: OffsetIncrement, page_size: 50}`)
	res := newConnector(t, m, nil, "products").read(t)
	equalLists(t, "requests", a.lines(), []string{"GET /products?range=0%2C50", "GET /products?range=50%2C50", "GET /products?range=100%2C50"})
	equalLists(t, "records", res.records("products"), ids(0, 120))
}

func TestNextPageTokenAbsentOnFirstPage(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		if r.Header.Get("X-Cursor") == "" {
			fmt.Fprint(w, `{"data":[{"id":1}],"cursor":"n2"}`)
		} else {
			fmt.Fprint(w, `{"data":[{"id":2}]}`)
		}
	})
	m := stream("s", `url_base: `+a.URL+`
path: /s
request_headers:
  X-Cursor: "{{ next_page_token['next_page_token'] }}"
request_parameters:
  token: "{{ next_page_token.next_page_token }}"`, "[data]", `paginator:
  type: DefaultPaginator
  pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.cursor }}"}`)
	res := newConnector(t, m, nil, "s").read(t)
	reqs := a.requests()
	if len(reqs) != 2 || reqs[0].Query != "" || reqs[0].Header.Get("X-Cursor") != "" || reqs[1].Query != "token=n2" || reqs[1].Header.Get("X-Cursor") != "n2" {
		t.Fatalf("requests: %v", a.lines())
	}
	equalLists(t, "records", res.records("s"), ids(1, 3))
}

func TestCursorRepeatingFailsInsteadOfLooping(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		fmt.Fprint(w, `{"data":[{"id":1}],"next":"same"}`)
	})
	m := stream("s", "url_base: "+a.URL+"\npath: /s", "[data]", `paginator:
  type: DefaultPaginator
  page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: c}
  pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next }}"}`)
	res := newConnector(t, m, nil, "s").read(t)
	if res.code == 0 || len(a.requests()) != 2 {
		t.Fatalf("want a failure after 2 requests, got exit %d and %v", res.code, a.lines())
	}
	errs := res.errors()
	if len(errs) == 0 || !strings.Contains(errs[0]["message"].(string), "is the one just used") {
		t.Fatalf("errors: %v", errs)
	}
	equalLists(t, "statuses", res.statuses("s"), []string{"STARTED", "RUNNING", "INCOMPLETE"})
}

func TestBodyJSONFieldPathInjection(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, body string) {
		fmt.Fprint(w, `{"data":[{"id":1}]}`)
	})
	m := stream("s", "url_base: "+a.URL+"\npath: /s\nhttp_method: POST\nrequest_body_json: {query: all}", "[data]", `paginator:
  type: DefaultPaginator
  page_size_option: {type: RequestOption, inject_into: body_json, field_path: [page, size]}
  page_token_option: {type: RequestOption, inject_into: body_json, field_path: [page, number]}
  pagination_strategy: {type: PageIncrement, page_size: 5, start_from_page: 1}`)
	newConnector(t, m, nil, "s").read(t)
	reqs := a.requests()
	if len(reqs) != 1 || reqs[0].Body != `{"page":{"number":1,"size":5},"query":"all"}` || reqs[0].Header.Get("Content-Type") != "application/json" {
		t.Fatalf("requests: %+v", reqs)
	}
}

func TestBuilderSafeAccessCursorStopsWhenLocationIsMissing(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		if r.URL.Query().Get("pagination_token") == "" {
			fmt.Fprint(w, `{"data":[{"id":1}],"meta":{"next_token":"t2"}}`)
		} else {
			fmt.Fprint(w, `{"data":[{"id":2}],"meta":{}}`)
		}
	})
	m := stream("s", "url_base: "+a.URL+"\npath: /s", "[data]", `paginator:
  type: DefaultPaginator
  page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: pagination_token}
  pagination_strategy:
    type: CursorPagination
    cursor_value: '{{ response.get("meta", {}).get("next_token", {}) }}'`)
	res := newConnector(t, m, nil, "s").read(t)
	equalLists(t, "requests", a.lines(), []string{"GET /s", "GET /s?pagination_token=t2"})
	equalLists(t, "records", res.records("s"), ids(1, 3))
}

func TestTokenInjectedNowhereStopsInsteadOfLooping(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		fmt.Fprintf(w, `{"data":%s}`, items(0, 10))
	})
	m := stream("s", "url_base: "+a.URL+"\npath: /s", "[data]", `paginator:
  type: DefaultPaginator
  page_size_option: {type: RequestOption, inject_into: request_parameter, field_name: limit}
  pagination_strategy: {type: OffsetIncrement, page_size: 10}`)
	res := newConnector(t, m, nil, "s").read(t)
	errs := res.errors()
	// The repeated request is refused before it is sent: one request reaches the API.
	if res.code == 0 || len(a.requests()) != 1 || len(errs) == 0 || !strings.Contains(errs[0]["message"].(string), "page 2 would be requested exactly like page 1") {
		t.Fatalf("exit %d, %d requests, errors %v", res.code, len(a.requests()), errs)
	}
}

// HTTP header names are case-insensitive: a cursor template reads a header
// under the name the API documents, whatever case the client keeps it in.
func TestCursorFromHeaderNamedInAnyCase(t *testing.T) {
	for _, cursor := range []string{"{{ headers['X-Pagination-Next-URL'] }}", "{{ headers.get('x-PAGINATION-next-url') }}"} {
		t.Run(cursor, func(t *testing.T) {
			a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
				if r.URL.Query().Get("c") == "" {
					w.Header()["X-Pagination-Next-URL"] = []string{"t2"} // sent as written, not canonicalized
					fmt.Fprint(w, `{"data":[{"id":1}]}`)
					return
				}
				fmt.Fprint(w, `{"data":[{"id":2}]}`)
			})
			m := stream("s", "url_base: "+a.URL+"\npath: /s", "[data]", fmt.Sprintf(`paginator:
  type: DefaultPaginator
  page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: c}
  pagination_strategy: {type: CursorPagination, cursor_value: "%s", stop_condition: "%s"}`, cursor, strings.Replace(cursor, "{{ ", "{{ not ", 1)))
			res := newConnector(t, m, nil, "s").read(t)
			equalLists(t, "requests", a.lines(), []string{"GET /s", "GET /s?c=t2"})
			equalLists(t, "records", res.records("s"), ids(1, 3))
			if res.code != 0 {
				t.Fatalf("exit %d: %s", res.code, res.stdout)
			}
		})
	}
}

// A next page cursor that an HTTP header cannot carry fails the stream at
// once, naming the header, instead of being retried as a network error.
func TestCursorThatCannotBeAHeaderFailsAtOnce(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		fmt.Fprint(w, `{"data":[{"id":1}],"next":"a\nb"}`)
	})
	m := stream("s", "url_base: "+a.URL+"\npath: /s", "[data]", `paginator:
  type: DefaultPaginator
  page_token_option: {type: RequestOption, inject_into: header, field_name: X-Cursor}
  pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next }}"}`)
	res := newConnector(t, m, nil, "s").read(t)
	equalLists(t, "requests", a.lines(), []string{"GET /s"})
	equalLists(t, "records", res.records("s"), ids(1, 2))
	errs := res.errors()
	want := `stream s: request header "X-Cursor": the value holds a line break or another control character, which an HTTP header cannot carry`
	if res.code == 0 || len(errs) == 0 || errs[0]["message"] != want || errs[0]["failure_type"] != "config_error" || len(res.ofType("LOG")) != 0 {
		t.Fatalf("exit %d, errors %v, logs %v", res.code, errs, res.ofType("LOG"))
	}

	badName := strings.Replace(m, "field_name: X-Cursor", "field_name: X Cursor", 1)
	res = newConnector(t, badName, nil, "s").read(t)
	errs = res.errors()
	want = `stream s: request header "X Cursor": not a valid HTTP header name`
	if len(a.requests()) != 2 || res.code == 0 || len(errs) == 0 || errs[0]["message"] != want || len(res.ofType("LOG")) != 0 {
		t.Fatalf("exit %d, %d requests, errors %v, logs %v", res.code, len(a.requests()), errs, res.ofType("LOG"))
	}
}

// A cursor the API gives as a string goes back as the API wrote it, even
// when it spells a number: the reference's reading of it as a Python literal
// would send 1000.0 for "1e3", 1.5 for "1.50" and a float for a long id.
func TestCursorStringsThatSpellNumbersAreSentAsWritten(t *testing.T) {
	next := map[string]string{"": "1e3", "1e3": "1.50", "1.50": "12345678901234567890123", "12345678901234567890123": "42", "42": "007", "007": "-0"}
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		c := r.URL.Query().Get("c")
		if n, ok := next[c]; ok {
			fmt.Fprintf(w, `{"data":[{"id":1}],"next":%q}`, n)
			return
		}
		fmt.Fprint(w, `{"data":[{"id":2}],"next":null}`)
	})
	m := stream("s", "url_base: "+a.URL+"\npath: /s", "[data]", `paginator:
  type: DefaultPaginator
  page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: c}
  pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next }}"}`)
	res := newConnector(t, m, nil, "s").read(t)
	equalLists(t, "requests", a.lines(), []string{"GET /s", "GET /s?c=1e3", "GET /s?c=1.50", "GET /s?c=12345678901234567890123", "GET /s?c=42", "GET /s?c=007", "GET /s?c=-0"})
	if res.code != 0 || len(res.records("s")) != 7 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
}

// A RequestPath token that is a dict (a cursor_value giving the answer's
// whole links object, as source-piwik's streams do) is no URL: the stream
// fails after its first page, a system_error naming the paginator, and
// nothing else is requested. Airbyte's runtime requests the Python text of
// the dict below url_base ("/{'next': 'http://…'}"), which an API can only
// refuse.
func TestRequestPathTokenThatIsAnObjectFails(t *testing.T) {
	var base string
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		fmt.Fprintf(w, `{"data":[{"id":1}],"links":{"next":"%s/s?page_cursor=c2"}}`, base)
	})
	base = a.URL
	m := stream("s", "url_base: "+a.URL+"\npath: /s", "[data]", `paginator:
  type: DefaultPaginator
  page_token_option: {type: RequestPath}
  pagination_strategy:
    type: CursorPagination
    cursor_value: '{{ response.get("links", {}) }}'
    stop_condition: '{{ not response.get("links", {}).get("next") }}'`)
	res := newConnector(t, m, nil, "s").read(t)
	equalLists(t, "requests", a.lines(), []string{"GET /s"})
	equalLists(t, "records", res.records("s"), []string{`{"id":1}`})
	streamError(t, res, "system_error", "stream s: streams[0].retriever.paginator: the next page token is a dict, not a URL (page_token_option is a RequestPath): pick the URL out of it in the cursor_value")
}
