package cli

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// tlsAPI is an https server on loopback that counts the connections made
// to it and answers one record.
type tlsAPI struct {
	*httptest.Server
	conns atomic.Int64
}

func newTLSAPI(t *testing.T) *tlsAPI {
	s := &tlsAPI{}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"data":[{"id":1}],"access_token":"t","expires_in":3600}`)
	}))
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.StartTLS()
	t.Cleanup(s.Close)
	return s
}

func inCloud(t *testing.T) { t.Setenv("DEPLOYMENT_MODE", "cloud") }

const schemeRefused = `Invalid Protocol Scheme: The endpoint that data is being requested from (host %q) is using an invalid or insecure protocol 'http'. Valid protocol schemes: https`

const privateRefused = `Invalid URL endpoint: The endpoint that data is being requested from (host %q, address 127.0.0.1) belongs to a private network. Source connectors only support requesting data from public API endpoints.`

// firstError is the message and failure type of the first error TRACE.
func firstError(t *testing.T, res result) (string, string) {
	t.Helper()
	errs := res.errors()
	if len(errs) == 0 {
		t.Fatalf("exit %d, no error TRACE: %s", res.code, res.stdout)
	}
	return errs[0]["message"].(string), errs[0]["failure_type"].(string)
}

// DEPLOYMENT_MODE=cloud, as the CDK's request filter: an http URL is not
// requested; without the variable the same read works.
func TestCloudModeRefusesHTTP(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) { fmt.Fprint(w, `{"data":[{"id":1}]}`) })
	c := newConnector(t, stream("s", "url_base: "+a.URL+"\npath: /s", "[data]", ""), nil, "s")

	t.Setenv("DEPLOYMENT_MODE", "")
	if res := c.read(t); res.code != 0 || len(res.records("s")) != 1 {
		t.Fatalf("without the variable: exit %d: %s", res.code, res.stdout)
	}
	inCloud(t)
	before := len(a.requests())
	res := c.read(t)
	msg, typ := firstError(t, res)
	want := "stream s: " + fmt.Sprintf(schemeRefused, hostOf(a.URL))
	if res.code != 1 || msg != want || typ != "config_error" {
		t.Errorf("exit %d, %s %q,\nwant config_error %q", res.code, typ, msg, want)
	}
	chk := c.check(t)
	st := chk.ofType("CONNECTION_STATUS")
	if len(st) != 1 || st[0]["connectionStatus"].(map[string]any)["status"] != "FAILED" ||
		!strings.Contains(st[0]["connectionStatus"].(map[string]any)["message"].(string), fmt.Sprintf(schemeRefused, hostOf(a.URL))) {
		t.Errorf("check: %s", chk.stdout)
	}
	if sent := a.requests()[before:]; len(sent) != 0 {
		t.Errorf("%d requests reached the API in cloud mode", len(sent))
	}
}

// An https URL on loopback passes the scheme check and is refused at the
// dial, on the address the name resolved to, before any connection; the
// TRACE names the host, not the URL or its query.
func TestCloudModeRefusesPrivateAddressesAtTheDial(t *testing.T) {
	inCloud(t)
	s := newTLSAPI(t)
	port := s.URL[strings.LastIndex(s.URL, ":"):]
	for _, host := range []string{"127.0.0.1", "localhost"} {
		m := stream("s", "url_base: https://"+host+port+"\npath: /s\nrequest_parameters: {key: \"{{ config['k'] }}\"}", "[data]", "")
		res := newConnector(t, m, map[string]any{"k": "q-secret"}, "s").read(t)
		msg, typ := firstError(t, res)
		want := "stream s: " + fmt.Sprintf(privateRefused, host)
		if host == "localhost" && strings.Contains(msg, "address ::1)") {
			want = strings.Replace(want, "address 127.0.0.1)", "address ::1)", 1) // where localhost is ::1 first
		}
		if res.code != 1 || msg != want || typ != "config_error" {
			t.Errorf("%s: exit %d, %s %q,\nwant config_error %q", host, res.code, typ, msg, want)
		}
		if strings.Contains(res.stdout, "q-secret") {
			t.Errorf("%s: the query is in the output: %s", host, res.stdout)
		}
	}
	if n := s.conns.Load(); n != 0 {
		t.Errorf("%d connections reached the server", n)
	}
}

// Every request the binary makes is checked: an OAuth token request, a
// dynamic schema's request on discover; spec makes none and is the same.
func TestCloudModeChecksEveryCommandsRequests(t *testing.T) {
	inCloud(t)
	s := newTLSAPI(t)
	host := hostOf(s.URL)
	oauth := stream("s", "url_base: "+s.URL+"\npath: /s\nauthenticator:\n"+indent(`type: OAuthAuthenticator
token_refresh_endpoint: `+s.URL+`/token
client_id: "{{ config['id'] }}"
client_secret: "{{ config['secret'] }}"
refresh_token: "{{ config['rt'] }}"`, 2), "[data]", "")
	res := newConnector(t, oauth, map[string]any{"id": "i", "secret": "cs", "rt": "r"}, "s").read(t)
	if msg, typ := firstError(t, res); !strings.Contains(msg, fmt.Sprintf(privateRefused, "127.0.0.1")) || typ != "config_error" {
		t.Errorf("token request: %s %q", typ, msg)
	}

	dynamic := source(namedStream("inline", s.URL, "/x", `schema_loader:
  type: DynamicSchemaLoader
  retriever:
    type: SimpleRetriever
    requester: {type: HttpRequester, url_base: "`+s.URL+`", path: /fields}
    record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}
  schema_type_identifier: {key_pointer: [name]}`))
	disc := discover(newConnector(t, dynamic, nil), t)
	if msg, typ := firstError(t, disc); disc.code != 1 || !strings.Contains(msg, fmt.Sprintf(privateRefused, "127.0.0.1")) || typ != "config_error" {
		t.Errorf("discover: exit %d, %s %q", disc.code, typ, msg)
	}
	if n := s.conns.Load(); n != 0 {
		t.Errorf("%d connections reached %s", n, host)
	}

	c := newConnector(t, oauth, nil)
	cloud := runCLI(t, "spec", "--manifest", c.manifest)
	t.Setenv("DEPLOYMENT_MODE", "")
	local := runCLI(t, "spec", "--manifest", c.manifest)
	if cloud.code != 0 || cloud.stdout != local.stdout {
		t.Errorf("spec in cloud mode: exit %d\n%s\nwithout it:\n%s", cloud.code, cloud.stdout, local.stdout)
	}
}
