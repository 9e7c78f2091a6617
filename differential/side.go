package differential

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/airbyte-go/source-declarative/genapi"
	"github.com/airbyte-go/source-declarative/manifest"
)

// side is one connector of the comparison, with its own instance of the
// generic API and its own files.
type side struct {
	name     string // "ours" or "reference"
	api      *genapi.API
	dir      string
	manifest string // the manifest pointing at api
	config   string // the sampled config pointing at api
	launch   launcher
	env      []string // what the connector's processes get besides Offline's environment
}

// launcher runs one command of a connector: kind "command" (spec, check,
// discover or read with their arguments) or "test-read" (a Connector Builder
// test read: `read` of a config holding the manifest and __command), in
// genapi.Offline's environment with env added. err is for a command that
// could not be run; an exit code is no error.
type launcher func(ctx context.Context, kind string, args, env []string) (stdout []byte, stderr string, code int, err error)

// output is what one command printed, and the API's exchanges while it ran.
type output struct {
	code int
	msgs []map[string]any
	bad  string // the first stdout line that is not an Airbyte message
	// final is each stream's last STATE as printed (not normalized): what
	// a read from state starts from.
	final []any
	// given is the state the command started from (nil: none), as given.
	given     []any
	stderr    string
	exchanges []genapi.Exchange
	// stopped says why the command did not end by itself ("" when it did).
	stopped string
}

// commandTimeout bounds one command of either connector.
const commandTimeout = 2 * time.Minute

// command runs one command (spec, check, discover, read) with args.
func (s *side) command(name string, args ...string) output {
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	out, err := s.run(ctx, "command", name, append([]string{name}, args...))
	out.final = manifest.DeepCopy(finalStates(out)).([]any) // normalized in place later
	switch {
	case out.stopped != "":
		out.stderr = out.stopped
	case ctx.Err() != nil:
		out.code, out.stderr = -1, fmt.Sprintf("timed out after %s", commandTimeout)
		out.stopped = out.stderr
	case err != nil:
		out.code, out.stderr = -1, err.Error()
	}
	return out
}

// testReads runs builder test reads, one per config file, in order.
func (s *side) testReads(ctx context.Context, configs, catalogs []string) ([]output, error) {
	outs := make([]output, len(configs))
	for i := range configs {
		var err error
		if outs[i], err = s.run(ctx, "test-read", "test-read", []string{"read", "--config", configs[i], "--catalog", catalogs[i]}); err != nil {
			return nil, err
		}
	}
	return outs, nil
}

// requestLimit bounds the requests of one command: a connector past it
// does not end (it asks for pages forever) and is stopped, so that its
// output stays small (a reference looping for two minutes printed 130,000
// records, and the comparison held them all).
const requestLimit = 5000

// run launches one command of kind and collects what it printed and the
// API's exchanges while it ran; name names its kept output. A command past
// requestLimit requests is stopped (output.stopped says so).
func (s *side) run(ctx context.Context, kind, name string, args []string) (output, error) {
	before := s.api.Count()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	overLimit := make(chan bool, 1)
	go func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				overLimit <- false
				return
			case <-tick.C:
				if s.api.Count()-before > requestLimit {
					cancel()
					overLimit <- true
					return
				}
			}
		}
	}()
	stdout, stderr, code, err := s.launch(ctx, kind, args, s.env)
	cancel()
	out := parseOutput(stdout)
	out.stderr, out.code = stderr, code
	if <-overLimit {
		out.code, out.stopped, err = -1, fmt.Sprintf("stopped after more than %d requests", requestLimit), nil
	}
	out.exchanges = s.api.Exchanges()[before:]
	s.keep(name, stdout, stderr, out.exchanges)
	return out, err
}

// keep writes a command's stdout, and beside it its stderr (.err) and the
// requests the API received with its status, stream and page (.requests),
// into the side's files when DIFFERENTIAL_KEEP is set (the files are then
// left in place), to look at.
func (s *side) keep(name string, stdout []byte, stderr string, exchanges []genapi.Exchange) {
	if os.Getenv("DIFFERENTIAL_KEEP") == "" {
		return
	}
	f, _ := os.CreateTemp(s.dir, name+"-*.out")
	f.Write(stdout)
	f.Close()
	var lines []string
	for _, e := range exchanges {
		lines = append(lines, fmt.Sprintf("%d %s page %d: %s", e.Status, e.Endpoint, e.Page, requestKey(e)))
	}
	base := strings.TrimSuffix(f.Name(), ".out")
	os.WriteFile(base+".requests", []byte(strings.Join(lines, "\n")+"\n"), 0o600)
	os.WriteFile(base+".err", []byte(stderr), 0o600)
}

func parseOutput(stdout []byte) output {
	var out output
	for _, line := range strings.Split(string(stdout), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var msg map[string]any
		if json.Unmarshal([]byte(line), &msg) != nil || msg["type"] == nil {
			if out.bad == "" {
				out.bad = line
			}
			continue
		}
		out.msgs = append(out.msgs, msg)
	}
	return out
}

// ours runs the binary under test: `BIN CMD ARGS...`, a test read too.
func ours(binary string) launcher {
	return func(ctx context.Context, _ string, args, env []string) ([]byte, string, int, error) {
		cmd := exec.CommandContext(ctx, binary, args...)
		cmd.Env = append(genapi.Offline(os.Environ()), env...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return stdout.Bytes(), stderr.String(), ee.ExitCode(), nil
		}
		return stdout.Bytes(), stderr.String(), 0, err
	}
}

// Reference finds Airbyte's runtime built by ../shared/refcdk7/build.sh:
// $REFCDK7/refcdk7, else ~/.cache/refcdk7/refcdk7.
func Reference() (string, error) {
	dir := os.Getenv("REFCDK7")
	if dir == "" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".cache", "refcdk7")
	}
	p := filepath.Join(dir, "refcdk7")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("the reference is not built at %s: run bash ../shared/refcdk7/build.sh", p)
	}
	return p, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
