package auth

import (
	"context"
	"sync"
	"time"

	"golang.org/x/oauth2"
)

// tokenSource gives OAuth access tokens. It is golang.org/x/oauth2's
// TokenSource with the context of the request that needs the token, so that
// sources compose as there: a refreshing source, wrapped for rotation
// persistence, wrapped for reuse until expiry.
type tokenSource interface {
	Token(ctx context.Context) (*oauth2.Token, error)
}

// reuseSource hands out its token until it expires by the injected clock,
// then asks src for a new one; one refresh at a time. Unlike x/oauth2 it does
// not refresh early: a token is used until its expiry, as the seed says.
type reuseSource struct {
	src tokenSource // nil: the token can never be refreshed
	now func() time.Time
	// shared is the token the connector's authenticators share (the config's,
	// under a refresh token updater), taken before asking src when it is
	// valid and not refused; nil: none.
	shared func() *oauth2.Token
	// refreshMu, shared with the other authenticators of the shared token,
	// is held from reading it to writing a new one; nil: none.
	refreshMu *sync.Mutex

	mu      sync.Mutex
	token   *oauth2.Token
	refused string // the access token the API last refused
}

func (r *reuseSource) Token(ctx context.Context) (*oauth2.Token, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.valid() {
		return r.token, nil
	}
	if r.shared != nil {
		if r.refreshMu != nil {
			r.refreshMu.Lock()
			defer r.refreshMu.Unlock()
		}
		if t := r.shared(); t != nil && t.AccessToken != r.refused {
			if r.token = t; r.valid() {
				return t, nil
			}
		}
	}
	if r.src == nil {
		return nil, errNoRefresh
	}
	t, err := r.src.Token(ctx)
	if err != nil {
		return nil, err
	}
	r.token = t
	return t, nil
}

func (r *reuseSource) valid() bool {
	if r.token == nil || r.token.AccessToken == "" {
		return false
	}
	return r.token.Expiry.IsZero() || r.now().Before(r.token.Expiry)
}

// invalidate throws the current token away, after the API refused the
// access token used; a token other than used (already refreshed) is kept.
func (r *reuseSource) invalidate(used string) {
	r.mu.Lock()
	if r.token != nil && r.token.AccessToken == used {
		r.token, r.refused = nil, used
	}
	r.mu.Unlock()
}
