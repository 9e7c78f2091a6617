package differential

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airbyte-go/source-declarative/genapi"
)

var (
	update = flag.Bool("update", false, "write the differential table into README.md")
	only   = flag.String("only", "", "compare only the manifests whose name contains this")
	dir    = flag.String("dir", "", "compare the manifests of this folder instead of the catalog's and the example (README's table is then left alone)")
)

// manifestsDir is where the catalog manifests live, beside the repository.
const manifestsDir = "../../shared/manifests"

// TestDifferential runs every catalog manifest, the example manifest and
// those of testdata/manifests through our binary and through Airbyte's
// runtime side by side: any
// difference the allow-list does not name fails the test with the
// manifest, the stream and the first difference.
func TestDifferential(t *testing.T) {
	from := manifestsDir
	if *dir != "" {
		from = *dir
	}
	files, _ := filepath.Glob(filepath.Join(from, "*.yaml"))
	missing := func(format string, args ...any) {
		if os.Getenv("CI") == "true" {
			t.Fatalf(format, args...)
		}
		t.Skipf(format, args...)
	}
	if len(files) == 0 {
		missing("no manifests: the differential test expects them in %s (beside the repository)", from)
	}
	ref, err := Reference()
	if err != nil {
		missing("%v", err)
	}
	if err := genapi.CheckJinja(); err != nil {
		missing("%v", err)
	}
	allowed, err := LoadAllowed("allowed.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if *dir == "" {
		// The example, and manifests written for the comparison: the
		// components no catalog manifest uses.
		ours, _ := filepath.Glob("testdata/manifests/*.yaml")
		files = append(append(files, "../examples/manifest.yaml"), ours...)
	}
	var chosen []string
	for _, f := range files {
		if *only == "" || strings.Contains(f, *only) {
			chosen = append(chosen, f)
		}
	}
	const workers = 3
	r := NewRunner(build(t), ref, allowed, workers)
	defer r.Close()
	start := time.Now()
	results := make([]Result, len(chosen))
	jobs := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				results[i] = r.Run(chosen[i])
			}
		}()
	}
	for i := range chosen {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	table := Table(results, allowed)
	t.Logf("%d manifests side by side in %.0f s\n%s", len(chosen), time.Since(start).Seconds(), table)
	if *update && *only == "" && *dir == "" {
		if err := UpdateReadme("../README.md", table); err != nil {
			t.Fatal(err)
		}
	}
	for _, res := range results {
		t.Logf("%s: %s in %.0f s", res.Name, res.Outcome(), res.Elapsed.Seconds())
		for _, p := range res.Problems {
			t.Logf("%s: the generic API: %s", res.Name, p)
		}
		for _, d := range res.Differences {
			t.Errorf("%s: %s", res.Name, d)
		}
	}
}

// TestServersSideBySide runs our manifest server (`serve`) and Airbyte's
// (airbyte_cdk.manifest_server) side by side: the same requests for every
// catalog manifest, each server asking its own generic API, and the
// requests every server answers alike (authentication, the request
// models); any difference the allow-list does not name fails the test.
func TestServersSideBySide(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(manifestsDir, "*.yaml"))
	missing := func(format string, args ...any) {
		if os.Getenv("CI") == "true" {
			t.Fatalf(format, args...)
		}
		t.Skipf(format, args...)
	}
	if len(files) == 0 {
		missing("no manifests: the side-by-side test expects them in %s (beside the repository)", manifestsDir)
	}
	ref, err := Reference()
	if err != nil {
		missing("%v", err)
	}
	if err := genapi.CheckJinja(); err != nil {
		missing("%v", err)
	}
	allowed, err := LoadAllowed("allowed.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var servers [2]*ManifestServer
	started := make(chan error, 1)
	go func() {
		var err error
		servers[1], err = StartReferenceServer(ref)
		started <- err
	}()
	servers[0], err = StartOurServer(build(t))
	if err != nil {
		t.Fatal(err)
	}
	defer servers[0].Stop()
	if err := <-started; err != nil {
		t.Fatal(err)
	}
	defer servers[1].Stop()
	var chosen []string
	for _, f := range files {
		if *only == "" || strings.Contains(f, *only) {
			chosen = append(chosen, f)
		}
	}
	start := time.Now()
	results := make([]Result, len(chosen))
	const workers = 3 // the reference's server runs its requests on one core (Python's lock), ours on the other
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				results[i] = CompareServers(chosen[i], servers, allowed)
			}
		}()
	}
	for i := range chosen {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	results = append(results, CompareServerCases(servers, allowed))
	t.Logf("%d manifests and the protocol's cases side by side in %.0f s", len(chosen), time.Since(start).Seconds())
	for _, res := range results {
		t.Logf("%s: %s (%d streams) in %.1f s %v", res.Name, res.Outcome(), res.Streams, res.Elapsed.Seconds(), res.Deliberate)
		for _, p := range res.Problems {
			t.Logf("%s: the generic API: %s", res.Name, p)
		}
		for _, d := range res.Differences {
			t.Errorf("%s: %s", res.Name, d)
		}
	}
}

func build(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "source-declarative")
	if out, err := exec.Command("go", "build", "-o", bin, "..").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}
