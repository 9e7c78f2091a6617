package request

import (
	"errors"
	"net/url"
	"sort"
	"strings"

	"github.com/airbyte-go/source-declarative/lang/interp"
)

// dropSecrets takes out of p every part that holds a secret (holds says
// which text does), for a request to a host the credentials do not go to:
// query parameters (the URL's own included), headers, form fields and JSON
// body fields. It names what it took out, sorted. A secret in a part that
// cannot be left out alone (the URL's path, a body given as one text) is an
// error naming that part; p is then unchanged.
func (p *Parts) dropSecrets(holds func(string) bool) ([]string, error) {
	u, err := url.Parse(p.URL)
	if err != nil {
		return nil, nil // the request fails on its URL anyway
	}
	for _, part := range []string{u.User.String(), u.Host, u.Path, u.EscapedPath(), u.Fragment} {
		if holds(part) {
			return nil, errors.New("URL")
		}
	}
	if p.BodyRaw != nil && holds(*p.BodyRaw) {
		return nil, errors.New("body")
	}
	var dropped []string
	if u.RawQuery != "" {
		own := u.Query()
		changed := false
		for k, vs := range own {
			if holds(k) || anyHolds(vs, holds) {
				delete(own, k)
				dropped = append(dropped, "query parameter "+k)
				changed = true
			}
		}
		if changed {
			u.RawQuery = own.Encode()
			p.URL = u.String()
		}
	}
	for k, vs := range p.Query {
		if anyHolds(vs, holds) {
			delete(p.Query, k)
			dropped = append(dropped, "query parameter "+k)
		}
	}
	for k, vs := range p.Headers {
		if anyHolds(vs, holds) {
			delete(p.Headers, k)
			dropped = append(dropped, "header "+k)
		}
	}
	for k, vs := range p.BodyData {
		if anyHolds(vs, holds) {
			delete(p.BodyData, k)
			dropped = append(dropped, "body field "+k)
		}
	}
	dropped = append(dropped, dropJSONSecrets(p.BodyJSON, "", holds)...)
	sort.Strings(dropped)
	return dropped, nil
}

func anyHolds(vs []string, holds func(string) bool) bool {
	for _, v := range vs {
		if holds(v) {
			return true
		}
	}
	return false
}

// dropJSONSecrets deletes the members of a JSON body whose value (a
// scalar, or a list taken whole) holds a secret, at any depth.
func dropJSONSecrets(m map[string]any, prefix string, holds func(string) bool) []string {
	var dropped []string
	for k, v := range m {
		if sub, ok := v.(map[string]any); ok {
			dropped = append(dropped, dropJSONSecrets(sub, prefix+k+".", holds)...)
			continue
		}
		if holds(leafText(v)) {
			delete(m, k)
			dropped = append(dropped, "JSON body field "+prefix+k)
		}
	}
	return dropped
}

// jsonLeaves are the members of a JSON body that are not objects, by
// dotted path, as text.
func jsonLeaves(m map[string]any) map[string]string {
	out := map[string]string{}
	var walk func(m map[string]any, prefix string)
	walk = func(m map[string]any, prefix string) {
		for k, v := range m {
			if sub, ok := v.(map[string]any); ok {
				walk(sub, prefix+k+".")
				continue
			}
			out[prefix+k] = leafText(v)
		}
	}
	walk(m, "")
	return out
}

func leafText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return strings.TrimSpace(interp.String(v))
}
