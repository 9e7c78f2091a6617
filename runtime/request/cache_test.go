package request

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// countingAPI answers each path with its name and how many times it was
// asked, after delay; /missing answers 404.
func countingAPI(t *testing.T, delay time.Duration) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k := n.Add(1)
		time.Sleep(delay)
		if r.URL.Path == "/missing" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.Header().Set("X-Asked", fmt.Sprint(k))
		fmt.Fprintf(w, `{"path":%q,"token":%q}`, r.URL.Path, r.Header.Get("Authorization"))
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// withToken builds a GET whose Authorization the authenticator set.
func withToken(url, token string) func() (*http.Request, error) {
	return func() (*http.Request, error) {
		p := New("GET", url)
		p.Headers.Set("Authorization", token)
		p.Credentials.Headers = []string{"Authorization"}
		return p.HTTP(context.Background())
	}
}

func sendCached(t *testing.T, c *Client, use CacheUse, build func() (*http.Request, error)) *Response {
	t.Helper()
	resp, err := c.SendCached(context.Background(), use, build, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// An answer is kept whatever the credentials the request carried (a token
// refreshed since still finds it), in memory or, past the limit, in a file
// that is already deleted.
func TestCacheKeepsAnswersWithoutCredentialsInMemoryThenInAFile(t *testing.T) {
	for _, limit := range []int64{1 << 20, 0} {
		t.Run(fmt.Sprintf("limit %d", limit), func(t *testing.T) {
			srv, n := countingAPI(t, 0)
			c := NewClient(nil)
			cache := NewCache(limit, func(string, string) {})
			defer cache.Close()
			use := CacheUse{Cache: cache, Read: &CacheRead{}, Shared: true}
			first := sendCached(t, c, use, withToken(srv.URL+"/a", "Bearer one"))
			want := string(first.Body)
			first.Release()
			again := sendCached(t, c, use, withToken(srv.URL+"/a", "Bearer two"))
			if string(again.Body) != want || again.Header.Get("X-Asked") != "1" || n.Load() != 1 {
				t.Errorf("second answer %s (asked %s), %d requests", again.Body, again.Header.Get("X-Asked"), n.Load())
			}
			if limit == 0 {
				if cache.file == nil {
					t.Fatal("no file")
				}
				if _, err := os.Stat(cache.file.Name()); !os.IsNotExist(err) {
					t.Errorf("the cache's file %s is still in its directory: %v", cache.file.Name(), err)
				}
			}
			sendCached(t, c, use, withToken(srv.URL+"/b", "Bearer one"))
			if n.Load() != 2 {
				t.Errorf("another URL: %d requests, want 2", n.Load())
			}
		})
	}
}

// A user that does not share answers (use_cache: false) takes those of a
// read once it is complete only; an error is not kept.
func TestCacheUnsharedTakesCompleteReadsOnly(t *testing.T) {
	srv, n := countingAPI(t, 0)
	c := NewClient(nil)
	c.NoRetries = true
	cache := NewCache(1<<20, func(string, string) {})
	read := &CacheRead{}
	sendCached(t, c, CacheUse{Cache: cache, Read: read, Shared: true}, get(srv.URL+"/a"))
	other := CacheUse{Cache: cache, Read: &CacheRead{}}
	sendCached(t, c, other, get(srv.URL+"/a"))
	if n.Load() != 2 {
		t.Errorf("before the read is complete: %d requests, want 2", n.Load())
	}
	read.Complete()
	sendCached(t, c, other, get(srv.URL+"/a"))
	if n.Load() != 2 {
		t.Errorf("after: %d requests, want 2", n.Load())
	}
	for range 2 {
		c.SendCached(context.Background(), CacheUse{Cache: cache, Read: read, Shared: true}, get(srv.URL+"/missing"), nil, nil)
	}
	if n.Load() != 4 {
		t.Errorf("a 404 asked twice: %d requests, want 4", n.Load())
	}
}

// Shared users asking at the same time wait for the answer being fetched.
func TestCacheSharedWaitsForAnAnswerBeingFetched(t *testing.T) {
	srv, n := countingAPI(t, 50*time.Millisecond)
	c := NewClient(nil)
	cache := NewCache(1<<20, func(string, string) {})
	var wg sync.WaitGroup
	for range 5 {
		wg.Go(func() {
			resp, err := c.SendCached(context.Background(), CacheUse{Cache: cache, Read: &CacheRead{}, Shared: true}, get(srv.URL+"/a"), nil, nil)
			if err != nil || resp.Header.Get("X-Asked") != "1" {
				t.Errorf("%v %v", resp, err)
			}
		})
	}
	wg.Wait()
	if n.Load() != 1 {
		t.Errorf("%d requests, want 1", n.Load())
	}
}
