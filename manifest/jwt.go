package manifest

import (
	"slices"

	"github.com/airbyte-go/source-declarative/lang/interp"
)

// JWTAuth is the JwtAuthenticator type.
const JWTAuth = "JwtAuthenticator"

// JWTConfig is a JwtAuthenticator: a JSON Web Token signed for each request
// and sent where Inject says (default: the Authorization header).
type JWTConfig struct {
	Algorithm     string
	SecretKey     *interp.Template
	Base64Secret  *interp.Template // base64_encode_secret_key: a boolean or a condition
	Passphrase    *interp.Template // of an encrypted private key
	TokenDuration int64            // seconds from iat to exp
	HeaderPrefix  *interp.Template
	Kid, Typ, Cty *interp.Template // jwt_headers
	Iss, Sub, Aud *interp.Template // jwt_payload
	ExtraHeaders  *Mapping         // additional_jwt_headers
	ExtraPayload  *Mapping         // additional_jwt_payload
}

// reservedJWTHeaders and reservedJWTClaims may not be set through the
// additional mappings, as in Airbyte.
var (
	reservedJWTHeaders = []string{"kid", "alg", "typ", "cty"}
	reservedJWTClaims  = []string{"iss", "sub", "aud", "iat", "exp", "nbf"}
)

func (d *decoder) jwt(m map[string]any, path string) (*JWTConfig, *RequestOption) {
	c := &JWTConfig{Algorithm: str(m, "algorithm", ""), TokenDuration: 1200}
	if c.Algorithm == "ES256K" {
		d.fail(path+".algorithm", "ES256K (the secp256k1 curve) is not supported here; ES256, ES384 and ES512 are")
	}
	c.SecretKey = d.tpl(m, "secret_key", path)
	c.Base64Secret = d.tpl(m, "base64_encode_secret_key", path)
	c.Passphrase = d.tpl(m, "passphrase", path)
	if v, ok := m["token_duration"]; ok && v != nil {
		c.TokenDuration = int64(intOr(v, 1200))
	}
	c.HeaderPrefix = d.tpl(m, "header_prefix", path)
	if h, ok := m["jwt_headers"].(map[string]any); ok {
		c.Kid = d.tpl(h, "kid", path+".jwt_headers")
		c.Typ = d.tpl(h, "typ", path+".jwt_headers")
		c.Cty = d.tpl(h, "cty", path+".jwt_headers")
	}
	if p, ok := m["jwt_payload"].(map[string]any); ok {
		c.Iss = d.tpl(p, "iss", path+".jwt_payload")
		c.Sub = d.tpl(p, "sub", path+".jwt_payload")
		c.Aud = d.tpl(p, "aud", path+".jwt_payload")
	}
	c.ExtraHeaders = d.jwtMapping(m, "additional_jwt_headers", path, reservedJWTHeaders)
	c.ExtraPayload = d.jwtMapping(m, "additional_jwt_payload", path, reservedJWTClaims)
	inject := &RequestOption{Path: path, InjectInto: InjectHeader, FieldName: interp.Constant("Authorization", path)}
	if o, ok := m["request_option"]; ok && o != nil {
		inject = d.requestOption(o, path+".request_option", false)
	}
	return c, inject
}

// jwtMapping decodes an additional headers or payload mapping, refusing the
// names the authenticator sets itself.
func (d *decoder) jwtMapping(m map[string]any, key, path string, reserved []string) *Mapping {
	mp := d.mapping(m, key, path)
	if mp == nil {
		return nil
	}
	if mp.Whole != nil {
		d.fail(join(path, key), "must be a mapping of names to values")
		return nil
	}
	for _, k := range mp.Keys {
		if slices.Contains(reserved, k) {
			d.fail(join(join(path, key), k), "is set by the authenticator itself (reserved: %v)", reserved)
		}
	}
	return mp
}
