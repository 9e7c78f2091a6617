package request

import (
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/airbyte-go/source-declarative/runtime/failure"
)

// checkRedirect is the client's redirect policy. It follows at most 10
// redirects, as net/http does, and never sends a Referer (net/http would
// send the first URL there, its query with an API key included; Python's
// requests sends none). A request for credentials (an OAuth token request,
// a session login: see GetsCredentials) is not redirected to another host
// or scheme at all. Any other request leaves out, on a redirect to where
// the credentials do not follow from the first request (see
// CredentialsFollow), the authenticator's credentials and every header or
// query parameter holding a secret: net/http drops Authorization and Cookie
// on another host only, and keeps an API key's own header, and
// Authorization on a downgrade to http or another port. Once left out, they
// stay out. A redirect that would resend them in the body (307, 308) is
// refused.
func (c *Client) checkRedirect(req *http.Request, via []*http.Request) error {
	req.Header.Del("Referer")
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	first := via[0]
	if req.Context().Value(credentialsKey{}) != nil {
		for _, hop := range append(via[1:], req) {
			if !sameOrigin(first, hop) {
				return failure.Config("%s %s, a request for credentials, was redirected to %s://%s: not followed, as its body and credentials go to that endpoint's own host and scheme only",
					first.Method, endpoint(first), strings.ToLower(hop.URL.Scheme), hop.URL.Host)
			}
		}
		return nil
	}
	why := ""
	for _, hop := range append(via[1:], req) {
		if ok, reason := CredentialsFollow(first.URL.String(), hop.URL.String()); !ok {
			why = reason
			break
		}
	}
	if why == "" {
		return nil
	}
	cred, _ := req.Context().Value(sentCredentialsKey{}).(Credentials)
	if req.GetBody != nil && (cred.Body || c.bodyHoldsSecret(req)) {
		what := "a secret"
		if cred.Body {
			what = "the authenticator's credentials"
		}
		return failure.Config("host %q redirected a %s request to host %q, which would resend the body with %s: not followed, as %s",
			via[len(via)-1].URL.Host, via[len(via)-1].Method, req.URL.Host, what, why)
	}
	for _, h := range cred.Headers {
		req.Header.Del(h)
	}
	for k, vs := range req.Header {
		if anyHolds(vs, c.holdsSecret) {
			req.Header.Del(k)
		}
	}
	q := req.URL.Query()
	dropped := false
	for k, vs := range q {
		if isCredential(cred.Query, k) || anyHolds(vs, c.holdsSecret) {
			q.Del(k)
			dropped = true
		}
	}
	if dropped {
		req.URL.RawQuery = q.Encode()
	}
	return nil
}

func isCredential(names []string, k string) bool {
	for _, n := range names {
		if n == k {
			return true
		}
	}
	return false
}

// bodyHoldsSecret tells whether the body a redirect would resend holds a
// secret.
func (c *Client) bodyHoldsSecret(req *http.Request) bool {
	if c.HoldsSecret == nil {
		return false
	}
	rc, err := req.GetBody()
	if err != nil {
		return true // unknown: not resent
	}
	defer rc.Close()
	b, _ := io.ReadAll(rc)
	return c.holdsSecret(string(b))
}

// sameOrigin tells whether two requests go to the same scheme, host and
// port.
func sameOrigin(a, b *http.Request) bool {
	return strings.EqualFold(a.URL.Scheme, b.URL.Scheme) && canonicalHost(a.URL) == canonicalHost(b.URL) && port(a.URL) == port(b.URL)
}

// endpoint is a request's URL without its query, for messages.
func endpoint(r *http.Request) string {
	u := *r.URL
	u.RawQuery, u.Fragment, u.User = "", "", nil
	return u.String()
}
