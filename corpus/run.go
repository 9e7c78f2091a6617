package corpus

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/airbyte-go/source-declarative/acceptance"
	"github.com/airbyte-go/source-declarative/genapi"
	"github.com/airbyte-go/source-declarative/manifest"
)

// Outcome kinds.
const (
	OK      = "ok"      // spec, check, discover and read as the platform expects, acceptance passed
	Refused = "refused" // one config_error naming custom Python components, and only those
	Fail    = "fail"    // anything else
)

// Outcome is how one manifest ran.
type Outcome struct {
	Name     string
	Features Features
	Kind     string
	Command  string // the command that failed or refused
	Detail   string // the first error line
	// Components are the unsupported components a refusal names (for a
	// fail, the ones that are not custom Python components, which are in
	// Custom).
	Components []string
	Custom     []string
	Checks     int // acceptance checks passed
}

// Runner runs manifests through the built binary as the platform does.
type Runner struct {
	Binary  string
	Now     time.Time     // the fixed now of sampled dates and records
	Timeout time.Duration // per command
}

// manifestRun is the state of one manifest's run.
type manifestRun struct {
	*Runner
	out      *Outcome
	dir      string
	manifest string // path of the rewritten manifest
	config   string // path of the sampled config
	api      *genapi.API
	plan     *genapi.Plan
	// resolvedStreams are the manifest's streams, resolved.
	resolvedStreams []map[string]any
}

// Run runs one manifest: spec, a config sampled from it, check, discover,
// read of every stream against a mock, then the acceptance checks.
func (r *Runner) Run(path string) (out Outcome) {
	out = Outcome{Name: strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))}
	raw, err := manifest.ReadFile(path)
	if err != nil {
		return out.fail("load", err.Error())
	}
	resolved, err := manifest.ResolveOnly(manifest.DeepCopy(raw).(map[string]any))
	if err != nil {
		return out.fail("load", err.Error())
	}
	out.Features = FeaturesOf(resolved)
	dir, err := os.MkdirTemp("", "corpus-"+out.Name)
	if err != nil {
		return out.fail("setup", err.Error())
	}
	defer os.RemoveAll(dir)
	m := &manifestRun{Runner: r, out: &out, dir: dir, api: genapi.Start()}
	defer m.api.Close()
	m.run(raw, resolved)
	return out
}

func (o *Outcome) fail(command, detail string) Outcome {
	o.Kind, o.Command, o.Detail = Fail, command, firstLine(detail)
	return *o
}

func (m *manifestRun) fail(command, detail string) {
	detail = strings.ReplaceAll(detail, m.api.URL, "MOCK") // the port changes every run
	if misses := m.misses(); len(misses) > 0 {
		detail += fmt.Sprintf(" (mock: no route for %s)", misses[0])
	} else if m.plan != nil && len(m.plan.Problems) > 0 {
		detail += " (mock: " + m.plan.Problems[0] + ")"
	}
	m.out.fail(command, detail)
}

func (m *manifestRun) run(raw, resolved map[string]any) {
	rewritten := RewriteURLs(raw, m.api.URL)
	m.manifest = filepath.Join(m.dir, "manifest.json")
	if err := writeJSON(m.manifest, rewritten); err != nil {
		m.fail("setup", err.Error())
		return
	}
	spec, ok := m.spec()
	if !ok {
		return
	}
	sampler := &Sampler{Now: m.Now, Reads: ConfigReads(raw)}
	config := sampler.Config(spec)
	if wrapped := PointConfig(rewritten, config, sampler.Pinned, m.api.URL); len(wrapped) > 0 {
		writeJSON(m.manifest, rewritten)
	}
	m.config = filepath.Join(m.dir, "config.json")
	writeJSON(m.config, config)
	resolvedRewritten, _ := manifest.ResolveOnly(manifest.DeepCopy(rewritten).(map[string]any))
	plan, err := genapi.NewPlan(resolvedRewritten, config, m.Now)
	if err != nil {
		m.fail("setup", err.Error())
		return
	}
	m.plan = plan
	m.api.SetPlan(plan)
	m.resolvedStreams = genapi.AllStreams(resolvedRewritten)
	if !m.check() {
		return
	}
	catalog, ok := m.discover(resolved)
	if !ok {
		return
	}
	if !m.read(catalog) {
		return
	}
	m.acceptance(catalog)
}

// output is what one command printed.
type output struct {
	code   int
	msgs   []map[string]any
	bad    string // the first stdout line that is not an Airbyte message
	stderr string
}

func (o output) ofType(t string) []map[string]any {
	var out []map[string]any
	for _, msg := range o.msgs {
		if msg["type"] == t {
			out = append(out, msg)
		}
	}
	return out
}

// errorTraces are the messages of the TRACE ERROR messages.
func (o output) errorTraces() []map[string]any {
	var out []map[string]any
	for _, t := range o.ofType("TRACE") {
		tr := asMap(t["trace"])
		if tr["type"] == "ERROR" {
			out = append(out, asMap(tr["error"]))
		}
	}
	return out
}

// problem is the first thing wrong with any command's output: a line that
// is not an Airbyte message, a TRACE ERROR, a non-zero exit.
func (o output) problem() string {
	switch {
	case o.bad != "":
		return "stdout line is not an Airbyte message: " + o.bad
	case len(o.errorTraces()) > 0:
		e := o.errorTraces()[0]
		return fmt.Sprintf("TRACE ERROR (%v): %v", e["failure_type"], e["message"])
	case o.code != 0:
		return fmt.Sprintf("exit code %d: %s", o.code, firstLine(o.stderr))
	}
	return ""
}

func (m *manifestRun) exec(args ...string) output {
	ctx, cancel := context.WithTimeout(context.Background(), m.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, m.Binary, append(args, "--manifest", m.manifest)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	out := output{stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		out.code, out.stderr = -1, fmt.Sprintf("timed out after %s", m.Timeout)
	case errors.As(err, &ee):
		out.code = ee.ExitCode()
	case err != nil:
		out.code, out.stderr = -1, err.Error()
	}
	for _, line := range strings.Split(stdout.String(), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var msg map[string]any
		if json.Unmarshal([]byte(line), &msg) != nil || msg["type"] == nil {
			if out.bad == "" {
				out.bad = firstLine(line)
			}
			continue
		}
		out.msgs = append(out.msgs, msg)
	}
	return out
}

// single runs a command that must print exactly one message of type typ
// and nothing wrong, and returns that message.
func (m *manifestRun) single(typ string, args ...string) (map[string]any, bool) {
	out := m.exec(args...)
	if p := out.problem(); p != "" {
		m.fail(args[0], p)
		return nil, false
	}
	msgs := out.ofType(typ)
	if len(msgs) != 1 {
		m.fail(args[0], fmt.Sprintf("%d %s messages, want exactly 1", len(msgs), typ))
		return nil, false
	}
	return msgs[0], true
}

func (m *manifestRun) spec() (map[string]any, bool) {
	msg, ok := m.single("SPEC", "spec")
	if !ok {
		return nil, false
	}
	cs := asMap(asMap(msg["spec"])["connectionSpecification"])
	if cs == nil {
		m.fail("spec", "the SPEC has no connectionSpecification")
		return nil, false
	}
	return cs, true
}

// check wants one CONNECTION_STATUS, SUCCEEDED; a manifest refused at load
// is classified by what discover prints.
func (m *manifestRun) check() bool {
	out := m.exec("check", "--config", m.config)
	statuses := out.ofType("CONNECTION_STATUS")
	if out.bad != "" || len(statuses) != 1 {
		m.fail("check", firstOf(out.problem(), fmt.Sprintf("%d CONNECTION_STATUS messages, want exactly 1", len(statuses))))
		return false
	}
	status := asMap(statuses[0]["connectionStatus"])
	if status["status"] == "SUCCEEDED" {
		return true
	}
	msg := fmt.Sprint(status["message"])
	if strings.HasPrefix(msg, "invalid manifest") || strings.Contains(msg, notPermitted) {
		m.refusal()
		return false
	}
	m.out.Components, m.out.Custom = unsupportedIn(msg)
	m.fail("check", "CONNECTION_STATUS "+fmt.Sprint(status["status"])+": "+msg)
	return false
}

// unsupportedIn names the components an error says are not supported (a
// component refused when it runs rather than at load), custom ones apart.
func unsupportedIn(msg string) (other, custom []string) {
	for _, p := range RefusalParts(msg) {
		switch {
		case !unsupported.MatchString(p.Text):
		case p.Custom:
			custom = append(custom, p.Component)
		default:
			other = append(other, p.Component)
		}
	}
	return unique(other), unique(custom)
}

// refusal classifies a manifest refused at load from discover's output:
// exactly one message, a config_error TRACE whose every part names a custom
// Python component, is a refusal; anything else fails, naming the
// components that are not custom.
func (m *manifestRun) refusal() {
	out := m.exec("discover", "--config", m.config)
	traces := out.errorTraces()
	if out.bad != "" || len(out.msgs) != 1 || len(traces) != 1 || traces[0]["failure_type"] != "config_error" {
		m.fail("discover", firstOf(out.problem(), fmt.Sprintf("a refused manifest must print one config_error TRACE, got %d messages", len(out.msgs))))
		return
	}
	msg := fmt.Sprint(traces[0]["message"])
	parts := RefusalParts(msg)
	var custom, other []string
	firstOther := ""
	for _, p := range parts {
		if p.Custom {
			custom = append(custom, p.Component)
			continue
		}
		if firstOther == "" {
			firstOther = p.Path + ": " + p.Text
		}
		other = append(other, p.Component)
	}
	if len(parts) > 0 && len(other) == 0 {
		m.out.Kind, m.out.Command, m.out.Detail, m.out.Components = Refused, "discover", firstLine(msg), unique(custom)
		return
	}
	m.out.Components, m.out.Custom = unique(other), unique(custom)
	m.fail("discover", "refuses "+strings.Join(m.out.Components, ", ")+": "+firstOf(firstOther, msg))
}

// notPermitted begins Airbyte's refusal of custom code
// (AirbyteCustomCodeNotPermittedError), which we print with the path of the
// first component that needs it.
const notPermitted = "Custom connector code is not permitted in this environment."

// RefusalPart is one "path: problem" of a load error.
type RefusalPart struct {
	Path, Text string
	Component  string // the component type refused, or the problem in short
	Custom     bool   // a custom Python component (Custom*, class_name) named with its path
}

var (
	partStart   = regexp.MustCompile(`^[A-Za-z_$][\w$]*(\[\d+\])*(\.[\w$]+(\[\d+\])*)*: `)
	unsupported = regexp.MustCompile(`^(.+?) (?:is|are) not supported`)
)

// RefusalParts splits a load error ("invalid manifest: p1: text1; p2:
// text2") into its parts; a "; " not followed by a manifest path belongs to
// the text before it.
func RefusalParts(msg string) []RefusalPart {
	msg = strings.TrimPrefix(msg, "invalid manifest: ")
	if i := strings.Index(msg, ": streams["); i >= 0 && strings.HasPrefix(msg, "stream ") {
		msg = msg[i+2:] // "stream s: streams[0]...: problem" names the stream first
	}
	var raw []string
	for _, piece := range strings.Split(msg, "; ") {
		if len(raw) > 0 && !partStart.MatchString(piece) {
			raw[len(raw)-1] += "; " + piece
			continue
		}
		raw = append(raw, piece)
	}
	var out []RefusalPart
	for _, r := range raw {
		loc := partStart.FindStringIndex(r)
		p := RefusalPart{Text: r}
		if loc != nil {
			p.Path, p.Text = r[:loc[1]-2], r[loc[1]:]
		}
		p.Component = shortProblem(p)
		p.Custom = p.Path != "" && (strings.HasPrefix(p.Component, "Custom") || strings.Contains(p.Text, "class_name") || strings.Contains(p.Text, "custom Python"))
		if p.Path != "" && strings.HasPrefix(p.Text, notPermitted) {
			p.Component, p.Custom = "custom code at "+p.Path, true
		}
		out = append(out, p)
	}
	return out
}

// shortProblem names a part for the table: the component refused (with its
// class_name when the refusal gives it), else the field and its problem.
func shortProblem(p RefusalPart) string {
	if m := unsupported.FindStringSubmatch(p.Text); m != nil {
		return strings.TrimPrefix(m[1], "custom component ")
	}
	field := p.Path
	if i := strings.LastIndex(field, "."); i >= 0 {
		field = field[i+1:]
	}
	text := p.Text
	if len(text) > 40 {
		text = text[:40] + "…"
	}
	return strings.TrimSpace(field + " " + text)
}

// discover wants one CATALOG naming every stream; it returns the configured
// catalog the platform would send: incremental where a stream supports it.
func (m *manifestRun) discover(resolved map[string]any) ([]any, bool) {
	cat, ok := m.single("CATALOG", "discover", "--config", m.config)
	if !ok {
		return nil, false
	}
	streams := list(asMap(cat["catalog"])["streams"])
	names := set{}
	for _, s := range streams {
		names.add(fmt.Sprint(asMap(s)["name"]))
	}
	for _, s := range list(resolved["streams"]) {
		if name := fmt.Sprint(asMap(s)["name"]); !names[name] {
			m.fail("discover", "the catalog lacks stream "+name)
			return nil, false
		}
	}
	return streams, true
}

// configured writes a configured catalog of every stream, incremental where
// the stream supports it unless fullRefresh.
func configured(streams []any, fullRefresh bool) map[string]any {
	var out []any
	for _, s := range streams {
		sm := asMap(s)
		c := map[string]any{"stream": sm, "sync_mode": "full_refresh", "destination_sync_mode": "overwrite"}
		for _, mode := range list(sm["supported_sync_modes"]) {
			if mode == "incremental" && !fullRefresh {
				c["sync_mode"], c["destination_sync_mode"] = "incremental", "append"
				if cf, ok := sm["default_cursor_field"]; ok {
					c["cursor_field"] = cf
				}
			}
		}
		if pk, ok := sm["source_defined_primary_key"]; ok {
			c["primary_key"] = pk
		}
		out = append(out, c)
	}
	return map[string]any{"streams": out}
}

// read wants every stream COMPLETE with records, exit 0, nothing but
// Airbyte messages.
func (m *manifestRun) read(streams []any) bool {
	catalog := filepath.Join(m.dir, "catalog.json")
	writeJSON(catalog, configured(streams, false))
	before := len(m.api.Exchanges())
	out := m.exec("read", "--config", m.config, "--catalog", catalog)
	exchanges := m.api.Exchanges()[before:]
	if p := out.problem(); p != "" {
		if traces := out.errorTraces(); len(traces) > 0 {
			m.out.Components, m.out.Custom = unsupportedIn(fmt.Sprint(traces[0]["message"]))
		}
		m.fail("read", p)
		return false
	}
	status, records := map[string]string{}, map[string]int{}
	for _, t := range out.ofType("TRACE") {
		if ss := asMap(asMap(t["trace"])["stream_status"]); ss != nil {
			status[fmt.Sprint(asMap(ss["stream_descriptor"])["name"])] = fmt.Sprint(ss["status"])
		}
	}
	for _, r := range out.ofType("RECORD") {
		records[fmt.Sprint(asMap(r["record"])["stream"])]++
	}
	for _, s := range streams {
		name := fmt.Sprint(asMap(s)["name"])
		switch {
		case status[name] != "COMPLETE":
			m.fail("read", fmt.Sprintf("stream %s ended %q, want COMPLETE", name, status[name]))
			return false
		case records[name] == 0:
			m.fail("read", fmt.Sprintf("stream %s emitted no records", name))
			return false
		}
	}
	inCatalog := map[string]bool{}
	for _, s := range streams {
		inCatalog[fmt.Sprint(asMap(s)["name"])] = true
	}
	for _, s := range m.resolvedStreams {
		if !inCatalog[fmt.Sprint(s["name"])] {
			continue
		}
		if problem := servedAsEmitted(s, m.plan.Twins(fmt.Sprint(s["name"])), out, exchanges); problem != "" {
			m.fail("read", problem)
			return false
		}
	}
	return true
}

// maxRequests bounds the requests of one stream in a read of the mock,
// whose streams have at most a few pages per partition.
const maxRequests = 200

// servedAsEmitted compares a stream's records with what the mock served for
// it (each distinct request once: a parent is also read for its children;
// with the records of its twins, the streams a manifest reads by the same
// requests, which the mock cannot tell apart):
// the same records when the manifest changes none of them (no
// transformation, filter, expander, normalization or client-side
// incremental), else none emitted more often than served; and the stream's
// requests bounded.
func servedAsEmitted(stream map[string]any, twins []string, out output, exchanges []genapi.Exchange) string {
	name := fmt.Sprint(stream["name"])
	served := map[string]bool{}
	var want []string
	requests := 0
	for _, e := range exchanges {
		if !slices.Contains(twins, e.Endpoint) {
			continue
		}
		requests++
		key := e.Method + " " + e.Path + "?" + e.RawQuery + " " + e.Body
		if served[key] {
			continue
		}
		served[key] = true
		for _, r := range e.Records {
			want = append(want, canonical(r))
		}
	}
	if requests > maxRequests {
		return fmt.Sprintf("stream %s made %d requests of the mock, more than %d", name, requests, maxRequests)
	}
	var got []string
	for _, r := range out.ofType("RECORD") {
		if rec := asMap(r["record"]); rec["stream"] == name {
			var v any
			json.Unmarshal(mustJSON(rec["data"]), &v)
			got = append(got, canonical(v))
		}
	}
	count := map[string]int{}
	for _, w := range want {
		count[w]++
	}
	for _, g := range got {
		if count[g]--; count[g] < 0 && !changesRecords(stream) {
			return fmt.Sprintf("stream %s emitted a record the mock did not serve, or more often than served: %s", name, firstLine(g))
		}
	}
	if !changesRecords(stream) && len(twins) == 1 && len(got) != len(want) {
		return fmt.Sprintf("stream %s emitted %d records, the mock served %d", name, len(got), len(want))
	}
	if len(got) > len(want) {
		return fmt.Sprintf("stream %s emitted %d records, the mock served only %d", name, len(got), len(want))
	}
	return ""
}

// changesRecords tells whether a stream's manifest changes, drops or adds
// records between the API and the output.
func changesRecords(stream map[string]any) bool {
	retriever := asMap(stream["retriever"])
	selector := asMap(retriever["record_selector"])
	inc := asMap(stream["incremental_sync"])
	return len(list(stream["transformations"])) > 0 || selector["record_filter"] != nil ||
		asMap(selector["extractor"])["record_expander"] != nil || selector["schema_normalization"] != nil && selector["schema_normalization"] != "None" ||
		inc["is_client_side_incremental"] == true
}

func canonical(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// acceptance runs the local acceptance runner's checks against the mock:
// spec, connection, discovery, basic read, two full refresh reads.
func (m *manifestRun) acceptance(streams []any) {
	writeJSON(filepath.Join(m.dir, "full_refresh.json"), configured(streams, true))
	cfg := &acceptance.Config{}
	config := filepath.Base(m.config)
	cfg.Tests.Spec = &acceptance.Suite{}
	cfg.Tests.Connection = &acceptance.Suite{Tests: []acceptance.Test{{ConfigPath: config, Status: "succeed"}}}
	cfg.Tests.Discovery = &acceptance.Suite{Tests: []acceptance.Test{{ConfigPath: config}}}
	cfg.Tests.BasicRead = &acceptance.Suite{Tests: []acceptance.Test{{ConfigPath: config, ConfiguredCatalogPath: "catalog.json"}}}
	cfg.Tests.FullRefresh = &acceptance.Suite{Tests: []acceptance.Test{{ConfigPath: config, ConfiguredCatalogPath: "full_refresh.json"}}}
	runner := &acceptance.Runner{Connector: []string{m.Binary, "--manifest", m.manifest}, BaseDir: m.dir, Timeout: m.Timeout}
	res := runner.Run(cfg)
	m.out.Checks = res.Passed
	if len(res.Failures) > 0 {
		m.fail("acceptance", res.Failures[0])
		return
	}
	m.out.Kind = OK
}

// ConfigReads lists the config key paths the templates of a manifest read
// ("a" and "a.b" for config['a']['b']).
func ConfigReads(raw map[string]any) map[string]bool {
	out := map[string]bool{}
	visit(raw, "", func(_ string, v any) bool {
		if s, ok := v.(string); ok {
			for _, chain := range genapi.Accesses(s, "config") {
				for i := range chain {
					out[strings.Join(chain[:i+1], ".")] = true
				}
			}
		}
		return true
	})
	return out
}

func writeJSON(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o600)
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

func firstOf(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

func unique(values []string) []string {
	s := set{}
	for _, v := range values {
		s.add(v)
	}
	return s.sorted()
}

// misses lists the requests the mock had no route for ("GET /path").
func (m *manifestRun) misses() []string {
	var out []string
	for _, e := range m.api.Exchanges() {
		if e.Endpoint == "" {
			out = append(out, e.Method+" "+e.Path)
		}
	}
	return out
}
