package request

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/runtime/failure"
)

// Response is an HTTP response, its body read whole (unless a body reader
// read it as it arrived: see WithBodyReader).
type Response struct {
	Status int
	Header http.Header
	Body   []byte
	URL    string
	// Ignored is set when the error handler said IGNORE, or SUCCESS for a
	// status of 400 or more: no records, no next page.
	Ignored bool
	buffer  *[]byte // Body's buffer, from the pool (see Release)
}

// Client sends requests with retries, backoff and the manifest's error handler.
type Client struct {
	HTTP       *http.Client
	MaxBody    int64         // largest response body read, in bytes
	BaseDelay  time.Duration // first backoff of the default exponential strategy
	MaxElapsed time.Duration // no retry once this long has passed since a request's first attempt
	MaxRetries int           // default retries when the manifest sets none
	NoRetries  bool          // one attempt whatever the manifest says (the builder's test reads)
	Log        func(level, msg string)
	// RateLimited, when set, is told of each rate-limited answer to a
	// stream's request (see ForStream), as the reference prints a stream
	// status RUNNING with the reason RATE_LIMITED.
	RateLimited    func(stream string)
	Sleep          func(ctx context.Context, d time.Duration) error
	HeartbeatEvery time.Duration
	Now            func() time.Time
	Budget         *Budget // the manifest's api_budget; nil: no rate limit
	// Debug, when set and true, logs a DEBUG summary of every request and response.
	Debug func() bool
	// InFlight, when set, bounds the requests in flight at once (a sync's
	// concurrency_level): each holds a place from when it is sent until its
	// body is read, or until its headers came for a body read as it arrives
	// (whose reader may make requests of its own).
	InFlight chan struct{}
	// HoldsSecret, when set, tells whether a text holds a secret (a config
	// value marked airbyte_secret, a token): such a value goes only where
	// the authenticator's credentials go (see Authenticate, checkRedirect).
	HoldsSecret func(text string) bool
	// AddSecret, when set, makes a value a secret for the rest of the run:
	// every credential an authenticator puts on a request, as sent.
	AddSecret func(string)

	holdOff holdOff // rate-limited hosts: when they may be asked again

	withheldFrom sync.Map // hosts whose requests went without credentials, said in a WARN (Authenticate)
}

// NewClient returns a client with production defaults; with
// DEPLOYMENT_MODE=cloud, it requests public https URLs only (see forCloud).
func NewClient(log func(level, msg string)) *Client {
	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	transport := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           dialer.DialContext,
		MaxIdleConns:          64,
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   30 * time.Second,
		ResponseHeaderTimeout: 120 * time.Second,
	}
	var rt http.RoundTripper = transport
	if CloudMode() {
		rt = forCloud(transport, dialer)
	}
	c := &Client{
		HTTP:           &http.Client{Transport: rt, Timeout: 300 * time.Second},
		MaxBody:        256 << 20,
		BaseDelay:      time.Second,
		MaxElapsed:     10 * time.Minute,
		MaxRetries:     5,
		Log:            log,
		Sleep:          sleep,
		HeartbeatEvery: 30 * time.Second,
		Now:            time.Now,
	}
	c.HTTP.CheckRedirect = c.checkRedirect
	return c
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (c *Client) log(level, msg string) {
	if c.Log != nil {
		c.Log(level, msg)
	}
}

// wait sleeps, logging a heartbeat during long waits so the platform sees life.
func (c *Client) wait(ctx context.Context, d time.Duration) error {
	for d > 0 {
		step := d
		if c.HeartbeatEvery > 0 && step > c.HeartbeatEvery {
			step = c.HeartbeatEvery
		}
		if err := c.Sleep(ctx, step); err != nil {
			return err
		}
		d -= step
		if d > 0 {
			c.log("INFO", fmt.Sprintf("Still waiting before retrying: %s left", d.Round(time.Second)))
		}
	}
	return nil
}

func (c *Client) do(req *http.Request) (*Response, error) {
	if err := c.Budget.Acquire(req.Context(), req); err != nil {
		return nil, err
	}
	release, err := c.acquire(req.Context())
	if err != nil {
		return nil, err
	}
	defer release()
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	c.Budget.Observe(req, resp.StatusCode, resp.Header)
	r := &Response{Status: resp.StatusCode, Header: resp.Header, URL: req.URL.Redacted()}
	body, err := decompressed(resp)
	if err != nil {
		return nil, fmt.Errorf("reading the response body: %v", err)
	}
	if br, ok := req.Context().Value(bodyReaderKey{}).(*bodyReader); ok && r.Status < 400 && decide(br.policy, r).kind == manifest.ActionSuccess {
		release()
		return r, br.read(r, body)
	}
	limit := c.MaxBody
	if limit <= 0 {
		limit = 256 << 20
	}
	size := resp.ContentLength
	if body != resp.Body {
		size = -1 // decompressed
	}
	r.buffer, err = readBody(body, size, limit)
	r.Body = *r.buffer
	if err != nil {
		return nil, fmt.Errorf("reading the response body: %v", err)
	}
	if int64(len(r.Body)) > limit {
		r.Body = nil
		return r, failure.System("response of %s %s is larger than %d bytes", req.Method, req.URL.Redacted(), limit)
	}
	return r, nil
}

// decompressed is the body without its Content-Encoding (gzip or deflate)
// when Go's transport has not removed it already: it does only when it
// asked for gzip itself, not when the manifest sends Accept-Encoding. A
// body without the gzip magic bytes is read as it is.
func decompressed(resp *http.Response) (io.Reader, error) {
	if resp.Uncompressed {
		return resp.Body, nil
	}
	enc := strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding")))
	if enc != "gzip" && enc != "x-gzip" && enc != "deflate" {
		return resp.Body, nil
	}
	br := bufio.NewReader(resp.Body)
	head, _ := br.Peek(2)
	var body io.Reader
	switch {
	case len(head) < 2:
		return br, nil
	case enc == "deflate" && head[0]&0x0f == 8 && (uint16(head[0])<<8|uint16(head[1]))%31 == 0:
		zr, err := zlib.NewReader(br)
		if err != nil {
			return nil, err
		}
		body = zr
	case enc == "deflate":
		body = flate.NewReader(br) // raw deflate, as some servers send it
	case head[0] == 0x1f && head[1] == 0x8b:
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, err
		}
		body = zr
	default:
		return br, nil
	}
	resp.Header.Del("Content-Encoding")
	resp.Header.Del("Content-Length")
	return body, nil
}

// bodyReader reads the body of a successful response as it arrives.
type bodyReader struct {
	policy *Policy
	read   func(*Response, io.Reader) error
}

type bodyReaderKey struct{}

// WithBodyReader makes the requests sent with ctx hand the body of a
// response that the policy p deems a success to read, as it arrives,
// instead of reading it whole (a streaming decoder's records are emitted
// before the body ends; Response.Body stays nil). An error of read retries
// the request like a broken connection, unless it is a *failure.Error,
// which is final. p must not read bodies (see ReadsBody): success is
// decided on the status and headers.
func WithBodyReader(ctx context.Context, p *Policy, read func(resp *Response, body io.Reader) error) context.Context {
	return context.WithValue(ctx, bodyReaderKey{}, &bodyReader{policy: p, read: read})
}

// ReadsBody tells whether a policy looks into response bodies
// (error_message_contains, predicate, a custom handler or backoff strategy,
// which Python is handed the response of), so that it needs bodies read whole.
func (p *Policy) ReadsBody() bool {
	if p == nil {
		return false
	}
	for _, b := range p.backoffs {
		if b.custom != nil {
			return true
		}
	}
	return p.custom != nil || handlerReadsBody(p.handler)
}

func handlerReadsBody(h *manifest.ErrorHandler) bool {
	for _, f := range h.Filters {
		if f.MessageContains != "" || f.Predicate != nil {
			return true
		}
	}
	for _, sub := range h.Handlers {
		if handlerReadsBody(sub) {
			return true
		}
	}
	return false
}

// BodyStart is the first bytes of a body, for error messages; a binary
// body (compressed, an archive) is only its size.
func BodyStart(b []byte) string {
	const n = 200
	head := b[:min(len(b), 4*n)]
	for i := 0; i < utf8.UTFMax && len(head) < len(b) && !utf8.Valid(head); i++ {
		head = head[:len(head)-1] // a character cut in two
	}
	if !utf8.Valid(head) || bytes.ContainsFunc(head, func(r rune) bool { return r < 0x20 && r != '\n' && r != '\r' && r != '\t' }) {
		return fmt.Sprintf("(%d bytes of binary data)", len(b))
	}
	s := strings.Join(strings.Fields(string(head)), " ")
	if len(s) > n {
		cut := n
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	if s == "" {
		return "(empty body)"
	}
	return s
}
