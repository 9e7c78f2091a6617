package runtime

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Design decision 9 on real names: url_base https://example.com; a
// next-page URL on a subdomain keeps the credentials; on the same host over
// http, or on another port, it goes without them. The names are dialled to
// local test servers (httptest's certificate is valid for example.com and
// *.example.com), so the requests are the ones a real client sends.
func TestNextPageURLCredentialsBySubdomainSchemeAndPort(t *testing.T) {
	var mu sync.Mutex
	var got []string // "scheme://host/path Authorization"
	record := func(scheme string, r *http.Request) {
		mu.Lock()
		got = append(got, fmt.Sprintf("%s://%s%s %q", scheme, r.Host, r.URL.Path, r.Header.Get("Authorization")))
		mu.Unlock()
	}
	next := map[string]string{
		"/s":  "https://api.example.com/p2",
		"/p2": "http://example.com/p3",
		"/p3": "https://example.com:8443/p4",
	}
	answer := func(w http.ResponseWriter, r *http.Request) {
		n, i := next[r.URL.Path], strings.TrimPrefix(r.URL.Path, "/p")
		if i == "/s" {
			i = "1"
		}
		if n != "" {
			fmt.Fprintf(w, `{"data":[{"id":%s}],"next":%q}`, i, n)
			return
		}
		fmt.Fprintf(w, `{"data":[{"id":%s}]}`, i)
	}
	secure := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { record("https", r); answer(w, r) }))
	defer secure.Close()
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { record("http", r); answer(w, r) }))
	defer plain.Close()

	r, out := loadRunner(t, oneStream("https://example.com", `          type: BearerAuthenticator
          api_token: "{{ config['k'] }}"`, `      paginator:
        type: DefaultPaginator
        page_token_option: {type: RequestPath}
        pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next }}"}`), map[string]any{"k": "the-secret"})
	transport := r.Client.HTTP.Transport.(*http.Transport)
	roots := x509.NewCertPool()
	roots.AddCert(secure.Certificate())
	transport.TLSClientConfig = &tls.Config{RootCAs: roots}
	transport.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, _ := net.SplitHostPort(addr)
		if !strings.HasSuffix(host, "example.com") {
			return nil, fmt.Errorf("unexpected dial to %s", addr)
		}
		to := secure.Listener.Addr().String()
		if port == "80" {
			to = plain.Listener.Addr().String()
		}
		return (&net.Dialer{}).DialContext(ctx, network, to)
	}
	readAll(t, r, "s")

	want := []string{
		`https://example.com/s "Bearer the-secret"`,
		`https://api.example.com/p2 "Bearer the-secret"`,
		`http://example.com/p3 ""`,
		`https://example.com:8443/p4 ""`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var warns []string
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.Contains(l, `"level":"WARN"`) {
			warns = append(warns, l)
		}
	}
	wantWarns := []string{
		`{"type":"LOG","log":{"level":"WARN","message":"streams[0].retriever.requester: the request to \"http://example.com\" is sent without the authenticator's credentials, as it is http:// while url_base is https:// (said once per host)"}}`,
		`{"type":"LOG","log":{"level":"WARN","message":"streams[0].retriever.requester: the request to \"https://example.com:8443\" is sent without the authenticator's credentials, as https://example.com:8443 is not on url_base's scheme and port (https://example.com) (said once per host)"}}`,
	}
	if strings.Join(warns, "\n") != strings.Join(wantWarns, "\n") {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(warns, "\n"), strings.Join(wantWarns, "\n"))
	}
	for i := 1; i <= 4; i++ {
		if !strings.Contains(out.String(), fmt.Sprintf(`"data":{"id":%d}`, i)) {
			t.Errorf("record %d missing: %s", i, out.String())
		}
	}
}
