package request

import (
	"context"
	"sync"
	"time"
)

// holdOff is when each host may be asked again after it answered a request
// rate limited (a 429, or a RATE_LIMITED filter) with a wait: every request
// to that host waits, not only the one answered, so that a pool of workers
// does not keep knocking while the API asks it to slow down.
type holdOff struct {
	mu    sync.Mutex
	until map[string]time.Time
}

// set holds the host's requests back until until (a later hold stays).
func (h *holdOff) set(host string, until time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.until == nil {
		h.until = map[string]time.Time{}
	}
	if until.After(h.until[host]) {
		h.until[host] = until
	}
}

// holdOffWait sleeps until the host may be asked again.
func (c *Client) holdOffWait(ctx context.Context, host string) error {
	c.holdOff.mu.Lock()
	until := c.holdOff.until[host]
	c.holdOff.mu.Unlock()
	if d := until.Sub(c.Now()); d > 0 {
		return c.Sleep(ctx, d)
	}
	return nil
}
