package differential

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/airbyte-go/source-declarative/genapi"
)

// side is one connector of the comparison, with its own instance of the
// generic API and its own files.
type side struct {
	name     string // "ours" or "reference"
	api      *genapi.API
	dir      string
	manifest string // the manifest pointing at api
	config   string // the sampled config pointing at api
	run      func(ctx context.Context, args []string) *exec.Cmd
	// testReads runs builder test reads, one per config file, in order.
	testReads func(ctx context.Context, configs, catalogs []string) ([]output, error)
}

// output is what one command printed, and the API's exchanges while it ran.
type output struct {
	code      int
	msgs      []map[string]any
	bad       string // the first stdout line that is not an Airbyte message
	stderr    string
	exchanges []genapi.Exchange
}

// commandTimeout bounds one command of either connector.
const commandTimeout = 2 * time.Minute

// command runs one command (spec, check, discover, read) with args.
func (s *side) command(name string, args ...string) output {
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	before := len(s.api.Exchanges())
	cmd := s.run(ctx, append([]string{name}, args...))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	out := parseOutput(stdout.Bytes())
	out.stderr = stderr.String()
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		out.code, out.stderr = -1, fmt.Sprintf("timed out after %s", commandTimeout)
	case errors.As(err, &ee):
		out.code = ee.ExitCode()
	case err != nil:
		out.code, out.stderr = -1, err.Error()
	}
	out.exchanges = s.api.Exchanges()[before:]
	s.keep(name, stdout.Bytes())
	return out
}

// keep writes a command's stdout beside the side's files when
// DIFFERENTIAL_KEEP is set (the files are then left in place), to look at.
func (s *side) keep(name string, stdout []byte) {
	if os.Getenv("DIFFERENTIAL_KEEP") != "" {
		f, _ := os.CreateTemp(s.dir, name+"-*.out")
		f.Write(stdout)
		f.Close()
	}
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

// ours runs the binary under test: `BIN CMD ARGS... --manifest M`, and a
// test read as `BIN read` of a config holding the manifest and __command.
func ours(binary string) (func(ctx context.Context, args []string) *exec.Cmd, func(*side) func(context.Context, []string, []string) ([]output, error)) {
	run := func(ctx context.Context, args []string) *exec.Cmd {
		return exec.CommandContext(ctx, binary, args...)
	}
	testReads := func(s *side) func(context.Context, []string, []string) ([]output, error) {
		return func(ctx context.Context, configs, catalogs []string) ([]output, error) {
			outs := make([]output, len(configs))
			for i := range configs {
				before := len(s.api.Exchanges())
				cmd := exec.CommandContext(ctx, binary, "read", "--config", configs[i], "--catalog", catalogs[i])
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				err := cmd.Run()
				outs[i] = parseOutput(stdout.Bytes())
				outs[i].stderr = stderr.String()
				s.keep("test-read", stdout.Bytes())
				var ee *exec.ExitError
				if errors.As(err, &ee) {
					outs[i].code = ee.ExitCode()
				} else if err != nil {
					return nil, err
				}
				outs[i].exchanges = s.api.Exchanges()[before:]
			}
			return outs, nil
		}
	}
	return run, testReads
}

// reference runs Airbyte's runtime (../shared/refcdk7): `refcdk7 --manifest
// M CMD ARGS...`, and test reads through the builder's handle_request, all of
// one manifest in one process (testdata/builder_batch.py).
func reference(refcdk7 string) (func(ctx context.Context, args []string) *exec.Cmd, func(*side) func(context.Context, []string, []string) ([]output, error)) {
	run := func(ctx context.Context, args []string) *exec.Cmd {
		return exec.CommandContext(ctx, refcdk7, args...)
	}
	testReads := func(s *side) func(context.Context, []string, []string) ([]output, error) {
		return func(ctx context.Context, configs, catalogs []string) ([]output, error) {
			_, file, _, _ := runtime.Caller(0)
			cmd := exec.CommandContext(ctx, refcdk7, "--python", filepath.Join(filepath.Dir(file), "testdata", "builder_batch.py"))
			var in bytes.Buffer
			for i := range configs {
				line, _ := json.Marshal([]string{"read", "--config", configs[i], "--catalog", catalogs[i]})
				in.Write(append(line, '\n'))
			}
			cmd.Stdin = &in
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				return nil, err
			}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			before := len(s.api.Exchanges())
			if err := cmd.Start(); err != nil {
				return nil, err
			}
			var outs []output
			sc := bufio.NewScanner(stdout)
			sc.Buffer(make([]byte, 1<<20), 256<<20)
			for sc.Scan() {
				line, ok := strings.CutPrefix(sc.Text(), "@@ANSWER@@")
				if !ok {
					continue
				}
				o := parseOutput([]byte(line))
				s.keep("test-read", []byte(line))
				all := s.api.Exchanges()
				o.exchanges = all[before:]
				before = len(all)
				outs = append(outs, o)
			}
			if err := cmd.Wait(); err != nil || len(outs) != len(configs) {
				return nil, fmt.Errorf("builder_batch.py: %v (%d answers for %d requests): %s", err, len(outs), len(configs), lastLines(stderr.String(), 5))
			}
			return outs, nil
		}
	}
	return run, testReads
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
