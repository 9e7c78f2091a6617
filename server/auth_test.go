package server

import (
	"encoding/base64"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// The tokens PyJWT's decode(token, secret, algorithms=["HS256"]) takes and
// refuses, as Airbyte's server checks them.
func TestBearerTokensAsPyJWT(t *testing.T) {
	const secret = "s3cret"
	now := time.Unix(1_800_000_000, 0)
	v := newVerifier(secret)
	v.now = func() time.Time { return now }
	sign := func(method jwt.SigningMethod, key any, claims jwt.MapClaims) string {
		s, err := jwt.NewWithClaims(method, claims).SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	hs256 := func(claims jwt.MapClaims) string { return sign(jwt.SigningMethodHS256, []byte(secret), claims) }
	b64 := base64.RawURLEncoding.EncodeToString
	unsigned := b64([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + b64([]byte(`{"sub":"x"}`)) + "."
	for _, c := range []struct {
		name, header string
		want         string
	}{
		{"no header", "", bearerRequired},
		{"another scheme", "Basic dXNlcjpwYXNz", bearerRequired},
		{"no credentials", "Bearer", bearerRequired},
		{"empty credentials", "Bearer ", bearerRequired},
		{"valid", "Bearer " + hs256(jwt.MapClaims{"sub": "builder"}), ""},
		{"scheme in lower case", "bearer " + hs256(jwt.MapClaims{}), ""},
		{"two spaces", "Bearer  " + hs256(jwt.MapClaims{}), invalidToken},
		{"not a JWT", "Bearer abc", invalidToken},
		{"another secret", "Bearer " + sign(jwt.SigningMethodHS256, []byte("other"), jwt.MapClaims{}), invalidToken},
		{"alg none", "Bearer " + unsigned, invalidToken},
		{"HS512 with the secret", "Bearer " + sign(jwt.SigningMethodHS512, []byte(secret), jwt.MapClaims{}), invalidToken},
		{"exp ahead", "Bearer " + hs256(jwt.MapClaims{"exp": now.Unix() + 60}), ""},
		{"exp now", "Bearer " + hs256(jwt.MapClaims{"exp": now.Unix()}), invalidToken},
		{"exp past", "Bearer " + hs256(jwt.MapClaims{"exp": now.Unix() - 1}), invalidToken},
		{"exp as digits", "Bearer " + hs256(jwt.MapClaims{"exp": " 1900000000 "}), ""},
		{"exp as a fraction", "Bearer " + hs256(jwt.MapClaims{"exp": "1900000000.5"}), invalidToken},
		{"exp null", "Bearer " + hs256(jwt.MapClaims{"exp": nil}), invalidToken},
		{"nbf ahead", "Bearer " + hs256(jwt.MapClaims{"nbf": now.Unix() + 60}), invalidToken},
		{"nbf past", "Bearer " + hs256(jwt.MapClaims{"nbf": now.Unix() - 60}), ""},
		{"iat ahead", "Bearer " + hs256(jwt.MapClaims{"iat": now.Unix() + 60}), invalidToken},
		{"iat past", "Bearer " + hs256(jwt.MapClaims{"iat": now.Unix() - 60}), ""},
		{"an audience", "Bearer " + hs256(jwt.MapClaims{"aud": "airbyte"}), invalidToken},
		{"an empty audience", "Bearer " + hs256(jwt.MapClaims{"aud": ""}), ""},
		{"sub a number", "Bearer " + hs256(jwt.MapClaims{"sub": 1}), invalidToken},
		{"jti a number", "Bearer " + hs256(jwt.MapClaims{"jti": 1}), invalidToken},
	} {
		r := httptest.NewRequest("POST", "/v1/manifest/check", nil)
		if c.header != "" {
			r.Header.Set("Authorization", c.header)
		}
		if got := v.check(r); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
