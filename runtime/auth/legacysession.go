package auth

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"

	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/protocol"
	"github.com/airbyte-go/source-declarative/runtime/failure"
	"github.com/airbyte-go/source-declarative/runtime/request"
)

// legacySession is Airbyte's deprecated LegacySessionTokenAuthenticator:
// the config's session token, when a GET of validate_session_url with it
// is not refused with 401; else a token from POSTing the username and
// password as JSON to login_url, read at session_token_response_key. Unlike
// Airbyte, which validates the token before every request, the token is
// settled once per run, and the paths are joined to url_base with one slash.
type legacySession struct {
	a    *manifest.Auth
	l    *manifest.LegacySessionConfig
	env  *Env
	vars interp.Vars

	mu    sync.Mutex
	token string
}

func (s *legacySession) Apply(ctx context.Context, p *request.Parts) error {
	token, err := s.sessionToken(ctx)
	if err != nil {
		return err
	}
	header, err := render(s.l.Header, s.vars)
	if err != nil {
		return err
	}
	return p.SetHeader(header, token)
}

func (s *legacySession) sessionToken(ctx context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.token != "" {
		return s.token, nil
	}
	given, err := render(s.l.SessionToken, s.vars)
	if err != nil {
		return "", err
	}
	if given != "" {
		s.env.secret(given)
		valid, err := s.validate(ctx, given)
		if err != nil {
			return "", err
		}
		if valid {
			s.token = given
			return given, nil
		}
		s.env.log(protocol.LevelInfo, "The session token of the config was refused (HTTP 401) at validate_session_url: logging in with the username and password")
	}
	user, err := render(s.l.Username, s.vars)
	if err != nil {
		return "", err
	}
	password, err := render(s.l.Password, s.vars)
	if err != nil {
		return "", err
	}
	if user == "" || password == "" {
		return "", failure.Config("%s: the session token is missing or not valid, and there is no username and password to log in with", s.a.Path)
	}
	token, err := s.login(ctx, user, password)
	if err != nil {
		return "", err
	}
	s.env.secret(token)
	s.token = token
	return token, nil
}

// url is a path of the authenticator under the requester's url_base.
func (s *legacySession) url(path *interp.Template) (string, error) {
	base, err := render(s.l.APIURL, s.vars)
	if err != nil {
		return "", err
	}
	p, err := render(path, s.vars)
	if err != nil {
		return "", err
	}
	return strings.TrimRight(base, "/") + "/" + strings.TrimLeft(p, "/"), nil
}

// validate tells whether the API takes the token: a 401 says no; another
// failure stops the run.
func (s *legacySession) validate(ctx context.Context, token string) (bool, error) {
	u, err := s.url(s.l.ValidateURL)
	if err != nil {
		return false, err
	}
	header, err := render(s.l.Header, s.vars)
	if err != nil {
		return false, err
	}
	p := request.New(http.MethodGet, u)
	if err := p.SetHeader(header, token); err != nil {
		return false, err
	}
	ctx = request.GetsCredentials(ctx) // it carries the token: never redirected to another host
	resp, err := s.env.Client.Send(ctx, func() (*http.Request, error) { return p.HTTP(ctx) }, request.AuthPolicy())
	if s.env.Exchange != nil {
		s.env.Exchange("Validate session token", "Checks the session token of the config", p, resp)
	}
	if resp != nil && resp.Status == http.StatusUnauthorized {
		return false, nil
	}
	if err != nil {
		return false, withMessage(err, "validating the session token failed: ")
	}
	return true, nil
}

// login posts the username and password and reads the token.
func (s *legacySession) login(ctx context.Context, user, password string) (string, error) {
	u, err := s.url(s.l.LoginURL)
	if err != nil {
		return "", err
	}
	key, err := render(s.l.ResponseKey, s.vars)
	if err != nil {
		return "", err
	}
	p := request.New(http.MethodPost, u)
	p.SetBodyJSON([]string{"username"}, user)
	p.SetBodyJSON([]string{"password"}, password)
	ctx = request.GetsCredentials(ctx)
	resp, err := s.env.Client.Send(ctx, func() (*http.Request, error) { return p.HTTP(ctx) }, request.AuthPolicy())
	if s.env.Exchange != nil {
		s.env.Exchange("Login request", "Obtains session token", p, resp)
	}
	if err != nil {
		return "", loginError(err)
	}
	d := json.NewDecoder(bytes.NewReader(resp.Body))
	d.UseNumber()
	var body map[string]any
	if err := d.Decode(&body); err != nil {
		return "", failure.System("session token login %s answered HTTP %d with a body that is not a JSON object: %s", resp.URL, resp.Status, request.DescribeBody(resp.Header, resp.Body))
	}
	token := tokenText(body[key])
	if token == "" {
		return "", failure.System("%s.session_token_response_key: no token at %q in the login response", s.a.Path, key)
	}
	return token, nil
}
