package auth

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/oauth2"

	"github.com/airbyte-go/source-declarative/lang/datetime"
	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/protocol"
	"github.com/airbyte-go/source-declarative/runtime/failure"
)

// rotatingSource persists what a refresh returns under a refresh token
// updater: the new access token, refresh token and expiry go into the config,
// and the config is announced (a CONTROL message, flushed, and --write-config)
// before the new access token is handed out, so that a refresh token the
// server has spent is never the one the platform keeps.
type rotatingSource struct {
	src     tokenSource
	updater *manifest.TokenUpdater
	env     *Env
}

func (r *rotatingSource) Token(ctx context.Context) (*oauth2.Token, error) {
	t, err := r.src.Token(ctx)
	if err != nil {
		return nil, err
	}
	u := r.updater
	r.env.ConfigMu.Lock()
	manifest.Set(r.env.Config, u.AccessTokenPath, t.AccessToken)
	if t.RefreshToken != "" {
		manifest.Set(r.env.Config, u.RefreshTokenPath, t.RefreshToken)
	} else {
		r.env.log(protocol.LevelWarn, fmt.Sprintf("The token response has no new refresh token (property %q); keeping the current one", u.RefreshTokenName))
	}
	manifest.Set(r.env.Config, u.ExpiryDatePath, isoformat(t.Expiry))
	snapshot := manifest.DeepCopy(r.env.Config).(map[string]any)
	r.env.ConfigMu.Unlock()
	if r.env.ConfigUpdated != nil {
		if err := r.env.ConfigUpdated(snapshot); err != nil {
			return nil, failure.System("cannot save the rotated refresh token: %v", err)
		}
	}
	return t, nil
}

// isoformat writes a time in UTC as the CDK writes the expiry date into the
// config (Python's isoformat): with microseconds unless they are zero.
func isoformat(t time.Time) string {
	if t.Nanosecond()/1000 == 0 {
		return t.UTC().Format("2006-01-02T15:04:05-07:00")
	}
	return t.UTC().Format("2006-01-02T15:04:05.000000-07:00")
}

// configToken is the access token the config holds under a refresh token
// updater, with its expiry, where another authenticator of the connector may
// have written it; nil without one, or without an expiry date.
func configToken(u *manifest.TokenUpdater, env *Env) *oauth2.Token {
	access := interp.String(env.configValue(u.AccessTokenPath))
	expiry, err := datetime.ParseDatetime(interp.String(env.configValue(u.ExpiryDatePath)))
	if access == "" || err != nil {
		return nil
	}
	return &oauth2.Token{AccessToken: access, TokenType: "Bearer", Expiry: expiry}
}

// configValue reads the config at path under the config lock.
func (e *Env) configValue(path []string) any {
	e.ConfigMu.Lock()
	defer e.ConfigMu.Unlock()
	return getPath(e.Config, path)
}

func getPath(m map[string]any, path []string) any {
	var cur any = m
	for _, k := range path {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = mm[k]
	}
	return cur
}
