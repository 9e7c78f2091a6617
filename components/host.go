// Package components runs the custom Python components of a manifest in
// Airbyte's own CDK: one long-lived Python child per command (the host,
// host.py, embedded), started only when the manifest names a custom
// component. The host builds every custom component with the CDK's own
// factory and answers calls on its interface; Go keeps everything else.
// Go talks to it over two pipes of their own (not the child's stdout, where
// the CDK and components print: that is forwarded as LOG messages).
package components

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/protocol"
)

//go:embed host.py
var hostPy []byte

// DefaultTimeout bounds one call on a component (a page extracted, a
// request authenticated): a host past it is stopped, its component named.
const DefaultTimeout = 5 * time.Minute

// Options say how to start a host.
type Options struct {
	Python   string         // the interpreter (FindPython)
	Code     *Code          // components.py, nil when the classes are importable
	Manifest map[string]any // the manifest as written (the CDK resolves it again)
	Config   map[string]any // the config as the runtime has it (migrated, transformed)
	// Log prints a LOG message: what the host's Python logs, and what it
	// prints on stdout (INFO) and stderr (WARN).
	Log func(level, msg string)
	// Auth answers a stream read whole by the CDK: the credentials Go's
	// authenticator of that stream puts on a request.
	Auth func(ctx context.Context, req *AuthRequest) (*AuthAnswer, error)
	// ConfigUpdated is told what the connector's code changed in the
	// config (TakeConfig).
	ConfigUpdated func([]ConfigChange)
	Timeout       time.Duration // per call; DefaultTimeout when zero
}

// AuthRequest is a request of a stream read whole by the CDK, to authenticate.
type AuthRequest struct {
	Stream  string            `json:"stream"`
	Method  string            `json:"method"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
	Body    []byte            `json:"-"`
}

// AuthAnswer is what Go's authenticator put on the request: headers to set
// and the URL with its query.
type AuthAnswer struct {
	Headers map[string]string `json:"headers"`
	URL     string            `json:"url"`
}

// Host is a running components host.
type Host struct {
	opts Options
	cmd  *exec.Cmd
	in   *os.File // Go's end of the pipe the host reads
	w    *bufio.Writer
	wmu  sync.Mutex
	r    *bufio.Reader

	mu      sync.Mutex
	next    int64
	pending map[int64]chan frame
	ended   chan struct{} // closed when the host's replies end
	endErr  *Error
	// Built are the paths of the custom components the CDK built (Build).
	Built []string
	// CDK is the version of airbyte-cdk the host runs.
	CDK string

	stderr *tailWriter
	output sync.WaitGroup // the goroutines forwarding stdout and stderr

	configMu sync.Mutex
	config   map[string]any // the config the host's Python has (TakeConfig)
}

// Start starts the host and builds the manifest's components; the host ends
// with Close. Python that is missing or lacks airbyte_cdk 7.x is a
// config_error saying what to install or which image has it.
func Start(ctx context.Context, o Options) (*Host, error) {
	h, err := launch(ctx, o)
	if err != nil {
		return nil, err
	}
	params := map[string]any{"manifest": o.Manifest, "config": o.Config}
	if o.Code != nil {
		params["code"], params["code_name"] = o.Code.Text, o.Code.Name
	}
	h.knowConfig(o.Config)
	if err := h.Call(ctx, nil, "init", params, nil, nil); err != nil {
		h.Close()
		return nil, err
	}
	return h, nil
}

// Probe starts a host with python and ends it once it says hello: the
// version of airbyte-cdk it runs, or why it cannot run custom components
// (as Start would say).
func Probe(ctx context.Context, python string) (cdk string, err error) {
	h, err := launch(ctx, Options{Python: python})
	if err != nil {
		return "", err
	}
	h.Close()
	return h.CDK, nil
}

// launch starts the host's Python and reads its hello.
func launch(ctx context.Context, o Options) (*Host, error) {
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Log == nil {
		o.Log = func(string, string) {}
	}
	dir, err := os.MkdirTemp("", "components-host-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir) // Python has read the script once it says hello
	script := filepath.Join(dir, "host.py")
	if err := os.WriteFile(script, hostPy, 0o600); err != nil {
		return nil, err
	}
	toHost, fromGo, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	toGo, fromHost, err := os.Pipe()
	if err != nil {
		toHost.Close()
		fromGo.Close()
		return nil, err
	}
	h := &Host{opts: o, pending: map[int64]chan frame{}, ended: make(chan struct{}), stderr: &tailWriter{}}
	h.cmd = exec.Command(o.Python, "-u", script)
	h.cmd.ExtraFiles = []*os.File{toHost, fromHost} // fds 3 and 4
	// Go has decided that the components may run (Permit): the CDK's own
	// gate is opened for the host alone.
	h.cmd.Env = append(os.Environ(), UnsafeEnv+"=true", "PYTHONDONTWRITEBYTECODE=1")
	stdout, err := h.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := h.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := h.cmd.Start(); err != nil {
		toHost.Close()
		fromGo.Close()
		toGo.Close()
		fromHost.Close()
		return nil, &Error{Message: missingPython(fmt.Sprintf("%s: %v", o.Python, err)), Failure: protocol.ConfigError}
	}
	toHost.Close()
	fromHost.Close()
	h.in = fromGo
	h.w, h.r = bufio.NewWriterSize(fromGo, 64<<10), bufio.NewReaderSize(toGo, 64<<10)
	h.output.Add(2)
	go h.forward(stdout, protocol.LevelInfo, nil)
	go h.forward(stderr, protocol.LevelWarn, h.stderr)
	if err := h.hello(ctx); err != nil {
		h.kill()
		return nil, err
	}
	go h.read()
	return h, nil
}

// Build builds the custom components of the streams named (nil: of every
// stream) with the config the runtime settled (after the spec's config
// rules): the CDK's factory gets it as each component's config.
func (h *Host) Build(ctx context.Context, config map[string]any, streams []string) error {
	var built struct {
		Built []string `json:"built"`
	}
	params := map[string]any{"config": config}
	if streams != nil {
		params["streams"] = streams
	}
	h.knowConfig(config)
	if err := h.Call(ctx, nil, "build", params, nil, &built); err != nil {
		return err
	}
	h.Built = built.Built
	return nil
}

// ConfigRules runs the spec's config_normalization_rules (with custom
// ones) as the CDK runs them: the migrated config (to write back when it
// changed) and the config after transformations, validated.
// Their numbers are read as a config file's are (a whole number an int64),
// so that an unchanged config compares equal and a count of 2 stays 2.
func (h *Host) ConfigRules(ctx context.Context, c *manifest.Custom, config map[string]any) (migrated, transformed map[string]any, err error) {
	var out struct {
		Migrated json.RawMessage `json:"migrated"`
		Config   json.RawMessage `json:"config"`
	}
	if err := h.Call(ctx, c, "config", map[string]any{"config": config}, nil, &out); err != nil {
		return nil, nil, err
	}
	if migrated, err = configObject(out.Migrated); err == nil {
		transformed, err = configObject(out.Config)
	}
	if err != nil {
		return nil, nil, &Error{Component: c, Message: "unreadable answer: " + err.Error()}
	}
	h.knowConfig(transformed)
	return migrated, transformed, nil
}

// configObject reads a config the host answered.
func configObject(text []byte) (map[string]any, error) {
	v, err := manifest.FromJSON(text)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("the config is not an object")
	}
	return m, nil
}

// hello reads the host's first frame: the versions it runs, or why it
// cannot run.
func (h *Host) hello(ctx context.Context) error {
	type hello struct {
		Hello *struct {
			CDK string `json:"cdk"`
		} `json:"hello"`
		Error string `json:"error"`
	}
	got := make(chan error, 1)
	go func() {
		f, err := readFrame(h.r)
		if err != nil {
			h.output.Wait()
			got <- &Error{Message: missingPython(fmt.Sprintf("%s ended before it started the host: %s", h.opts.Python, orText(h.stderr.last(), err.Error()))), Failure: protocol.ConfigError}
			return
		}
		var m hello
		if err := json.Unmarshal(f.header, &m); err != nil || m.Hello == nil {
			got <- &Error{Message: missingPython(fmt.Sprintf("%s: %s", h.opts.Python, orText(m.Error, "no hello"))), Failure: protocol.ConfigError}
			return
		}
		h.CDK = m.Hello.CDK
		if !strings.HasPrefix(m.Hello.CDK, "7.") {
			got <- &Error{Message: missingPython(fmt.Sprintf("%s has airbyte-cdk %s", h.opts.Python, m.Hello.CDK)), Failure: protocol.ConfigError}
			return
		}
		got <- nil
	}()
	select {
	case err := <-got:
		return err
	case <-time.After(h.opts.Timeout):
		return &Error{Message: fmt.Sprintf("%s did not start the host within %s", h.opts.Python, h.opts.Timeout)}
	case <-ctx.Done():
		return ctx.Err()
	}
}

func orText(s, def string) string {
	if s != "" {
		return s
	}
	return def
}

// reply is the header of a frame from the host.
type reply struct {
	Re     *int64          `json:"re"`
	OK     json.RawMessage `json:"ok"`
	Error  *pythonError    `json:"error"`
	Msg    json.RawMessage `json:"msg"`
	Call   *int64          `json:"call"`
	Op     string          `json:"op"`
	Log    string          `json:"log"`
	Detail string          `json:"message"`
	Config json.RawMessage `json:"config"` // a config the connector's code changed
}

// read hands each frame of the host to the call it answers, until the host ends.
func (h *Host) read() {
	defer close(h.ended)
	for {
		f, err := readFrame(h.r)
		if err != nil {
			h.output.Wait()
			msg := "the host ended"
			if last := h.stderr.last(); last != "" {
				msg += ": " + last
			} else if !errors.Is(err, io.EOF) {
				msg += ": " + err.Error()
			}
			h.mu.Lock()
			if h.endErr == nil {
				h.endErr = &Error{Message: msg}
			}
			h.mu.Unlock()
			return
		}
		var r reply
		if err := json.Unmarshal(f.header, &r); err != nil {
			continue
		}
		switch {
		case r.Log != "":
			h.opts.Log(logLevel(r.Log), r.Detail)
		case r.Config != nil:
			if config, err := configObject(r.Config); err == nil {
				h.TakeConfig(config)
			}
		case r.Call != nil:
			go h.answer(*r.Call, r.Op, f)
		case r.Re != nil:
			h.mu.Lock()
			ch := h.pending[*r.Re]
			h.mu.Unlock()
			if ch != nil {
				ch <- f
			}
		}
	}
}

// logLevel is the protocol's level of a Python or Airbyte log level.
func logLevel(level string) string {
	switch level {
	case "WARN", "WARNING":
		return protocol.LevelWarn
	case "ERROR", "FATAL", "CRITICAL":
		return "ERROR"
	case "DEBUG", "TRACE":
		return "DEBUG"
	}
	return protocol.LevelInfo
}

// LogLevel is logLevel for the runtime (the LOG messages of a stream the
// CDK reads).
func LogLevel(level string) string { return logLevel(level) }

// answer serves a call of the host: op auth, Go's authenticator.
func (h *Host) answer(id int64, op string, f frame) {
	out := map[string]any{"re_call": id}
	var err error
	switch op {
	case "auth":
		var req AuthRequest
		if err = json.Unmarshal(f.header, &req); err == nil {
			req.Body = f.blob
			var ans *AuthAnswer
			if h.opts.Auth == nil {
				err = errors.New("no authenticator")
			} else if ans, err = h.opts.Auth(context.Background(), &req); err == nil {
				out["ok"] = ans
			}
		}
	default:
		err = fmt.Errorf("unknown call %q", op)
	}
	if err != nil {
		out["error"] = err.Error()
	}
	h.send(out, nil)
}

func (h *Host) send(header any, blob []byte) error {
	h.wmu.Lock()
	defer h.wmu.Unlock()
	return writeFrame(h.w, header, blob)
}

// Call asks the host to run op on the component c (nil: the host itself,
// or a whole stream), with params and a blob, and decodes its answer into
// result; the answer's blob is returned. A Python exception, a crash or a
// call past the time limit is an *Error naming c.
func (h *Host) Call(ctx context.Context, c *manifest.Custom, op string, params map[string]any, blob []byte, result any) error {
	_, err := h.call(ctx, c, op, params, blob, result, nil, h.opts.Timeout)
	return err
}

// CallBlob is Call returning the answer's blob (records as JSON lines).
func (h *Host) CallBlob(ctx context.Context, c *manifest.Custom, op string, params map[string]any, blob []byte, result any) ([]byte, error) {
	return h.call(ctx, c, op, params, blob, result, nil, h.opts.Timeout)
}

// Stream runs a long op (a stream read whole by the CDK): each message it
// sends before its answer goes to onMessage, in order; no time limit but ctx.
func (h *Host) Stream(ctx context.Context, c *manifest.Custom, op string, params map[string]any, result any, onMessage func(json.RawMessage) error) error {
	_, err := h.call(ctx, c, op, params, nil, result, onMessage, 0)
	return err
}

func (h *Host) call(ctx context.Context, c *manifest.Custom, op string, params map[string]any, blob []byte, result any, onMessage func(json.RawMessage) error, timeout time.Duration) ([]byte, error) {
	h.mu.Lock()
	if h.endErr != nil {
		err := h.withComponent(c)
		h.mu.Unlock()
		return nil, err
	}
	h.next++
	id := h.next
	ch := make(chan frame, 16)
	h.pending[id] = ch
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.pending, id)
		h.mu.Unlock()
	}()
	header := make(map[string]any, len(params)+2)
	for k, v := range params {
		header[k] = v
	}
	header["id"], header["op"] = id, op
	if c != nil {
		header["path"] = c.Path
	}
	if err := h.send(header, blob); err != nil {
		return nil, h.ending(c)
	}
	var limit <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		limit = t.C
	}
	var msgErr error
	for {
		select {
		case f := <-ch:
			var r reply
			if err := json.Unmarshal(f.header, &r); err != nil {
				return nil, &Error{Component: c, Message: "unreadable answer: " + err.Error()}
			}
			if r.Msg != nil {
				if onMessage != nil && msgErr == nil {
					msgErr = onMessage(r.Msg)
				}
				continue
			}
			if r.Error != nil {
				return nil, r.Error.err(c)
			}
			if msgErr != nil {
				return nil, msgErr
			}
			if result != nil && len(r.OK) > 0 {
				if err := json.Unmarshal(r.OK, result); err != nil {
					return nil, &Error{Component: c, Message: "unreadable answer: " + err.Error()}
				}
			}
			return f.blob, nil
		case <-h.ended:
			return nil, h.ending(c)
		case <-limit:
			h.kill()
			return nil, &Error{Component: c, Message: fmt.Sprintf("no answer within %s: the components host was stopped", timeout)}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (h *Host) ending(c *manifest.Custom) error {
	<-h.ended
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.withComponent(c)
}

func (h *Host) withComponent(c *manifest.Custom) error {
	e := *h.endErr
	e.Component = c
	return &e
}

// Close ends the host: its input closes, and a host that does not end
// within a few seconds is killed.
func (h *Host) Close() {
	h.wmu.Lock()
	h.in.Close()
	h.wmu.Unlock()
	done := make(chan struct{})
	go func() {
		h.output.Wait() // Wait closes the pipes: what they hold is read first
		_ = h.cmd.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		h.kill()
		<-done
	}
}

func (h *Host) kill() {
	if h.cmd.Process != nil {
		_ = h.cmd.Process.Kill()
	}
}

// forward prints each line the host's Python writes on stdout or stderr as
// a LOG message, but a config it prints as a CONTROL message (TakeConfig);
// tail keeps stderr's last lines for a crash's message.
func (h *Host) forward(r io.Reader, level string, tail *tailWriter) {
	defer h.output.Done()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if line == "" {
			continue
		}
		if config, ok := ConnectorConfig([]byte(line)); ok {
			h.TakeConfig(config) // not a log: it holds the secrets
			continue
		}
		if tail != nil {
			tail.add(line)
		}
		if lvl, msg, ok := airbyteLog(line); ok {
			h.opts.Log(lvl, msg)
			continue
		}
		h.opts.Log(level, line)
	}
}

// airbyteLog reads a LOG message the CDK's logger printed (its
// AirbyteLogFormatter writes each log record so), for its level and text.
func airbyteLog(line string) (level, msg string, ok bool) {
	if !strings.HasPrefix(line, `{"type":"LOG"`) && !strings.HasPrefix(line, `{"type": "LOG"`) {
		return "", "", false
	}
	var m struct {
		Log struct {
			Level   string `json:"level"`
			Message string `json:"message"`
		} `json:"log"`
	}
	if err := json.Unmarshal([]byte(line), &m); err != nil || m.Log.Level == "" {
		return "", "", false
	}
	return logLevel(m.Log.Level), m.Log.Message, true
}

// tailWriter keeps the last line written.
type tailWriter struct {
	mu   sync.Mutex
	line string
}

func (t *tailWriter) add(line string) {
	t.mu.Lock()
	t.line = string(bytes.TrimSpace([]byte(line)))
	t.mu.Unlock()
}

func (t *tailWriter) last() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.line
}
