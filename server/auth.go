package server

import (
	"encoding/json"
	"math"
	"math/big"
	"net/http"
	"strings"
	"time"
	"unicode"

	"github.com/golang-jwt/jwt/v5"
)

// Authentication is Airbyte's (manifest_server/helpers/auth.py): with a
// secret (AB_JWT_SIGNATURE_SECRET), every /v1 request carries
// `Authorization: Bearer <JWT>` signed with it by HS256; without one, every
// request passes.

// The 401s' details.
const (
	bearerRequired = "Bearer token required"
	invalidToken   = "Invalid token"
)

// verifier checks bearer tokens against the secret.
type verifier struct {
	secret []byte
	now    func() time.Time
	parser *jwt.Parser
}

func newVerifier(secret string) *verifier {
	// The claims are checked below as PyJWT checks them; the library checks
	// the structure, the algorithm and the signature.
	return &verifier{secret: []byte(secret), now: time.Now,
		parser: jwt.NewParser(jwt.WithValidMethods([]string{"HS256"}), jwt.WithJSONNumber(), jwt.WithoutClaimsValidation(), jwt.WithPaddingAllowed())}
}

// check returns "" when the request may pass, else the 401's detail.
func (v *verifier) check(r *http.Request) string {
	token, ok := bearer(r.Header.Get("Authorization"))
	if !ok {
		return bearerRequired
	}
	claims := jwt.MapClaims{}
	parsed, err := v.parser.ParseWithClaims(token, claims, func(*jwt.Token) (any, error) { return v.secret, nil })
	if err != nil || !parsed.Valid {
		return invalidToken
	}
	if kid, has := parsed.Header["kid"]; has {
		if _, isText := kid.(string); !isText {
			return invalidToken
		}
	}
	if !pyJWTClaims(claims, float64(v.now().UnixNano())/1e9) {
		return invalidToken
	}
	return ""
}

// bearer reads the credentials of an Authorization header as FastAPI's
// HTTPBearer does: the scheme, case-insensitive, up to the first space, and
// everything after it (not trimmed), which must not be empty.
func bearer(header string) (string, bool) {
	scheme, credentials, _ := strings.Cut(header, " ")
	if header == "" || scheme == "" || credentials == "" || !strings.EqualFold(scheme, "bearer") {
		return "", false
	}
	return credentials, true
}

// pyJWTClaims checks the registered claims as PyJWT's decode does with no
// audience, issuer or subject expected: iat and nbf not after now, exp after
// now (each read as Python's int() reads it), no audience, sub and jti
// strings. A claim Python's int() cannot read fails the token (PyJWT raises
// a TypeError for some, which Airbyte's server answers with a 500).
func pyJWTClaims(c jwt.MapClaims, now float64) bool {
	for _, claim := range []struct {
		name string
		ok   func(t *big.Float) bool
	}{
		{"iat", func(t *big.Float) bool { return t.Cmp(big.NewFloat(now)) <= 0 }},
		{"nbf", func(t *big.Float) bool { return t.Cmp(big.NewFloat(now)) <= 0 }},
		{"exp", func(t *big.Float) bool { return t.Cmp(big.NewFloat(now)) > 0 }},
	} {
		v, has := c[claim.name]
		if !has {
			continue
		}
		t, ok := pythonInt(v)
		if !ok || !claim.ok(new(big.Float).SetInt(t)) {
			return false
		}
	}
	if pythonTruthy(c["aud"]) {
		return false
	}
	for _, name := range []string{"sub", "jti"} {
		if v, has := c[name]; has {
			if _, isText := v.(string); !isText {
				return false
			}
		}
	}
	return true
}

// pythonInt is Python's int() of a decoded JSON value: a number truncated, a
// bool as 0 or 1, a string of digits (spaces around, underscores between).
func pythonInt(v any) (*big.Int, bool) {
	switch x := v.(type) {
	case bool:
		if x {
			return big.NewInt(1), true
		}
		return big.NewInt(0), true
	case json.Number:
		if !isFloatLiteral(string(x)) {
			return new(big.Int).SetString(string(x), 10)
		}
		f, err := x.Float64()
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, false
		}
		n, _ := new(big.Float).SetFloat64(math.Trunc(f)).Int(nil)
		return n, true
	case string:
		s := strings.TrimFunc(x, unicode.IsSpace)
		if strings.Contains(s, ".") {
			return nil, false
		}
		return parseIntText(s)
	}
	return nil, false
}

// pythonTruthy is Python's bool() of a decoded JSON value.
func pythonTruthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case json.Number:
		f, err := x.Float64()
		return err != nil || f != 0
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	}
	return true
}
