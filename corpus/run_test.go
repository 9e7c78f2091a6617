package corpus

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	buildOnce sync.Once
	binary    string
	buildErr  error
	buildDir  string
)

// TestMain removes the binary the tests built.
func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// built builds the connector once for every test of the package.
func built(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "corpus-bin")
		if buildErr != nil {
			return
		}
		binary = filepath.Join(buildDir, "source-declarative")
		var out []byte
		if out, buildErr = exec.Command("go", "build", "-o", binary, "..").CombinedOutput(); buildErr != nil {
			buildErr = &buildError{buildErr, string(out)}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binary
}

type buildError struct {
	err    error
	output string
}

func (e *buildError) Error() string { return "go build: " + e.err.Error() + "\n" + e.output }

// Each outcome, through the binary: a manifest that reads, one refused for a
// custom component only, one whose API answers are refused by its own
// error handler.
func TestOutcomes(t *testing.T) {
	r := &Runner{Binary: built(t), Now: time.Now().UTC(), Timeout: 30 * time.Second}
	ok := r.Run("testdata/ok.yaml")
	if ok.Kind != OK || ok.Checks < 20 {
		t.Errorf("ok.yaml: %+v", ok)
	}
	want := Features{Streams: 1, Auth: []string{"Bearer"}, Paginators: []string{"OffsetIncrement"}, Incremental: []string{}, Partitions: []string{}, Transformations: []string{}}
	if !reflect.DeepEqual(ok.Features, want) {
		t.Errorf("features %+v, want %+v", ok.Features, want)
	}
	refused := r.Run("testdata/refused.yaml")
	if refused.Kind != Refused || !reflect.DeepEqual(refused.Components, []string{"custom code at streams[0].retriever.record_selector.extractor"}) || refused.Command != "discover" {
		t.Errorf("refused.yaml: %+v", refused)
	}
	fail := r.Run("testdata/fail.yaml")
	if fail.Kind != Fail || fail.Command != "check" || !strings.Contains(fail.Detail, "the API refuses this read") {
		t.Errorf("fail.yaml: %+v", fail)
	}
}

func TestRefusalParts(t *testing.T) {
	msg := "invalid manifest: streams[0].retriever.record_selector.extractor: CustomRecordExtractor is not supported: custom Python components cannot run here (supported: DpathExtractor); " +
		"streams[1].incremental_sync: DatetimeBasedCursor is not supported yet; " +
		"streams[2].retriever.requester.request_parameters.q: invalid template \"{{ a; b }}\": unexpected ';'; " +
		"streams[3].retriever.paginator.pagination_strategy: uses class_name source.components.Pager; " +
		"streams[4].retriever.decoder: custom component CustomDecoder (class_name source.components.D) is not supported: custom Python code cannot run here"
	got := RefusalParts(msg)
	want := []RefusalPart{
		{Path: "streams[0].retriever.record_selector.extractor", Text: "CustomRecordExtractor is not supported: custom Python components cannot run here (supported: DpathExtractor)", Component: "CustomRecordExtractor", Custom: true},
		{Path: "streams[1].incremental_sync", Text: "DatetimeBasedCursor is not supported yet", Component: "DatetimeBasedCursor"},
		{Path: "streams[2].retriever.requester.request_parameters.q", Text: "invalid template \"{{ a; b }}\": unexpected ';'", Component: "q invalid template \"{{ a; b }}\": unexpecte…"},
		{Path: "streams[3].retriever.paginator.pagination_strategy", Text: "uses class_name source.components.Pager", Component: "pagination_strategy uses class_name source.components.Pager", Custom: true},
		{Path: "streams[4].retriever.decoder", Text: "custom component CustomDecoder (class_name source.components.D) is not supported: custom Python code cannot run here", Component: "CustomDecoder (class_name source.components.D)", Custom: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	other, custom := unsupportedIn("stream s: streams[5].retriever.partition_router: partition routers are not supported yet: the read loop does not run them; " +
		"streams[5].retriever.decoder: CustomDecoder is not supported: custom Python components cannot run here")
	if !reflect.DeepEqual(other, []string{"partition routers"}) || !reflect.DeepEqual(custom, []string{"CustomDecoder"}) {
		t.Errorf("unsupportedIn: %q %q", other, custom)
	}
	if other, custom := unsupportedIn("stream s: HTTP 500 from GET /x"); len(other)+len(custom) > 0 {
		t.Errorf("an HTTP error names no component: %q %q", other, custom)
	}
	// A refusal must name the component's place in the manifest.
	if got := RefusalParts("invalid manifest: CustomThing is not supported"); len(got) != 1 || got[0].Custom {
		t.Errorf("a refusal without a path: %+v", got)
	}
}

func TestTable(t *testing.T) {
	f := Features{Streams: 2, Auth: []string{"Bearer"}, Paginators: []string{"none"}}
	outcomes := []Outcome{
		{Name: "a", Features: f, Kind: OK, Checks: 30},
		{Name: "b", Features: f, Kind: Refused, Components: []string{"CustomRecordExtractor"}},
		{Name: "c", Features: f, Kind: Fail, Components: []string{"DatetimeBasedCursor"}, Custom: []string{"CustomPaginationStrategy"}},
		{Name: "d", Features: f, Kind: Fail, Command: "read", Detail: "stream x ended \"INCOMPLETE\" | y"},
	}
	got := Table(outcomes)
	want := "| manifest | streams | auth | paginator | incremental | partitions | transformations | outcome |\n" +
		"|---|---|---|---|---|---|---|---|\n" +
		"| a | 2 | Bearer | none | — | — | — | ok (30 checks) |\n" +
		"| b | 2 | Bearer | none | — | — | — | refused: CustomRecordExtractor |\n" +
		"| c | 2 | Bearer | none | — | — | — | fail: DatetimeBasedCursor (and custom: CustomPaginationStrategy) |\n" +
		"| d | 2 | Bearer | none | — | — | — | fail (read): stream x ended \"INCOMPLETE\" \\| y |\n" +
		"\n**4 manifests: 1 ok, 1 refused, 2 fail.**\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	readme := filepath.Join(t.TempDir(), "README.md")
	os.WriteFile(readme, []byte("# x\n"+BeginMarker+"\nold\n"+EndMarker+"\nafter\n"), 0o644)
	if err := UpdateReadme(readme, "new\n"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(readme)
	if string(b) != "# x\n"+BeginMarker+"\nnew\n"+EndMarker+"\nafter\n" {
		t.Errorf("README: %q", b)
	}
	os.WriteFile(readme, []byte("# no markers\n"), 0o644)
	if err := UpdateReadme(readme, "new\n"); err == nil {
		t.Error("a README without markers must be an error")
	}
}
