package runtime

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/protocol"
)

// clock is a settable time source.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func loadRunner(t *testing.T, manifestYAML string, config map[string]any) (*Runner, *bytes.Buffer) {
	t.Helper()
	raw, err := manifest.Parse([]byte(manifestYAML))
	if err != nil {
		t.Fatal(err)
	}
	src, err := manifest.Load(raw)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	w := protocol.NewWriter(&out)
	m := NewMasker()
	w.SetMasker(m)
	return New(src, config, w, m), &out
}

// oneStream is a one-stream manifest whose requester has the given
// authenticator (YAML at 8 spaces) and whose records are at data.
func oneStream(url, authenticator, paginator string) string {
	return fmt.Sprintf(`version: 6.0.0
check: {stream_names: [s]}
streams:
  - type: DeclarativeStream
    name: s
    retriever:
      type: SimpleRetriever
      requester:
        type: HttpRequester
        url_base: %s
        path: /s
        authenticator:
%s
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
%s`, url, authenticator, paginator)
}

func readAll(t *testing.T, r *Runner, streams ...string) {
	t.Helper()
	cat := &protocol.ConfiguredCatalog{}
	for _, s := range streams {
		cat.Streams = append(cat.Streams, protocol.ConfiguredStream{Stream: protocol.Stream{Name: s}, SyncMode: "full_refresh"})
	}
	if err := r.Read(context.Background(), cat, nil); err != nil {
		t.Fatal(err)
	}
	r.Out.Flush()
}

// The access token is reused until it expires, then refreshed before the
// next request; time is injected, nothing sleeps.
func TestOAuthRefreshAfterExpiry(t *testing.T) {
	clk := &clock{now: time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)}
	var tokens []string
	var dataAuth []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/token" {
			tokens = append(tokens, clk.Now().Format(time.TimeOnly))
			fmt.Fprintf(w, `{"token":{"value":"at-%d","valid_until":"%s"}}`, len(tokens), clk.Now().Add(time.Hour).Format("2006-01-02 15:04:05"))
			return
		}
		dataAuth = append(dataAuth, r.Header.Get("Authorization"))
		page := r.URL.Query().Get("page")
		clk.advance(25 * time.Minute) // each page takes 25 minutes of the injected clock
		if page == "4" {
			fmt.Fprint(w, `{"data":[]}`)
			return
		}
		fmt.Fprint(w, `{"data":[{"id":1}]}`)
	}))
	defer srv.Close()
	r, _ := loadRunner(t, oneStream(srv.URL, `          type: OAuthAuthenticator
          token_refresh_endpoint: `+srv.URL+`/token
          client_id: id
          client_secret: secret
          grant_type: client_credentials
          access_token_name: value
          expires_in_name: valid_until
          token_expiry_date_format: "%Y-%m-%d %H:%M:%S"`, `      paginator:
        type: DefaultPaginator
        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}
        pagination_strategy: {type: PageIncrement, page_size: 1, start_from_page: 1}
`), map[string]any{})
	r.Now = clk.Now
	readAll(t, r, "s")
	if strings.Join(tokens, ",") != "12:00:00,13:15:00" {
		t.Errorf("token requests at %v, want 12:00:00 and 13:15:00 (after the first token expired at 13:00)", tokens)
	}
	if strings.Join(dataAuth, ",") != "Bearer at-1,Bearer at-1,Bearer at-1,Bearer at-2" {
		t.Errorf("data requests carried %v", dataAuth)
	}
}

func TestRotationWithoutNewRefreshTokenKeepsOldAndWarns(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/token" {
			fmt.Fprint(w, `{"access_token":"new-access","expires_in":60}`)
			return
		}
		fmt.Fprint(w, `{"data":[{"id":1}]}`)
	}))
	defer srv.Close()
	config := map[string]any{"credentials": map[string]any{"client_id": "cid", "client_secret": "cs", "refresh_token": "old-refresh"}}
	r, out := loadRunner(t, oneStream(srv.URL, `          type: OAuthAuthenticator
          token_refresh_endpoint: `+srv.URL+`/token
          refresh_token_updater: {}`, ""), config)
	r.Now = func() time.Time { return time.Date(2022, 12, 31, 0, 0, 0, 0, time.UTC) }
	readAll(t, r, "s")
	text := out.String()
	want := `"connectorConfig":{"config":{"credentials":{"access_token":"new-access","client_id":"cid","client_secret":"cs","refresh_token":"old-refresh","token_expiry_date":"2022-12-31T00:01:00+00:00"}}}`
	if !strings.Contains(text, want) {
		t.Errorf("CONTROL message missing or wrong:\n%s", text)
	}
	if !strings.Contains(text, `"level":"WARN","message":"The token response has no new refresh token (property \"refresh_token\"); keeping the current one"`) {
		t.Errorf("no warning:\n%s", text)
	}
}

func TestTokenEndpointDownIsTransient(t *testing.T) {
	tokenCalls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tokenCalls++
		w.WriteHeader(503)
	}))
	defer srv.Close()
	r, out := loadRunner(t, oneStream(srv.URL, `          {type: OAuthAuthenticator, token_refresh_endpoint: "`+srv.URL+`/token", client_id: c, client_secret: s, grant_type: client_credentials}`, ""), map[string]any{})
	r.Client.Sleep = func(context.Context, time.Duration) error { return nil }
	cat := &protocol.ConfiguredCatalog{Streams: []protocol.ConfiguredStream{{Stream: protocol.Stream{Name: "s"}, SyncMode: "full_refresh"}}}
	if err := r.Read(context.Background(), cat, nil); err == nil {
		t.Fatal("want a failure")
	}
	r.Out.Flush()
	if tokenCalls != 6 || !strings.Contains(out.String(), `"failure_type":"transient_error"`) || !strings.Contains(out.String(), "HTTP 503") {
		t.Fatalf("%d token calls; output:\n%s", tokenCalls, out.String())
	}
}

// token_expiry_date_format in the older pendulum style reads the expiry date
// as a strftime format does.
func TestOAuthExpiryDateInPendulumFormat(t *testing.T) {
	clk := &clock{now: time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)}
	var tokens []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/token" {
			tokens = append(tokens, clk.Now().Format(time.TimeOnly))
			fmt.Fprintf(w, `{"access_token":"at-%d","expires_at":"%s"}`, len(tokens), clk.Now().Add(time.Hour).Format("02/01/2006 15:04"))
			return
		}
		clk.advance(40 * time.Minute)
		if r.URL.Query().Get("page") == "3" {
			fmt.Fprint(w, `{"data":[]}`)
			return
		}
		fmt.Fprint(w, `{"data":[{"id":1}]}`)
	}))
	defer srv.Close()
	r, _ := loadRunner(t, oneStream(srv.URL, `          type: OAuthAuthenticator
          token_refresh_endpoint: `+srv.URL+`/token
          client_id: id
          client_secret: secret
          grant_type: client_credentials
          expires_in_name: expires_at
          token_expiry_date_format: "DD/MM/YYYY HH:mm"`, `      paginator:
        type: DefaultPaginator
        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}
        pagination_strategy: {type: PageIncrement, page_size: 1, start_from_page: 1}
`), map[string]any{})
	r.Now = clk.Now
	readAll(t, r, "s")
	if strings.Join(tokens, ",") != "12:00:00,13:20:00" {
		t.Errorf("token requests at %v, want 12:00:00 and 13:20:00 (the first token expired at 13:00)", tokens)
	}
}

// A Connector Builder test read runs without retries and leaves the
// runner's retries as they were.
func TestTestReadRestoresRetries(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `{"data":[{"id":1}]}`) }))
	defer srv.Close()
	r, _ := loadRunner(t, oneStream(srv.URL, "          type: NoAuth", ""), map[string]any{})
	r.Client.MaxRetries = 7
	r.TestRead(context.Background(), "s", DefaultTestLimits, nil)
	if r.Client.MaxRetries != 7 {
		t.Errorf("MaxRetries = %d after a test read, want 7", r.Client.MaxRetries)
	}
}
