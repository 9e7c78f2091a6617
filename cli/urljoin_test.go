package cli

import (
	"net/http"
	"strings"
	"testing"
)

// A requester's path is joined to url_base as Airbyte's urljoin joins them: a
// path that is a whole URL replaces the base, `../` climbs out of the base's
// path, and an absolute next-page path replaces the base's path.
func TestPathJoinedAsURLJoin(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		switch r.URL.Path {
		case "/v2/jobs":
			w.Write([]byte(`{"data":[{"id":1}],"next":"/other/jobs?cursor=2"}`))
		case "/other/jobs":
			w.Write([]byte(`{"data":[{"id":2}]}`))
		default:
			http.NotFound(w, r)
		}
	})
	whole := stream("jobs", "url_base: "+a.URL+"/v1/\npath: "+a.URL+"/v2/jobs", "[data]", `paginator:
  type: DefaultPaginator
  page_token_option: {type: RequestPath}
  pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next }}", stop_condition: "{{ not response.next }}"}`)
	res := newConnector(t, whole, nil, "jobs").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{"GET /v2/jobs", "GET /other/jobs?cursor=2"})
	equalLists(t, "records", res.records("jobs"), []string{`{"id":1}`, `{"id":2}`})

	climb := stream("jobs", "url_base: "+a.URL+"/v1\npath: ../v2/jobs", "[data]", "")
	a.reqs = nil
	if res := newConnector(t, climb, nil, "jobs").read(t); res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{"GET /v2/jobs"})
}

// A path that is a whole URL on another host replaces url_base, as urljoin
// does; the authenticator's credentials do not go with it.
func TestPathOnAnotherHostGoesWithoutCredentials(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		w.Write([]byte(`{"data":[{"id":1}]}`))
	})
	m := stream("jobs", "url_base: "+a.URL+"/v1\npath: "+onLocalhost(a)+"/v2/jobs\nauthenticator: {type: BearerAuthenticator, api_token: \"{{ config['token'] }}\"}", "[data]", "")
	res := newConnector(t, m, map[string]any{"token": "s3cret"}, "jobs").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	reqs := a.requests()
	if len(reqs) != 1 || reqs[0].Path != "/v2/jobs" || reqs[0].Header.Get("Authorization") != "" {
		t.Fatalf("requests: %+v", reqs)
	}
	if w := res.warnings(); len(w) != 1 || !strings.Contains(w[0], `host "localhost`) {
		t.Errorf("warnings: %q", w)
	}
}

// A path that is only a slash leaves a url_base ending in a path segment as
// it is, as Airbyte's HttpRequester strips the path's slashes before it
// joins: GET /v2, not /v2/ (run against this API, Airbyte asks GET /v2).
func TestSlashPathKeepsTheBase(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		w.Write([]byte(`{"data":[{"id":1}]}`))
	})
	res := newConnector(t, stream("s", "url_base: "+a.URL+"/v2\npath: /", "[data]", ""), nil, "s").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{"GET /v2"})
}
