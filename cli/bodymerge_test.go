package cli

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// graphQLStream is a stream POSTing a GraphQL body that already holds
// variables, its page token injected at [variables] too.
func graphQLStream(url, cursorValue string) string {
	return stream("s", fmt.Sprintf(`url_base: %s
path: /graphql
http_method: POST
request_body_json:
  query: "query { items { id } }"
  variables: {first: 2}`, url), "[data, items]", fmt.Sprintf(`paginator:
  type: DefaultPaginator
  page_token_option: {type: RequestOption, inject_into: body_json, field_path: [variables]}
  pagination_strategy:
    type: CursorPagination
    cursor_value: "%s"
    stop_condition: "{{ not response.pageInfo.endCursor }}"`, cursorValue))
}

func graphQLAPI(t *testing.T) *api {
	return newAPI(t, func(w http.ResponseWriter, r *http.Request, body string) {
		if strings.Contains(body, `"after":"c2"`) {
			fmt.Fprint(w, `{"data":{"items":[{"id":3}]},"pageInfo":{"endCursor":null}}`)
			return
		}
		fmt.Fprint(w, `{"data":{"items":[{"id":1},{"id":2}]},"pageInfo":{"endCursor":"c2"}}`)
	})
}

// A key of the JSON body injected from two places (the requester's body and
// the page token, both at variables) is merged when the request is made, as
// Airbyte merges them: objects key by key. The manifest loads, where it was
// refused before.
func TestJSONBodyFromTwoPlacesIsMerged(t *testing.T) {
	a := graphQLAPI(t)
	res := newConnector(t, graphQLStream(a.URL, `{{ {'after': response.pageInfo.endCursor} }}`), nil, "s").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	var bodies []string
	for _, r := range a.requests() {
		bodies = append(bodies, r.Method+" "+r.Path+" "+r.Body)
	}
	equalLists(t, "requests", bodies, []string{
		`POST /graphql {"query":"query { items { id } }","variables":{"first":2}}`,
		`POST /graphql {"query":"query { items { id } }","variables":{"after":"c2","first":2}}`,
	})
	equalLists(t, "records", res.records("s"), ids(1, 4))
}

// Two values at one path of the JSON body collide: the first page (which
// carries no token) is read, and the request that would carry both fails
// with Airbyte's words, a system_error (Airbyte raises the same ValueError
// there: run against this API, it emits records 1 and 2 and fails the stream).
func TestJSONBodyCollisionFailsTheRequest(t *testing.T) {
	a := graphQLAPI(t)
	res := newConnector(t, graphQLStream(a.URL, `{{ response.pageInfo.endCursor }}`), nil, "s").read(t)
	if n := len(a.requests()); n != 1 {
		t.Errorf("%d requests, want the first page only", n)
	}
	equalLists(t, "records", res.records("s"), ids(1, 3))
	failedAfterRecords(t, res, "system_error", "stream s: streams[0].retriever.paginator.page_token_option: Request body collision, duplicate keys detected at key path: variables. Please ensure that all keys in the request are unique.")
}

// A query parameter the requester sets and a page token also injects is
// asked as the first page (without a token), and the request that would
// carry it twice fails, as Airbyte fails it (its combine_mappings refuses
// any key twice outside a JSON body); refused at load before.
func TestQueryParameterFromTwoPlacesFailsTheRequest(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		fmt.Fprint(w, `{"data":[{"id":1}],"next":"n2"}`)
	})
	m := stream("s", fmt.Sprintf("url_base: %s\npath: /items\nrequest_parameters: {cursor: start}", a.URL), "[data]", `paginator:
  type: DefaultPaginator
  page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: cursor}
  pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next }}"}`)
	res := newConnector(t, m, nil, "s").read(t)
	equalLists(t, "requests", a.lines(), []string{"GET /items?cursor=start"})
	equalLists(t, "records", res.records("s"), ids(1, 2))
	failedAfterRecords(t, res, "system_error", `stream s: streams[0].retriever.paginator.page_token_option: query parameter "cursor" is set twice`)
}
