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
// -trimpath -ldflags "-s -w": static). The floors below ours, measured the
// same way: ours printing its version (every package linked and initialised,
// no command run), and bench/barehttp, which links net/http and crypto/tls as
// any connector must, printing one line or making check's one GET. Peak RSS is
// measured in runs of their own. Last, the reference runtime (Airbyte's
// Python CDK, ../shared/refcdk7) runs spec, check and discover of the same
// manifest and config, and ours (the image's build) is compared with it.
func startupBench(ours, dir string, pairs int, reference string, referenceRuns int) {
	bare := filepath.Join(dir, "bare")
	must(exec.Command("go", "build", "-o", bare, "./bench/bare").Run())
	static := filepath.Join(dir, "source-declarative-static")
	imageBuild(static, ".")
	barehttp, barehttpStatic := filepath.Join(dir, "barehttp"), filepath.Join(dir, "barehttp-static")
	must(exec.Command("go", "build", "-o", barehttp, "./bench/barehttp").Run())
	imageBuild(barehttpStatic, "./bench/barehttp")

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(err)
	go http.Serve(ln, exampleapi.New(exampleapi.Options{APIKey: "demo-key", Records: 25}))
	url := "http://" + ln.Addr().String()
	config := filepath.Join(dir, "config.json")
	must(os.WriteFile(config, []byte(fmt.Sprintf(`{"base_url":%q,"api_key":"demo-key","end_date":"2024-01-08T00:00:00Z"}`, url)), 0o600))
	manifest, err := filepath.Abs("examples/manifest.yaml")
	must(err)

	type build struct{ name, binary string }
	builds := []build{{"go build", ours}, {"image", static}}
	rows := []struct {
		name   string
		builds []build
		args   []string
		output string // what a run that worked prints on stdout
	}{
		{"spec (generic)", builds, []string{"spec"}, `"connectionSpecification"`},
		{"spec --manifest", builds, []string{"spec", "--manifest", manifest}, `"connectionSpecification"`},
		{"check", builds, []string{"check", "--manifest", manifest, "--config", config}, `"status":"SUCCEEDED"`},
		{"discover", builds, []string{"discover", "--manifest", manifest, "--config", config}, `"type":"CATALOG"`},
		{"floor: ours, --version", builds, []string{"--version"}, ""},
		{"floor: net/http", []build{{"go build", barehttp}, {"image", barehttpStatic}}, nil, `"bare"`},
		{"floor: one GET", []build{{"go build", barehttp}, {"image", barehttpStatic}}, []string{url + "/v1/users?limit=10&offset=0"}, "\n"},
	}
	fmt.Printf("start-up: %d pairs per row, order drawn per pair; wall time (median), ours / bare (median of per-pair ratios), peak RSS\n", pairs)
	fmt.Printf("%-24s %-10s %9s %9s %8s %10s\n", "command", "build", "ours", "bare", "ratio", "peak RSS")
	var bareWall []time.Duration
	for _, row := range rows {
		for _, b := range row.builds {
			out, err := exec.Command(b.binary, row.args...).Output()
			if err != nil || !bytes.Contains(out, []byte(row.output)) {
				fmt.Fprintf(os.Stderr, "%s %s: %v\n%s", b.binary, strings.Join(row.args, " "), err, out)
				os.Exit(1)
			}
			var oursWall, pairBare []time.Duration
			var ratios []float64
			for range pairs {
				var o, w time.Duration
				if rand.IntN(2) == 0 {
					o, w = wallTime(b.binary, row.args...), wallTime(bare)
				} else {
					w, o = wallTime(bare), wallTime(b.binary, row.args...)
				}
				oursWall, pairBare = append(oursWall, o), append(pairBare, w)
				ratios = append(ratios, o.Seconds()/w.Seconds())
			}
			bareWall = append(bareWall, pairBare...)
			fmt.Printf("%-24s %-10s %9s %9s %8.2f %8.1fMB\n", row.name, b.name, medianDuration(oursWall), medianDuration(pairBare),
				median(ratios), float64(peakRSS(b.binary, row.args...))/1024)
		}
	}
	fmt.Printf("%-24s %-10s %9s %9s %8s %8.1fMB\n", "bare", "go build", "", medianDuration(bareWall), "", float64(peakRSS(bare))/1024)
	referenceBench(reference, referenceRuns, static, manifest, config)
}

// referenceBench times the reference's spec, check and discover of the
// manifest against ours (the image's build), in pairs whose order is drawn
// at random: median wall times, the median of the per-pair ratios reference
// / ours (how many times faster ours is), and the reference's peak RSS.
func referenceBench(reference string, runs int, ours, manifest, config string) {
	if _, err := os.Stat(reference); err != nil {
		fmt.Printf("reference: skipped, %s is not there (../shared/refcdk7/build.sh builds it)\n", reference)
		return
	}
	fmt.Printf("reference (%s): %d pairs per command with ours (image); wall time (median), reference / ours (median of per-pair ratios), peak RSS\n", reference, runs)
	fmt.Printf("%-24s %9s %9s %8s %10s\n", "command", "reference", "ours", "ratio", "peak RSS")
	for _, row := range []struct {
		name      string
		reference []string
		ours      []string
		output    string
	}{
		{"spec --manifest", []string{"--manifest", manifest, "spec"}, []string{"spec", "--manifest", manifest}, `"connectionSpecification"`},
		{"check", []string{"check", "--manifest", manifest, "--config", config}, []string{"check", "--manifest", manifest, "--config", config}, `"status":"SUCCEEDED"`},
		{"discover", []string{"discover", "--manifest", manifest, "--config", config}, []string{"discover", "--manifest", manifest, "--config", config}, `"type":"CATALOG"`},
	} {
		out, err := exec.Command(reference, row.reference...).Output()
		if err != nil || !bytes.Contains(out, []byte(row.output)) {
			fmt.Printf("%-24s the reference failed (%v): %.300s\n", row.name, err, out)
			continue
		}
		var refWall, oursWall []time.Duration
		var ratios []float64
		for range runs {
			var r, o time.Duration
			if rand.IntN(2) == 0 {
				r, o = wallTime(reference, row.reference...), wallTime(ours, row.ours...)
			} else {
				o, r = wallTime(ours, row.ours...), wallTime(reference, row.reference...)
			}
			refWall, oursWall = append(refWall, r), append(oursWall, o)
			ratios = append(ratios, r.Seconds()/o.Seconds())
		}
		fmt.Printf("%-24s %9s %9s %7.1f× %8.1fMB\n", row.name, medianDuration(refWall), medianDuration(oursWall), median(ratios),
			float64(peakRSS(reference, row.reference...))/1024)
	}
}

// imageBuild builds a package as the Dockerfile builds the image's binary.
func imageBuild(out, pkg string) {
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	must(cmd.Run())
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
