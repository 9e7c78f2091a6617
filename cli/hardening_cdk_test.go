package cli

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/airbyte-go/source-declarative/components/pythontest"
)

// plainRequesterPy makes a stream read whole by the CDK: a custom
// requester that is the CDK's own, sending the secret api_key as a query
// parameter beside another.
const plainRequesterPy = `
from airbyte_cdk.sources.declarative.requesters.http_requester import HttpRequester

class PlainRequester(HttpRequester):
    def get_request_params(self, *, stream_state=None, stream_slice=None, next_page_token=None):
        return {"key": self.config["api_key"], "region": "eu"}
`

// cdkStream is a stream the CDK reads whole (its requester is custom),
// authenticated by Go's BearerAuthenticator with a token derived from the
// secret api_key, following the next-page URL an API gives.
func cdkStream(urlBase string) string {
	return `version: 7.0.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [s]}
streams:
  - type: DeclarativeStream
    name: s
    primary_key: [id]
    schema_loader: {type: InlineSchemaLoader, schema: {type: object, properties: {id: {type: integer}}}}
    retriever:
      type: SimpleRetriever
      requester:
        type: CustomRequester
        class_name: source_declarative_manifest.components.PlainRequester
        url_base: "` + urlBase + `"
        path: /s
        authenticator: {type: BearerAuthenticator, api_token: "{{ (config['api_key'] ~ ':x') | base64encode }}"}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
      paginator:
        type: DefaultPaginator
        page_token_option: {type: RequestPath}
        pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next }}", stop_condition: "{{ not response.next }}"}
` + secretSpec
}

// A stream the CDK reads whole is authenticated by Go under the same rule
// as Go's own requests: its next-page URL on another host gets no
// credentials and no query parameter holding a secret, the others kept,
// with the one WARN for the host; and the derived token Go put on its
// requests is a secret, masked where an API echoes it.
func TestCDKStreamCredentialsStayWithTheirHostAndAreMasked(t *testing.T) {
	t.Setenv("AIRBYTE_PYTHON", pythontest.Python(t))
	t.Setenv("AIRBYTE_ENABLE_UNSAFE_CODE", "True")
	t.Setenv("HTTP_PROXY", "http://127.0.0.1:9")
	t.Setenv("HTTPS_PROXY", "http://127.0.0.1:9")
	t.Setenv("NO_PROXY", "127.0.0.1,localhost")
	const key = "key-secret-0451"
	derived := base64.StdEncoding.EncodeToString([]byte(key + ":x"))
	foreign := newForeignHost(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `{"data":[{"id":2}]}`) })
	home := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		fmt.Fprintf(w, `{"data":[{"id":1}],"next":"%s/more?page=2"}`, foreign.URL)
	})
	c := newConnector(t, cdkStream(home.URL), map[string]any{"api_key": key}, "s")
	code := writeFile(t, c.dir, "components.py", plainRequesterPy)
	res := c.read(t, "--components-path", code)
	if res.code != 0 {
		t.Fatalf("exit %d: %v %s", res.code, res.errors(), res.stderr)
	}
	equalLists(t, "records", res.records("s"), []string{`{"id":1}`, `{"id":2}`})
	got := home.requests()
	if len(got) != 1 || got[0].Header.Get("Authorization") != "Bearer "+derived || got[0].Query != "key="+key+"&region=eu" {
		t.Errorf("home requests: %+v", got)
	}
	fr := foreign.requests()
	if len(fr) != 1 || !strings.HasPrefix(fr[0], "GET /more?page=2&region=eu HTTP/1.1") || strings.Contains(fr[0], "Authorization") {
		t.Errorf("foreign requests: %q", fr)
	}
	var warns []string
	for _, l := range res.ofType("LOG") {
		if lg := l["log"].(map[string]any); lg["level"] == "WARN" {
			warns = append(warns, lg["message"].(string))
		}
	}
	want := fmt.Sprintf(`streams[0].retriever.requester: the request to %q is sent without the authenticator's credentials and query parameter key (holding a secret), as host %q is not url_base's host %q nor a subdomain of it (said once per host)`,
		foreign.URL, strings.TrimPrefix(foreign.URL, "http://"), strings.TrimPrefix(home.URL, "http://"))
	equalLists(t, "warnings", warns, []string{want})

	// An API whose 400 echoes the request's headers: the derived token is
	// masked in what the CDK reports.
	echo := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":"bad request","echo":%q}`, r.Header.Get("Authorization"))
	})
	c2 := newConnector(t, cdkStream(echo.URL), map[string]any{"api_key": key}, "s")
	code2 := writeFile(t, c2.dir, "components.py", plainRequesterPy)
	res2 := c2.read(t, "--components-path", code2)
	if len(echo.requests()) == 0 || echo.requests()[0].Header.Get("Authorization") != "Bearer "+derived {
		t.Errorf("echo requests: %+v", echo.requests())
	}
	if res2.code != 1 || !strings.Contains(res2.stdout, `'echo': 'Bearer ****'`) {
		t.Errorf("exit %d, the echo not masked as a token: %s", res2.code, res2.stdout)
	}
	if n := leaks(t, "the foreign host", fr, key) + leaks(t, "our output", []string{res.stdout, res.stderr, res2.stdout, res2.stderr}, key, derived); n != 0 {
		t.Errorf("%d secrets leaked", n)
	}
}
