package differential

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// A manifest server process, ours (`BIN serve`) or Airbyte's (refcdk7's
// airbyte_cdk.manifest_server), each started once for every manifest: the
// manifest comes with each request.

// ServerSecret signs the bearer tokens of both servers in the comparison
// (AB_JWT_SIGNATURE_SECRET): every request carries a valid token, and the
// 401 cases are compared too.
const ServerSecret = "differential-secret"

// ManifestServer is a running manifest server.
type ManifestServer struct {
	Name   string // "ours" or "reference"
	URL    string
	cmd    *exec.Cmd
	stderr *lockedBuffer // its log, for a failure's message
	exited chan struct{}
}

// lockedBuffer is a buffer written by one goroutine and read by others.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// offlineEnv is the environment of a server under comparison: the secret,
// no custom code, and proxies at a closed local port (NO_PROXY for
// loopback, where the mocks are) so that a manifest naming a real host
// cannot reach it.
func offlineEnv() ([]string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch strings.ToUpper(name) {
		case "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "AB_JWT_SIGNATURE_SECRET", "AIRBYTE_ENABLE_UNSAFE_CODE":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HTTP_PROXY="+closed, "HTTPS_PROXY="+closed, "http_proxy="+closed, "https_proxy="+closed,
		"NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost", "AB_JWT_SIGNATURE_SECRET="+ServerSecret), nil
}

// StartOurServer runs `binary serve` on a free port.
func StartOurServer(binary string) (*ManifestServer, error) {
	env, err := offlineEnv()
	if err != nil {
		return nil, err
	}
	s := &ManifestServer{Name: "ours", cmd: exec.Command(binary, "serve", "--port", "0"), stderr: &lockedBuffer{}, exited: make(chan struct{})}
	s.cmd.Env = env
	pipe, err := s.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	lines := bufio.NewReader(pipe)
	first, err := lines.ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(first), "manifest server listening on ")
	if err != nil || !ok {
		s.cmd.Process.Kill()
		return nil, fmt.Errorf("our server did not start: %q %v", first, err)
	}
	s.URL = addr
	go func() {
		io.Copy(s.stderr, lines) // the access log, kept for a failure's message
		s.cmd.Wait()
		close(s.exited)
	}()
	return s, nil
}

// StartReferenceServer runs Airbyte's manifest server (uvicorn) on a free
// port and waits for its /health/.
func StartReferenceServer(refcdk7 string) (*ManifestServer, error) {
	env, err := offlineEnv()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	s := &ManifestServer{Name: "reference", URL: "http://127.0.0.1:" + strconv.Itoa(port), stderr: &lockedBuffer{}, exited: make(chan struct{})}
	s.cmd = exec.Command(refcdk7, "--python", "-m", "airbyte_cdk.manifest_server.cli.run", "start", "--port", strconv.Itoa(port))
	s.cmd.Env, s.cmd.Stdout, s.cmd.Stderr = env, io.Discard, s.stderr
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { s.cmd.Wait(); close(s.exited) }()
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		select {
		case <-s.exited:
			return nil, fmt.Errorf("the reference's server exited: %s", lastLines(s.stderr.String(), 5))
		default:
		}
		if resp, err := http.Get(s.URL + "/health/"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s, nil
			}
		}
	}
	s.Stop()
	return nil, fmt.Errorf("the reference's server did not answer /health/ in 90 s")
}

// Pid is the server's process id.
func (s *ManifestServer) Pid() int { return s.cmd.Process.Pid }

// Stop ends the server: SIGTERM, then SIGKILL after 10 s.
func (s *ManifestServer) Stop() {
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
	}
}

// Response is one answer of a manifest server.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
	JSON   any // the body decoded as the comparison reads outputs (numbers as float64), nil when it is no JSON
	server string
}

// location is the Location header, the server's address in it as SERVER.
func (r Response) location() string {
	return strings.ReplaceAll(r.Header.Get("Location"), r.server, "SERVER")
}

// serverTimeout bounds one request to either server.
const serverTimeout = 2 * time.Minute

// Post sends body (JSON, or raw bytes) to path with headers ("Name", "value"
// pairs); with a valid bearer token unless headers name Authorization.
func (s *ManifestServer) Post(path string, body any, headers ...string) (Response, error) {
	var raw []byte
	switch b := body.(type) {
	case []byte:
		raw = b
	case string:
		raw = []byte(b)
	default:
		var err error
		if raw, err = json.Marshal(body); err != nil {
			return Response{}, err
		}
	}
	return s.Send(http.MethodPost, path, string(raw), headers...)
}

// Send sends a request of method to path, with body (JSON) when it is not
// empty, headers as Post takes them, and a valid bearer token unless
// headers name Authorization ("" takes a header away).
func (s *ManifestServer) Send(method, path, body string, headers ...string) (Response, error) {
	ctx, cancel := context.WithTimeout(context.Background(), serverTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, s.URL+path, strings.NewReader(body))
	if err != nil {
		return Response{}, err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+Token(ServerSecret, `{"sub":"differential"}`))
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i+1] == "" {
			req.Header.Del(headers[i])
			continue
		}
		req.Header.Set(headers[i], headers[i+1])
	}
	r, err := s.do(req)
	r.server = s.URL
	return r, err
}

func (s *ManifestServer) do(req *http.Request) (Response, error) {
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		return Response{}, fmt.Errorf("%s server: %v (%s)", s.Name, err, lastLines(s.stderr.String(), 3))
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return Response{}, err
	}
	out := Response{Status: resp.StatusCode, Header: resp.Header, Body: b}
	if json.Unmarshal(b, &out.JSON) != nil {
		out.JSON = nil
	}
	return out, nil
}

// Token is an HS256 JWT of claims (JSON) signed with secret.
func Token(secret, claims string) string {
	enc := base64.RawURLEncoding.EncodeToString
	input := enc([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." + enc([]byte(claims))
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(input))
	return input + "." + enc(mac.Sum(nil))
}
