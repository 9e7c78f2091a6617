package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/airbyte-go/source-declarative/examples/exampleapi"
)

// startupBench is -mode startup: whole processes of ours (spec without a
// manifest, spec, check and discover of the example manifest against the
// example API served here) against a Go binary that prints one line
// (bench/bare), in pairs whose order is drawn at random, with the median wall
// time of each and the median of the per-pair ratio ours / bare. Ours is
// built as the README builds it (go build: linked with the C library, for
// net's cgo resolver) and as the Dockerfile builds the image's (CGO_ENABLED=0
// -trimpath -ldflags "-s -w": static). Peak RSS is measured in runs of their own.
func startupBench(ours, dir string, pairs int) {
	bare, static := filepath.Join(dir, "bare"), filepath.Join(dir, "source-declarative-static")
	must(exec.Command("go", "build", "-o", bare, "./bench/bare").Run())
	build := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", static, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	must(build.Run())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(err)
	go http.Serve(ln, exampleapi.New(exampleapi.Options{APIKey: "demo-key", Records: 25}))
	config := filepath.Join(dir, "config.json")
	must(os.WriteFile(config, []byte(fmt.Sprintf(`{"base_url":"http://%s","api_key":"demo-key","end_date":"2024-01-08T00:00:00Z"}`, ln.Addr())), 0o600))
	manifest, err := filepath.Abs("examples/manifest.yaml")
	must(err)

	commands := []struct {
		name   string
		args   []string
		output string // what a run that worked prints
	}{
		{"spec (generic)", []string{"spec"}, `"connectionSpecification"`},
		{"spec --manifest", []string{"spec", "--manifest", manifest}, `"connectionSpecification"`},
		{"check", []string{"check", "--manifest", manifest, "--config", config}, `"status":"SUCCEEDED"`},
		{"discover", []string{"discover", "--manifest", manifest, "--config", config}, `"type":"CATALOG"`},
	}
	fmt.Printf("start-up: %d pairs per command, order drawn per pair; wall time (median), ours / bare (median of per-pair ratios), peak RSS\n", pairs)
	fmt.Printf("%-18s %-10s %9s %9s %8s %10s\n", "command", "build", "ours", "bare", "ratio", "peak RSS")
	bareWall, bareRSS := []time.Duration{}, peakRSS(bare)
	for _, c := range commands {
		for _, build := range []struct{ name, binary string }{{"go build", ours}, {"image", static}} {
			out, err := exec.Command(build.binary, c.args...).Output()
			if err != nil || !bytes.Contains(out, []byte(c.output)) {
				fmt.Fprintf(os.Stderr, "%s %s: %v\n%s", build.binary, strings.Join(c.args, " "), err, out)
				os.Exit(1)
			}
			var oursWall []time.Duration
			var ratios []float64
			for range pairs {
				var o, b time.Duration
				if rand.IntN(2) == 0 {
					o, b = wallTime(build.binary, c.args...), wallTime(bare)
				} else {
					b, o = wallTime(bare), wallTime(build.binary, c.args...)
				}
				oursWall, bareWall = append(oursWall, o), append(bareWall, b)
				ratios = append(ratios, o.Seconds()/b.Seconds())
			}
			fmt.Printf("%-18s %-10s %9s %9s %8.2f %8.1fMB\n", c.name, build.name, medianDuration(oursWall), medianDuration(bareWall[len(bareWall)-pairs:]),
				median(ratios), float64(peakRSS(build.binary, c.args...))/1024)
		}
	}
	fmt.Printf("%-18s %-10s %9s %9s %8s %8.1fMB\n", "bare", "go build", "", medianDuration(bareWall), "", float64(bareRSS)/1024)
}

// wallTime runs a command, its output thrown away, and times it from start
// to exit.
func wallTime(name string, args ...string) time.Duration {
	cmd := exec.Command(name, args...)
	start := time.Now()
	must(cmd.Run())
	return time.Since(start)
}

// peakRSS is a command's own peak resident set in kB: its VmHWM read when it
// is about to exit, stopped there by ptrace. (The rusage of a child counts
// this harness's memory, which the child shares until it execs.)
func peakRSS(name string, args ...string) int64 {
	runtime.LockOSThread() // ptrace requests must come from the tracing thread
	defer runtime.UnlockOSThread()
	cmd := exec.Command(name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Ptrace: true}
	must(cmd.Start())
	pid := cmd.Process.Pid
	var status syscall.WaitStatus
	_, err := syscall.Wait4(pid, &status, 0, nil) // stopped at exec
	must(err)
	must(syscall.PtraceSetOptions(pid, syscall.PTRACE_O_TRACEEXIT))
	var peak int64
	for syscall.PtraceCont(pid, 0) == nil {
		if _, err := syscall.Wait4(pid, &status, 0, nil); err != nil || status.Exited() || status.Signaled() {
			break
		}
		if status.StopSignal() == syscall.SIGTRAP && status.TrapCause() == syscall.PTRACE_EVENT_EXIT {
			peak = vmHWM(pid)
		}
	}
	cmd.Wait()
	return peak
}

func vmHWM(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb int64
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(rest, "kB")), &kb)
			return kb
		}
	}
	return 0
}

func medianDuration(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2].Round(100 * time.Microsecond)
}
