package acceptance

import (
	"bytes"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airbyte-go/source-declarative/cli"
	"github.com/airbyte-go/source-declarative/examples/exampleapi"
)

// TestMain lets this test binary act as a connector: with FAKE_CONNECTOR set
// it runs the real CLI and then breaks its output in the named way.
func TestMain(m *testing.M) {
	mode, ok := os.LookupEnv("FAKE_CONNECTOR")
	if !ok {
		os.Exit(m.Run())
	}
	var out bytes.Buffer
	code := cli.Main(os.Args[1:], &out, os.Stderr, nil, "fake")
	text := out.String()
	switch {
	case mode == "second-spec" && os.Args[len(os.Args)-1] == "spec":
		text += text
	case mode == "bad-record":
		text = strings.Replace(text, `"data":{"created_at"`, `"data":{"id":"not-an-integer","created_at"`, 1)
		text = strings.Replace(text, `"email":"user1@example.com","id":1,`, `"email":"user1@example.com",`, 1)
	case mode == "leak":
		text += `{"type":"LOG","log":{"level":"INFO","message":"using key demo-key"}}` + "\n"
	case mode == "state-backwards":
		text = strings.Replace(text, `"stream_state":{"updated_at":"2024-01-03T18:00:00Z"}`, `"stream_state":{"updated_at":"2024-01-01T00:00:00Z"}`, 1)
	case mode == "state-ahead" && !strings.Contains(strings.Join(os.Args, " "), "--state"):
		// the first checkpoint claims a day not read yet
		text = strings.Replace(text, `"stream_state":{"updated_at":"2024-01-01T18:00:00Z"}`, `"stream_state":{"updated_at":"2024-01-02T18:00:00Z"}`, 1)
	}
	os.Stdout.WriteString(text)
	os.Exit(code)
}

func exampleAPI(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: exampleapi.New(exampleapi.Options{APIKey: "demo-key"})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

func runWith(t *testing.T, mode string) Result {
	t.Helper()
	cfg, err := LoadConfig("../acceptance-test-config.yml")
	if err != nil {
		t.Fatal(err)
	}
	self, _ := os.Executable()
	t.Setenv("FAKE_CONNECTOR", mode)
	manifest, _ := filepath.Abs("../examples/manifest.yaml")
	if mode != "none" {
		// Streams and slices read one at a time, so that the messages come
		// in the order the fake connector breaks them in (two workers may
		// print an order before the first user, or end a day before the
		// day before it, a state then skipping a day).
		b, err := os.ReadFile(manifest)
		if err != nil {
			t.Fatal(err)
		}
		manifest = filepath.Join(t.TempDir(), "manifest.yaml")
		if err := os.WriteFile(manifest, append(b, "\nconcurrency_level: {type: ConcurrencyLevel, default_concurrency: 1}\n"...), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	r := &Runner{Connector: []string{self, "--manifest", manifest}, BaseDir: "..", Vars: map[string]string{"EXAMPLE_API_URL": exampleAPI(t)}}
	return r.Run(cfg)
}

func TestExampleConnectorPassesAcceptance(t *testing.T) {
	res := runWith(t, "none")
	if len(res.Failures) > 0 || res.Passed < 40 {
		t.Fatalf("%d passed, failures: %v", res.Passed, res.Failures)
	}
	t.Logf("%d checks passed", res.Passed)
}

func TestRunnerCatchesBrokenConnectors(t *testing.T) {
	for mode, want := range map[string]string{
		"second-spec":     "spec: 2 SPEC messages, want exactly 1",
		"bad-record":      "read: a record of users does not match its schema",
		"leak":            "a secret value appears in a LOG message",
		"state-backwards": "incremental: the state of activities went back from 2024-01-02T18:00:00Z to 2024-01-01T00:00:00Z",
		"state-ahead":     "incremental read from checkpoint 1 of activities (map[updated_at:2024-01-02T18:00:00Z]): 19 records, want at least the 22 read after it",
	} {
		t.Run(mode, func(t *testing.T) {
			res := runWith(t, mode)
			found := false
			for _, f := range res.Failures {
				found = found || strings.Contains(f, want)
			}
			if !found {
				t.Fatalf("want a failure %q, got %v", want, res.Failures)
			}
		})
	}
}
