package request

import "strings"

// JoinURL joins a requester's url_base (or url) and path as Airbyte's
// HttpRequester does: the path's leading slashes are dropped, the base gets a
// trailing slash, and the two are joined by Python's urllib.parse.urljoin, so
// that `../x` climbs, `?q=1` keeps the base's path, and a path that is a whole
// http(s) URL replaces the base. A path that is empty once its slashes are
// dropped (`/`) leaves the base as it is: `https://x/v2` stays without a
// trailing slash.
func JoinURL(base, path string) string {
	path = strings.TrimLeft(path, "/")
	if path == "" {
		return base
	}
	if !strings.HasSuffix(base, "/") {
		base += "/"
	}
	return urljoin(base, path)
}

// ResolveURL resolves a next-page URL (RequestPath) against url_base as
// Airbyte does: the token as it is, joined by urljoin to the base with a
// trailing slash, so an absolute path replaces the base's path.
func ResolveURL(base, ref string) string {
	if !strings.HasSuffix(base, "/") {
		base += "/"
	}
	return urljoin(base, ref)
}

// urljoin is Python's urllib.parse.urljoin for http(s) URLs, on the text
// itself (nothing is decoded or encoded again). Unlike Python, a reference
// is whole only with an http or https scheme: `items:search` is a path
// (Python reads `items` as a scheme and sends `items:search` alone).
func urljoin(base, ref string) string {
	if base == "" {
		return ref
	}
	if ref == "" {
		return base
	}
	b := splitURL(base)
	r := splitURL(ref)
	if r.scheme != "" && r.scheme != b.scheme {
		return ref
	}
	r.scheme = b.scheme
	if r.hasNetloc {
		return r.String()
	}
	r.netloc, r.hasNetloc = b.netloc, b.hasNetloc
	if r.path == "" {
		r.path = b.path
		if !r.hasQuery {
			r.query, r.hasQuery = b.query, b.hasQuery
		}
		return r.String()
	}
	var segments []string
	if strings.HasPrefix(r.path, "/") {
		segments = strings.Split(r.path, "/")
	} else {
		baseParts := strings.Split(b.path, "/")
		if baseParts[len(baseParts)-1] != "" {
			baseParts = baseParts[:len(baseParts)-1]
		}
		segments = append(baseParts, strings.Split(r.path, "/")...)
		// Python drops the empty segments between the first and the last,
		// which would make redundant slashes (none with one segment: a base
		// whose path has no slash, before its query).
		if len(segments) > 1 {
			kept := []string{segments[0]}
			for _, s := range segments[1 : len(segments)-1] {
				if s != "" {
					kept = append(kept, s)
				}
			}
			segments = append(kept, segments[len(segments)-1])
		}
	}
	var resolved []string
	for _, s := range segments {
		switch s {
		case "..":
			if len(resolved) > 0 {
				resolved = resolved[:len(resolved)-1]
			}
		case ".":
		default:
			resolved = append(resolved, s)
		}
	}
	if last := segments[len(segments)-1]; last == "." || last == ".." {
		resolved = append(resolved, "")
	}
	r.path = strings.Join(resolved, "/")
	if r.path == "" {
		r.path = "/"
	}
	return r.String()
}

// urlParts are the parts of a URL as Python's urlsplit cuts them.
type urlParts struct {
	scheme, netloc, path, query, fragment string
	hasNetloc, hasQuery, hasFragment      bool
}

// splitURL cuts a URL as urlsplit does, with the scheme rule of urljoin
// above: only http and https (any case) are schemes.
func splitURL(s string) urlParts {
	var u urlParts
	if i := strings.Index(s, ":"); i > 0 {
		if scheme := strings.ToLower(s[:i]); scheme == "http" || scheme == "https" {
			u.scheme, s = scheme, s[i+1:]
		}
	}
	if strings.HasPrefix(s, "//") {
		s = s[2:]
		end := strings.IndexAny(s, "/?#")
		if end < 0 {
			end = len(s)
		}
		u.netloc, u.hasNetloc, s = s[:end], true, s[end:]
	}
	if i := strings.Index(s, "#"); i >= 0 {
		u.fragment, u.hasFragment, s = s[i+1:], true, s[:i]
	}
	if i := strings.Index(s, "?"); i >= 0 {
		u.query, u.hasQuery, s = s[i+1:], true, s[:i]
	}
	u.path = s
	return u
}

// String puts the parts back together as urlunsplit does.
func (u urlParts) String() string {
	var b strings.Builder
	if u.scheme != "" {
		b.WriteString(u.scheme + ":")
	}
	if u.hasNetloc || u.scheme != "" {
		b.WriteString("//" + u.netloc)
		if u.path != "" && !strings.HasPrefix(u.path, "/") {
			b.WriteString("/")
		}
	}
	b.WriteString(u.path)
	if u.hasQuery && u.query != "" {
		b.WriteString("?" + u.query)
	}
	if u.hasFragment && u.fragment != "" {
		b.WriteString("#" + u.fragment)
	}
	return b.String()
}
