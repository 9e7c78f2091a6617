package auth

import (
	"context"
	"net/http"
	"strings"

	"golang.org/x/oauth2"

	"github.com/airbyte-go/source-declarative/lang/datetime"
	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/protocol"
	"github.com/airbyte-go/source-declarative/runtime/failure"
	"github.com/airbyte-go/source-declarative/runtime/request"
)

// errNoRefresh is an expired access token without a token endpoint.
var errNoRefresh = &failure.Error{Failure: protocol.ConfigError, Message: "the access token has expired and the authenticator has no token_refresh_endpoint to get a new one"}

// oauth sends Authorization: Bearer <access token>. Tokens come from a
// composition of sources, as golang.org/x/oauth2 composes them: the token
// endpoint, wrapped for rotation persistence when the manifest has a refresh
// token updater, wrapped for reuse until expiry.
type oauth struct {
	tokens *reuseSource
}

func newOAuth(a *manifest.Auth, env *Env, vars interp.Vars) (*oauth, error) {
	o := a.OAuth
	var src tokenSource
	if o.Endpoint != nil {
		endpoint := &endpointSource{a: a, o: o, env: env, vars: vars, encoding: pinnedEncoding(o, env, vars)}
		src = endpoint
		if o.Updater != nil {
			src = &rotatingSource{src: endpoint, updater: o.Updater, env: env}
		}
	}
	seed, err := seedToken(a, env, vars)
	if err != nil {
		return nil, err
	}
	tokens := &reuseSource{src: src, now: env.Now, token: seed}
	if o.Updater != nil {
		tokens.shared = func() *oauth2.Token { return configToken(o.Updater, env) }
		tokens.refreshMu = env.RefreshMu
	}
	return &oauth{tokens: tokens}, nil
}

// pinnedEncoding is the body encoding the manifest asks for: its
// refresh_request_body_encoding, a query when it sends the fields as query
// parameters, or the encoding its refresh_request_headers' Content-Type
// names; empty when it leaves the choice to the endpoint.
func pinnedEncoding(o *manifest.OAuthConfig, env *Env, vars interp.Vars) string {
	switch {
	case o.InQuery:
		return encodingQuery
	case o.Encoding != "":
		return o.Encoding
	case o.Headers == nil:
		return ""
	}
	for _, k := range o.Headers.Keys {
		if !strings.EqualFold(k, "Content-Type") {
			continue
		}
		ct, _ := render(o.Headers.Values[k], vars)
		switch {
		case strings.Contains(ct, "x-www-form-urlencoded"):
			return manifest.EncodingForm
		case strings.Contains(ct, "json"):
			return manifest.EncodingJSON
		}
	}
	return ""
}

// seedToken is the access token the config already holds (rotation) or
// access_token_value gives, with its expiry; nil when there is none to trust.
func seedToken(a *manifest.Auth, env *Env, vars interp.Vars) (*oauth2.Token, error) {
	o := a.OAuth
	var access, expiry string
	if u := o.Updater; u != nil {
		access = interp.String(env.configValue(u.AccessTokenPath))
		expiry = interp.String(env.configValue(u.ExpiryDatePath))
	} else {
		var err error
		if access, err = render(o.AccessTokenValue, vars); err != nil {
			return nil, err
		}
		if expiry, err = render(o.TokenExpiryDate, vars); err != nil {
			return nil, err
		}
	}
	if access == "" {
		if o.Endpoint == nil {
			return nil, failure.Config("%s.access_token_value: renders empty and there is no token_refresh_endpoint; check the config", a.Path)
		}
		return nil, nil
	}
	env.secret(access)
	t := &oauth2.Token{AccessToken: access, TokenType: "Bearer"}
	if expiry != "" {
		exp, err := datetime.ParseDatetime(expiry)
		if err != nil {
			return nil, failure.Config("%s: the token expiry date %q is not a date: %v", a.Path, expiry, err)
		}
		t.Expiry = exp
	} else if o.Endpoint != nil {
		return nil, nil // an access token of unknown age is not trusted when it can be refreshed
	}
	return t, nil
}

// Apply adds Authorization: Bearer <access token>, refreshing first if needed.
func (o *oauth) Apply(ctx context.Context, p *request.Parts) error {
	t, err := o.tokens.Token(ctx)
	if err != nil {
		return err
	}
	return p.SetHeader("Authorization", "Bearer "+t.AccessToken)
}

// Invalidate throws the current access token away if the refused request
// carried it.
func (o *oauth) Invalidate(refused http.Header) {
	o.tokens.invalidate(strings.TrimPrefix(refused.Get("Authorization"), "Bearer "))
}
