package auth

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"

	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/protocol"
	"github.com/airbyte-go/source-declarative/runtime/datetime"
	"github.com/airbyte-go/source-declarative/runtime/interp"
	"github.com/airbyte-go/source-declarative/runtime/request"
)

// oauth obtains access tokens from the token refresh endpoint, reuses each
// until it expires, and, under rotation, stores every new refresh token in
// the config and announces it before using the new access token.
type oauth struct {
	a    *manifest.Auth
	o    *manifest.OAuthConfig
	env  *Env
	vars interp.Vars

	mu    sync.Mutex
	token *oauth2.Token
}

func newOAuth(a *manifest.Auth, env *Env, vars interp.Vars) (*oauth, error) {
	o := &oauth{a: a, o: a.OAuth, env: env, vars: vars}
	if err := o.seed(); err != nil {
		return nil, err
	}
	return o, nil
}

// seed takes an initial access token from the config (rotation) or from
// access_token_value, with its expiry.
func (o *oauth) seed() error {
	var access, expiry string
	if u := o.o.Updater; u != nil {
		access = interp.String(getPath(o.env.Config, u.AccessTokenPath))
		expiry = interp.String(getPath(o.env.Config, u.ExpiryDatePath))
	} else {
		var err error
		if access, err = render(o.o.AccessTokenValue, o.vars); err != nil {
			return err
		}
		if expiry, err = render(o.o.TokenExpiryDate, o.vars); err != nil {
			return err
		}
	}
	if access == "" {
		return nil
	}
	o.env.secret(access)
	t := &oauth2.Token{AccessToken: access, TokenType: "Bearer"}
	if expiry != "" {
		exp, err := datetime.ParseDatetime(expiry)
		if err != nil {
			return &request.Error{Failure: protocol.ConfigError, Message: fmt.Sprintf("%s: the token expiry date %q is not a date: %v", o.a.Path, expiry, err)}
		}
		t.Expiry = exp
	} else if o.o.Endpoint != nil {
		return nil // an access token of unknown age is not trusted when it can be refreshed
	}
	o.token = t
	return nil
}

func (o *oauth) valid() bool {
	if o.token == nil || o.token.AccessToken == "" {
		return false
	}
	return o.token.Expiry.IsZero() || o.env.Now().Before(o.token.Expiry)
}

// Apply adds Authorization: Bearer <access token>, refreshing first if needed.
func (o *oauth) Apply(ctx context.Context, p *request.Parts) error {
	token, err := o.accessToken(ctx)
	if err != nil {
		return err
	}
	return p.SetHeader("Authorization", "Bearer "+token)
}

// Invalidate throws the current access token away.
func (o *oauth) Invalidate() {
	o.mu.Lock()
	o.token = nil
	o.mu.Unlock()
}

func (o *oauth) accessToken(ctx context.Context) (string, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.valid() {
		return o.token.AccessToken, nil
	}
	t, err := o.refresh(ctx)
	if err != nil {
		return "", err
	}
	o.token = t
	return t.AccessToken, nil
}

func (o *oauth) refreshToken() (string, error) {
	if u := o.o.Updater; u != nil {
		o.env.ConfigMu.Lock()
		defer o.env.ConfigMu.Unlock()
		return interp.String(getPath(o.env.Config, u.RefreshTokenPath)), nil
	}
	return render(o.o.RefreshToken, o.vars)
}

func (o *oauth) credential(t *interp.Template, name string) (string, error) {
	if t != nil {
		return render(t, o.vars)
	}
	// Under rotation the CDK falls back to config.credentials.<name>.
	return interp.String(getPath(o.env.Config, []string{"credentials", name})), nil
}

// tokenRequest builds the POST to the token endpoint: a JSON body unless the
// manifest asks for a form.
func (o *oauth) tokenRequest() (*request.Parts, error) {
	endpoint, err := render(o.o.Endpoint, o.vars)
	if err != nil {
		return nil, err
	}
	if endpoint == "" {
		return nil, &request.Error{Failure: protocol.ConfigError, Message: o.a.Path + ".token_refresh_endpoint: renders empty"}
	}
	p := request.New(http.MethodPost, endpoint)
	headers := map[string]any{}
	if o.o.Headers != nil {
		for _, k := range o.o.Headers.Keys {
			v, err := o.o.Headers.Values[k].Param(o.vars)
			if err != nil {
				return nil, err
			}
			headers[k] = v
			if err := p.SetHeader(k, v); err != nil {
				return nil, err
			}
		}
	}
	body := map[string]any{o.o.GrantTypeName: o.o.GrantType}
	if _, basicAuth := headers["Authorization"]; !basicAuth {
		id, err := o.credential(o.o.ClientID, "client_id")
		if err != nil {
			return nil, err
		}
		secret, err := o.credential(o.o.ClientSecret, "client_secret")
		if err != nil {
			return nil, err
		}
		if id == "" {
			return nil, &request.Error{Failure: protocol.ConfigError, Message: o.a.Path + ".client_id: renders empty; check the config"}
		}
		body[o.o.ClientIDName] = id
		body[o.o.ClientSecretName] = secret
	}
	if o.o.GrantType == "refresh_token" {
		rt, err := o.refreshToken()
		if err != nil {
			return nil, err
		}
		if rt == "" {
			return nil, &request.Error{Failure: protocol.ConfigError, Message: o.a.Path + ": the refresh token is empty; check the config"}
		}
		o.env.secret(rt)
		body[o.o.RefreshTokenName] = rt
	}
	if len(o.o.Scopes) > 0 {
		scopes := make([]any, len(o.o.Scopes))
		for i, s := range o.o.Scopes {
			scopes[i] = s
		}
		body["scopes"] = scopes
	}
	if o.o.ExtraBody != nil {
		for _, k := range o.o.ExtraBody.Keys {
			if _, standard := body[k]; standard {
				continue
			}
			v, err := o.o.ExtraBody.Values[k].EvalOrNil(o.vars)
			if err != nil {
				return nil, err
			}
			if v != nil {
				body[k] = v
			}
		}
	}
	for _, k := range interp.SortedKeys(body) {
		var err error
		if o.o.FormEncoded {
			err = p.SetBodyData(k, body[k])
		} else {
			err = p.SetBodyJSON([]string{k}, body[k])
		}
		if err != nil {
			return nil, err
		}
	}
	if p.Headers.Get("Accept") == "" {
		p.Headers.Set("Accept", "application/json")
	}
	return p, nil
}

func (o *oauth) refresh(ctx context.Context) (*oauth2.Token, error) {
	p, err := o.tokenRequest()
	if err != nil {
		return nil, err
	}
	resp, err := o.env.Client.Send(ctx, func() (*http.Request, error) { return p.HTTP(ctx) }, nil)
	if o.env.Exchange != nil {
		o.env.Exchange("Refresh token", "Obtains access token", p, resp)
	}
	if err != nil {
		return nil, o.tokenError(resp, err)
	}
	var body map[string]any
	d := json.NewDecoder(strings.NewReader(string(resp.Body)))
	d.UseNumber()
	if err := d.Decode(&body); err != nil {
		return nil, &request.Error{Failure: protocol.SystemError, Message: fmt.Sprintf("token endpoint %s answered HTTP %d with a body that is not a JSON object: %s", resp.URL, resp.Status, request.BodyStart(resp.Body))}
	}
	access := interp.String(find(body, o.o.AccessTokenName, 5))
	if access == "" {
		return nil, &request.Error{Failure: protocol.SystemError, Message: fmt.Sprintf("token endpoint response has no access token property %q", o.o.AccessTokenName)}
	}
	o.env.secret(access)
	t := &oauth2.Token{AccessToken: access, TokenType: "Bearer"}
	if exp := find(body, o.o.ExpiresInName, 5); exp != nil {
		if t.Expiry, err = o.expiry(exp); err != nil {
			return nil, err
		}
	} else {
		t.Expiry = o.env.Now().Add(time.Hour)
	}
	if u := o.o.Updater; u != nil {
		if err := o.rotate(body, t); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// expiry reads the expiry property: seconds of validity, or a date in the
// configured strftime format.
func (o *oauth) expiry(v any) (time.Time, error) {
	s := strings.TrimSpace(interp.String(v))
	if o.o.ExpiryDateFormat == "" {
		secs, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return time.Time{}, &request.Error{Failure: protocol.SystemError, Message: fmt.Sprintf("token property %q is %q, not a number of seconds (set token_expiry_date_format if it is a date)", o.o.ExpiresInName, s)}
		}
		return o.env.Now().Add(time.Duration(secs) * time.Second), nil
	}
	t, err := datetime.Strptime(s, o.o.ExpiryDateFormat)
	if err != nil {
		return time.Time{}, &request.Error{Failure: protocol.SystemError, Message: fmt.Sprintf("token property %q: %v", o.o.ExpiresInName, err)}
	}
	return t, nil
}

// rotate stores the new tokens in the config and announces the config
// before the new access token is used.
func (o *oauth) rotate(body map[string]any, t *oauth2.Token) error {
	u := o.o.Updater
	o.env.ConfigMu.Lock()
	setPath(o.env.Config, u.AccessTokenPath, t.AccessToken)
	if rt := interp.String(find(body, u.RefreshTokenName, 5)); rt != "" {
		o.env.secret(rt)
		setPath(o.env.Config, u.RefreshTokenPath, rt)
	} else {
		o.env.log("WARN", fmt.Sprintf("The token response has no new refresh token (property %q); keeping the current one", u.RefreshTokenName))
	}
	setPath(o.env.Config, u.ExpiryDatePath, t.Expiry.UTC().Format("2006-01-02T15:04:05-07:00"))
	snapshot := manifest.DeepCopy(o.env.Config).(map[string]any)
	o.env.ConfigMu.Unlock()
	if o.env.ConfigUpdated != nil {
		if err := o.env.ConfigUpdated(snapshot); err != nil {
			return &request.Error{Failure: protocol.SystemError, Message: "cannot save the rotated refresh token: " + err.Error()}
		}
	}
	return nil
}

func (o *oauth) tokenError(resp *request.Response, err error) error {
	if resp == nil || resp.Status < 400 || resp.Status >= 500 {
		return err
	}
	var body map[string]any
	json.Unmarshal(resp.Body, &body)
	switch interp.String(body["error"]) {
	case "invalid_grant", "invalid_permissions", "invalid_client", "unauthorized_client":
		return &request.Error{Failure: protocol.ConfigError, Status: resp.Status,
			Message: fmt.Sprintf("Refresh token is invalid or expired (token endpoint answered HTTP %d %s). Please re-authenticate and update the credentials in the source settings.", resp.Status, interp.String(body["error"]))}
	}
	return &request.Error{Failure: protocol.ConfigError, Status: resp.Status,
		Message: fmt.Sprintf("token endpoint %s answered HTTP %d: %s", resp.URL, resp.Status, request.BodyStart(resp.Body))}
}

// find looks for key at the root of v, then depth-first in nested objects.
func find(v any, key string, depth int) any {
	if depth < 0 {
		return nil
	}
	switch x := v.(type) {
	case map[string]any:
		if e, ok := x[key]; ok {
			return e
		}
		for _, k := range interp.SortedKeys(x) {
			if r := find(x[k], key, depth-1); r != nil {
				return r
			}
		}
	case []any:
		for _, e := range x {
			if r := find(e, key, depth-1); r != nil {
				return r
			}
		}
	}
	return nil
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

func setPath(m map[string]any, path []string, v any) {
	for i, k := range path {
		if i == len(path)-1 {
			m[k] = v
			return
		}
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
}
