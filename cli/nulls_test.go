package cli

import (
	"net/http"
	"testing"
)

// A template rendering null (a config key that is not there) sends no query
// parameter, header or form field: the reference sends the text "None". In
// a JSON body the key is left out, as the reference's nested mapping drops
// None values (interpolated_nested_mapping.py), and "1" is read as 1 there.
func TestNullIsNeverSentAsNone(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		w.Write([]byte(`{"data":[{"id":1}]}`))
	})
	query := stream("items", "url_base: "+a.URL+"\npath: /items\nrequest_parameters: {since: \"{{ config.get('since') }}\", kept: \"1\"}\nrequest_headers: {X-Team: \"{{ config.get('team') }}\"}", "[data]", "")
	if res := newConnector(t, query, map[string]any{}, "items").read(t); res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	form := stream("items", "url_base: "+a.URL+"\npath: /items\nhttp_method: POST\nrequest_body_data: {since: \"{{ config.get('since') }}\", kept: \"1\"}", "[data]", "")
	if res := newConnector(t, form, map[string]any{}, "items").read(t); res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	body := stream("items", "url_base: "+a.URL+"\npath: /items\nhttp_method: POST\nrequest_body_json: {since: \"{{ config.get('since') }}\", kept: \"1\"}", "[data]", "")
	if res := newConnector(t, body, map[string]any{}, "items").read(t); res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	reqs := a.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	if got := reqs[0].Query; got != "kept=1" {
		t.Errorf("query: %q", got)
	}
	if _, sent := reqs[0].Header["X-Team"]; sent {
		t.Errorf("header X-Team sent: %q", reqs[0].Header.Get("X-Team"))
	}
	if got := reqs[1].Body; got != "kept=1" {
		t.Errorf("form body: %q", got)
	}
	if got := reqs[2].Body; got != `{"kept":1}` {
		t.Errorf("JSON body: %q", got)
	}
}
