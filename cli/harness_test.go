package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/airbyte-go/source-declarative/manifest"
)

// seen is one request as the target API received it.
type seen struct {
	Method string
	Path   string
	Query  string // raw query
	Header http.Header
	Body   string
}

// api is a real HTTP server recording every request.
type api struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []seen
}

func newAPI(t *testing.T, handle func(w http.ResponseWriter, r *http.Request, body string)) *api {
	t.Helper()
	a := &api{}
	a.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		a.mu.Lock()
		a.reqs = append(a.reqs, seen{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Clone(), string(b)})
		a.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		handle(w, r, string(b))
	}))
	t.Cleanup(a.Close)
	return a
}

func (a *api) requests() []seen {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]seen(nil), a.reqs...)
}

// lines lists "METHOD path?query" of every request.
func (a *api) lines() []string {
	var out []string
	for _, r := range a.requests() {
		l := r.Method + " " + r.Path
		if r.Query != "" {
			l += "?" + r.Query
		}
		out = append(out, l)
	}
	return out
}

// result is what one CLI run printed.
type result struct {
	code   int
	msgs   []map[string]any
	stdout string
	stderr string
}

func runCLI(t *testing.T, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(args, &out, &errb, []byte(`{"connectionSpecification":{"type":"object"}}`), "test")
	res := result{code: code, stdout: out.String(), stderr: errb.String()}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("stdout line is not JSON: %q", line)
		}
		if _, ok := m["type"]; !ok {
			t.Fatalf("stdout line is not an Airbyte message: %q", line)
		}
		res.msgs = append(res.msgs, m)
	}
	return res
}

func (r result) ofType(typ string) []map[string]any {
	var out []map[string]any
	for _, m := range r.msgs {
		if m["type"] == typ {
			out = append(out, m)
		}
	}
	return out
}

// records returns the data of the stream's records as compact JSON.
func (r result) records(stream string) []string {
	var out []string
	for _, m := range r.ofType("RECORD") {
		rec := m["record"].(map[string]any)
		if rec["stream"] == stream {
			b, _ := json.Marshal(rec["data"])
			out = append(out, string(b))
		}
	}
	return out
}

// statuses lists the stream statuses of a stream, in order.
func (r result) statuses(stream string) []string {
	var out []string
	for _, m := range r.ofType("TRACE") {
		tr := m["trace"].(map[string]any)
		if ss, ok := tr["stream_status"].(map[string]any); ok && ss["stream_descriptor"].(map[string]any)["name"] == stream {
			st := ss["status"].(string)
			if reasons, ok := ss["reasons"].([]any); ok {
				st += " (" + reasons[0].(map[string]any)["type"].(string) + ")"
			}
			out = append(out, st)
		}
	}
	return out
}

func (r result) errors() []map[string]any {
	var out []map[string]any
	for _, m := range r.ofType("TRACE") {
		if e, ok := m["trace"].(map[string]any)["error"].(map[string]any); ok {
			out = append(out, e)
		}
	}
	return out
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// connector holds the files of one run.
type connector struct {
	dir, manifest, config, catalog string
}

func newConnector(t *testing.T, manifestYAML string, config map[string]any, streams ...string) *connector {
	t.Helper()
	dir := t.TempDir()
	c := &connector{dir: dir}
	c.manifest = writeFile(t, dir, "manifest.yaml", manifestYAML)
	if config == nil {
		config = map[string]any{}
	}
	cb, _ := json.Marshal(config)
	c.config = writeFile(t, dir, "config.json", string(cb))
	var cs []string
	for _, s := range streams {
		cs = append(cs, fmt.Sprintf(`{"stream":{"name":%q,"json_schema":{},"supported_sync_modes":["full_refresh"]},"sync_mode":"full_refresh","destination_sync_mode":"overwrite"}`, s))
	}
	c.catalog = writeFile(t, dir, "catalog.json", `{"streams":[`+strings.Join(cs, ",")+`]}`)
	return c
}

func (c *connector) read(t *testing.T, extra ...string) result {
	return runCLI(t, append([]string{"read", "--manifest", c.manifest, "--config", c.config, "--catalog", c.catalog}, extra...)...)
}

func (c *connector) check(t *testing.T) result {
	return runCLI(t, "check", "--manifest", c.manifest, "--config", c.config)
}

func equalLists(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\n got: %q\nwant: %q", what, got, want)
	}
}

// equalSorted compares lists whose order is not defined (the requests of
// streams read at the same time), as sorted copies.
func equalSorted(t *testing.T, what string, got, want []string) {
	t.Helper()
	equalLists(t, what+" (sorted)", slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want)))
}

// stream builds a one-stream manifest around a requester body and a paginator.
func stream(name, requester, selectorPath, paginator string) string {
	return fmt.Sprintf(`version: 6.0.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [%[1]s]}
streams:
  - type: DeclarativeStream
    name: %[1]s
    primary_key: [id]
    retriever:
      type: SimpleRetriever
      requester:
        type: HttpRequester
%[2]s
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: %[3]s}}
%[4]s
`, name, indent(requester, 8), selectorPath, indent(paginator, 6))
}

func indent(s string, n int) string {
	if strings.TrimSpace(s) == "" {
		return ""
	}
	pad := strings.Repeat(" ", n)
	lines := strings.Split(strings.Trim(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = pad + l
	}
	return strings.Join(lines, "\n")
}

// items renders records with ids from..to-1 as a JSON array.
func items(from, to int) string {
	var parts []string
	for i := from; i < to; i++ {
		parts = append(parts, fmt.Sprintf(`{"id":%d}`, i))
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func ids(from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf(`{"id":%d}`, i))
	}
	return out
}

func yamlToMap(y string) (map[string]any, error) {
	return manifest.Parse([]byte(y))
}
