package request

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/airbyte-go/source-declarative/protocol"
	"github.com/airbyte-go/source-declarative/runtime/failure"
)

// Cache keeps the answers of a sync's requests for identical requests made
// later in the sync, as Airbyte's use_cache does (requests-cache, kept for
// the whole process): a 200 answer, keyed by method, URL, headers and body
// without the authenticator's credentials (a refreshed token still finds
// it). Bodies are kept in memory up to a limit, then in a temporary file
// that is deleted as soon as it is made, so that nothing is left behind
// even when the process is killed (the open file holds the space until it
// exits).
type Cache struct {
	mu      sync.Mutex
	entries map[cacheKey]*cached
	inMem   int64 // bytes of bodies kept in memory
	limit   int64
	file    *os.File
	size    int64 // bytes written to the file
	spilled bool  // whether the move to the file was logged
	log     func(level, msg string)
}

type cacheKey [sha256.Size]byte

// cached is one answer kept, or being fetched until done is closed.
type cached struct {
	done   chan struct{}
	read   *CacheRead
	ok     bool // fetched and kept; false: the fetch failed, the entry is gone
	status int
	header http.Header
	url    string
	body   []byte // nil when in the file
	off, n int64
}

// CacheRead is one read of a stream whose answers the cache keeps: a read as
// a stream of the catalog, or as the parent of another stream.
type CacheRead struct{ complete atomic.Bool }

// Complete says that the read went to its end: its answers now serve the
// requests that do not share answers still being read (CacheUse.Shared).
func (r *CacheRead) Complete() { r.complete.Store(true) }

// CacheUse is how a requester's requests use the cache; the zero value does
// not use it.
type CacheUse struct {
	Cache *Cache
	Read  *CacheRead // the read the answers kept belong to
	// Shared (use_cache) takes any answer kept, also one being fetched, for
	// which it waits rather than asking again; otherwise only the answers of
	// a complete read are taken.
	Shared bool
}

// Complete says that the read of u went to its end (see CacheRead.Complete).
func (u CacheUse) Complete() {
	if u.Read != nil {
		u.Read.Complete()
	}
}

// NewCache returns an empty cache keeping up to limit bytes of bodies in
// memory.
func NewCache(limit int64, log func(level, msg string)) *Cache {
	return &Cache{entries: map[cacheKey]*cached{}, limit: limit, log: log}
}

// Close forgets every answer and closes the file.
func (c *Cache) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries = map[cacheKey]*cached{}
	if c.file == nil {
		return nil
	}
	err := c.file.Close()
	c.file = nil
	return err
}

// SendCached is SendChecked through the cache: an answer kept for the same
// request is taken (when check accepts it) instead of asking the API, and
// a 200 answer asked for is kept. A body read as it arrives (WithBodyReader)
// is neither taken nor kept.
func (c *Client) SendCached(ctx context.Context, use CacheUse, build func() (*http.Request, error), p *Policy, check func(*Response) error) (*Response, error) {
	if use.Cache == nil || use.Read == nil || ctx.Value(bodyReaderKey{}) != nil {
		return c.SendChecked(ctx, build, p, check)
	}
	req, err := build()
	if err != nil {
		return nil, buildError(err)
	}
	key, err := keyOf(req)
	if err != nil {
		return c.SendChecked(ctx, build, p, check)
	}
	built := false
	again := func() (*http.Request, error) {
		if !built {
			built = true
			return req, nil
		}
		return build()
	}
	hit, claim, err := use.Cache.take(ctx, key, use)
	if err != nil {
		return nil, failure.Transient("%s %s stopped while waiting for the same request of another stream: %v", req.Method, req.URL.Redacted(), err)
	}
	if hit != nil {
		resp, err := use.Cache.response(hit)
		if err == nil && (check == nil || check(resp) == nil) {
			c.debugCached(req, resp)
			return resp, nil
		}
		if resp != nil {
			resp.Release()
		}
	}
	resp, err := c.SendChecked(ctx, again, p, check)
	if claim != nil {
		use.Cache.settle(key, claim, resp, err)
	}
	return resp, err
}

// take finds the answer kept for key, waiting for one being fetched when
// use shares answers. Without one it claims key (the caller then asks and
// settles the claim), unless an answer not to be taken is kept or being
// fetched: then the caller asks without keeping the answer.
func (c *Cache) take(ctx context.Context, key cacheKey, use CacheUse) (hit, claim *cached, err error) {
	for {
		c.mu.Lock()
		e := c.entries[key]
		if e == nil {
			e = &cached{done: make(chan struct{}), read: use.Read}
			c.entries[key] = e
			c.mu.Unlock()
			return nil, e, nil
		}
		c.mu.Unlock()
		select {
		case <-e.done:
			if !e.ok {
				continue // the fetch failed and its entry is gone: claim it
			}
			if use.Shared || e.read.complete.Load() {
				return e, nil, nil
			}
			return nil, nil, nil
		default:
		}
		if !use.Shared {
			return nil, nil, nil
		}
		select {
		case <-e.done:
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	}
}

// settle keeps the answer of a claimed request, or gives the claim up when
// there is nothing to keep (an error, a status other than 200, an answer
// the error handler ignored or one that cannot be kept).
func (c *Cache) settle(key cacheKey, e *cached, resp *Response, err error) {
	defer close(e.done)
	if err == nil && resp != nil && resp.Status == http.StatusOK && !resp.Ignored && resp.Body != nil && c.keep(e, resp) {
		e.ok = true
		return
	}
	c.mu.Lock()
	delete(c.entries, key)
	c.mu.Unlock()
}

// keep copies the answer into the entry: its body in memory while the
// bodies kept there stay under the limit, in the file after.
func (c *Cache) keep(e *cached, resp *Response) bool {
	e.status, e.header, e.url = resp.Status, resp.Header.Clone(), resp.URL
	n := int64(len(resp.Body))
	c.mu.Lock()
	if c.inMem+n <= c.limit {
		c.inMem += n
		c.mu.Unlock()
		e.body = slices.Clone(resp.Body)
		if e.body == nil {
			e.body = []byte{}
		}
		return true
	}
	if c.file == nil && !c.openFile() {
		c.mu.Unlock()
		return false
	}
	f, off := c.file, c.size
	c.size += n
	c.mu.Unlock()
	if _, err := f.WriteAt(resp.Body, off); err != nil {
		c.log(protocol.LevelWarn, fmt.Sprintf("Response cache: writing to its temporary file failed (%v); the answer is not kept", err))
		return false
	}
	e.off, e.n = off, n
	return true
}

// openFile makes the file bodies go to past the memory limit, deleted at
// once; with c.mu held.
func (c *Cache) openFile() bool {
	f, err := os.CreateTemp("", "source-declarative-cache-*")
	if err != nil {
		if !c.spilled {
			c.spilled = true
			c.log(protocol.LevelWarn, fmt.Sprintf("Response cache: no temporary file (%v); answers past %d bytes are not kept", err, c.limit))
		}
		return false
	}
	os.Remove(f.Name())
	c.file = f
	c.spilled = true
	c.log(protocol.LevelInfo, fmt.Sprintf("Response cache: more than %d bytes of answers kept in memory; the next ones go to a temporary file, already deleted (its space is freed when the sync ends)", c.limit))
	return true
}

// response is a kept answer as a new Response whose body the reader may
// release.
func (c *Cache) response(e *cached) (*Response, error) {
	n := e.n
	if e.body != nil {
		n = int64(len(e.body))
	}
	bp := bodies.Get().(*[]byte)
	if int64(cap(*bp)) < n {
		*bp = make([]byte, n)
	}
	buf := (*bp)[:n]
	*bp = buf
	resp := &Response{Status: e.status, Header: e.header.Clone(), URL: e.url, Body: buf, buffer: bp}
	if e.body != nil {
		copy(buf, e.body)
		return resp, nil
	}
	c.mu.Lock()
	f := c.file
	c.mu.Unlock()
	if f == nil {
		return resp, fmt.Errorf("the cache is closed")
	}
	if _, err := f.ReadAt(buf, e.off); err != nil {
		return resp, err
	}
	return resp, nil
}

// keyOf identifies what a request asks for: method, URL, headers and body,
// without what the authenticator put in them.
func keyOf(req *http.Request) (cacheKey, error) {
	cred, _ := req.Context().Value(sentCredentialsKey{}).(Credentials)
	if cred.Body {
		return cacheKey{}, fmt.Errorf("credentials in the body")
	}
	h := sha256.New()
	u := *req.URL
	if len(cred.Query) > 0 {
		q := u.Query()
		for _, k := range cred.Query {
			q.Del(k)
		}
		u.RawQuery = q.Encode()
	}
	io.WriteString(h, req.Method+" "+u.String()+"\n")
	skip := map[string]bool{}
	for _, k := range cred.Headers {
		skip[http.CanonicalHeaderKey(k)] = true
	}
	names := make([]string, 0, len(req.Header))
	for k := range req.Header {
		if !skip[http.CanonicalHeaderKey(k)] {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	for _, k := range names {
		io.WriteString(h, k+": "+strings.Join(req.Header[k], "\x00")+"\n")
	}
	if req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			return cacheKey{}, err
		}
		_, err = io.Copy(h, body)
		body.Close()
		if err != nil {
			return cacheKey{}, err
		}
	}
	var k cacheKey
	h.Sum(k[:0])
	return k, nil
}

// debugCached logs, with --debug, an answer taken from the cache.
func (c *Client) debugCached(req *http.Request, resp *Response) {
	if c.Debug == nil || !c.Debug() {
		return
	}
	c.log(protocol.LevelDebug, fmt.Sprintf("Response HTTP %d to %s %s taken from the cache: %d bytes", resp.Status, req.Method, resp.URL, len(resp.Body)))
}
