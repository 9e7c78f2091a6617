// Package request builds the HTTP requests a stream sends (URL, query,
// headers, body), injects values where a manifest's request options say, and
// sends them with retries.
package request

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/runtime/failure"
)

// Parts is a request under construction. Every setter refuses a key that is
// already set, so that nothing silently overwrites anything.
type Parts struct {
	Method   string
	URL      string // absolute URL, possibly with its own query
	Query    url.Values
	Headers  http.Header
	BodyData url.Values
	BodyRaw  *string // a body given as one string
	BodyJSON map[string]any
	// Credentials is what the authenticator put in (see Client.Authenticate).
	Credentials Credentials
}

// New returns empty parts for method and URL.
func New(method, rawURL string) *Parts {
	return &Parts{Method: method, URL: rawURL, Query: url.Values{}, Headers: http.Header{}, BodyData: url.Values{}}
}

// SetQuery adds a query parameter; a list repeats the key; nil is dropped.
func (p *Parts) SetQuery(key string, v any) error {
	if v == nil {
		return nil
	}
	if _, ok := p.Query[key]; ok {
		return collision("query parameter %q is set twice", key)
	}
	vals, err := strings_(v, "query parameter "+key)
	if err != nil {
		return err
	}
	if len(vals) > 0 {
		p.Query[key] = vals
	}
	return nil
}

// SetHeader sets a header; nil is dropped.
func (p *Parts) SetHeader(key string, v any) error {
	if v == nil {
		return nil
	}
	if p.Headers.Get(key) != "" {
		return collision("header %q is set twice", key)
	}
	s := interp.String(v)
	if s == "" {
		return nil
	}
	p.Headers.Set(key, s)
	return nil
}

// SetBodyData sets a form field; a list repeats the key; nil is dropped.
func (p *Parts) SetBodyData(key string, v any) error {
	if v == nil {
		return nil
	}
	if p.BodyRaw != nil {
		return fmt.Errorf("body field %q cannot be added to a body given as one string", key)
	}
	if _, ok := p.BodyData[key]; ok {
		return collision("body field %q is set twice", key)
	}
	vals, err := strings_(v, "body field "+key)
	if err != nil {
		return err
	}
	p.BodyData[key] = vals
	return nil
}

// SetBodyJSON sets a value at a path of the JSON body, creating parents.
// What is already there is merged as Airbyte merges the body's parts (its
// combine_mappings): objects key by key, at any depth, and the same value
// again is no change; only two different values at one path collide.
func (p *Parts) SetBodyJSON(path []string, v any) error {
	if p.BodyJSON == nil {
		p.BodyJSON = map[string]any{}
	}
	m := p.BodyJSON
	for i, k := range path {
		if i == len(path)-1 {
			return mergeJSON(m, k, v, path)
		}
		next, ok := m[k].(map[string]any)
		if !ok {
			if _, exists := m[k]; exists {
				return bodyCollision(path[:i+1])
			}
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	return nil
}

// mergeJSON sets m[k] to v, merging two objects key by key.
func mergeJSON(m map[string]any, k string, v any, path []string) error {
	old, exists := m[k]
	if !exists {
		if obj, ok := v.(map[string]any); ok {
			v = manifest.DeepCopy(obj) // merged into later: not the caller's
		}
		m[k] = v
		return nil
	}
	into, isObject := old.(map[string]any)
	from, alsoObject := v.(map[string]any)
	if !isObject || !alsoObject {
		if equalJSON(old, v) {
			return nil
		}
		return bodyCollision(path)
	}
	for _, key := range interp.SortedKeys(from) {
		if err := mergeJSON(into, key, from[key], append(path[:len(path):len(path)], key)); err != nil {
			return err
		}
	}
	return nil
}

// bodyCollision is Airbyte's error for two values at one path of a JSON
// body, in its words.
func bodyCollision(path []string) error {
	return collision("Request body collision, duplicate keys detected at key path: %s. Please ensure that all keys in the request are unique.", strings.Join(path, "."))
}

// collision is a key two parts of the manifest put into one request: a
// system_error, as in Airbyte (no config fixes it), when the request is made.
func collision(format string, args ...any) error {
	return failure.System(format, args...)
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

func strings_(v any, what string) ([]string, error) {
	switch x := v.(type) {
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			out = append(out, interp.String(e))
		}
		return out, nil
	case interp.List:
		return strings_([]any(x), what)
	case map[string]any:
		return nil, fmt.Errorf("%s: the value cannot be an object", what)
	}
	s := interp.String(v)
	if s == "" {
		return nil, nil
	}
	return []string{s}, nil
}

// FullURL is the URL with the query: keys the URL's own query already has
// are left as the URL says.
func (p *Parts) FullURL() (string, error) {
	u, err := url.Parse(p.URL)
	if err != nil {
		return "", fmt.Errorf("invalid URL %q: %v", p.URL, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("invalid URL %q: it must start with http:// or https://", p.URL)
	}
	if len(p.Query) == 0 {
		return u.String(), nil
	}
	own := u.Query()
	extra := url.Values{}
	for k, v := range p.Query {
		if _, ok := own[k]; !ok {
			extra[k] = v
		}
	}
	if len(extra) == 0 {
		return u.String(), nil
	}
	if u.RawQuery != "" {
		u.RawQuery += "&" + extra.Encode()
	} else {
		u.RawQuery = extra.Encode()
	}
	return u.String(), nil
}

// Body returns the encoded body and its content type, or nil.
func (p *Parts) Body() ([]byte, string, error) {
	hasData := len(p.BodyData) > 0 || p.BodyRaw != nil
	if hasData && len(p.BodyJSON) > 0 {
		return nil, "", fmt.Errorf("a request cannot have both a form body and a JSON body")
	}
	switch {
	case p.BodyRaw != nil:
		return []byte(*p.BodyRaw), "application/x-www-form-urlencoded", nil
	case len(p.BodyData) > 0:
		return []byte(p.BodyData.Encode()), "application/x-www-form-urlencoded", nil
	case len(p.BodyJSON) > 0:
		b, err := json.Marshal(p.BodyJSON)
		return b, "application/json", err
	}
	return nil, "", nil
}

// HTTP builds the http.Request.
func (p *Parts) HTTP(ctx context.Context) (*http.Request, error) {
	full, err := p.FullURL()
	if err != nil {
		return nil, err
	}
	body, ctype, err := p.Body()
	if err != nil {
		return nil, err
	}
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(withCredentials(ctx, p.Credentials), p.Method, full, r)
	if err != nil {
		return nil, err
	}
	for k, v := range p.Headers {
		if err := checkHeader(k, v); err != nil {
			return nil, err
		}
		req.Header[k] = v
	}
	if body != nil && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", ctype)
	}
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", "airbyte-source-declarative-go")
	}
	return req, nil
}

// checkHeader refuses a header HTTP cannot carry (the client would fail
// the same way on every attempt); the value is not quoted, as it may be a
// secret.
func checkHeader(name string, values []string) error {
	if name == "" || strings.ContainsFunc(name, func(r rune) bool {
		return r <= ' ' || r >= 0x7f || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r)
	}) {
		return fmt.Errorf("request header %q: not a valid HTTP header name", name)
	}
	for _, v := range values {
		if strings.ContainsFunc(v, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }) {
			return fmt.Errorf("request header %q: the value holds a line break or another control character, which an HTTP header cannot carry", name)
		}
	}
	return nil
}

// Fingerprint identifies what the request asks for: method, URL with query,
// headers and body, hashed.
func (p *Parts) Fingerprint() [sha256.Size]byte {
	h := sha256.New()
	full, _ := p.FullURL()
	body, _, _ := p.Body()
	for _, s := range []string{p.Method, " ", full, "\n"} {
		io.WriteString(h, s)
	}
	for _, k := range interp.SortedKeys(p.Headers) {
		io.WriteString(h, k)
		for _, v := range p.Headers[k] {
			io.WriteString(h, "\x00")
			io.WriteString(h, v)
		}
		io.WriteString(h, "\n")
	}
	h.Write(body)
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}
