package manifest

import (
	"github.com/airbyte-go/source-declarative/lang/datetime"
	"github.com/airbyte-go/source-declarative/lang/interp"
)

// Authenticator types.
const (
	NoAuth       = "NoAuth"
	BasicAuth    = "BasicHttpAuthenticator"
	BearerAuth   = "BearerAuthenticator"
	APIKeyAuth   = "ApiKeyAuthenticator"
	OAuth        = "OAuthAuthenticator"
	SessionToken = "SessionTokenAuthenticator"
	Selective    = "SelectiveAuthenticator"
	// CustomAuth is a custom Python authenticator (Auth.Custom), asked by
	// Go for the credentials of each request.
	CustomAuth = "CustomAuthenticator"
)

// Auth is one authenticator.
type Auth struct {
	Type       string
	Path       string
	Raw        map[string]any // the resolved component, to tell shared authenticators apart
	Parameters map[string]any
	Username   *interp.Template
	Password   *interp.Template
	Token      *interp.Template // Bearer and ApiKey token
	Inject     *RequestOption   // ApiKey and JWT placement
	OAuth      *OAuthConfig
	Session    *SessionConfig
	Selective  *SelectiveConfig
	JWT        *JWTConfig           // jwt.go
	Legacy     *LegacySessionConfig // legacysession.go
	Custom     *Custom              // a CustomAuth's Python class
	// URLBase, for the authenticator of a stream the CDK reads whole
	// (Stream.PythonAuth), is its requester's url_base (or url): the
	// credentials go only where they go from there (request.CredentialsFollow).
	URLBase *interp.Template
}

// SelectiveConfig is a SelectiveAuthenticator: the config value at
// SelectionPath names the authenticator used.
type SelectiveConfig struct {
	SelectionPath  []string
	Names          []string         // the authenticators' names, sorted
	Authenticators map[string]*Auth // nil: NoAuth
}

// OAuthConfig is an OAuthAuthenticator.
type OAuthConfig struct {
	Endpoint         *interp.Template
	ClientID         *interp.Template
	ClientSecret     *interp.Template
	RefreshToken     *interp.Template
	ClientIDName     string
	ClientSecretName string
	RefreshTokenName string
	GrantTypeName    string
	GrantType        string
	Scopes           []string
	AccessTokenName  string
	AccessTokenValue *interp.Template
	ExpiresInName    string
	TokenExpiryDate  *interp.Template
	ExpiryDateFormat string
	ExtraBody        *Mapping
	Headers          *Mapping
	// Encoding pins the token request body: "json" or "form". Empty: JSON
	// first, then once as a form when the endpoint refuses JSON.
	Encoding string
	// InQuery sends the token request's fields as query parameters with an
	// empty body (send_refresh_request_as_query_params).
	InQuery bool
	// RefreshErrors tell a token response that means the refresh token is
	// invalid (a config error) from any other failure.
	RefreshErrors RefreshErrors
	Updater       *TokenUpdater
}

// RefreshErrors are refresh_token_error_status_codes, _key and _values.
type RefreshErrors struct {
	StatusCodes []int
	Key         string
	Values      []string
}

// Token request body encodings.
const (
	EncodingJSON = "json"
	EncodingForm = "form"
)

// TokenUpdater is a RefreshTokenUpdater: where rotating tokens live in the config.
type TokenUpdater struct {
	// RefreshTokenName is the token response's property holding the new
	// refresh token. The request still sends the refresh token under the
	// authenticator's refresh_token_name, as the seed's token request does;
	// Airbyte's runtime would send it under this name too.
	RefreshTokenName string
	AccessTokenPath  []string
	RefreshTokenPath []string
	ExpiryDatePath   []string
}

// SessionConfig is a SessionTokenAuthenticator.
type SessionConfig struct {
	Login      *Requester
	TokenPath  []string
	Expiration *datetime.Duration // nil: log in before every request
	Bearer     bool               // data requests carry Authorization: Bearer
	Inject     *RequestOption     // otherwise the token goes here
	APIToken   *interp.Template   // value injected, over session_token
	Decoder    *Decoder           // of the login response; nil: JSON
}

func (d *decoder) auth(v any, path string, allowed []string) *Auth {
	if c := d.custom(v, path); c != nil {
		m := v.(map[string]any)
		params, _ := m["$parameters"].(map[string]any)
		return &Auth{Type: CustomAuth, Path: path, Raw: m, Parameters: params, Custom: c}
	}
	m, typ, ok := d.component(v, path, allowed...)
	if !ok {
		return nil
	}
	a := &Auth{Type: typ, Path: path, Raw: m}
	a.Parameters, _ = m["$parameters"].(map[string]any)
	switch typ {
	case NoAuth:
		return nil
	case BasicAuth:
		a.Username = d.tpl(m, "username", path)
		a.Password = d.tpl(m, "password", path)
	case BearerAuth:
		a.Token = d.tpl(m, "api_token", path)
	case APIKeyAuth:
		a.Token = d.tpl(m, "api_token", path)
		header, hasHeader := m["header"].(string)
		inject, hasInject := m["inject_into"]
		switch {
		case hasHeader && hasInject:
			d.fail(path, "header and inject_into cannot both be set")
		case hasHeader:
			a.Inject = &RequestOption{Path: path + ".header", InjectInto: InjectHeader, FieldName: d.value(header, path+".header")}
		case hasInject:
			a.Inject = d.requestOption(inject, path+".inject_into", false)
		default:
			d.fail(path+".inject_into", "is required")
		}
	case OAuth:
		a.OAuth = d.oauth(m, path)
	case JWTAuth:
		a.JWT, a.Inject = d.jwt(m, path)
	case LegacySessionToken:
		a.Legacy = d.legacySession(m, path)
	case SessionToken:
		a.Session = d.session(m, path)
	case Selective:
		a.Selective = d.selective(m, path, allowed)
	}
	return a
}

// selective decodes the authenticators a SelectiveAuthenticator chooses from.
func (d *decoder) selective(m map[string]any, path string, allowed []string) *SelectiveConfig {
	s := &SelectiveConfig{SelectionPath: strList(m["authenticator_selection_path"]), Authenticators: map[string]*Auth{}}
	if len(s.SelectionPath) == 0 {
		d.fail(path+".authenticator_selection_path", "must name at least one config key")
	}
	var branches []string
	for _, a := range allowed {
		if a != Selective {
			branches = append(branches, a)
		}
	}
	auths, _ := m["authenticators"].(map[string]any)
	if len(auths) == 0 {
		d.fail(path+".authenticators", "must name at least one authenticator")
	}
	s.Names = interp.SortedKeys(auths)
	for _, name := range s.Names {
		s.Authenticators[name] = d.auth(auths[name], path+".authenticators."+name, branches)
	}
	return s
}

func (d *decoder) oauth(m map[string]any, path string) *OAuthConfig {
	o := &OAuthConfig{
		Endpoint:         d.tpl(m, "token_refresh_endpoint", path),
		ClientID:         d.tpl(m, "client_id", path),
		ClientSecret:     d.tpl(m, "client_secret", path),
		RefreshToken:     d.tpl(m, "refresh_token", path),
		ClientIDName:     str(m, "client_id_name", "client_id"),
		ClientSecretName: str(m, "client_secret_name", "client_secret"),
		RefreshTokenName: str(m, "refresh_token_name", "refresh_token"),
		GrantTypeName:    str(m, "grant_type_name", "grant_type"),
		GrantType:        str(m, "grant_type", "refresh_token"),
		Scopes:           strList(m["scopes"]),
		AccessTokenName:  str(m, "access_token_name", "access_token"),
		AccessTokenValue: d.tpl(m, "access_token_value", path),
		ExpiresInName:    str(m, "expires_in_name", "expires_in"),
		TokenExpiryDate:  d.tpl(m, "token_expiry_date", path),
		ExpiryDateFormat: str(m, "token_expiry_date_format", ""),
		ExtraBody:        d.mapping(m, "refresh_request_body", path),
		Headers:          d.mapping(m, "refresh_request_headers", path),
		Encoding:         str(m, "refresh_request_body_encoding", ""),
		RefreshErrors:    d.refreshErrors(m, path),
	}
	o.InQuery, _ = m["send_refresh_request_as_query_params"].(bool)
	if use, _ := m["use_profile_assertion"].(bool); use || m["profile_assertion"] != nil {
		d.fail(path+".profile_assertion", "the JWT profile assertion flow (grant type jwt-bearer) is not supported: OAuth runs the refresh_token and client_credentials grants only")
	}
	if o.Endpoint == nil && o.AccessTokenValue == nil {
		d.fail(path+".token_refresh_endpoint", "is required (or access_token_value, for a token that is never refreshed)")
	}
	switch o.GrantType {
	case "refresh_token", "client_credentials":
	case "password":
		// The resource owner's password grant (RFC 6749 4.3): no user
		// interaction, its username and password in refresh_request_body,
		// as Airbyte's runtime sends them (uptick's); no refresh token.
	default:
		d.fail(path+".grant_type", "grant type %q is not supported: only refresh_token, client_credentials and password are (PKCE, authorization code and other flows need custom code)", o.GrantType)
	}
	if u, ok := m["refresh_token_updater"]; ok && u != nil {
		um, _, ok := d.component(u, path+".refresh_token_updater", "RefreshTokenUpdater")
		if ok {
			if errs := d.refreshErrors(um, path+".refresh_token_updater"); errs.Key != "" || len(errs.StatusCodes) > 0 || len(errs.Values) > 0 {
				if o.RefreshErrors.Key != "" || len(o.RefreshErrors.StatusCodes) > 0 || len(o.RefreshErrors.Values) > 0 {
					d.fail(path+".refresh_token_updater", "refresh_token_error_* fields are set both here and on the authenticator: keep one")
				}
				o.RefreshErrors = errs
			}
			o.Updater = &TokenUpdater{
				RefreshTokenName: str(um, "refresh_token_name", "refresh_token"),
				AccessTokenPath:  pathOr(um["access_token_config_path"], "credentials", "access_token"),
				RefreshTokenPath: pathOr(um["refresh_token_config_path"], "credentials", "refresh_token"),
				ExpiryDatePath:   pathOr(um["token_expiry_date_config_path"], "credentials", "token_expiry_date"),
			}
		}
	}
	if o.ClientID == nil && o.Updater == nil {
		d.fail(path+".client_id", "is required")
	}
	if o.ClientSecret == nil && o.Updater == nil {
		d.fail(path+".client_secret", "is required")
	}
	if o.GrantType == "refresh_token" && o.RefreshToken == nil && o.Updater == nil {
		d.fail(path+".refresh_token", "is required with grant_type refresh_token")
	}
	return o
}

func (d *decoder) refreshErrors(m map[string]any, path string) RefreshErrors {
	var e RefreshErrors
	codes, _ := m["refresh_token_error_status_codes"].([]any)
	for _, c := range codes {
		if n, ok := c.(int64); ok {
			e.StatusCodes = append(e.StatusCodes, int(n))
		}
	}
	e.Key = str(m, "refresh_token_error_key", "")
	e.Values = strList(m["refresh_token_error_values"])
	return e
}

func (d *decoder) session(m map[string]any, path string) *SessionConfig {
	s := &SessionConfig{TokenPath: strList(m["session_token_path"])}
	s.Login = d.requester(m["login_requester"], path+".login_requester", loginAuth)
	if e, ok := m["expiration_duration"].(string); ok && e != "" {
		dur, err := datetime.ParseDuration(e)
		if err != nil {
			d.fail(path+".expiration_duration", "%v", err)
		} else {
			s.Expiration = &dur
		}
	}
	s.Decoder = d.responseDecoder(m["decoder"], path+".decoder", sessionDecoders)
	ra, typ, ok := d.component(m["request_authentication"], path+".request_authentication", "ApiKey", "Bearer")
	if !ok {
		return s
	}
	if typ == "Bearer" {
		s.Bearer = true
		return s
	}
	s.Inject = d.requestOption(ra["inject_into"], path+".request_authentication.inject_into", false)
	if s.Inject != nil && s.Inject.InjectInto != InjectHeader && s.Inject.InjectInto != InjectParam {
		d.fail(path+".request_authentication.inject_into.inject_into", "must be header or request_parameter")
	}
	s.APIToken = d.tpl(ra, "api_token", path+".request_authentication")
	return s
}
