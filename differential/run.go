// Package differential runs manifests side by side through our binary and
// through Airbyte's current runtime (../shared/refcdk7), each against its
// own instance of the generic API (genapi), and compares what they request
// and print: SPEC, CONNECTION_STATUS, CATALOG, a read's requests, records,
// states, statuses and errors per stream, and a Connector Builder test read
// of each stream. A difference is either on the allow-list (allowed.yaml:
// what differs on purpose, and why) or a failure.
package differential

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/airbyte-go/source-declarative/components"
	"github.com/airbyte-go/source-declarative/corpus"
	"github.com/airbyte-go/source-declarative/genapi"
	"github.com/airbyte-go/source-declarative/manifest"
)

// Runner runs manifests side by side.
type Runner struct {
	Binary  string // our binary
	Allowed []Entry
	// zygotes run the reference's commands (refcdk7).
	zygotes *zygotes
	// python is the reference's Python, with its airbyte-cdk, through
	// which our binary's components host runs a connector's components.py.
	python string
}

// NewRunner compares our binary with refcdk7, for up to workers manifests
// at a time. Close ends the reference's processes it started.
func NewRunner(binary, refcdk7 string, allowed []Entry, workers int) (*Runner, error) {
	python, err := referencePython(refcdk7)
	if err != nil {
		return nil, err
	}
	return &Runner{Binary: binary, Allowed: allowed, zygotes: newZygotes(refcdk7, workers), python: python}, nil
}

// Close ends the reference's processes and removes the Python wrapper.
func (r *Runner) Close() {
	r.zygotes.close()
	os.RemoveAll(filepath.Dir(r.python))
}

// referencePython writes an interpreter for our components host: a script
// running refcdk7's Python (`refcdk7 --python`), the same airbyte-cdk the
// reference runs components.py with.
func referencePython(refcdk7 string) (string, error) {
	dir, err := os.MkdirTemp("", "differential-python")
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, "python")
	script := "#!/bin/sh\nexec " + refcdk7 + " --python \"$@\"\n"
	return p, os.WriteFile(p, []byte(script), 0o755)
}

// Result is how one manifest compared.
type Result struct {
	Name    string
	Support string // the catalog's support level, "" outside the catalog
	// Refused names the custom components both connectors refuse.
	Refused string
	// Differences are those not on the allow-list; Deliberate those on it,
	// by entry.
	Differences []Difference
	Deliberate  map[string]int
	// Failing says, per command or stream, why it fails on both sides.
	Failing  map[string]string
	Problems []string // what the generic API could not serve
	Streams  int
	Elapsed  time.Duration
}

// Outcome is "same", "deliberate", "failing in both", "refused" or
// "differ".
func (r Result) Outcome() string {
	switch {
	case len(r.Differences) > 0:
		return "differ"
	case r.Refused != "":
		return "refused"
	case len(r.Failing) > 0:
		return "failing in both"
	case len(r.Deliberate) > 0:
		return "deliberate"
	}
	return "same"
}

// run is one manifest's comparison in progress.
type run struct {
	*Runner
	res       *Result
	connector Connector
	sides     [2]*side
	raw       map[string]any
	started   time.Time
	// plan is what both sides' APIs serve, once configured.
	plan *genapi.Plan
	// childNames are the streams reading each parent stream (children),
	// once known.
	childNames map[string][]string
	// refErrors are the reference's errors in the command being compared.
	refErrors []refError
}

// Run compares one connector.
func (r *Runner) Run(c Connector) (res Result) {
	res = Result{Name: c.Name, Support: c.Support, Deliberate: map[string]int{}, Failing: map[string]string{}}
	start := time.Now()
	defer func() { res.Elapsed = time.Since(start) }()
	raw, err := manifest.ReadFile(c.Manifest)
	if err != nil {
		res.Differences = append(res.Differences, Difference{What: "load", Detail: err.Error()})
		return res
	}
	dir, err := os.MkdirTemp("", "differential-"+res.Name)
	if err != nil {
		res.Differences = append(res.Differences, Difference{What: "setup", Detail: err.Error()})
		return res
	}
	if os.Getenv("DIFFERENTIAL_KEEP") == "" {
		defer os.RemoveAll(dir)
	}
	m := &run{Runner: r, res: &res, connector: c, raw: raw, started: start}
	z, err := r.zygotes.get()
	if err != nil {
		res.Differences = append(res.Differences, Difference{What: "setup", Detail: err.Error()})
		return res
	}
	defer r.zygotes.put(z)
	var env []string
	if c.Components != "" {
		env = unsafeCodeEnv
	}
	oursEnv := append([]string{components.PythonEnv + "=" + r.python}, env...)
	m.sides[0] = &side{name: "ours", api: genapi.Start(), dir: filepath.Join(dir, "ours"), launch: ours(r.Binary), env: oursEnv}
	m.sides[1] = &side{name: "reference", api: genapi.Start(), dir: filepath.Join(dir, "reference"), launch: z.launch, env: env}
	for _, s := range m.sides {
		defer s.api.Close()
		os.MkdirAll(s.dir, 0o700)
	}
	m.compare()
	return res
}

// differ records differences, each either allowed (deliberate) or not.
func (m *run) differ(ds ...Difference) {
	for _, d := range ds {
		if id := allowedBy(m.Allowed, m.res.Name, d, m.refErrors); id != "" {
			m.res.Deliberate[id]++
			continue
		}
		m.res.Differences = append(m.res.Differences, d)
	}
}

// note counts a deliberate difference a normalization took away.
func (m *run) note(id string, n int) {
	if n > 0 {
		m.res.Deliberate[id] += n
	}
}

func (m *run) compare() {
	// Each side reads a manifest pointing at its own API.
	for _, s := range m.sides {
		s.manifest = filepath.Join(s.dir, "manifest.json")
		writeJSON(s.manifest, corpus.RewriteURLs(m.raw, s.api.URL))
	}
	specs := m.both(func(s *side) output { return s.command("spec", m.specArgs(s)...) })
	m.differ(compareSpec(specs)...)
	spec := connectionSpec(specs[0])
	if spec == nil {
		return
	}
	configs, manifests, ok := m.configure(spec)
	if !ok {
		return
	}
	for i, s := range m.sides {
		writeJSON(s.manifest, manifests[i])
		s.config = filepath.Join(s.dir, "config.json")
		writeJSON(s.config, configs[i])
	}
	checks := m.both(func(s *side) output { return s.command("check", "--config", s.config, "--manifest", s.manifest) })
	if refused, both := refusal(checks); refused != "" {
		switch {
		case both:
			m.res.Refused = refused
		default:
			m.differ(Difference{What: "check", Detail: "we refuse custom code the reference runs: " + refused})
		}
		return
	}
	m.differ(compareCheck(checks)...)
	if msg, both := failedBoth(checks); both {
		m.failing("check", "", checks, msg)
	}
	discovers := m.both(func(s *side) output {
		return s.command("discover", "--config", s.config, "--manifest", s.manifest)
	})
	m.differ(compareCatalogs(discovers)...)
	if msg, both := failedBoth(discovers); both {
		m.failing("discover", "", discovers, msg)
	}
	streams := catalogStreams(discovers[0])
	m.res.Streams = len(streams)
	if len(streams) == 0 {
		return
	}
	catalog := configuredCatalog(streams)
	catalogPath := filepath.Join(filepath.Dir(m.sides[0].dir), "catalog.json")
	writeJSON(catalogPath, catalog)
	reads := m.both(func(s *side) output {
		return s.command("read", "--config", s.config, "--catalog", catalogPath, "--manifest", s.manifest)
	})
	m.compareRead("read", reads)
	if hasIncremental(catalog) {
		// A cursor ending now, in whole seconds, reads nothing from a state
		// of this same second ([now, now] is no window) and a window once
		// the clock has passed it: each side would read again or not as its
		// clock fell (pingdom, on a loaded machine). The reads from state
		// start in the second after both reads ended.
		time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second)))
		again := m.both(func(s *side) output {
			statePath := filepath.Join(s.dir, "state.json")
			final := reads[indexOf(m.sides, s)].final
			writeJSON(statePath, final)
			out := s.command("read", "--config", s.config, "--catalog", catalogPath, "--state", statePath, "--manifest", s.manifest)
			out.given = final
			return out
		})
		m.compareRead("read from state", again)
	}
	m.testReads(streams, catalog)
}

// specArgs are the arguments of spec: the manifest, and for a connector
// with a components.py a config holding it as the platform injects it, as
// a connector's image has its components.py beside its manifest (the
// reference builds the spec's config rules, which may be custom, with it).
func (m *run) specArgs(s *side) []string {
	args := []string{"--manifest", s.manifest}
	if m.connector.Components == "" {
		return args
	}
	config := map[string]any{}
	if err := injectComponents(config, m.connector.Components); err != nil {
		return args // the configs' injection says so
	}
	path := filepath.Join(s.dir, "spec-config.json")
	writeJSON(path, config)
	return append(args, "--config", path)
}

// configure samples one config from the spec and points it, and the
// manifest, at each side's API; the APIs then answer as the manifest asks
// (genapi's plan). ok is false when the manifest cannot be planned (a
// difference then says why).
func (m *run) configure(spec map[string]any) (configs, manifests [2]map[string]any, ok bool) {
	sampler := &corpus.Sampler{Now: m.started.UTC(), Reads: corpus.ConfigReads(m.raw)}
	sampled := sampler.Config(spec)
	for i, s := range m.sides {
		configs[i] = manifest.DeepCopy(sampled).(map[string]any)
		manifests[i] = corpus.RewriteURLs(m.raw, s.api.URL)
		corpus.PointConfig(manifests[i], configs[i], sampler.Pinned, s.api.URL)
		if m.connector.Components != "" {
			if err := injectComponents(configs[i], m.connector.Components); err != nil {
				m.differ(Difference{What: "setup", Detail: err.Error()})
				return configs, manifests, false
			}
		}
	}
	resolved, err := manifest.ResolveOnly(manifest.DeepCopy(manifests[0]).(map[string]any))
	if err != nil {
		m.differ(Difference{What: "load", Detail: err.Error()})
		return configs, manifests, false
	}
	plan, err := genapi.NewPlan(resolved, asJSON(configs[0]), m.started)
	if err != nil {
		m.res.Problems = append(m.res.Problems, err.Error())
		m.differ(Difference{What: "setup", Detail: err.Error()})
		return configs, manifests, false
	}
	m.res.Problems = plan.Problems
	m.plan = plan
	for _, s := range m.sides {
		s.api.SetPlan(plan)
	}
	return configs, manifests, true
}

// both runs f on each side at once.
func (m *run) both(f func(*side) output) [2]output {
	var outs [2]output
	done := make(chan struct{})
	go func() {
		outs[1] = f(m.sides[1])
		close(done)
	}()
	outs[0] = f(m.sides[0])
	<-done
	for i := range outs {
		normalizeOutput(&outs[i], m.sides[i], m.started)
	}
	m.refErrors = referenceErrors(outs[1], m.children())
	return outs
}

func indexOf(sides [2]*side, s *side) int {
	if sides[0] == s {
		return 0
	}
	return 1
}

// testReads compares a Connector Builder test read of every stream.
func (m *run) testReads(streams []map[string]any, catalog map[string]any) {
	var outs [2][]output
	var errs [2]error
	done := make(chan struct{})
	for i, s := range m.sides {
		var configs, catalogs []string
		for _, st := range streams {
			name := fmt.Sprint(st["name"])
			config := readJSON(s.config)
			config["__injected_declarative_manifest"] = readJSON(s.manifest)
			config["__command"] = "test_read"
			config["__test_read_config"] = map[string]any{"max_records": testReadMaxRecords, "max_pages_per_slice": 5, "max_slices": 5}
			cp := filepath.Join(s.dir, "test-read-"+safeName(name)+".json")
			writeJSON(cp, config)
			kp := filepath.Join(s.dir, "test-read-catalog-"+safeName(name)+".json")
			writeJSON(kp, configuredCatalog([]map[string]any{st}))
			configs, catalogs = append(configs, cp), append(catalogs, kp)
		}
		go func(i int, s *side) {
			ctx, cancel := context.WithTimeout(context.Background(), testReadsTimeout(len(streams)))
			defer cancel()
			outs[i], errs[i] = s.testReads(ctx, configs, catalogs)
			done <- struct{}{}
		}(i, s)
	}
	<-done
	<-done
	for i, err := range errs {
		if err != nil {
			m.differ(Difference{What: "test read", Detail: m.sides[i].name + ": " + err.Error()})
			return
		}
	}
	for j, st := range streams {
		pair := [2]output{outs[0][j], outs[1][j]}
		for i := range pair {
			normalizeOutput(&pair[i], m.sides[i], m.started)
		}
		m.refErrors = referenceErrors(pair[1], m.children())
		m.compareTestRead(fmt.Sprint(st["name"]), pair)
	}
}

// testReadsTimeout bounds the test reads of a connector's streams, one
// command each (each bounded by commandTimeout too): ten minutes and thirty
// seconds a stream. A test read of a stream the CDK reads whole costs seconds
// on each side (bing-ads': 9 s here, 12 s in a fresh reference process, each
// making the connector's 3 dynamic streams), and the whole catalog runs four
// connectors at a time on 2 cores: bing-ads' 77 took most of its 1,429 s,
// under a bound of 1,370 s at ten seconds a stream.
func testReadsTimeout(streams int) time.Duration {
	return 10*time.Minute + time.Duration(streams)*30*time.Second
}

func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == ' ' {
			return '_'
		}
		return r
	}, s)
}

// writeJSON writes v as JSON that YAML reads too: the reference reads its
// --manifest file with PyYAML, which refuses the characters YAML does not
// print (C1 controls such as U+009A in tmdb's translations, U+FFFE) even
// inside a string, where Go's encoder writes them as they are. They are
// written escaped (\u009a), the same text to a JSON reader.
func writeJSON(path string, v any) {
	b, _ := json.Marshal(v)
	os.WriteFile(path, []byte(yamlPrintable(string(b))), 0o600)
}

// yamlPrintable escapes in JSON text the characters outside YAML's
// printable set (they can only be inside strings: JSON's syntax is ASCII).
func yamlPrintable(s string) string {
	var b strings.Builder
	for _, r := range s {
		if (r >= 0x80 && r <= 0x9f && r != 0x85) || r == 0xfffe || r == 0xffff {
			fmt.Fprintf(&b, "\\u%04x", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// asJSON is v as a JSON reader decodes it (numbers float64), as a connector
// reads its config file.
func asJSON(v any) map[string]any {
	b, _ := json.Marshal(v)
	var m map[string]any
	json.Unmarshal(b, &m)
	return m
}

func readJSON(path string) map[string]any {
	b, _ := os.ReadFile(path)
	var m map[string]any
	json.Unmarshal(b, &m)
	return m
}
