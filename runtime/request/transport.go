package request

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/airbyte-go/source-declarative/protocol"
)

// Response is a whole HTTP response.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
	URL    string
	// Ignored is set when the error handler said IGNORE: no records, no next page.
	Ignored bool
}

// Client sends requests with retries, backoff and the manifest's error handler.
type Client struct {
	HTTP           *http.Client
	MaxBody        int64         // largest response body read, in bytes
	BaseDelay      time.Duration // first backoff of the default exponential strategy
	MaxDelay       time.Duration // largest single wait
	MaxElapsed     time.Duration // total time spent retrying one request
	MaxRetries     int           // default retries when the manifest sets none
	Log            func(level, msg string)
	Sleep          func(ctx context.Context, d time.Duration) error
	HeartbeatEvery time.Duration
	Now            func() time.Time
	Budget         *Budget // the manifest's api_budget; nil: no rate limit
}

// NewClient returns a client with production defaults.
func NewClient(log func(level, msg string)) *Client {
	transport := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          64,
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   30 * time.Second,
		ResponseHeaderTimeout: 120 * time.Second,
	}
	return &Client{
		HTTP:           &http.Client{Transport: transport, Timeout: 300 * time.Second},
		MaxBody:        256 << 20,
		BaseDelay:      time.Second,
		MaxDelay:       5 * time.Minute,
		MaxElapsed:     30 * time.Minute,
		MaxRetries:     5,
		Log:            log,
		Sleep:          sleep,
		HeartbeatEvery: 30 * time.Second,
		Now:            time.Now,
	}
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
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	c.Budget.Observe(req, resp.StatusCode, resp.Header)
	limit := c.MaxBody
	if limit <= 0 {
		limit = 256 << 20
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading the response body: %v", err)
	}
	if int64(len(body)) > limit {
		return &Response{Status: resp.StatusCode, Header: resp.Header, URL: req.URL.Redacted()},
			&Error{Failure: protocol.SystemError, Message: fmt.Sprintf("response of %s %s is larger than %d bytes", req.Method, req.URL.Redacted(), limit)}
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: body, URL: req.URL.Redacted()}, nil
}

// BodyStart is the first bytes of a body, for error messages.
func BodyStart(b []byte) string {
	const n = 200
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > n {
		s = s[:n] + "..."
	}
	if s == "" {
		return "(empty body)"
	}
	return s
}
