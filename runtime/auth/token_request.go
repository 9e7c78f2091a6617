package auth

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/airbyte-go/source-declarative/lang/datetime"
	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/protocol"
	"github.com/airbyte-go/source-declarative/runtime/failure"
	"github.com/airbyte-go/source-declarative/runtime/request"
)

// encodingQuery sends the token request's fields as query parameters.
const encodingQuery = "query"

// endpointSource is the refreshing token source: it POSTs to the token
// refresh endpoint. The body is JSON, as the seed says; an endpoint that
// refuses JSON (HTTP 415, or 400/401 with an error other than invalid_grant,
// which would show it read the request) is asked once more with the same
// fields as a form, and when that works every later request is a form.
type endpointSource struct {
	a    *manifest.Auth
	o    *manifest.OAuthConfig
	env  *Env
	vars interp.Vars
	// encoding is the body encoding in use: pinned by the manifest, or form
	// once the endpoint took a form; empty: JSON, then form on refusal.
	// Guarded by the reuseSource that owns this source.
	encoding string
}

// tokenRequest is what every attempt of one refresh sends: the same fields,
// so the same refresh token.
type tokenRequest struct {
	endpoint string
	headers  map[string]any
	fields   map[string]any
}

func (e *endpointSource) Token(ctx context.Context) (*oauth2.Token, error) {
	tr, err := e.request()
	if err != nil {
		return nil, err
	}
	enc := e.encoding
	first := enc
	if first == "" {
		first = manifest.EncodingJSON
	}
	resp, err := e.send(ctx, tr, first)
	if err != nil && enc == "" && e.refusedJSON(resp) {
		formResp, formErr := e.send(ctx, tr, manifest.EncodingForm)
		if formErr == nil {
			e.encoding = manifest.EncodingForm
			e.env.log(protocol.LevelInfo, fmt.Sprintf("The token endpoint %s refused a JSON token request (HTTP %d) and accepted a form-encoded one: token requests are form-encoded for the rest of this run",
				formResp.URL, resp.Status))
		}
		resp, err = formResp, formErr
	}
	if err != nil {
		return nil, e.tokenError(resp, err)
	}
	return e.parse(resp)
}

// request renders the endpoint, headers and fields of a token request.
func (e *endpointSource) request() (*tokenRequest, error) {
	endpoint, err := render(e.o.Endpoint, e.vars)
	if err != nil {
		return nil, err
	}
	if endpoint == "" {
		return nil, failure.Config("%s.token_refresh_endpoint: renders empty", e.a.Path)
	}
	if !strings.HasPrefix(endpoint, "http://") && !strings.HasPrefix(endpoint, "https://") {
		return nil, failure.Config("%s.token_refresh_endpoint: renders %q, not a URL starting with http:// or https://; check the config", e.a.Path, endpoint)
	}
	tr := &tokenRequest{endpoint: endpoint, headers: map[string]any{}, fields: map[string]any{e.o.GrantTypeName: e.o.GrantType}}
	if e.o.Headers != nil {
		for _, k := range e.o.Headers.Keys {
			v, err := e.o.Headers.Values[k].Eval(e.vars)
			if err != nil {
				return nil, err
			}
			tr.headers[k] = v
			if strings.EqualFold(k, "Authorization") {
				// Basic credentials of the client, as sent: an endpoint may echo them.
				e.env.secret(request.HeaderCredential(interp.String(v)))
			}
		}
	}
	if _, basicAuth := tr.headers["Authorization"]; !basicAuth {
		id, err := e.credential(e.o.ClientID, "client_id")
		if err != nil {
			return nil, err
		}
		secret, err := e.credential(e.o.ClientSecret, "client_secret")
		if err != nil {
			return nil, err
		}
		if id == "" {
			return nil, failure.Config("%s.client_id: renders empty; check the config", e.a.Path)
		}
		tr.fields[e.o.ClientIDName] = id
		tr.fields[e.o.ClientSecretName] = secret
	}
	if e.o.GrantType == "refresh_token" {
		rt, err := e.refreshToken()
		if err != nil {
			return nil, err
		}
		if rt == "" {
			return nil, failure.Config("%s: the refresh token is empty; check the config", e.a.Path)
		}
		e.env.secret(rt)
		tr.fields[e.o.RefreshTokenName] = rt
	}
	if len(e.o.Scopes) > 0 {
		scopes := make([]any, len(e.o.Scopes))
		for i, s := range e.o.Scopes {
			scopes[i] = s
		}
		tr.fields["scopes"] = scopes
	}
	if e.o.ExtraBody != nil {
		for _, k := range e.o.ExtraBody.Keys {
			if _, standard := tr.fields[k]; standard {
				continue
			}
			v, err := e.o.ExtraBody.Values[k].EvalOrNil(e.vars)
			if err != nil {
				return nil, err
			}
			if v != nil {
				tr.fields[k] = v
			}
		}
	}
	return tr, nil
}

// refreshToken is the current refresh token: under rotation the config's,
// which the last refresh replaced, so a spent token is never sent again.
func (e *endpointSource) refreshToken() (string, error) {
	if u := e.o.Updater; u != nil {
		return interp.String(e.env.configValue(u.RefreshTokenPath)), nil
	}
	return render(e.o.RefreshToken, e.vars)
}

func (e *endpointSource) credential(t *interp.Template, name string) (string, error) {
	if t != nil {
		return render(t, e.vars)
	}
	// Under rotation the reference falls back to config.credentials.<name>.
	return interp.String(e.env.configValue([]string{"credentials", name})), nil
}

// send sends one token request with its fields encoded as enc.
func (e *endpointSource) send(ctx context.Context, tr *tokenRequest, enc string) (*request.Response, error) {
	p := request.New(http.MethodPost, tr.endpoint)
	for _, k := range interp.SortedKeys(tr.headers) {
		if err := p.SetHeader(k, tr.headers[k]); err != nil {
			return nil, err
		}
	}
	for _, k := range interp.SortedKeys(tr.fields) {
		var err error
		switch enc {
		case manifest.EncodingForm:
			err = p.SetBodyData(k, tr.fields[k])
		case encodingQuery:
			err = p.SetQuery(k, tr.fields[k])
		default:
			err = p.SetBodyJSON([]string{k}, tr.fields[k])
		}
		if err != nil {
			return nil, err
		}
	}
	if p.Headers.Get("Accept") == "" {
		p.Headers.Set("Accept", "application/json")
	}
	ctx = request.GetsCredentials(ctx)
	resp, err := e.env.Client.Send(ctx, func() (*http.Request, error) { return p.HTTP(ctx) }, request.AuthPolicy())
	if e.env.Exchange != nil {
		e.env.Exchange("Refresh token", "Obtains access token", p, resp)
	}
	return resp, err
}

// refusedJSON tells whether the endpoint's answer shows it could not read a
// JSON body: 415, or 400/401 with an error other than an invalid grant.
func (e *endpointSource) refusedJSON(resp *request.Response) bool {
	if resp == nil {
		return false
	}
	switch resp.Status {
	case http.StatusUnsupportedMediaType:
		return true
	case http.StatusBadRequest, http.StatusUnauthorized:
		return errorCode(resp, "error") != "invalid_grant" && !e.configuredRefreshError(resp)
	}
	return false
}

// configuredRefreshError tells whether a response matches the manifest's
// refresh_token_error_status_codes, _key and _values, when it sets them.
func (e *endpointSource) configuredRefreshError(resp *request.Response) bool {
	re := e.o.RefreshErrors
	if len(re.StatusCodes) == 0 && re.Key == "" && len(re.Values) == 0 {
		return false
	}
	return slices.Contains(re.StatusCodes, resp.Status) && slices.Contains(re.Values, errorCode(resp, re.Key))
}

// invalidRefreshToken tells whether a token response says the credentials
// are invalid or expired: the manifest's refresh_token_error_* when set,
// else an OAuth error code that asks for new credentials.
func (e *endpointSource) invalidRefreshToken(resp *request.Response) bool {
	re := e.o.RefreshErrors
	if len(re.StatusCodes) > 0 || re.Key != "" || len(re.Values) > 0 {
		return e.configuredRefreshError(resp)
	}
	switch errorCode(resp, "error") {
	case "invalid_grant", "invalid_permissions", "invalid_client", "unauthorized_client":
		return resp.Status >= 400 && resp.Status < 500
	}
	return false
}

// errorCode is the text at key of a JSON error body, or "".
func errorCode(resp *request.Response, key string) string {
	var body map[string]any
	if json.Unmarshal(resp.Body, &body) != nil {
		return ""
	}
	return interp.String(body[key])
}

func (e *endpointSource) tokenError(resp *request.Response, err error) error {
	if resp == nil || resp.Status < 400 || resp.Status >= 500 {
		return err
	}
	// No HTTP status on these failures: a 401 of the token endpoint is not a
	// data request's 401, which a new token would cure.
	if e.invalidRefreshToken(resp) {
		return failure.Config("Refresh token is invalid or expired (token endpoint answered HTTP %d %s). Please re-authenticate and update the credentials in the source settings.", resp.Status, errorCode(resp, "error"))
	}
	return failure.Config("token endpoint %s answered HTTP %d: %s", resp.URL, resp.Status, request.BodyStart(resp.Body))
}

// parse reads the access token, its expiry and, under rotation, the new
// refresh token from a token response.
func (e *endpointSource) parse(resp *request.Response) (*oauth2.Token, error) {
	var body map[string]any
	d := json.NewDecoder(bytes.NewReader(resp.Body))
	d.UseNumber()
	if err := d.Decode(&body); err != nil {
		return nil, failure.System("token endpoint %s answered HTTP %d with a body that is not a JSON object: %s", resp.URL, resp.Status, request.DescribeBody(resp.Header, resp.Body))
	}
	// Every token of the answer is a secret, used or not (a refresh token
	// the manifest does not rotate): a test read shows the answer.
	names := []string{e.o.AccessTokenName, e.o.RefreshTokenName, "refresh_token", "id_token"}
	if u := e.o.Updater; u != nil {
		names = append(names, u.RefreshTokenName)
	}
	for _, name := range names {
		switch v := find(body, name, 5).(type) {
		case string, json.Number:
			e.env.secret(tokenText(v))
		}
	}
	access := tokenText(find(body, e.o.AccessTokenName, 5))
	if access == "" {
		return nil, failure.System("token endpoint response has no access token property %q", e.o.AccessTokenName)
	}
	t := &oauth2.Token{AccessToken: access, TokenType: "Bearer"}
	if exp := find(body, e.o.ExpiresInName, 5); exp != nil {
		var err error
		if t.Expiry, err = e.expiry(exp); err != nil {
			return nil, err
		}
	} else {
		t.Expiry = e.env.Now().Add(time.Hour)
	}
	if u := e.o.Updater; u != nil {
		t.RefreshToken = tokenText(find(body, u.RefreshTokenName, 5))
	}
	return t, nil
}

// expiry reads the expiry property: seconds of validity, or a date in the
// configured format (strftime, or the older pendulum style).
func (e *endpointSource) expiry(v any) (time.Time, error) {
	s := strings.TrimSpace(interp.String(v))
	if e.o.ExpiryDateFormat == "" {
		secs, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return time.Time{}, failure.System("token property %q is %q, not a number of seconds (set token_expiry_date_format if it is a date)", e.o.ExpiresInName, s)
		}
		// A lifetime past what a time.Duration holds (~292 years) would
		// overflow into the past: such a token is valid for the run.
		secs = min(secs, float64(math.MaxInt64/int64(time.Second)))
		return e.env.Now().Add(time.Duration(secs) * time.Second), nil
	}
	t, err := datetime.ParseFormatted(s, e.o.ExpiryDateFormat)
	if err != nil {
		return time.Time{}, failure.System("token property %q: %v", e.o.ExpiresInName, err)
	}
	return t, nil
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
