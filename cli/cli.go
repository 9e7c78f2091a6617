// Package cli holds the commands the Airbyte platform calls: spec, check,
// discover and read, each a thin layer over the manifest and runtime packages.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"

	"github.com/airbyte-go/source-declarative/components"
	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/protocol"
	"github.com/airbyte-go/source-declarative/runtime"
	"github.com/airbyte-go/source-declarative/runtime/failure"
	"github.com/airbyte-go/source-declarative/runtime/incremental"
)

// exitError carries an exit code out of a command that already printed its messages.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

type app struct {
	out            *protocol.Writer
	masker         *runtime.Masker
	genericSpec    []byte
	manifestPath   string
	componentsPath string
	python         string // --python: the interpreter of the components host
	configPath     string
	// config, when set, is the command's config in memory (a manifest
	// server's request): no file is read for it or written back, and the
	// manifest is the one it holds under manifest.InjectedKey.
	config      map[string]any
	catalogPath string
	statePath   string
	writeConfig bool
	testReading bool // config migrations stay in memory
	// testWarnings are the manifest's warnings during a test read: they go
	// into the StreamRead's logs, as Airbyte's builder shows its deprecation
	// warnings, not beside it where the builder would never show them.
	testWarnings []string
	stream       string
	limits       runtime.TestLimits
	pretty       bool
	debug        bool
	stdout       io.Writer
	stderr       io.Writer
	ran          bool // a command ran: the command line was good
	serve        serveFlags
	// host runs the manifest's custom components (nil without any), for
	// runner, the command's runner.
	host   *components.Host
	runner *runtime.Runner
	// configChanges are what the host's Python changed in the config
	// before there was a runner to keep them (componentsConfig).
	configMu      sync.Mutex
	configChanges []components.ConfigChange
}

// Main runs the command line and returns the exit code. Nothing but
// protocol messages reaches stdout; a panic becomes one system_error TRACE.
func Main(args []string, stdout, stderr io.Writer, genericSpec []byte, version string) (code int) {
	a := &app{out: protocol.NewWriter(stdout), masker: runtime.NewMasker(), genericSpec: genericSpec, stdout: stdout, stderr: stderr}
	a.out.SetMasker(a.masker)
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "internal error: %v\n%s", r, debug.Stack())
			a.out.Error(protocol.SystemError, "Internal error in the connector; this is a bug, please report it.", fmt.Sprint(r), "")
			code = 1
		}
		a.closeComponents()
		a.out.Flush()
	}()
	root := a.commands(version)
	root.SetArgs(goStyleFlags(root, args))
	root.SetOut(stderr) // help and the version: stdout carries protocol messages only
	root.SetErr(stderr)
	cmd, err := root.ExecuteContextC(context.Background())
	var ee exitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.code
	case !a.ran: // a usage mistake: unknown command or flag, missing flag, bad value
		fmt.Fprintln(stderr, "error:", err)
		fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", cmd.CommandPath())
		return 2
	}
	fmt.Fprintln(stderr, "error:", err)
	return 2
}

// fail prints one TRACE ERROR and ends the command with exit code 1.
func (a *app) fail(failure, message string) error {
	a.out.Error(failure, message, "", "")
	return exitError{1}
}

// spec prints the manifest's spec, or the generic spec without a manifest.
// A --config is optional (orchestrators that pass it to every command work):
// its injected manifest is found as for the other commands.
func (a *app) spec(context.Context) error {
	var config map[string]any
	if a.configPath != "" {
		var err error
		if config, err = readJSONObject(a.configPath, "config"); err != nil {
			return a.fail(protocol.SystemError, err.Error())
		}
	}
	raw, _, yamlWarnings, err := manifest.Find(a.manifestPath, config)
	if errors.Is(err, manifest.ErrNoManifest) {
		return a.out.Write(&protocol.Message{Type: protocol.TypeSpec, Spec: a.genericSpec})
	}
	if err != nil {
		return a.fail(protocol.ConfigError, err.Error())
	}
	a.warn(yamlWarnings)
	// A manifest that loads is resolved once; one that does not still has a
	// spec when its references resolve.
	var resolved map[string]any
	if src, err := manifest.Load(raw); err == nil {
		a.warn(src.Warnings)
		resolved = src.Resolved
	} else if resolved, err = manifest.ResolveOnly(raw); err != nil {
		return a.fail(protocol.ConfigError, "invalid manifest: "+err.Error())
	}
	spec, warnings := manifest.Spec(resolved)
	a.warn(warnings)
	b, err := json.Marshal(spec)
	if err != nil {
		return a.fail(protocol.SystemError, err.Error())
	}
	return a.out.Write(&protocol.Message{Type: protocol.TypeSpec, Spec: b})
}

// warn prints each warning about the manifest as a LOG WARN (keeps it for
// the StreamRead during a test read).
func (a *app) warn(warnings []string) {
	if a.testReading {
		a.testWarnings = append(a.testWarnings, warnings...)
		return
	}
	for _, w := range warnings {
		a.out.Log(protocol.LevelWarn, w)
	}
}

// setupError is a failure to start: an unreadable config, or (checkFails
// true) a manifest that is missing or invalid or a config its rules refuse,
// which check answers with a TRACE and a FAILED status.
type setupError struct {
	message    string
	checkFails bool
	// failure, when set, is the failure type of an error the connector's
	// custom code raised while its components were built: check then says
	// the connection failed, without a TRACE, as the CDK's check does with
	// what building its streams raised.
	failure string
}

func (e *setupError) Error() string { return e.message }

// failureType is config_error for a manifest or config the user can fix, and
// system_error for a config file that cannot be read as a JSON object: the
// platform writes that file, and Airbyte's CDK fails the same way (an
// exception, so a system_error).
func (e *setupError) failureType() string {
	if e.failure != "" {
		return e.failure
	}
	if e.checkFails {
		return protocol.ConfigError
	}
	return protocol.SystemError
}

// setup reads the config and the manifest, derives the spec, registers the
// secrets and validates the config. validation is the config error, if any.
func (a *app) setup() (r *runtime.Runner, err *setupError, validation error) {
	config, cerr := a.readConfig()
	if cerr != nil {
		return nil, &setupError{message: cerr.Error()}, nil
	}
	raw, files, yamlWarnings, merr := a.findManifest(config)
	if merr != nil {
		return nil, &setupError{message: merr.Error(), checkFails: true}, nil
	}
	a.warn(yamlWarnings)
	src, merr := manifest.Load(raw)
	if merr != nil {
		return nil, &setupError{message: "invalid manifest: " + merr.Error(), checkFails: true}, nil
	}
	src.Files = files
	spec, warnings := manifest.Spec(src.Resolved)
	connSpec, _ := spec["connectionSpecification"].(map[string]any)
	authSecrets := manifest.AuthSecrets(src.Resolved) // masked even where the spec does not mark them
	addSecrets := func(config map[string]any) {
		a.masker.AddSpecSecrets(connSpec, config)
		a.masker.AddSpecSecrets(authSecrets, config)
	}
	addSecrets(config)
	a.warn(src.Warnings)
	a.warn(warnings)
	if src.ConfigRules != nil {
		// The rules may move or add values: their secrets are masked too.
		var nerr error
		if config, nerr = a.normalize(src.ConfigRules, config); nerr != nil {
			return nil, &setupError{message: nerr.Error(), checkFails: true}, nil
		}
		addSecrets(config)
	}
	host, config, herr := a.startComponents(context.Background(), src, raw, config)
	if herr != nil {
		return nil, herr, nil
	}
	a.host = host
	addSecrets(config)
	validation = manifest.ValidateConfig(connSpec, config)
	if errors.Is(validation, manifest.ErrInvalidSpec) {
		return nil, &setupError{message: "invalid manifest: " + validation.Error(), checkFails: true}, nil
	}
	if validation == nil {
		if verr := a.validateRules(src.ConfigRules, config); verr != nil {
			return nil, &setupError{message: verr.Error(), checkFails: true}, nil
		}
	}
	r = runtime.New(src, config, a.out, a.masker)
	r.Builder = a.config != nil // a manifest server's request, for the Connector Builder
	a.configMu.Lock()
	a.runner = r
	a.takeConfigChanges()
	a.configMu.Unlock()
	if host != nil {
		r.UseComponents(host)
	}
	if prepareRunner != nil {
		prepareRunner(r)
	}
	if a.writeConfig {
		r.SaveConfig = func(cfg map[string]any) error { return writeFileAtomic(a.configPath, cfg) }
	}
	return r, nil, validation
}

// prepareRunner, when set (by tests), adjusts each runner before it runs:
// a test replaces the client's sleep to record the waits between retries.
var prepareRunner func(*runtime.Runner)

// check prints exactly one CONNECTION_STATUS and exits 0 for anything the
// user can fix in the config or the manifest (a TRACE config_error comes
// first for the manifest and for a config its rules refuse); a config file that is no JSON object is one TRACE
// system_error and exit 1, as an unexpected error.
func (a *app) check(ctx context.Context) error {
	r, err, invalid := a.setup()
	if err != nil {
		if !err.checkFails {
			return a.fail(err.failureType(), err.message)
		}
		if err.failure == "" {
			a.out.Error(protocol.ConfigError, err.message, "", "")
		}
		return a.out.ConnectionStatus(false, err.message)
	}
	if invalid != nil {
		return a.out.ConnectionStatus(false, "Config validation error: "+invalid.Error())
	}
	return r.Check(ctx)
}

func (a *app) discover(ctx context.Context) error {
	r, err, invalid := a.setup()
	if err != nil {
		return a.fail(err.failureType(), err.message)
	}
	if invalid != nil {
		return a.fail(protocol.ConfigError, "Config validation error: "+invalid.Error())
	}
	if err := r.Discover(ctx); err != nil {
		return a.fail(runtime.FailureType(err), runtime.OneLine(err))
	}
	return nil
}

func (a *app) read(ctx context.Context) error {
	config, err := a.readConfig()
	if err != nil {
		return a.fail(protocol.SystemError, err.Error())
	}
	if command, ok := config["__command"].(string); ok {
		return a.builder(ctx, command, config)
	}
	r, serr, invalid := a.setup()
	if serr != nil {
		return a.fail(serr.failureType(), serr.message)
	}
	if invalid != nil {
		return a.fail(protocol.ConfigError, "Config validation error: "+invalid.Error())
	}
	catalog, err := readCatalog(a.catalogPath)
	if err != nil {
		return a.fail(protocol.SystemError, err.Error())
	}
	var states incremental.States
	if a.statePath != "" {
		if states, err = readStates(a.statePath); err != nil {
			return a.fail(protocol.ConfigError, err.Error())
		}
	}
	if err := r.Read(ctx, catalog, states); err != nil {
		return a.fail(runtime.FailureType(err), runtime.OneLine(err))
	}
	return nil
}

// readConfig is the command's config: the one in memory, else the --config
// file's.
func (a *app) readConfig() (map[string]any, error) {
	if a.config != nil {
		return a.config, nil
	}
	return readJSONObject(a.configPath, "config")
}

// findManifest is the command's manifest: the one the config in memory
// holds, else the first found of --manifest, the image's and the config's
// (manifest.Find), with the files it may read (none for one in the config)
// and the warnings of reading it.
func (a *app) findManifest(config map[string]any) (map[string]any, manifest.Files, []string, error) {
	if a.config != nil {
		m, err := manifest.FromConfig(config)
		return m, manifest.Files{}, nil, err
	}
	return manifest.Find(a.manifestPath, config)
}

func readJSONObject(path, what string) (map[string]any, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read the %s file: %v", what, err)
	}
	v, err := manifest.FromJSON(b)
	if err != nil {
		return nil, fmt.Errorf("the %s file %s is not valid JSON: %v", what, filepath.Base(path), err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the %s file %s must hold a JSON object", what, filepath.Base(path))
	}
	return m, nil
}

func readCatalog(path string) (*protocol.ConfiguredCatalog, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read the catalog file: %v", err)
	}
	var cat protocol.ConfiguredCatalog
	if err := json.Unmarshal(b, &cat); err != nil {
		return nil, fmt.Errorf("the catalog file is not a valid configured catalog: %v", err)
	}
	for i, s := range cat.Streams {
		if s.Stream.Name == "" {
			return nil, fmt.Errorf("catalog streams[%d].stream.name is required", i)
		}
		if s.SyncMode != "full_refresh" && s.SyncMode != "incremental" {
			return nil, fmt.Errorf("catalog streams[%d].sync_mode must be full_refresh or incremental, got %q", i, s.SyncMode)
		}
	}
	return &cat, nil
}

func readStates(path string) (incremental.States, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read the state file: %v", err)
	}
	return incremental.ParseStates(b)
}

// writeFileAtomic replaces path with cfg: a temp file, fsync, rename.
func writeFileAtomic(path string, cfg map[string]any) error {
	b, err := runtime.ConfigJSON(cfg)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".config-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if info, err := os.Stat(path); err == nil {
		os.Chmod(tmp.Name(), info.Mode().Perm())
	}
	return os.Rename(tmp.Name(), path)
}

// builder runs a Connector Builder command (__command in the config, as
// Airbyte's builder backend sends it) and prints one RECORD.
func (a *app) builder(ctx context.Context, command string, config map[string]any) error {
	switch command {
	case "resolve_manifest":
		resolved, err := a.resolvedManifest(config)
		if err != nil {
			return a.fail(protocol.ConfigError, err.Error())
		}
		return runtime.RecordMessage(a.out, "resolve_manifest", map[string]any{"manifest": resolved})
	case "full_resolve_manifest":
		limits, err := testReadLimits(config["__test_read_config"])
		if err != nil {
			a.out.Error(protocol.ConfigError, err.Error(), "", "")
			return nil
		}
		resolved, err := a.fullResolvedManifest(ctx, limits.MaxStreams)
		if err != nil {
			a.out.Error(runtime.FailureType(err), runtime.OneLine(err), "", "")
			return nil
		}
		return runtime.RecordMessage(a.out, "full_resolve_manifest", map[string]any{"manifest": resolved})
	case "test_read":
		catalog, err := readCatalog(a.catalogPath)
		if err != nil || len(catalog.Streams) == 0 {
			if err == nil {
				err = errors.New("the catalog names no stream")
			}
			a.out.Error(protocol.ConfigError, err.Error(), "", "")
			return nil
		}
		limits, err := testReadLimits(config["__test_read_config"])
		if err != nil {
			a.out.Error(protocol.ConfigError, err.Error(), "", "")
			return nil
		}
		a.stream, a.limits = catalog.Streams[0].Stream.Name, limits
		return a.runTestRead(ctx, false)
	}
	a.out.Error(protocol.ConfigError, fmt.Sprintf("unknown __command %q: expected test_read, resolve_manifest or full_resolve_manifest", command), "", "")
	return nil
}

// resolvedManifest is the builder's resolve_manifest: the manifest with its
// references and parameters resolved.
func (a *app) resolvedManifest(config map[string]any) (map[string]any, error) {
	raw, _, _, err := a.findManifest(config)
	if err != nil {
		return nil, err
	}
	resolved, err := manifest.ResolveOnly(raw)
	if err != nil {
		return nil, errors.New("invalid manifest: " + err.Error())
	}
	return resolved, nil
}

// fullResolvedManifest is the builder's full_resolve_manifest: the resolved
// manifest with the streams its dynamic streams make, at most maxStreams of
// each.
func (a *app) fullResolvedManifest(ctx context.Context, maxStreams int) (map[string]any, error) {
	r, serr, _ := a.setup()
	if serr != nil {
		return nil, failure.Config("%s", serr.message)
	}
	r.Client.NoRetries = true // as the builder's test reads: its resolvers' requests are tried once
	return r.FullResolvedManifest(ctx, maxStreams)
}

func (a *app) testRead(ctx context.Context) error {
	return a.runTestRead(ctx, a.pretty)
}

// runTestRead prints the StreamRead of one stream; failures are part of it
// (or one TRACE when the manifest cannot load), and the exit code is 0.
func (a *app) runTestRead(ctx context.Context, pretty bool) error {
	var states incremental.States
	if a.statePath != "" {
		var err error
		if states, err = readStates(a.statePath); err != nil {
			a.out.Error(protocol.ConfigError, err.Error(), "", "")
			return nil
		}
	}
	read, err := a.streamRead(ctx, states)
	if err != nil {
		a.out.Error(protocol.ConfigError, err.message, "", "")
		return nil
	}
	if pretty {
		a.out.Flush()
		read.WritePretty(a.stdout, a.stream)
		return nil
	}
	return runtime.RecordMessage(a.out, a.stream, read)
}

// streamRead is the builder's test read of a.stream within a.limits, from
// its state of states: the StreamRead, the manifest's warnings first in its
// logs, or the failure to set the read up (the manifest cannot load, a
// config its rules refuse).
func (a *app) streamRead(ctx context.Context, states incremental.States) (*runtime.StreamRead, *setupError) {
	a.testReading = true
	r, err, _ := a.setup()
	if err != nil {
		return nil, err
	}
	read := r.TestRead(ctx, a.stream, a.limits, states[a.stream])
	logs := []runtime.TestLog{}
	for _, w := range a.testWarnings {
		logs = append(logs, runtime.TestLog{Message: w, Level: protocol.LevelWarn})
	}
	read.Logs = append(logs, read.Logs...)
	return read, nil
}

// testReadLimits reads the builder's __test_read_config: a limit absent,
// null or 0 is the default, as the reference's `or` makes it; a negative or
// fractional one, or another type, is an error (the reference fails on it).
func testReadLimits(v any) (runtime.TestLimits, error) {
	limits := runtime.DefaultTestLimits
	if v == nil {
		return limits, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return limits, fmt.Errorf("__test_read_config must be an object")
	}
	for _, f := range []struct {
		key  string
		into *int
	}{{"max_records", &limits.MaxRecords}, {"max_pages_per_slice", &limits.MaxPagesPerSlice}, {"max_slices", &limits.MaxSlices}, {"max_streams", &limits.MaxStreams}} {
		x, ok := m[f.key]
		if !ok || x == nil {
			continue
		}
		n, isInt := x.(int64)
		if fl, isFloat := x.(float64); isFloat && fl == float64(int64(fl)) {
			n, isInt = int64(fl), true
		}
		if !isInt || n < 0 {
			b, _ := json.Marshal(x)
			return limits, fmt.Errorf("__test_read_config.%s must be a whole number of at least 1, got %s", f.key, b)
		}
		if n > 0 {
			*f.into = int(min(n, 1<<31-1))
		}
	}
	return limits, nil
}
