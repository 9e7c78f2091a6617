package request

import (
	"bytes"
	"context"
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

// Origin is a URL's scheme and host, lowercased ("https://api.example.com"),
// for naming where a request goes; the URL itself when it does not parse.
func Origin(rawURL string) string {
	if u, err := url.Parse(rawURL); err == nil {
		return strings.ToLower(u.Scheme + "://" + u.Host)
	}
	return rawURL
}

// SecretRefused is the config_error of a request of what (a requester's
// path) to rawURL not sent because its part ("URL", "body", "header X")
// holds a secret, where the credentials do not go, as why.
func SecretRefused(what, rawURL, part, why string) error {
	host := Origin(rawURL)
	return failure.Config("%s: the request to %q is not sent: its %s holds a secret, and secrets go only where the authenticator's credentials go, which %s is not, as %s", what, host, part, host, why)
}

// Authenticate has apply (an authenticator; nil: none) put its credentials
// into p, unless they do not follow p's URL from base, the requester's
// url_base (see CredentialsFollow): p then goes without them, and without
// any part that holds a secret (a request parameter, header or body field
// rendered from an airbyte_secret config value, or a token: see
// Parts.dropSecrets); p.Credentials.Withheld says why (a 401 or 403 answer
// repeats it), and a WARN naming the scheme and host, and the requester
// (what), says so once per host in a run. Every value the authenticator
// put in is a secret from then on (see addSentCredentials).
func (c *Client) Authenticate(p *Parts, base, what string, apply func(*Parts) error) error {
	if ok, why := CredentialsFollow(base, p.URL); !ok {
		var without []string
		if apply != nil {
			p.Credentials = Credentials{Withheld: why}
			without = append(without, "the authenticator's credentials")
		}
		host := Origin(p.URL)
		dropped, err := p.dropSecrets(c.holdsSecret)
		if err != nil {
			return SecretRefused(what, p.URL, err.Error(), why)
		}
		if len(dropped) > 0 {
			without = append(without, strings.Join(dropped, ", ")+" (holding a secret)")
		}
		if len(without) == 0 {
			return nil
		}
		if _, said := c.withheldFrom.LoadOrStore(host, true); !said {
			c.log(protocol.LevelWarn, fmt.Sprintf("%s: the request to %q is sent without %s, as %s (said once per host)", what, host, strings.Join(without, " and "), why))
		}
		return nil
	}
	if apply == nil {
		return nil
	}
	headers, query := keys(p.Headers), keys(p.Query)
	body, _, _ := p.Body()
	form, fields := keys(p.BodyData), jsonLeaves(p.BodyJSON)
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
	c.addSentCredentials(p, form, fields)
	return nil
}

// addSentCredentials makes every value the authenticator put into p a
// secret, as sent: a header's credential (see HeaderCredential), a query
// parameter's and a body field's values. form and fields are the body's
// form keys and JSON leaves before the authenticator ran.
func (c *Client) addSentCredentials(p *Parts, form map[string]bool, fields map[string]string) {
	if c.AddSecret == nil {
		return
	}
	for _, k := range p.Credentials.Headers {
		for _, v := range p.Headers[k] {
			c.AddSecret(HeaderCredential(v))
		}
	}
	for _, k := range p.Credentials.Query {
		for _, v := range p.Query[k] {
			c.AddSecret(v)
		}
	}
	if !p.Credentials.Body {
		return
	}
	for k, vs := range p.BodyData {
		if !form[k] {
			for _, v := range vs {
				c.AddSecret(v)
			}
		}
	}
	for path, v := range jsonLeaves(p.BodyJSON) {
		if was, ok := fields[path]; !ok || was != v {
			c.AddSecret(v)
		}
	}
}

// HeaderCredential is the secret part of a credential header's value: what
// follows a scheme word ("Basic", "Bearer", an API key's prefix), so that
// masked it reads "Bearer ****"; the whole value when it has no such word.
func HeaderCredential(v string) string {
	if scheme, credential, found := strings.Cut(strings.TrimSpace(v), " "); found && scheme != "" && !strings.ContainsAny(scheme, "=:") {
		return strings.TrimSpace(credential)
	}
	return v
}

// holdsSecret tells whether text holds a known secret (see HoldsSecret).
func (c *Client) holdsSecret(text string) bool {
	return c.HoldsSecret != nil && text != "" && c.HoldsSecret(text)
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
