package main

import (
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/airbyte-go/source-declarative/examples/exampleapi"
)

// componentsBench is -mode components: the example connector with two
// custom Python components (examples/components: a CustomRecordExtractor
// and a CustomTransformation) reads records records, by ours (the
// components in the components host, in Airbyte's CDK) and by the reference
// (Airbyte's runtime, the whole connector in Python), rounds times each, in
// an order drawn at random; and, as the baseline of the host's cost, ours on
// the same manifest with the two steps done natively (a DpathExtractor and
// an AddFields writing the same field). The reference runs referenceRuns
// times (a read of 200,000 records takes it about a minute).
func componentsBench(ours, dir string, records, size, pageSize, rounds int, reference string, referenceRuns int) {
	api := exampleapi.New(exampleapi.Options{APIKey: "demo-key", Records: records, RecordSize: size, MaxPage: pageSize})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(err)
	go http.Serve(ln, api)
	url := "http://" + ln.Addr().String()

	example, err := os.ReadFile(filepath.Join("examples", "components", "manifest.yaml"))
	must(err)
	code, err := os.ReadFile(filepath.Join("examples", "components", "components.py"))
	must(err)
	custom := strings.Replace(string(example), "page_size: 10}", fmt.Sprintf("page_size: %d}", pageSize), 1)
	native := strings.NewReplacer(
		"type: CustomRecordExtractor\n          class_name: source_declarative_manifest.components.DataExtractor",
		"type: DpathExtractor\n          field_path: [data]",
		"      - type: CustomTransformation\n        class_name: source_declarative_manifest.components.DisplayName",
		"      - type: AddFields\n        fields: [{path: [display_name], value: \"{{ record['name'] }} <{{ record['email'] }}>\"}]",
	).Replace(custom)
	if native == custom || !strings.Contains(custom, fmt.Sprintf("page_size: %d}", pageSize)) {
		must(fmt.Errorf("examples/components/manifest.yaml is not the manifest this bench rewrites"))
	}
	sum := md5.Sum(code)
	injected, err := json.Marshal(map[string]any{"base_url": url, "api_key": "demo-key",
		"__injected_components_py": string(code), "__injected_components_py_checksums": map[string]string{"md5": hex.EncodeToString(sum[:])}})
	must(err)
	files := map[string]string{
		"custom.yaml": custom, "native.yaml": native, "components.py": string(code),
		"config.json":   fmt.Sprintf(`{"base_url":%q,"api_key":"demo-key"}`, url),
		"injected.json": string(injected),
		"catalog.json":  catalogOf([]string{"users"}),
	}
	for name, content := range files {
		must(os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600))
	}
	path := func(name string) string { return filepath.Join(dir, name) }
	// Custom code runs only as Airbyte lets it; nothing leaves the machine.
	os.Setenv("AIRBYTE_ENABLE_UNSAFE_CODE", "true")
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	must(err)
	closed.Close()
	for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"} {
		os.Setenv(k, "http://"+closed.Addr().String())
	}
	os.Setenv("NO_PROXY", "127.0.0.1,localhost")
	os.Setenv("no_proxy", "127.0.0.1,localhost")

	read := []string{"--config", path("config.json"), "--catalog", path("catalog.json")}
	programs := []program{
		{"ours", append([]string{ours, "read", "--python", pythonOf(reference, dir), "--manifest", path("custom.yaml"), "--components-path", path("components.py")}, read...)},
		{"ours native", append([]string{ours, "read", "--manifest", path("native.yaml")}, read...)},
	}
	if reference != "none" {
		programs = append(programs, program{"reference", []string{reference, "read", "--manifest", path("custom.yaml"), "--config", path("injected.json"), "--catalog", path("catalog.json")}})
	}
	runs := make([][]run, len(programs))
	for i := range max(rounds, referenceRuns) {
		for _, k := range rand.Perm(len(programs)) {
			if (programs[k].name == "reference" && i >= referenceRuns) || (programs[k].name != "reference" && i >= rounds) {
				continue
			}
			r := measureCommand(programs[k].args[0], programs[k].args[1:]...)
			if r.records != int64(records) {
				fmt.Fprintf(os.Stderr, "%s printed %d records, want %d\n", programs[k].name, r.records, records)
				os.Exit(1)
			}
			runs[k] = append(runs[k], r)
		}
	}
	fmt.Printf("components: %d records of ~%d bytes in pages of %d through a custom extractor and a custom transformation (examples/components); %d rounds, the reference %d\n",
		records, size, pageSize, rounds, min(referenceRuns, max(rounds, referenceRuns)))
	fmt.Printf("%-12s %12s %10s %10s %10s %13s %17s\n", "", "records/s", "wall", "CPU", "peak RSS", "first record", "records/s running")
	medians := make([]run, len(programs))
	for k, p := range programs {
		medians[k] = medianRun(runs[k])
		r := medians[k]
		fmt.Printf("%-12s %12.0f %10s %10s %8.1fMB %13s %17.0f\n", p.name, float64(r.records)/r.wall.Seconds(), r.wall.Round(time.Millisecond), r.cpu.Round(time.Millisecond), float64(r.rssKB)/1024,
			r.first.Round(time.Millisecond), r.running())
	}
	hostCost := (medians[0].wall - medians[1].wall) / time.Duration(records)
	fmt.Printf("ours native / ours, records/s (the cost of the two steps in the host): %.2f; the host adds %s a record (%s a page of %d)\n",
		medians[0].wall.Seconds()/medians[1].wall.Seconds(), hostCost, hostCost*time.Duration(pageSize), pageSize)
	if len(programs) > 2 {
		fmt.Printf("ours / reference, records/s: %.1f (per CPU second: %.1f); once running (first record to last): %.1f\n",
			medians[2].wall.Seconds()/medians[0].wall.Seconds(), medians[2].cpu.Seconds()/medians[0].cpu.Seconds(), medians[0].running()/medians[2].running())
	}
}

// pythonOf is the reference's Python, which has Airbyte's CDK, as one
// executable for our --python: a script in dir running `refcdk7 --python`.
// Without the reference, python3 on PATH (it must import airbyte_cdk 7.x).
func pythonOf(reference, dir string) string {
	if reference == "none" {
		return "python3"
	}
	p := filepath.Join(dir, "python")
	must(os.WriteFile(p, []byte(fmt.Sprintf("#!/bin/sh\nexec %q --python \"$@\"\n", reference)), 0o700))
	return p
}
