package server

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	goruntime "runtime"
	"strconv"
	"strings"
	"time"

	"github.com/airbyte-go/source-declarative/components"
	"github.com/airbyte-go/source-declarative/runtime"
)

// route is what answers a path: its one method and its handler.
type route struct {
	method string
	handle func(s *Server, w http.ResponseWriter, r *http.Request)
}

// routes are the reference's paths, with their trailing slashes as it has
// them (a path written the other way is redirected, as Starlette does).
var routes = map[string]route{
	"/health/":                  {http.MethodGet, (*Server).health},
	"/capabilities/":            {http.MethodGet, (*Server).capabilities},
	"/v1/manifest/test_read":    {http.MethodPost, (*Server).testRead},
	"/v1/manifest/check":        {http.MethodPost, (*Server).check},
	"/v1/manifest/discover":     {http.MethodPost, (*Server).discover},
	"/v1/manifest/resolve":      {http.MethodPost, (*Server).resolve},
	"/v1/manifest/full_resolve": {http.MethodPost, (*Server).fullResolve},
}

// ServeHTTP routes a request and writes its access-log line: method, path,
// status and duration (never a body, a query or a header).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec := &statusWriter{ResponseWriter: w}
	defer func() {
		if p := recover(); p != nil {
			// A bug: the request fails, not the server. Only a runtime
			// error's text is logged (a panic value could hold data).
			what := fmt.Sprintf("%T", p)
			if re, ok := p.(goruntime.Error); ok {
				what = re.Error()
			}
			s.logf("internal error on %s %s: %s", r.Method, r.URL.EscapedPath(), what)
			if rec.status == 0 {
				writeDetail(rec, http.StatusInternalServerError, "Internal Server Error")
			}
		}
		gone := ""
		if r.Context().Err() != nil {
			gone = " (client gone)"
		}
		s.logf("%s %s %d %s%s", r.Method, r.URL.EscapedPath(), rec.status, time.Since(start).Round(time.Microsecond), gone)
	}()
	s.route(rec, r)
}

func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	rt, ok := routes[r.URL.Path]
	if !ok {
		other := r.URL.Path + "/"
		if strings.HasSuffix(r.URL.Path, "/") {
			other = strings.TrimSuffix(r.URL.Path, "/")
		}
		if _, ok := routes[other]; ok {
			s.redirect(w, r, other)
			return
		}
		writeDetail(w, http.StatusNotFound, "Not Found")
		return
	}
	if r.Method != rt.method {
		w.Header().Set("Allow", rt.method)
		writeDetail(w, http.StatusMethodNotAllowed, "Method Not Allowed")
		return
	}
	if strings.HasPrefix(r.URL.Path, "/v1/") && s.verify != nil {
		if refused := s.verify.check(r); refused != "" {
			w.Header().Set("WWW-Authenticate", "Bearer")
			writeDetail(w, http.StatusUnauthorized, refused)
			return
		}
	}
	rt.handle(s, w, r)
}

// redirect answers 307 to the same request at path, as Starlette's
// redirect_slashes does.
func (s *Server) redirect(w http.ResponseWriter, r *http.Request, path string) {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	u := scheme + "://" + r.Host + path
	if r.URL.RawQuery != "" {
		u += "?" + r.URL.RawQuery
	}
	w.Header().Set("Location", u)
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(http.StatusTemporaryRedirect)
}

func (s *Server) health(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (s *Server) capabilities(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]bool{"custom_code_execution": s.opts.CustomCode()})
}

// The request models of Airbyte's server (api_models/manifest.py).
var (
	manifestField = field{name: "manifest", kind: object, required: true}
	configField   = field{name: "config", kind: object, required: true, secret: true}
	contextField  = field{name: "context", kind: reqContext}

	testReadModel = []field{manifestField, configField, {name: "stream_name", kind: text, required: true},
		{name: "state", kind: anyList, dflt: []any{}}, {name: "custom_components_code", kind: maybeText},
		{name: "record_limit", kind: integer, min: 1, max: 5000, dflt: 100},
		{name: "page_limit", kind: integer, min: 1, max: 20, dflt: 5},
		{name: "slice_limit", kind: integer, min: 1, max: 20, dflt: 5}, contextField}
	checkModel       = []field{manifestField, configField, contextField}
	resolveModel     = []field{manifestField, contextField}
	fullResolveModel = []field{manifestField, configField, {name: "stream_limit", kind: integer, min: 1, max: 100, dflt: 100}, contextField}
)

func (s *Server) testRead(w http.ResponseWriter, r *http.Request) {
	req, ok := s.body(w, r, testReadModel)
	if !ok {
		return
	}
	config := req.object("config")
	if code, _ := req["custom_components_code"].(string); code != "" {
		injectComponents(config, code)
	}
	state, _ := json.Marshal(req["state"])
	s.run(w, r, "Error reading stream", func(ctx context.Context) (any, error) {
		read, err := s.opts.Commands.TestRead(ctx, TestRead{Manifest: req.object("manifest"), Config: config,
			Stream: req["stream_name"].(string), State: state, Limits: limits(req)})
		if err != nil {
			return nil, err
		}
		return newStreamReadResponse(read), nil
	})
}

func (s *Server) check(w http.ResponseWriter, r *http.Request) {
	req, ok := s.body(w, r, checkModel)
	if !ok {
		return
	}
	s.run(w, r, "Error checking connection", func(ctx context.Context) (any, error) {
		ok, message, err := s.opts.Commands.Check(ctx, req.object("manifest"), req.object("config"))
		if err != nil {
			return nil, err
		}
		return newCheckResponse(ok, message), nil
	})
}

func (s *Server) discover(w http.ResponseWriter, r *http.Request) {
	req, ok := s.body(w, r, checkModel)
	if !ok {
		return
	}
	s.run(w, r, "Error discovering streams", func(ctx context.Context) (any, error) {
		catalog, err := s.opts.Commands.Discover(ctx, req.object("manifest"), req.object("config"))
		if err != nil {
			return nil, err
		}
		return newDiscoverResponse(catalog), nil
	})
}

func (s *Server) resolve(w http.ResponseWriter, r *http.Request) {
	req, ok := s.body(w, r, resolveModel)
	if !ok {
		return
	}
	s.run(w, r, "Error resolving manifest", func(ctx context.Context) (any, error) {
		m, err := s.opts.Commands.Resolve(ctx, req.object("manifest"))
		return manifestResponse{m}, err
	})
}

func (s *Server) fullResolve(w http.ResponseWriter, r *http.Request) {
	req, ok := s.body(w, r, fullResolveModel)
	if !ok {
		return
	}
	s.run(w, r, "Error full resolving manifest", func(ctx context.Context) (any, error) {
		m, err := s.opts.Commands.FullResolve(ctx, req.object("manifest"), req.object("config"), req["stream_limit"].(int))
		return manifestResponse{m}, err
	})
}

// injectComponents puts custom components' code into the config as the
// platform injects it, with its md5 checksum, as Airbyte's server passes a
// test read's custom_components_code (hashlib.md5 of its UTF-8 bytes).
func injectComponents(config map[string]any, code string) {
	sum := md5.Sum([]byte(code))
	config[components.InjectedKey] = code
	config[components.ChecksumsKey] = map[string]any{"md5": hex.EncodeToString(sum[:])}
}

// run runs a command within the request's time limit and answers its
// result, or 400 with its error after the endpoint's words.
func (s *Server) run(w http.ResponseWriter, r *http.Request, failure string, command func(ctx context.Context) (any, error)) {
	ctx, cancel := context.WithTimeout(r.Context(), s.opts.RequestTimeout)
	defer cancel()
	v, err := command(ctx)
	if err != nil {
		detail := failure + ": " + err.Error()
		if errors.Is(ctx.Err(), context.DeadlineExceeded) && r.Context().Err() == nil {
			detail += fmt.Sprintf(" (the request ran past the server's limit of %s)", s.opts.RequestTimeout)
		}
		writeDetail(w, http.StatusBadRequest, detail)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// limits are a test read request's, as the runtime takes them.
func limits(req values) runtime.TestLimits {
	return runtime.TestLimits{MaxRecords: req["record_limit"].(int), MaxPagesPerSlice: req["page_limit"].(int), MaxSlices: req["slice_limit"].(int)}
}

// writeDetail answers FastAPI's error shape, {"detail": "..."}.
func writeDetail(w http.ResponseWriter, status int, detail string) {
	writeJSON(w, status, map[string]string{"detail": detail})
}

// writeJSON answers v as JSON, written as FastAPI writes it (no HTML
// escaping).
func writeJSON(w http.ResponseWriter, status int, v any) {
	b := marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	w.Write(b)
}

func marshal(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return []byte(`{"detail":"the answer could not be written as JSON"}`)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// statusWriter keeps the status a handler answered, for the access log.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}
