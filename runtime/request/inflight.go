package request

import (
	"context"
	"sync"
)

// acquire takes a place among the requests in flight (InFlight), waiting
// for one; release gives it back.
func (c *Client) acquire(ctx context.Context) (release func(), err error) {
	if c.InFlight == nil {
		return func() {}, nil
	}
	select {
	case c.InFlight <- struct{}{}:
		var once sync.Once
		return func() { once.Do(func() { <-c.InFlight }) }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
