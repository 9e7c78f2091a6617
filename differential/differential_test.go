package differential

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airbyte-go/source-declarative/genapi"
)

var (
	update = flag.Bool("update", false, "write the differential table into README.md (with DIFFERENTIAL_CATALOG=all)")
	only   = flag.String("only", "", "compare only the manifests whose name matches this regular expression")
	dir    = flag.String("dir", "", "compare the manifests of this folder instead of the catalog's and the example (README's table is then left alone)")
	keep   = flag.String("results", "", "keep each manifest's result in this folder as soon as it is compared, and make -update's table of every result kept there: the catalog run in chunks (-only)")
	again  = flag.Int("again", 0, "compare a manifest that differed up to this many times more; the last comparison counts")
)

// manifestsDir is where the curated manifests live, beside the repository;
// catalogDir Airbyte's catalog of connectors.
const (
	manifestsDir = "../../shared/manifests"
	catalogDir   = "../../shared/catalog"
)

// catalogSample are the catalog's connectors compared by default (README's
// test command, a minute or two more), each for a rule the catalog brought:
// components.py through the components host (alpha-vantage), a page token
// deep in a JSON body (apple-search-ads), a slice's state at its end
// (aircall), a connector the same in every part (awin-advertiser).
// DIFFERENTIAL_CATALOG=all compares every one (README, The whole catalog).
var catalogSample = []string{"source-aircall", "source-alpha-vantage", "source-apple-search-ads", "source-awin-advertiser"}

// missingFunc says a prerequisite (../shared, the reference, Jinja2) is
// missing: the test skips, or fails under CI=true.
func missingFunc(t *testing.T) func(format string, args ...any) {
	return func(format string, args ...any) {
		if os.Getenv("CI") == "true" {
			t.Fatalf(format, args...)
		}
		t.Skipf(format, args...)
	}
}

// sideBySide is what a side-by-side test needs beside its manifests:
// Airbyte's runtime, the Jinja2 the generic API reads templates with, and
// the allow-list.
func sideBySide(t *testing.T, missing func(format string, args ...any)) (ref string, allowed []Entry) {
	t.Helper()
	ref, err := Reference()
	if err != nil {
		missing("%v", err)
	}
	if err := genapi.CheckJinja(); err != nil {
		missing("%v", err)
	}
	allowed, err = LoadAllowed("allowed.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return ref, allowed
}

// TestDifferential runs every curated manifest, the example manifest, those
// of testdata/manifests and the connectors of the catalog (a sample, or
// every one with DIFFERENTIAL_CATALOG=all) through our binary and through
// Airbyte's runtime side by side: any difference the allow-list does not
// name fails the test with the manifest, the stream and the first
// difference.
func TestDifferential(t *testing.T) {
	missing := missingFunc(t)
	var connectors []Connector
	whole := os.Getenv("DIFFERENTIAL_CATALOG") == "all"
	if *dir != "" {
		connectors = ManifestFiles(*dir)
	} else {
		connectors = ManifestFiles(manifestsDir)
		if len(connectors) == 0 {
			missing("no manifests: the differential test expects them in %s (beside the repository)", manifestsDir)
		}
		catalog, err := Catalog(catalogDir)
		if err != nil || len(catalog) == 0 {
			missing("no catalog: the differential test expects it in %s (beside the repository): %v", catalogDir, err)
		}
		// The example, and manifests written for the comparison: the
		// components no catalog manifest uses.
		connectors = append(connectors, Connector{Name: "manifest", Manifest: "../examples/manifest.yaml"})
		connectors = append(connectors, ManifestFiles("testdata/manifests")...)
		for _, c := range catalog {
			if whole || slices.Contains(catalogSample, c.Name) {
				connectors = append(connectors, c)
			}
		}
	}
	if len(connectors) == 0 {
		missing("no manifests in %s", *dir)
	}
	ref, allowed := sideBySide(t, missing)
	pick, err := regexp.Compile(*only)
	if err != nil {
		t.Fatalf("-only: %v", err)
	}
	var chosen []Connector
	for _, c := range connectors {
		if pick.MatchString(c.Name) {
			chosen = append(chosen, c)
		}
	}
	workers := 3
	if n, err := strconv.Atoi(os.Getenv("DIFFERENTIAL_WORKERS")); err == nil && n > 0 {
		workers = n
	}
	r, err := NewRunner(build(t), ref, allowed, workers)
	if err != nil {
		t.Fatal(err)
	}
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
				// A difference of our runtime comes back when compared
				// again; one of the clocks (a second crossed by one side's
				// read only) seldom does. Each one is logged.
				for n := 0; n < *again && len(results[i].Differences) > 0; n++ {
					t.Logf("%s: %s; compared again", results[i].Name, results[i].Differences[0])
					results[i] = r.Run(chosen[i])
				}
				if *keep != "" {
					if err := KeepResults(*keep, results[i:i+1]); err != nil {
						t.Error(err)
					}
				}
			}
		}()
	}
	for i := range chosen {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	table := Table(results, allowed)
	t.Logf("%d manifests side by side in %.0f s (%d at a time)\n%s", len(chosen), time.Since(start).Seconds(), workers, table)
	if *update {
		switch {
		case *keep != "" && *dir == "":
			kept, err := KeptResults(*keep)
			if err != nil {
				t.Fatal(err)
			}
			table = Table(kept, allowed)
		case *only != "" || *dir != "" || !whole:
			t.Fatal("-update writes the whole table: run it with DIFFERENTIAL_CATALOG=all, without -only or -dir, or with -results DIR after the chunks")
		}
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
	missing := missingFunc(t)
	if len(files) == 0 {
		missing("no manifests: the side-by-side test expects them in %s (beside the repository)", manifestsDir)
	}
	ref, allowed := sideBySide(t, missing)
	var servers [2]*ManifestServer
	started := make(chan error, 1)
	go func() {
		var err error
		servers[1], err = StartReferenceServer(ref)
		started <- err
	}()
	var err error
	if servers[0], err = StartOurServer(build(t)); err != nil {
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
