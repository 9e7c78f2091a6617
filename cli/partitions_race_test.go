package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

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
	auth := `authenticator:
  type: OAuthAuthenticator
  token_refresh_endpoint: ` + a.URL + `/oauth/token
  client_id: "{{ config['client_id'] }}"
  client_secret: "{{ config['client_secret'] }}"
  refresh_token: "{{ config['client_refresh_token'] }}"
  refresh_token_updater:
    refresh_token_name: refresh_token
    access_token_config_path: [oauth_access_token]
    refresh_token_config_path: [client_refresh_token]
    token_expiry_date_config_path: [oauth_token_expiry_date]`
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
	// Workers that got a 401 with the revoked token at the same time may
	// each rotate it once more: every rotation is printed, the last one last.
	if rotations < 2 || len(controls) != rotations {
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
