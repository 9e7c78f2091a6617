package auth

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/protocol"
	"github.com/airbyte-go/source-declarative/runtime/decode"
	"github.com/airbyte-go/source-declarative/runtime/failure"
	"github.com/airbyte-go/source-declarative/runtime/request"
)

// session logs in at the login requester, reads the token at
// session_token_path and reuses it until expiration_duration has passed;
// without a duration it logs in once before every data request.
type session struct {
	a    *manifest.Auth
	s    *manifest.SessionConfig
	env  *Env
	vars interp.Vars

	mu      sync.Mutex
	token   string
	expires time.Time
}

func newSession(a *manifest.Auth, env *Env, vars interp.Vars) (*session, error) {
	return &session{a: a, s: a.Session, env: env, vars: vars}, nil
}

// Invalidate forgets the session token, whatever the refused request
// carried (it may sit in a header, the query or the body).
func (s *session) Invalidate(http.Header) {
	s.mu.Lock()
	s.token = ""
	s.mu.Unlock()
}

func (s *session) Apply(ctx context.Context, p *request.Parts) error {
	token, err := s.sessionToken(ctx)
	if err != nil {
		return err
	}
	if s.s.Bearer {
		return p.SetHeader("Authorization", "Bearer "+token)
	}
	vars := interp.Vars{"config": s.vars["config"], "parameters": s.vars["parameters"], "session_token": token}
	value := any(token)
	if s.s.APIToken != nil {
		if value, err = s.s.APIToken.Render(vars); err != nil {
			return err
		}
	}
	return request.Inject(p, s.s.Inject, value, vars)
}

func (s *session) sessionToken(ctx context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.s.Expiration != nil && s.token != "" && !s.env.Now().After(s.expires) {
		return s.token, nil
	}
	resp, err := s.env.Login(request.GetsCredentials(ctx), s.s.Login)
	if err != nil {
		return "", loginError(err)
	}
	if resp.Ignored {
		// The login requester's error handler said IGNORE (or SUCCESS of an
		// error status): there is no token to read, as the reference says.
		return "", &failure.Error{Failure: protocol.SystemError, Message: fmt.Sprintf("session token login failed: the login requester's error handler ignored the answer HTTP %d from %s", resp.Status, resp.URL)}
	}
	body, err := decode.Value(s.s.Decoder, resp.Body, s.env.Client.MaxBody)
	if err != nil {
		return "", &failure.Error{Failure: protocol.SystemError, Message: fmt.Sprintf("session token login %s answered HTTP %d: %v: %s", resp.URL, resp.Status, err, request.DescribeBody(resp.Header, resp.Body))}
	}
	v := body
	for _, k := range s.s.TokenPath {
		m, ok := v.(map[string]any)
		if !ok {
			v = nil
			break
		}
		v = m[k]
	}
	token := tokenText(v)
	if token == "" {
		return "", &failure.Error{Failure: protocol.SystemError, Message: fmt.Sprintf("%s.session_token_path: no token at [%s] in the login response", s.a.Path, strings.Join(s.s.TokenPath, ", "))}
	}
	s.env.secret(token)
	s.token = token
	if s.s.Expiration != nil {
		s.expires = s.s.Expiration.AddTo(s.env.Now())
	}
	return token, nil
}

// loginError is a failed login without the HTTP status of its response: a
// 401 of the login endpoint means wrong credentials, not a data request's
// expired session that a new login would cure.
func loginError(err error) error {
	return withMessage(err, "session token login failed: ")
}

// withMessage puts a prefix before an error's message, keeping its failure
// type and technical detail but not the HTTP status of its response.
func withMessage(err error, prefix string) error {
	if f := failure.As(err); f != nil {
		return &failure.Error{Failure: f.Failure, Message: prefix + f.Message, Internal: f.Internal}
	}
	return fmt.Errorf("%s%w", prefix, err)
}
