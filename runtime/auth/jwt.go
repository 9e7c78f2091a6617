package auth

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	_ "crypto/sha256" // SHA-256 for HS256, RS256, PS256, ES256
	_ "crypto/sha512" // SHA-384 and SHA-512
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/runtime/failure"
	"github.com/airbyte-go/source-declarative/runtime/request"
)

// jwtAuth signs a new JSON Web Token for each request, as Airbyte's
// JwtAuthenticator does: iat and nbf now, exp now plus token_duration.
type jwtAuth struct {
	a    *manifest.Auth
	c    *manifest.JWTConfig
	env  *Env
	vars interp.Vars
}

func (j *jwtAuth) Apply(_ context.Context, p *request.Parts) error {
	token, err := j.token()
	if err != nil {
		return err
	}
	j.env.secret(token)
	prefix, err := render(j.c.HeaderPrefix, j.vars)
	if err != nil {
		return err
	}
	if prefix != "" {
		token = prefix + " " + token
	}
	return request.Inject(p, j.a.Inject, token, j.vars)
}

// token is a signed token: header and payload as compact JSON, each
// base64url-encoded, and the signature of the two.
func (j *jwtAuth) token() (string, error) {
	header, err := j.header()
	if err != nil {
		return "", err
	}
	payload, err := j.payload()
	if err != nil {
		return "", err
	}
	input := base64.RawURLEncoding.EncodeToString(header) + "." + base64.RawURLEncoding.EncodeToString(payload)
	key, err := j.key()
	if err != nil {
		return "", err
	}
	sig, err := jwtSign(j.c.Algorithm, key, []byte(input))
	if err != nil {
		return "", failure.Config("%s: cannot sign the token with %s: %v", j.a.Path, j.c.Algorithm, err)
	}
	return input + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}

// header is the JOSE header, its names sorted as PyJWT writes them: the
// additional headers, kid, typ (JWT unless set; none when set empty), cty
// and alg.
func (j *jwtAuth) header() ([]byte, error) {
	h, err := j.evalMapping(j.c.ExtraHeaders)
	if err != nil {
		return nil, err
	}
	h["typ"] = "JWT"
	for name, t := range map[string]*interp.Template{"kid": j.c.Kid, "typ": j.c.Typ, "cty": j.c.Cty} {
		if t == nil {
			continue
		}
		v, err := t.Eval(j.vars)
		if err != nil {
			return nil, err
		}
		h[name] = v
	}
	if !interp.Truthy(h["typ"]) {
		delete(h, "typ")
	}
	h["alg"] = j.c.Algorithm
	return compactJSON(h) // encoding/json writes map keys sorted
}

// payload is the claims in Airbyte's order: the additional ones, iss, sub,
// aud, then iat, exp and nbf.
func (j *jwtAuth) payload() ([]byte, error) {
	extra, err := j.evalMapping(j.c.ExtraPayload)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteByte('{')
	add := func(name string, v any) error {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		k, _ := compactJSON(name)
		val, err := compactJSON(v)
		if err != nil {
			return err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(val)
		return nil
	}
	for _, k := range interp.SortedKeys(extra) {
		if err := add(k, extra[k]); err != nil {
			return nil, err
		}
	}
	for _, c := range []struct {
		name string
		t    *interp.Template
	}{{"iss", j.c.Iss}, {"sub", j.c.Sub}, {"aud", j.c.Aud}} {
		if c.t == nil {
			continue
		}
		v, err := c.t.Eval(j.vars)
		if err != nil {
			return nil, err
		}
		if err := add(c.name, v); err != nil {
			return nil, err
		}
	}
	now := j.env.Now().Unix()
	add("iat", now)
	add("exp", now+j.c.TokenDuration)
	add("nbf", now)
	b.WriteByte('}')
	return b.Bytes(), nil
}

func (j *jwtAuth) evalMapping(m *manifest.Mapping) (map[string]any, error) {
	out := map[string]any{}
	if m == nil {
		return out, nil
	}
	for _, k := range m.Keys {
		v, err := m.Values[k].Eval(j.vars)
		if err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, nil
}

// key is what signs: the secret's bytes for HMAC (base64-encoded first when
// base64_encode_secret_key says so), else the PEM private key it holds,
// decrypted with the passphrase when one is given. A PEM key written with
// "\n" escapes instead of line breaks is read as Airbyte reads it.
func (j *jwtAuth) key() (any, error) {
	secret, err := render(j.c.SecretKey, j.vars)
	if err != nil {
		return nil, err
	}
	j.env.secret(secret)
	if strings.Contains(secret, `\n`) && strings.Contains(secret, "-----BEGIN") && strings.Contains(secret, "KEY-----") {
		secret = strings.ReplaceAll(secret, `\n`, "\n")
	}
	if strings.HasPrefix(j.c.Algorithm, "HS") {
		encode, err := j.c.Base64Secret.Bool(j.vars)
		if err != nil {
			return nil, err
		}
		if encode {
			secret = base64.StdEncoding.EncodeToString([]byte(secret))
		}
		return []byte(secret), nil
	}
	passphrase, err := render(j.c.Passphrase, j.vars)
	if err != nil {
		return nil, err
	}
	key, err := parsePrivateKey([]byte(secret), []byte(passphrase))
	if err != nil {
		return nil, failure.Config("%s.secret_key: %v", j.a.Path, err)
	}
	return key, nil
}

// jwtHash is the digest an algorithm's name ends with (HS256, ES384,
// RS512...); ok is false for another name.
func jwtHash(alg string) (h crypto.Hash, ok bool) {
	switch {
	case strings.HasSuffix(alg, "256"):
		return crypto.SHA256, true
	case strings.HasSuffix(alg, "384"):
		return crypto.SHA384, true
	case strings.HasSuffix(alg, "512"):
		return crypto.SHA512, true
	}
	return 0, false
}

// jwtSign signs input as RFC 7518 says for alg with key (bytes for HMAC, a
// private key otherwise); ECDSA signatures are r and s side by side.
func jwtSign(alg string, key any, input []byte) ([]byte, error) {
	if alg == "EdDSA" {
		k, ok := key.(ed25519.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("EdDSA needs an Ed25519 private key, got %s", keyKind(key))
		}
		return ed25519.Sign(k, input), nil
	}
	hash, ok := jwtHash(alg)
	if !ok {
		return nil, fmt.Errorf("unknown algorithm")
	}
	if alg[:2] == "HS" {
		mac := hmac.New(hash.New, key.([]byte))
		mac.Write(input)
		return mac.Sum(nil), nil
	}
	h := hash.New()
	h.Write(input)
	digest := h.Sum(nil)
	switch alg[:2] {
	case "RS", "PS":
		k, ok := key.(*rsa.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("%s needs an RSA private key, got %s", alg, keyKind(key))
		}
		if alg[0] == 'P' {
			return rsa.SignPSS(rand.Reader, k, hash, digest, &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash})
		}
		return rsa.SignPKCS1v15(nil, k, hash, digest)
	case "ES":
		k, ok := key.(*ecdsa.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("%s needs an EC private key, got %s", alg, keyKind(key))
		}
		r, s, err := ecdsa.Sign(rand.Reader, k, digest)
		if err != nil {
			return nil, err
		}
		size := (k.Curve.Params().BitSize + 7) / 8
		sig := make([]byte, 2*size)
		r.FillBytes(sig[:size])
		s.FillBytes(sig[size:])
		return sig, nil
	}
	return nil, fmt.Errorf("unknown algorithm")
}

func keyKind(key any) string {
	switch key.(type) {
	case *rsa.PrivateKey:
		return "an RSA key"
	case *ecdsa.PrivateKey:
		return "an EC key"
	case ed25519.PrivateKey:
		return "an Ed25519 key"
	}
	return fmt.Sprintf("%T", key)
}

// compactJSON writes v as JSON without spaces and without escaping HTML
// characters.
func compactJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
