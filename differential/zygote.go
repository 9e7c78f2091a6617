package differential

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"github.com/airbyte-go/source-declarative/genapi"
)

// zygote is one process of Airbyte's runtime that has imported the CDK and
// forks a child per command (testdata/zygote.py): each command runs as a
// fresh `refcdk7` process would, without the ~2 s of imports a Python
// process spends first. One zygote runs one command at a time.
type zygote struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	dir    string // its stderr and the children's output files
	errs   *os.File
	broken bool
}

func startZygote(refcdk7 string) (*zygote, error) {
	_, file, _, _ := runtime.Caller(0)
	dir, err := os.MkdirTemp("", "refcdk7-zygote-")
	if err != nil {
		return nil, err
	}
	z := &zygote{dir: dir}
	z.cmd = exec.Command(refcdk7, "--python", filepath.Join(filepath.Dir(file), "testdata", "zygote.py"))
	z.cmd.Env = genapi.Offline(os.Environ()) // inherited by every command's child
	if z.errs, err = os.Create(filepath.Join(dir, "zygote.stderr")); err != nil {
		return nil, err
	}
	z.cmd.Stderr = z.errs
	if z.in, err = z.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := z.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	z.out = bufio.NewReader(out)
	if err := z.cmd.Start(); err != nil {
		return nil, err
	}
	return z, nil
}

// launch runs one command in a child of the zygote, with env added to its
// environment; the child is killed when ctx ends.
func (z *zygote) launch(ctx context.Context, kind string, args, env []string) ([]byte, string, int, error) {
	if z.broken {
		return nil, "", 0, fmt.Errorf("the reference's zygote stopped: %s", z.lastErrors())
	}
	stdout, stderr := filepath.Join(z.dir, "stdout"), filepath.Join(z.dir, "stderr")
	vars := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	req, _ := json.Marshal(map[string]any{"kind": kind, "args": args, "env": vars, "stdout": stdout, "stderr": stderr})
	if _, err := z.in.Write(append(req, '\n')); err != nil {
		return nil, "", 0, z.fail(err)
	}
	pid, err := z.answer("@@PID@@ ")
	if err != nil {
		return nil, "", 0, z.fail(err)
	}
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			syscall.Kill(pid, syscall.SIGKILL)
		case <-done:
		}
	}()
	code, err := z.answer("@@DONE@@ ")
	close(done)
	if err != nil {
		return nil, "", 0, z.fail(err)
	}
	out, _ := os.ReadFile(stdout)
	errText, _ := os.ReadFile(stderr)
	return out, string(errText), code, nil
}

// answer reads the zygote's next line, which must start with prefix and
// hold a number.
func (z *zygote) answer(prefix string) (int, error) {
	line, err := z.out.ReadString('\n')
	if err != nil {
		return 0, err
	}
	n, ok := strings.CutPrefix(strings.TrimSpace(line), prefix)
	if !ok {
		return 0, fmt.Errorf("unexpected line %q", line)
	}
	return strconv.Atoi(n)
}

func (z *zygote) fail(err error) error {
	z.broken = true
	return fmt.Errorf("the reference's zygote: %v: %s", err, z.lastErrors())
}

func (z *zygote) lastErrors() string {
	b, _ := os.ReadFile(filepath.Join(z.dir, "zygote.stderr"))
	return lastLines(string(b), 5)
}

// close ends the zygote and removes its files.
func (z *zygote) close() {
	z.in.Close()
	z.cmd.Wait()
	z.errs.Close()
	os.RemoveAll(z.dir)
}

// zygotes lends each manifest's comparison a zygote of its own, started
// when none is free, restarted when one broke.
type zygotes struct {
	refcdk7 string
	free    chan *zygote
}

func newZygotes(refcdk7 string, n int) *zygotes {
	return &zygotes{refcdk7: refcdk7, free: make(chan *zygote, n)}
}

func (p *zygotes) get() (*zygote, error) {
	select {
	case z := <-p.free:
		return z, nil
	default:
		return startZygote(p.refcdk7)
	}
}

func (p *zygotes) put(z *zygote) {
	if z.broken {
		z.close()
		return
	}
	select {
	case p.free <- z:
	default:
		z.close()
	}
}

// close ends every free zygote.
func (p *zygotes) close() {
	for {
		select {
		case z := <-p.free:
			z.close()
		default:
			return
		}
	}
}
