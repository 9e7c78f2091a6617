package request

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/airbyte-go/source-declarative/protocol"
	"github.com/airbyte-go/source-declarative/runtime/failure"
)

// Credentials is what an authenticator put into a request, so that a
// redirect to where they do not follow leaves it out, or why it was not
// applied.
type Credentials struct {
	Headers  []string // names of the headers it set
	Query    []string // names of the query parameters it set
	Body     bool     // whether it set fields of the body
	Withheld string   // why the authenticator was not applied; "" when it was
}

// CredentialsFollow tells whether the credentials meant for base (a
// requester's url_base) go with a request to target, and when not, why.
// They do on base's host or a subdomain of it, as Go's http.Client forwards
// Authorization on a redirect; on the same scheme and port, or from http on
// port 80 to https on 443, as Python's requests keeps them on a redirect;
// never from https to http, nor to another port.
func CredentialsFollow(base, target string) (bool, string) {
	b, err := url.Parse(base)
	if err != nil || b.Host == "" {
		return false, "url_base is not an absolute URL"
	}
	t, err := url.Parse(target)
	if err != nil || t.Host == "" {
		return false, "the URL is not absolute"
	}
	bs, ts := strings.ToLower(b.Scheme), strings.ToLower(t.Scheme)
	if bs == "https" && ts == "http" {
		return false, "it is http:// while url_base is https://"
	}
	if !domainOrSubdomain(canonicalHost(t), canonicalHost(b)) {
		return false, fmt.Sprintf("host %q is not url_base's host %q nor a subdomain of it", t.Host, b.Host)
	}
	bp, tp := port(b), port(t)
	if bs == ts && bp == tp || bs == "http" && bp == "80" && ts == "https" && tp == "443" {
		return true, ""
	}
	return false, fmt.Sprintf("%s://%s is not on url_base's scheme and port (%s://%s)", ts, t.Host, bs, b.Host)
}

func canonicalHost(u *url.URL) string {
	return strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
}

// domainOrSubdomain tells whether sub is parent or a subdomain of it, as
// net/http's isDomainOrSubdomain does for redirects; an IP address has no
// subdomains.
func domainOrSubdomain(sub, parent string) bool {
	if sub == parent {
		return true
	}
	if parent == "" || strings.ContainsAny(sub, ":%") || net.ParseIP(parent) != nil {
		return false
	}
	return strings.HasSuffix(sub, "."+parent)
}

// port is a URL's port, or its scheme's default one.
func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch strings.ToLower(u.Scheme) {
	case "http":
		return "80"
	case "https":
		return "443"
	}
	return ""
}

// Authenticate has apply (an authenticator) put its credentials into p,
// unless they do not follow p's URL from base, the requester's url_base
// (see CredentialsFollow): p then goes without them, p.Credentials.Withheld
// says why (a 401 or 403 answer repeats it), and a WARN naming the scheme
// and host, and the requester (what), says so once per host in a run.
func (c *Client) Authenticate(p *Parts, base, what string, apply func(*Parts) error) error {
	if ok, why := CredentialsFollow(base, p.URL); !ok {
		p.Credentials = Credentials{Withheld: why}
		host := p.URL
		if u, err := url.Parse(p.URL); err == nil {
			host = strings.ToLower(u.Scheme + "://" + u.Host)
		}
		if _, said := c.withheldFrom.LoadOrStore(host, true); !said {
			c.log(protocol.LevelWarn, fmt.Sprintf("%s: the request to %q is sent without the authenticator's credentials, as %s (said once per host)", what, host, why))
		}
		return nil
	}
	headers, query := keys(p.Headers), keys(p.Query)
	body, _, _ := p.Body()
	if err := apply(p); err != nil {
		return err
	}
	for k := range p.Headers {
		if !headers[k] {
			p.Credentials.Headers = append(p.Credentials.Headers, k)
		}
	}
	for k := range p.Query {
		if !query[k] {
			p.Credentials.Query = append(p.Credentials.Query, k)
		}
	}
	after, _, _ := p.Body()
	p.Credentials.Body = !bytes.Equal(body, after)
	return nil
}

func keys[V any](m map[string]V) map[string]bool {
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}

type sentCredentialsKey struct{}

// withCredentials marks the requests sent with ctx with what the
// authenticator put in them (see checkRedirect and withheldNote).
func withCredentials(ctx context.Context, c Credentials) context.Context {
	if c.Withheld == "" && len(c.Headers) == 0 && len(c.Query) == 0 && !c.Body {
		return ctx
	}
	return context.WithValue(ctx, sentCredentialsKey{}, c)
}

// withheld tells whether req went without the authenticator's credentials
// (a refused one gets no new token: it did not carry the old one).
func withheld(req *http.Request) bool {
	c, _ := req.Context().Value(sentCredentialsKey{}).(Credentials)
	return c.Withheld != ""
}

// withheldNote is what a 401 or 403 answer to req adds to its error when
// the authenticator's credentials were not sent with it.
func withheldNote(req *http.Request, status int) string {
	c, _ := req.Context().Value(sentCredentialsKey{}).(Credentials)
	if c.Withheld == "" || status != http.StatusUnauthorized && status != http.StatusForbidden {
		return ""
	}
	return "; the authenticator's credentials were not sent with it, as " + c.Withheld
}

// checkRedirect follows at most 10 redirects, as net/http does, and leaves
// the authenticator's credentials out of a redirect to where they do not
// follow from the first request (see CredentialsFollow): net/http drops
// Authorization and Cookie on another host only, and keeps an API key's own
// header, and Authorization on a downgrade to http or another port. Once
// left out, they stay out. A redirect that would send them in the body
// (307, 308) is refused.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	c, _ := req.Context().Value(sentCredentialsKey{}).(Credentials)
	if len(c.Headers) == 0 && len(c.Query) == 0 && !c.Body {
		return nil
	}
	first := via[0].URL.String()
	for _, hop := range append(via[1:], req) {
		if ok, why := CredentialsFollow(first, hop.URL.String()); !ok {
			return dropCredentials(req, via[len(via)-1], c, why)
		}
	}
	return nil
}

func dropCredentials(req, from *http.Request, c Credentials, why string) error {
	if c.Body && req.GetBody != nil {
		return failure.Config("host %q redirected a %s request to host %q, which would resend the body with the authenticator's credentials: not followed, as %s",
			from.URL.Host, from.Method, req.URL.Host, why)
	}
	for _, h := range c.Headers {
		req.Header.Del(h)
	}
	q := req.URL.Query()
	dropped := false
	for _, k := range c.Query {
		if q.Has(k) {
			q.Del(k)
			dropped = true
		}
	}
	if dropped {
		req.URL.RawQuery = q.Encode()
	}
	return nil
}
