package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// rotatingOAuth is an OAuth authenticator whose refresh token rotates
// through the config, at the token endpoint of the API at url.
func rotatingOAuth(url string) string {
	return `authenticator:
  type: OAuthAuthenticator
  token_refresh_endpoint: ` + url + `/oauth/token
  client_id: "{{ config['client_id'] }}"
  client_secret: "{{ config['client_secret'] }}"
  refresh_token: "{{ config['client_refresh_token'] }}"
  refresh_token_updater:
    refresh_token_name: refresh_token
    access_token_config_path: [oauth_access_token]
    refresh_token_config_path: [client_refresh_token]
    token_expiry_date_config_path: [oauth_token_expiry_date]`
}

// Run with -race: workers read partitions while the per-partition state is
// written and the OAuth refresh token rotates (an access token revoked in
// the middle of the read), each rotation printed as a CONTROL message.
func TestConcurrentPartitionsWithStateAndTokenRotation(t *testing.T) {
	var mu sync.Mutex
	issued, spent := map[string]bool{}, map[string]bool{}
	n, revoked := 0, false
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, body string) {
		mu.Lock()
		defer mu.Unlock()
		if r.URL.Path == "/oauth/token" {
			var req map[string]any
			json.Unmarshal([]byte(body), &req)
			rt, _ := req["refresh_token"].(string)
			if spent[rt] {
				w.WriteHeader(400)
				fmt.Fprint(w, `{"error":"invalid_grant"}`)
				return
			}
			spent[rt] = true
			n++
			issued[fmt.Sprintf("access-%d", n)] = true
			fmt.Fprintf(w, `{"access_token":"access-%d","refresh_token":"refresh-%d","expires_in":3600}`, n, n)
			return
		}
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		p := strings.TrimPrefix(r.URL.Path, "/items/")
		if p == "p5" && !revoked {
			revoked = true
			delete(issued, tok)
		}
		if !issued[tok] {
			w.WriteHeader(401)
			fmt.Fprint(w, `{"error":"bad token"}`)
			return
		}
		mu.Unlock()
		time.Sleep(2 * time.Millisecond)
		mu.Lock()
		fmt.Fprintf(w, `{"data":[{"id":"%s-1","updated_at":"2024-01-01T10:00:00Z"},{"id":"%s-2","updated_at":"2024-01-02T10:00:00Z"}]}`, p, p)
	})
	var values []string
	for i := range 12 {
		values = append(values, fmt.Sprintf("p%d", i))
	}
	auth := rotatingOAuth(a.URL)
	m := routed(a.URL, "/items/{{ stream_partition.p }}", "type: ListPartitionRouter\ncursor_field: p\nvalues: ["+strings.Join(values, ", ")+"]", auth, stepless, 4)
	c := incrementalConnector(t, m, map[string]any{"client_id": "cid", "client_secret": "cs", "client_refresh_token": "refresh-0",
		"oauth_access_token": "stale", "oauth_token_expiry_date": "2020-01-01T00:00:00Z"}, "items")
	res := c.read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	if got := len(res.records("items")); got != 24 {
		t.Errorf("%d records, want 24", got)
	}
	controls := res.ofType("CONTROL")
	mu.Lock()
	rotations := n
	mu.Unlock()
	// Workers that got a 401 with the revoked token at the same time rotate
	// it once between them: two rotations, each printed, the last one last.
	if rotations != 2 || len(controls) != rotations {
		t.Fatalf("%d CONTROL messages for %d rotations", len(controls), rotations)
	}
	last := controls[len(controls)-1]["control"].(map[string]any)["connectorConfig"].(map[string]any)["config"].(map[string]any)
	if want := fmt.Sprintf("refresh-%d", rotations); last["client_refresh_token"] != want || last["oauth_access_token"] != fmt.Sprintf("access-%d", rotations) {
		t.Errorf("the last CONTROL holds %v, %v, want %s", last["client_refresh_token"], last["oauth_access_token"], want)
	}
	states := res.states()
	var final struct {
		Stream struct {
			StreamState struct {
				States []any          `json:"states"`
				State  map[string]any `json:"state"`
			} `json:"stream_state"`
		}
		SourceStats struct{ RecordCount int } `json:"sourceStats"`
	}
	json.Unmarshal([]byte(states[len(states)-1]), &final)
	if len(final.Stream.StreamState.States) != 12 || final.Stream.StreamState.State["updated_at"] != "2024-01-02T10:00:00Z" {
		t.Errorf("final state %s", states[len(states)-1])
	}
	total := 0
	for _, s := range states {
		var v struct {
			SourceStats struct{ RecordCount int } `json:"sourceStats"`
		}
		json.Unmarshal([]byte(s), &v)
		total += v.SourceStats.RecordCount
	}
	if total != 24 {
		t.Errorf("the states count %d records, want 24", total)
	}
}

// Run with -race: workers refused with the same revoked access token each
// see a 401, but only the first throws the token away; the others retry with
// the token it obtained, so the refresh token rotates exactly once.
func TestWorkersRefusedWithOneRevokedTokenRefreshItOnce(t *testing.T) {
	const workers = 4
	var mu sync.Mutex
	var refreshTokens []string
	held := 0
	all := make(chan struct{})
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, body string) {
		if r.URL.Path == "/oauth/token" {
			var req map[string]any
			json.Unmarshal([]byte(body), &req)
			mu.Lock()
			refreshTokens = append(refreshTokens, fmt.Sprint(req["refresh_token"]))
			n := len(refreshTokens)
			mu.Unlock()
			fmt.Fprintf(w, `{"access_token":"access-%d","refresh_token":"refresh-%d","expires_in":3600}`, n, n)
			return
		}
		p := strings.TrimPrefix(r.URL.Path, "/items/")
		if r.Header.Get("Authorization") == "Bearer access-1" {
			// Every worker's first request carries access-1: it is revoked
			// once all of them are in flight, and they are refused one
			// after the other, far enough apart for each refusal to come
			// after the first worker's refresh.
			mu.Lock()
			held++
			turn := held
			if held == workers {
				close(all)
			}
			mu.Unlock()
			select {
			case <-all:
			case <-time.After(5 * time.Second):
				t.Errorf("only %d of %d workers sent a request", held, workers)
			}
			time.Sleep(time.Duration(turn) * 50 * time.Millisecond)
			w.WriteHeader(401)
			fmt.Fprint(w, `{"error":"revoked"}`)
			return
		}
		fmt.Fprintf(w, `{"data":[{"id":%q,"updated_at":"2024-01-01T10:00:00Z"}]}`, p+" "+r.Header.Get("Authorization"))
	})
	auth := rotatingOAuth(a.URL)
	m := routed(a.URL, "/items/{{ stream_partition.p }}", "type: ListPartitionRouter\ncursor_field: p\nvalues: [p0, p1, p2, p3]", auth, "", workers)
	c := newConnector(t, m, map[string]any{"client_id": "cid", "client_secret": "cs", "client_refresh_token": "refresh-0", "oauth_access_token": "stale", "oauth_token_expiry_date": "2020-01-01T00:00:00Z"}, "items")
	res := c.read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	mu.Lock()
	defer mu.Unlock()
	equalLists(t, "refresh tokens sent", refreshTokens, []string{"refresh-0", "refresh-1"})
	var items []string
	for _, l := range a.lines() {
		if strings.HasPrefix(l, "GET /items/") {
			items = append(items, l)
		}
	}
	if len(items) != 2*workers {
		t.Errorf("item requests %v, want %d (each refused once, then read)", items, 2*workers)
	}
	got := res.records("items")
	sort.Strings(got)
	equalLists(t, "records", got, []string{
		`{"id":"p0 Bearer access-2","updated_at":"2024-01-01T10:00:00Z"}`, `{"id":"p1 Bearer access-2","updated_at":"2024-01-01T10:00:00Z"}`,
		`{"id":"p2 Bearer access-2","updated_at":"2024-01-01T10:00:00Z"}`, `{"id":"p3 Bearer access-2","updated_at":"2024-01-01T10:00:00Z"}`})
	if controls := res.ofType("CONTROL"); len(controls) != 2 {
		t.Errorf("%d CONTROL messages, want 2 (one per rotation)", len(controls))
	}
	var warnings []string
	for _, l := range res.ofType("LOG") {
		if msg := l["log"].(map[string]any)["message"].(string); strings.Contains(msg, "401") {
			warnings = append(warnings, msg)
		}
	}
	want := "Stream items: HTTP 401, obtaining a new token and trying once more"
	equalLists(t, "401 warnings", warnings, []string{want, want, want, want})
}
