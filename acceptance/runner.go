package acceptance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// Runner runs the acceptance tests against a connector command.
type Runner struct {
	Connector []string          // the command and its leading arguments, e.g. ./source-declarative --manifest m.yaml
	BaseDir   string            // relative paths of the config resolve here
	Vars      map[string]string // ${NAME} in config files is replaced by Vars[NAME]
	Timeout   time.Duration

	failures []string
	passed   int
	secrets  []string
	dir      string
}

// Result lists what failed and how many checks passed.
type Result struct {
	Failures []string
	Passed   int
}

// Run runs every suite of cfg.
func (r *Runner) Run(cfg *Config) Result {
	r.failures, r.passed = nil, 0
	dir, err := os.MkdirTemp("", "acceptance")
	if err != nil {
		return Result{Failures: []string{err.Error()}}
	}
	defer os.RemoveAll(dir)
	r.dir = dir
	t := cfg.Tests
	r.spec(t.Spec, t.Connection)
	if t.Connection != nil {
		for _, tc := range t.Connection.Tests {
			r.connection(tc)
		}
	}
	schemas := map[string]any{}
	if t.Discovery != nil {
		for _, tc := range t.Discovery.Tests {
			for k, v := range r.discovery(tc) {
				schemas[k] = v
			}
		}
	}
	if t.BasicRead != nil {
		for _, tc := range t.BasicRead.Tests {
			r.basicRead(tc, schemas)
		}
	}
	if t.FullRefresh != nil {
		for _, tc := range t.FullRefresh.Tests {
			r.fullRefresh(tc)
		}
	}
	if t.Incremental != nil {
		for _, tc := range t.Incremental.Tests {
			r.incremental(tc)
		}
	}
	return Result{Failures: r.failures, Passed: r.passed}
}

func (r *Runner) check(ok bool, format string, args ...any) bool {
	if ok {
		r.passed++
	} else {
		r.failures = append(r.failures, fmt.Sprintf(format, args...))
	}
	return ok
}

// output is one connector run.
type output struct {
	code  int
	msgs  []map[string]any
	lines []string
}

func (o output) ofType(t string) []map[string]any {
	var out []map[string]any
	for _, m := range o.msgs {
		if m["type"] == t {
			out = append(out, m)
		}
	}
	return out
}

var varRef = regexp.MustCompile(`\$\{([A-Z_][A-Z0-9_]*)\}`)

// file reads a file of the test config (relative to BaseDir), with ${VARS}
// replaced, and writes it to the work dir for the connector.
func (r *Runner) file(path string) (string, []byte, error) {
	if !filepath.IsAbs(path) {
		path = filepath.Join(r.BaseDir, path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", nil, err
	}
	b = varRef.ReplaceAllFunc(b, func(m []byte) []byte {
		if v, ok := r.Vars[string(m[2:len(m)-1])]; ok {
			return []byte(v)
		}
		return m
	})
	out := filepath.Join(r.dir, fmt.Sprintf("%d-%s", time.Now().UnixNano(), filepath.Base(path)))
	return out, b, os.WriteFile(out, b, 0o600)
}

// run runs the connector; every stdout line must be an Airbyte message and
// no secret may appear outside RECORD and CONTROL messages.
func (r *Runner) run(what string, args ...string) output {
	timeout := r.Timeout
	if timeout == 0 {
		timeout = 5 * time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.Connector[0], append(append([]string{}, r.Connector[1:]...), args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	out := output{}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		out.code = ee.ExitCode()
	} else if err != nil {
		r.check(false, "%s: cannot run the connector: %v", what, err)
		out.code = -1
		return out
	}
	for _, line := range strings.Split(strings.TrimRight(stdout.String(), "\n"), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) != nil || m["type"] == nil {
			r.check(false, "%s: stdout line is not an Airbyte message: %.120s", what, line)
			continue
		}
		out.msgs = append(out.msgs, m)
		out.lines = append(out.lines, line)
		if m["type"] == "RECORD" || m["type"] == "CONTROL" {
			continue
		}
		for _, s := range r.secrets {
			if strings.Contains(line, s) {
				r.check(false, "%s: a secret value appears in a %s message", what, m["type"])
			}
		}
	}
	return out
}

func (r *Runner) spec(suite, connection *Suite) {
	out := r.run("spec", "spec")
	specs := out.ofType("SPEC")
	r.check(out.code == 0, "spec: exit code %d, want 0", out.code)
	if !r.check(len(specs) == 1, "spec: %d SPEC messages, want exactly 1", len(specs)) {
		return
	}
	spec, _ := specs[0]["spec"].(map[string]any)
	cs, _ := spec["connectionSpecification"].(map[string]any)
	if _, err := compile(cs, false); !r.check(err == nil, "spec: connectionSpecification is not a valid draft-07 schema: %v", err) {
		return
	}
	r.checkSecretsMarked(cs, "")
	if suite != nil {
		for _, tc := range suite.Tests {
			if tc.SpecPath == "" {
				continue
			}
			_, b, err := r.file(tc.SpecPath)
			if !r.check(err == nil, "spec: cannot read %s: %v", tc.SpecPath, err) {
				continue
			}
			var want any
			json.Unmarshal(b, &want)
			r.check(reflect.DeepEqual(normalize(want), normalize(spec)), "spec: the SPEC differs from %s", tc.SpecPath)
		}
	}
	if connection != nil {
		s, _ := compile(cs, false) // formats are annotations for configs, as the CDK validates them
		for _, tc := range connection.Tests {
			_, b, err := r.file(tc.ConfigPath)
			if err != nil {
				continue
			}
			var cfg map[string]any
			json.Unmarshal(b, &cfg)
			r.secrets = append(r.secrets, secretValues(cs, cfg)...)
			if tc.Status == "succeed" && s != nil {
				for k := range cfg {
					if strings.HasPrefix(k, "_") {
						delete(cfg, k)
					}
				}
				err := s.Validate(cfg)
				r.check(err == nil, "spec: config %s does not match the spec: %v", tc.ConfigPath, err)
			}
		}
	}
}

var secretNames = map[string]bool{"client_token": true, "access_token": true, "api_token": true, "token": true, "secret": true, "client_secret": true,
	"password": true, "key": true, "service_account_info": true, "service_account": true, "tenant_id": true, "certificate": true, "jwt": true,
	"credentials": true, "app_id": true, "appid": true, "refresh_token": true}

// checkSecretsMarked: a property named like a secret, holding a string or
// number, must be airbyte_secret.
func (r *Runner) checkSecretsMarked(schema map[string]any, path string) {
	props, _ := schema["properties"].(map[string]any)
	for name, p := range props {
		pm, _ := p.(map[string]any)
		if pm == nil {
			continue
		}
		typ := fmt.Sprint(pm["type"])
		_, isConst := pm["const"]
		if secretNames[strings.ToLower(name)] && !isConst && (strings.Contains(typ, "string") || strings.Contains(typ, "integer") || strings.Contains(typ, "number")) {
			r.check(pm["airbyte_secret"] == true, "spec: property %s%s looks like a secret but is not marked airbyte_secret", path, name)
		}
		r.checkSecretsMarked(pm, path+name+".")
		if variants, ok := pm["oneOf"].([]any); ok {
			for _, v := range variants {
				if vm, ok := v.(map[string]any); ok {
					r.checkSecretsMarked(vm, path+name+".")
				}
			}
		}
	}
}

func secretValues(schema map[string]any, cfg map[string]any) []string {
	var out []string
	props, _ := schema["properties"].(map[string]any)
	for name, p := range props {
		pm, _ := p.(map[string]any)
		if pm == nil {
			continue
		}
		if pm["airbyte_secret"] == true {
			if s, ok := cfg[name].(string); ok && len(s) >= 3 {
				out = append(out, s)
			}
		}
		if sub, ok := cfg[name].(map[string]any); ok {
			out = append(out, secretValues(pm, sub)...)
		}
	}
	return out
}

func (r *Runner) connection(tc Test) {
	cfg, _, err := r.file(tc.ConfigPath)
	if !r.check(err == nil, "connection: cannot read %s: %v", tc.ConfigPath, err) {
		return
	}
	out := r.run("check "+tc.ConfigPath, "check", "--config", cfg)
	statuses := out.ofType("CONNECTION_STATUS")
	if tc.Status == "exception" {
		traces := out.ofType("TRACE")
		r.check(len(traces) == 1, "check %s: %d TRACE messages, want exactly 1", tc.ConfigPath, len(traces))
		return
	}
	if !r.check(len(statuses) == 1, "check %s: %d CONNECTION_STATUS messages, want exactly 1", tc.ConfigPath, len(statuses)) {
		return
	}
	want := "SUCCEEDED"
	if tc.Status == "failed" {
		want = "FAILED"
	}
	got := statuses[0]["connectionStatus"].(map[string]any)["status"]
	r.check(got == want, "check %s: status %v, want %s", tc.ConfigPath, got, want)
	r.check(out.code == 0, "check %s: exit code %d, want 0", tc.ConfigPath, out.code)
}

func (r *Runner) discovery(tc Test) map[string]any {
	cfg, _, err := r.file(tc.ConfigPath)
	if !r.check(err == nil, "discovery: cannot read %s: %v", tc.ConfigPath, err) {
		return nil
	}
	out := r.run("discover", "discover", "--config", cfg)
	cats := out.ofType("CATALOG")
	if !r.check(len(cats) == 1, "discover: %d CATALOG messages, want exactly 1", len(cats)) {
		return nil
	}
	streams, _ := cats[0]["catalog"].(map[string]any)["streams"].([]any)
	r.check(len(streams) > 0, "discover: the catalog has no stream")
	schemas := map[string]any{}
	for _, s := range streams {
		sm := s.(map[string]any)
		name, _ := sm["name"].(string)
		_, dup := schemas[name]
		r.check(!dup, "discover: stream name %q is not unique", name)
		schema, _ := sm["json_schema"].(map[string]any)
		_, err := compile(schema, true)
		r.check(err == nil, "discover: stream %s: json_schema is not a valid draft-07 schema: %v", name, err)
		modes, _ := sm["supported_sync_modes"].([]any)
		r.check(len(modes) > 0, "discover: stream %s has no supported_sync_modes", name)
		props, _ := schema["properties"].(map[string]any)
		pks, _ := sm["source_defined_primary_key"].([]any)
		for _, pk := range pks {
			parts, _ := pk.([]any)
			if len(parts) > 0 && len(props) > 0 {
				_, ok := props[fmt.Sprint(parts[0])]
				r.check(ok, "discover: stream %s: primary key %v is not in the schema's properties", name, parts)
			}
		}
		schemas[name] = schema
	}
	return schemas
}

type record struct {
	stream string
	data   string
	at     float64
}

func records(out output) []record {
	var recs []record
	for _, m := range out.ofType("RECORD") {
		rec := m["record"].(map[string]any)
		b, _ := json.Marshal(rec["data"])
		at, _ := rec["emitted_at"].(float64)
		recs = append(recs, record{fmt.Sprint(rec["stream"]), string(b), at})
	}
	return recs
}

func (r *Runner) basicRead(tc Test, schemas map[string]any) {
	cfg, _, err1 := r.file(tc.ConfigPath)
	cat, catBytes, err2 := r.file(tc.ConfiguredCatalogPath)
	if !r.check(err1 == nil && err2 == nil, "basic_read: cannot read %s or %s", tc.ConfigPath, tc.ConfiguredCatalogPath) {
		return
	}
	var catalog struct {
		Streams []struct {
			Stream struct{ Name string } `json:"stream"`
		} `json:"streams"`
	}
	json.Unmarshal(catBytes, &catalog)
	out := r.run("read", "read", "--config", cfg, "--catalog", cat)
	r.check(out.code == 0, "read: exit code %d, want 0", out.code)
	recs := records(out)
	r.check(len(recs) > 0, "read: no records")
	compiled := map[string]*jsonschema.Schema{}
	for name, s := range schemas {
		if c, err := compile(s.(map[string]any), true); err == nil {
			compiled[name] = c
		}
	}
	counts := map[string]int{}
	for _, rec := range recs {
		counts[rec.stream]++
		if s := compiled[rec.stream]; s != nil {
			var v any
			d := json.NewDecoder(strings.NewReader(rec.data))
			d.UseNumber()
			d.Decode(&v)
			if err := s.Validate(v); err != nil {
				r.check(false, "read: a record of %s does not match its schema: %v", rec.stream, oneLine(err))
			}
		}
	}
	for _, s := range catalog.Streams {
		name := s.Stream.Name
		r.checkStatuses(out, name)
		r.checkState(out, name, counts[name])
	}
	if tc.ExpectRecords != nil {
		r.expected(tc.ExpectRecords.Path, tc.ExpectRecords.ExactOrder, recs)
	}
	invalid := filepath.Join(r.dir, "invalid_catalog.json")
	os.WriteFile(invalid, []byte(`{"streams":[{"stream":{"name":"__AIRBYTE__stream_that_does_not_exist","json_schema":{"type":"object","properties":{"f1":{"type":"string"}}},"supported_sync_modes":["full_refresh"]},"sync_mode":"INVALID","destination_sync_mode":"INVALID"}]}`), 0o600)
	bad := r.run("read with an invalid catalog", "read", "--config", cfg, "--catalog", invalid)
	errorTraces := 0
	for _, m := range bad.ofType("TRACE") {
		if m["trace"].(map[string]any)["type"] == "ERROR" {
			errorTraces++
		}
	}
	r.check(errorTraces > 0, "read with sync_mode INVALID: no TRACE ERROR")
}

func (r *Runner) checkStatuses(out output, stream string) {
	var got []string
	for _, m := range out.ofType("TRACE") {
		tr := m["trace"].(map[string]any)
		ss, ok := tr["stream_status"].(map[string]any)
		if ok && ss["stream_descriptor"].(map[string]any)["name"] == stream {
			got = append(got, fmt.Sprint(ss["status"]))
		}
	}
	ok := len(got) >= 3 && got[0] == "STARTED" && got[len(got)-1] == "COMPLETE"
	for _, s := range got[min(1, len(got)):max(1, len(got)-1)] {
		ok = ok && s == "RUNNING"
	}
	r.check(ok, "read: stream %s statuses %v, want STARTED, RUNNING..., COMPLETE", stream, got)
}

func (r *Runner) checkState(out output, stream string, count int) {
	total, found := 0.0, false
	for _, m := range out.ofType("STATE") {
		st := m["state"].(map[string]any)
		s, _ := st["stream"].(map[string]any)
		if st["type"] != "STREAM" || s == nil {
			continue
		}
		if s["stream_descriptor"].(map[string]any)["name"] != stream {
			continue
		}
		found = true
		stats, _ := st["sourceStats"].(map[string]any)
		n, _ := stats["recordCount"].(float64)
		total += n
	}
	if r.check(found, "read: stream %s has no STREAM state", stream) {
		r.check(int(total) == count, "read: stream %s states count %v records, %d were emitted", stream, total, count)
	}
}

func (r *Runner) expected(path string, exactOrder bool, recs []record) {
	_, b, err := r.file(path)
	if !r.check(err == nil, "expect_records: cannot read %s: %v", path, err) {
		return
	}
	var want []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var e struct {
			Stream string         `json:"stream"`
			Data   map[string]any `json:"data"`
		}
		if json.Unmarshal([]byte(line), &e) == nil {
			d, _ := json.Marshal(e.Data)
			want = append(want, e.Stream+" "+string(d))
		}
	}
	var got []string
	for _, rec := range recs {
		var v any
		json.Unmarshal([]byte(rec.data), &v)
		d, _ := json.Marshal(v)
		got = append(got, rec.stream+" "+string(d))
	}
	if exactOrder {
		// As Airbyte's acceptance tests compare them: in order within each
		// stream (the streams of a read interleave).
		for _, l := range [][]string{want, got} {
			sort.SliceStable(l, func(i, j int) bool {
				a, _, _ := strings.Cut(l[i], " ")
				b, _, _ := strings.Cut(l[j], " ")
				return a < b
			})
		}
	} else {
		sort.Strings(want)
		sort.Strings(got)
	}
	r.check(strings.Join(got, "\n") == strings.Join(want, "\n"), "expect_records: the records read differ from %s (%d read, %d expected)", path, len(got), len(want))
}

func (r *Runner) fullRefresh(tc Test) {
	cfg, _, err1 := r.file(tc.ConfigPath)
	cat, _, err2 := r.file(tc.ConfiguredCatalogPath)
	if !r.check(err1 == nil && err2 == nil, "full_refresh: cannot read %s or %s", tc.ConfigPath, tc.ConfiguredCatalogPath) {
		return
	}
	first := records(r.run("full refresh read 1", "read", "--config", cfg, "--catalog", cat))
	time.Sleep(100 * time.Millisecond)
	second := records(r.run("full refresh read 2", "read", "--config", cfg, "--catalog", cat))
	// in any order, as Airbyte's test_sequential_reads compares them:
	// partitions read concurrently interleave differently every run
	key := func(rs []record) string {
		var parts []string
		for _, x := range rs {
			parts = append(parts, x.stream+" "+x.data)
		}
		sort.Strings(parts)
		return strings.Join(parts, "\n")
	}
	r.check(len(first) > 0 && key(first) == key(second), "full_refresh: two reads gave different records (%d and %d)", len(first), len(second))
	if len(first) > 0 && len(second) > 0 {
		maxFirst, minSecond := first[0].at, second[0].at
		for _, x := range first {
			maxFirst = max(maxFirst, x.at)
		}
		for _, x := range second {
			minSecond = min(minSecond, x.at)
		}
		r.check(minSecond > maxFirst, "full_refresh: emitted_at of the second read (%v) is not after the first read's (%v)", minSecond, maxFirst)
	}
}

// compile compiles a draft-07 schema; assertFormat makes "format" a check
// rather than an annotation.
func compile(schema map[string]any, assertFormat bool) (*jsonschema.Schema, error) {
	b, err := json.Marshal(schema)
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft7
	c.AssertFormat = assertFormat
	if !assertFormat {
		// Draft-07 asserts every format it knows: make each one accept anything.
		c.Formats = map[string]func(any) bool{}
		for name := range jsonschema.Formats {
			c.Formats[name] = func(any) bool { return true }
		}
	}
	if err := c.AddResource("schema.json", bytes.NewReader(b)); err != nil {
		return nil, err
	}
	return c.Compile("schema.json")
}

func normalize(v any) any {
	b, _ := json.Marshal(v)
	var out any
	json.Unmarshal(b, &out)
	return out
}

func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}
