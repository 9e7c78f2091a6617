package corpus

import (
	"flag"
	"github.com/airbyte-go/source-declarative/genapi"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "write the corpus table into README.md")

// manifestsDir is where the real manifests live, beside the repository.
const manifestsDir = "../../shared/manifests"

// TestCorpus runs every real manifest through the built binary against the
// generic mock: spec, check, discover, read, then the acceptance checks.
// A manifest that fails fails the test, naming the command and the first
// error line.
func TestCorpus(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(manifestsDir, "*.yaml"))
	missing := func(format string, args ...any) {
		if os.Getenv("CI") == "true" {
			t.Fatalf(format, args...)
		}
		t.Skipf(format, args...)
	}
	if len(files) == 0 {
		missing("no manifests: the corpus expects them in %s (beside the repository)", manifestsDir)
	}
	if err := genapi.CheckJinja(); err != nil {
		missing("%v", err)
	}
	r := &Runner{Binary: built(t), Now: time.Now().UTC(), Timeout: 30 * time.Second}
	start := time.Now()
	outcomes := make([]Outcome, len(files))
	jobs := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < 2*runtime.NumCPU(); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				outcomes[i] = r.Run(files[i])
			}
		}()
	}
	for i := range files {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	wall := time.Since(start)
	table := Table(outcomes)
	t.Logf("corpus of %d manifests in %.1f s\n%s", len(files), wall.Seconds(), table)
	if *update {
		if err := UpdateReadme("../README.md", table); err != nil {
			t.Fatal(err)
		}
	} else if b, err := os.ReadFile("../README.md"); err == nil && !strings.Contains(string(b), table) {
		t.Log("README.md's corpus table is not up to date: go test ./corpus -run TestCorpus -update")
	}
	for _, o := range outcomes {
		if o.Kind == Fail {
			t.Errorf("%s: %s: %s", o.Name, o.Command, o.Detail)
		}
	}
}
