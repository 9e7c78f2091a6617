// Package server answers the API of Airbyte's manifest server (the Connector
// Builder's backend, airbyte_cdk/manifest_server, its contract in the CDK's
// openapi.yaml): GET /health/ and /capabilities/, POST /v1/manifest/
// test_read, check, discover, resolve and full_resolve. Each request runs the
// commands the command line runs (Commands), in this process, on its own
// config, masker, authenticators and caches, within a time limit and a body
// size, cancelled when its client goes away.
package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/airbyte-go/source-declarative/protocol"
	"github.com/airbyte-go/source-declarative/runtime"
)

// Commands run the builder's requests; the cli package's run each on the
// code of the command line's own commands. Each call is one request, with
// nothing shared with another. An error is the request's failure, already
// masked, answered 400.
type Commands interface {
	TestRead(ctx context.Context, req TestRead) (*runtime.StreamRead, error)
	Check(ctx context.Context, manifest, config map[string]any) (ok bool, message string, err error)
	Discover(ctx context.Context, manifest, config map[string]any) (*protocol.Catalog, error)
	Resolve(ctx context.Context, manifest map[string]any) (map[string]any, error)
	FullResolve(ctx context.Context, manifest, config map[string]any, streamLimit int) (map[string]any, error)
}

// TestRead is one test read: a stream of a manifest, with its config (the
// builder's testing values), from its state (a JSON list of state messages),
// within limits.
type TestRead struct {
	Manifest, Config map[string]any
	Stream           string
	State            []byte
	Limits           runtime.TestLimits
}

// Options configure a server.
type Options struct {
	Commands Commands
	// Secret, when set, is AB_JWT_SIGNATURE_SECRET: every /v1 request needs
	// a bearer token signed with it.
	Secret string
	// MaxBody bounds a request's body in bytes (413 past it).
	MaxBody int64
	// RequestTimeout bounds the time a request runs; its read is cancelled
	// past it.
	RequestTimeout time.Duration
	// CustomCode tells whether custom components can run here
	// (/capabilities/' custom_code_execution).
	CustomCode func() bool
	// Log takes the access log, one line per request, and the server's own
	// lines (nil: none).
	Log io.Writer
}

// Defaults of Options.
const (
	DefaultMaxBody        = 32 << 20
	DefaultRequestTimeout = 5 * time.Minute
)

// Server is the manifest server's HTTP handler.
type Server struct {
	opts   Options
	verify *verifier // nil without a secret
	logMu  sync.Mutex
}

// New returns the handler of the manifest server's API.
func New(opts Options) *Server {
	if opts.MaxBody <= 0 {
		opts.MaxBody = DefaultMaxBody
	}
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = DefaultRequestTimeout
	}
	if opts.CustomCode == nil {
		opts.CustomCode = func() bool { return false }
	}
	s := &Server{opts: opts}
	if opts.Secret != "" {
		s.verify = newVerifier(opts.Secret)
	}
	return s
}

// logf prints one line of the server's log.
func (s *Server) logf(format string, args ...any) {
	if s.opts.Log == nil {
		return
	}
	line := time.Now().UTC().Format(time.RFC3339) + " " + fmt.Sprintf(format, args...) + "\n"
	s.logMu.Lock()
	defer s.logMu.Unlock()
	io.WriteString(s.opts.Log, line)
}

// Serve answers on ln until ctx ends (SIGTERM), then stops: no new
// connection is accepted, the requests in flight get up to grace to finish,
// and are cancelled past it.
func (s *Server) Serve(ctx context.Context, ln net.Listener, grace time.Duration) error {
	requests, cancelRequests := context.WithCancel(context.Background())
	defer cancelRequests()
	hs := &http.Server{Handler: s, ReadHeaderTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute,
		BaseContext: func(net.Listener) context.Context { return requests }}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	s.logf("stopping: no new request accepted; those in flight have %s to finish", grace)
	stop, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	err := hs.Shutdown(stop)
	if errors.Is(err, context.DeadlineExceeded) {
		s.logf("stopping: the requests still in flight after %s are cancelled", grace)
		cancelRequests()
		// The cancelled requests answer what they have; then every
		// connection is closed.
		last, cancelLast := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancelLast()
		if hs.Shutdown(last) != nil {
			hs.Close()
		}
		err = nil
	}
	if serr := <-served; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}
