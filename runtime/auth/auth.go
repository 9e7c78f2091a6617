// Package auth implements the authenticators of a manifest: one file per
// method. An authenticator adds its credentials to a request under construction.
package auth

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/airbyte-go/source-declarative/components"
	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/runtime/request"
)

// Authenticator adds credentials to a request.
type Authenticator interface {
	Apply(ctx context.Context, p *request.Parts) error
}

// Refresher is an authenticator whose credentials can be thrown away and
// fetched again, after the API answered 401.
type Refresher interface {
	// Invalidate is told the headers of the refused request: credentials
	// newer than the ones it carried are kept, so that of several requests
	// refused with one revoked token only the first gets a new one.
	Invalidate(refused http.Header)
}

// Env is what authenticators need from the runtime.
type Env struct {
	Config   map[string]any // the connector config; rotated tokens are written into it
	ConfigMu *sync.Mutex    // guards Config
	// RefreshMu, shared by the connector's authenticators, lets one at a
	// time refresh the token they share through the config (a refresh token
	// updater), so that the others take the token it wrote instead of
	// refreshing too; nil: none.
	RefreshMu *sync.Mutex
	Now       func() time.Time
	Client    *request.Client
	// AddSecret registers a value to mask in every log and trace.
	AddSecret func(string)
	Log       func(level, msg string)
	// ConfigUpdated is called with the whole config after a token rotation;
	// it must print (and flush) the CONTROL message before returning.
	ConfigUpdated func(map[string]any) error
	// Login sends a session-token login request.
	Login func(ctx context.Context, r *manifest.Requester) (*request.Response, error)
	// Exchange is told of every token or login request, for test reads.
	Exchange func(title, description string, req *request.Parts, resp *request.Response)
	// Components runs a custom authenticator; nil: none runs.
	Components *components.Host
}

func (e *Env) log(level, msg string) {
	if e.Log != nil {
		e.Log(level, msg)
	}
}

func (e *Env) secret(s string) {
	if e.AddSecret != nil && s != "" {
		e.AddSecret(s)
	}
}

// New builds the authenticator of a manifest component; nil means no auth.
func New(a *manifest.Auth, env *Env) (Authenticator, error) {
	if a == nil {
		return nil, nil
	}
	vars := interp.Vars{"config": env.Config, "parameters": orEmpty(a.Parameters)}
	switch a.Type {
	case manifest.BasicAuth:
		return &basic{a: a, vars: vars}, nil
	case manifest.BearerAuth:
		return &bearer{a: a, vars: vars}, nil
	case manifest.APIKeyAuth:
		return &apiKey{a: a, vars: vars}, nil
	case manifest.OAuth:
		return newOAuth(a, env, vars)
	case manifest.JWTAuth:
		return &jwtAuth{a: a, c: a.JWT, env: env, vars: vars}, nil // jwt.go
	case manifest.SessionToken:
		return newSession(a, env, vars)
	case manifest.LegacySessionToken:
		return &legacySession{a: a, l: a.Legacy, env: env, vars: vars}, nil // legacysession.go
	case manifest.Selective:
		return newSelective(a, env) // selective.go (records lane)
	case manifest.CustomAuth:
		return &custom{a: a, env: env}, nil // custom.go
	}
	return nil, fmt.Errorf("%s: unsupported authenticator %s", a.Path, a.Type)
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// render renders a credential template to text; a missing value is empty.
func render(t *interp.Template, vars interp.Vars) (string, error) {
	if t == nil {
		return "", nil
	}
	return t.Render(vars)
}

// tokenText is a token read from a JSON response as text: a number as the
// response wrote it (12345678901234567890 and 1e10 unchanged, not turned
// into a float), anything else as interp.String gives it.
func tokenText(v any) string {
	if n, ok := v.(json.Number); ok {
		return string(n)
	}
	return interp.String(v)
}
