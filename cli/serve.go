package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/airbyte-go/source-declarative/components"
	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/protocol"
	"github.com/airbyte-go/source-declarative/runtime"
	"github.com/airbyte-go/source-declarative/runtime/incremental"
	"github.com/airbyte-go/source-declarative/server"
)

// secretEnv is the variable whose value signs the manifest server's bearer
// tokens, as in Airbyte's server (helpers/auth.py).
const secretEnv = "AB_JWT_SIGNATURE_SECRET"

// serveFlags are the flags of serve.
type serveFlags struct {
	host           string
	port           int
	maxBody        int64
	requestTimeout time.Duration
	grace          time.Duration
}

func (a *app) serveCommand() *cobra.Command {
	c := a.command("serve", "Answer the Connector Builder's manifest server API (Airbyte's airbyte_cdk/manifest_server) over HTTP", true, a.runServer)
	f := c.Flags()
	f.StringVar(&a.serve.host, "host", "127.0.0.1", "address to listen on: this machine only by default; 0.0.0.0 for every interface (set "+secretEnv+" then)")
	f.IntVar(&a.serve.port, "port", 8000, "port to listen on")
	f.Int64Var(&a.serve.maxBody, "max-body", server.DefaultMaxBody, "largest request body in bytes (413 past it)")
	f.DurationVar(&a.serve.requestTimeout, "request-timeout", server.DefaultRequestTimeout, "longest time a request runs; its read is cancelled past it")
	f.DurationVar(&a.serve.grace, "shutdown-timeout", 30*time.Second, "on SIGTERM, how long the requests in flight have to finish before they are cancelled")
	return c
}

// runServer serves until SIGTERM or SIGINT, then stops gracefully.
func (a *app) runServer(ctx context.Context) error {
	if a.manifestPath != "" || a.debug {
		return errors.New("serve takes its manifests from its requests and logs one line per request: --manifest and --debug do not apply")
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(a.serve.host, strconv.Itoa(a.serve.port)))
	if err != nil {
		fmt.Fprintln(a.stderr, "error:", err)
		return exitError{1}
	}
	secret := os.Getenv(secretEnv)
	custom, why := a.customCode(ctx)
	s := server.New(server.Options{Commands: builderCommands{python: a.python}, Secret: secret, MaxBody: a.serve.maxBody,
		RequestTimeout: a.serve.requestTimeout, CustomCode: func() bool { return custom }, Log: a.stderr})
	fmt.Fprintf(a.stderr, "manifest server listening on http://%s\n", ln.Addr())
	ip := net.ParseIP(a.serve.host)
	loopback := a.serve.host == "localhost" || ip != nil && ip.IsLoopback()
	if loopback {
		fmt.Fprintln(a.stderr, "bound to the loopback interface: only this machine can connect (--host to listen elsewhere)")
	} else {
		fmt.Fprintf(a.stderr, "bound to %s: other machines can connect\n", a.serve.host)
	}
	switch {
	case secret != "":
		fmt.Fprintf(a.stderr, "every /v1 request needs a bearer token (an HS256 JWT signed with %s)\n", secretEnv)
	case loopback:
		fmt.Fprintf(a.stderr, "%s is not set: every request passes without a token\n", secretEnv)
	default:
		fmt.Fprintf(a.stderr, "WARNING: %s is not set: anyone who can reach %s can run manifests (and their requests) here\n", secretEnv, ln.Addr())
	}
	fmt.Fprintln(a.stderr, why)
	if err := s.Serve(ctx, ln, a.serve.grace); err != nil {
		fmt.Fprintln(a.stderr, "error:", err)
		return exitError{1}
	}
	return nil
}

// customCode tells whether the server runs a request's custom components
// (custom_code_execution), and why, in a line for the log: only with
// AIRBYTE_ENABLE_UNSAFE_CODE true, as Airbyte's server, and, unlike it
// (which says true on the variable alone), only when a Python with
// airbyte-cdk 7.x is there to run them, asked once at start.
func (a *app) customCode(ctx context.Context) (bool, string) {
	if !(components.Origin{}).Unsafe() {
		return false, "custom components: refused (" + components.UnsafeEnv + " is not true)"
	}
	python, err := components.FindPython(a.python, nil)
	if err == nil {
		var cdk string
		if cdk, err = components.Probe(ctx, python); err == nil {
			return true, fmt.Sprintf("custom components: run by %s (airbyte-cdk %s), one host process per request", python, cdk)
		}
	}
	return false, "custom components: refused: " + runtime.OneLine(err)
}

// builderCommands run the manifest server's requests on the command line's
// own commands (server.Commands), each request on an app of its own, its
// custom components (if any) in a components host of its own run by python
// (--python; empty for AIRBYTE_PYTHON or python3).
type builderCommands struct{ python string }

// requestApp is the app of one request: its manifest and config in memory,
// the manifest injected in the config as the platform injects it (so that
// every rule for a manifest that comes from the config holds for it), and
// a masker and a writer of its own; what the command prints goes nowhere
// but to Tap. What it holds beyond the request ends with it (release).
func (b builderCommands) requestApp(m, config map[string]any) *app {
	cfg := make(map[string]any, len(config)+1)
	maps.Copy(cfg, config)
	cfg[manifest.InjectedKey] = m
	a := &app{out: protocol.NewWriter(io.Discard), masker: runtime.NewMasker(), config: cfg, python: b.python, stdout: io.Discard, stderr: io.Discard}
	a.out.SetMasker(a.masker)
	return a
}

// release ends what a request's app holds beyond the request: its
// components host, if one started, and its client's idle connections to
// the API (each request has a client of its own, whose connections would
// otherwise stay open for their idle timeout, one set per request).
func (a *app) release() {
	a.closeComponents()
	if a.runner != nil {
		a.runner.Client.HTTP.CloseIdleConnections()
	}
}

// masked is err's text with the request's secrets masked.
func (a *app) masked(err error) error {
	return errors.New(a.masker.Mask(runtime.OneLine(err)))
}

func (b builderCommands) TestRead(ctx context.Context, req server.TestRead) (*runtime.StreamRead, error) {
	a := b.requestApp(req.Manifest, req.Config)
	defer a.release()
	a.stream, a.limits = req.Stream, req.Limits
	states, err := incremental.ParseStates(req.State)
	if err != nil {
		return nil, fmt.Errorf("state: %v", err)
	}
	read, serr := a.streamRead(ctx, states)
	if serr != nil {
		return nil, a.masked(serr)
	}
	return read, nil
}

// commandOutput are the messages a command printed that the server answers with.
type commandOutput struct {
	status  *protocol.ConnectionStatus
	catalog *protocol.Catalog
	failure *protocol.TraceError // the first error TRACE
}

func (a *app) tap() *commandOutput {
	p := &commandOutput{}
	a.out.Tap(func(m *protocol.Message) {
		switch {
		case m.ConnectionStatus != nil:
			p.status = m.ConnectionStatus
		case m.Catalog != nil:
			p.catalog = m.Catalog
		case m.Trace != nil && m.Trace.Error != nil && p.failure == nil:
			p.failure = m.Trace.Error
		}
	})
	return p
}

// Check answers as Airbyte's server reads its entrypoint's check: an error
// TRACE fails the request, else the CONNECTION_STATUS says. A custom
// component that may not run fails the check instead, as there (the CDK
// refuses it while making the streams, which its check reports as FAILED).
func (b builderCommands) Check(ctx context.Context, m, config map[string]any) (bool, string, error) {
	a := b.requestApp(m, config)
	defer a.release()
	p := a.tap()
	err := a.check(ctx)
	switch {
	case p.failure != nil && p.status != nil && strings.Contains(p.failure.Message, components.ErrNotPermitted.Error()):
		return false, p.status.Message, nil
	case p.failure != nil:
		return false, "", errors.New(p.failure.Message)
	case p.status == nil && err != nil:
		return false, "", a.masked(err)
	case p.status == nil:
		return false, "", errors.New("check printed no connection status")
	}
	return p.status.Status == "SUCCEEDED", p.status.Message, nil
}

func (b builderCommands) Discover(ctx context.Context, m, config map[string]any) (*protocol.Catalog, error) {
	a := b.requestApp(m, config)
	defer a.release()
	p := a.tap()
	err := a.discover(ctx)
	switch {
	case p.failure != nil:
		return nil, errors.New(p.failure.Message)
	case p.catalog == nil && err != nil:
		return nil, a.masked(err)
	case p.catalog == nil:
		return nil, errors.New("discover printed no catalog")
	}
	return p.catalog, nil
}

func (b builderCommands) Resolve(_ context.Context, m map[string]any) (map[string]any, error) {
	a := b.requestApp(m, nil)
	resolved, err := a.resolvedManifest(a.config)
	if err != nil {
		return nil, a.masked(err)
	}
	return resolved, nil
}

func (b builderCommands) FullResolve(ctx context.Context, m, config map[string]any, streamLimit int) (map[string]any, error) {
	a := b.requestApp(m, config)
	defer a.release()
	resolved, err := a.fullResolvedManifest(ctx, streamLimit)
	if err != nil {
		return nil, a.masked(err)
	}
	return resolved, nil
}
