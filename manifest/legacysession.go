package manifest

import "github.com/airbyte-go/source-declarative/lang/interp"

// LegacySessionToken is the deprecated LegacySessionTokenAuthenticator type.
const LegacySessionToken = "LegacySessionTokenAuthenticator"

// LegacySessionConfig is a LegacySessionTokenAuthenticator: the config's
// session token when the API accepts it at ValidateURL, else a token from
// logging in at LoginURL with the username and password; sent in Header.
// The two URLs are paths under APIURL, the requester's url_base.
type LegacySessionConfig struct {
	APIURL       *interp.Template
	Header       *interp.Template
	SessionToken *interp.Template
	ResponseKey  *interp.Template
	Username     *interp.Template
	Password     *interp.Template
	LoginURL     *interp.Template
	ValidateURL  *interp.Template
}

func (d *decoder) legacySession(m map[string]any, path string) *LegacySessionConfig {
	return &LegacySessionConfig{
		Header:       d.tpl(m, "header", path),
		SessionToken: d.tpl(m, "session_token", path),
		ResponseKey:  d.tpl(m, "session_token_response_key", path),
		Username:     d.tpl(m, "username", path),
		Password:     d.tpl(m, "password", path),
		LoginURL:     d.tpl(m, "login_url", path),
		ValidateURL:  d.tpl(m, "validate_session_url", path),
	}
}

// withURLBase gives the legacy session authenticators of a requester (also
// as branches of a SelectiveAuthenticator) the requester's url_base, which
// their paths are under; it is part of what tells shared authenticators
// apart.
func (d *decoder) withURLBase(a *Auth, urlBase any, requesterPath string) {
	switch {
	case a == nil:
	case a.Legacy != nil:
		if urlBase == nil {
			d.fail(a.Path, "a LegacySessionTokenAuthenticator needs the requester's url_base (%s.url_base): its login_url and validate_session_url are paths under it", requesterPath)
			return
		}
		a.Legacy.APIURL = d.value(urlBase, requesterPath+".url_base")
		raw := make(map[string]any, len(a.Raw)+1)
		for k, v := range a.Raw {
			raw[k] = v
		}
		raw["url_base"] = urlBase
		a.Raw = raw
	case a.Selective != nil:
		for _, b := range a.Selective.Authenticators {
			d.withURLBase(b, urlBase, requesterPath)
		}
	}
}
