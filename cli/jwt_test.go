package cli

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"hash"
	"math/big"
	"os"
	"strings"
	"testing"
	"time"
)

func jwtManifest(url, authenticator string) string {
	return stream("s", "url_base: "+url+"\npath: /s\nauthenticator:\n"+indent(authenticator, 2), "[data]", "")
}

// splitJWT checks a token's form and signature and returns its header and
// payload JSON.
func splitJWT(t *testing.T, token string, verify func(input, sig []byte) bool) (header, payload string) {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("token %q is not three base64url parts", token)
	}
	var dec [3][]byte
	for i, p := range parts {
		b, err := base64.RawURLEncoding.DecodeString(p)
		if err != nil {
			t.Fatalf("part %d of %q: %v", i, token, err)
		}
		dec[i] = b
	}
	if !verify([]byte(parts[0]+"."+parts[1]), dec[2]) {
		t.Errorf("the signature of %q does not verify", token)
	}
	return string(dec[0]), string(dec[1])
}

// timesOf checks the payload's iat, exp and nbf against the time of the run
// and returns the payload with them replaced by IAT, EXP and NBF.
func timesOf(t *testing.T, payload string, before, after time.Time, duration int64) string {
	t.Helper()
	var claims struct{ Iat, Exp, Nbf int64 }
	if err := json.Unmarshal([]byte(payload), &claims); err != nil {
		t.Fatalf("payload %s: %v", payload, err)
	}
	if claims.Iat < before.Unix() || claims.Iat > after.Unix() || claims.Nbf != claims.Iat || claims.Exp != claims.Iat+duration {
		t.Errorf("payload %s: iat, nbf, exp not now, now, now+%d", payload, duration)
	}
	for name, v := range map[string]int64{"iat": claims.Iat, "exp": claims.Exp, "nbf": claims.Nbf} {
		payload = strings.Replace(payload, fmt.Sprintf(`"%s":%d`, name, v), fmt.Sprintf(`"%s":%s`, name, strings.ToUpper(name)), 1)
	}
	return payload
}

func hmacVerifier(h func() hash.Hash, key []byte) func(input, sig []byte) bool {
	return func(input, sig []byte) bool {
		mac := hmac.New(h, key)
		mac.Write(input)
		return hmac.Equal(mac.Sum(nil), sig)
	}
}

func TestJwtAuthenticatorSignsEachRequest(t *testing.T) {
	a := dataAPI(t)
	auth := `type: JwtAuthenticator
secret_key: "{{ config['secret'] }}"
algorithm: HS256
token_duration: 600
header_prefix: Bearer
jwt_headers: {kid: "{{ config['kid'] }}"}
jwt_payload: {iss: "{{ config['issuer'] }}", sub: subject, aud: appstoreconnect-v1}
additional_jwt_payload: {scope: read, n: "{{ 2 }}"}
additional_jwt_headers: {x5t: thumb}
`
	before := time.Now()
	res := newConnector(t, jwtManifest(a.URL, auth), map[string]any{"secret": "s3cr3t", "kid": "K1", "issuer": "me"}, "s").read(t)
	after := time.Now()
	reqs := a.requests()
	if res.code != 0 || len(reqs) != 1 || reqs[0].Method != "GET" || reqs[0].Path != "/s" || reqs[0].Query != "" {
		t.Fatalf("exit %d, requests %v: %s", res.code, reqs, res.stdout)
	}
	token, ok := strings.CutPrefix(reqs[0].Header.Get("Authorization"), "Bearer ")
	if !ok {
		t.Fatalf("Authorization %q", reqs[0].Header.Get("Authorization"))
	}
	header, payload := splitJWT(t, token, hmacVerifier(sha256.New, []byte("s3cr3t")))
	if want := `{"alg":"HS256","kid":"K1","typ":"JWT","x5t":"thumb"}`; header != want {
		t.Errorf("header %s, want %s", header, want)
	}
	if got, want := timesOf(t, payload, before, after, 600), `{"n":2,"scope":"read","iss":"me","sub":"subject","aud":"appstoreconnect-v1","iat":IAT,"exp":EXP,"nbf":NBF}`; got != want {
		t.Errorf("payload %s, want %s", got, want)
	}
	equalLists(t, "records", res.records("s"), []string{`{"id":1}`})
	if strings.Contains(res.stdout+res.stderr, token) || strings.Contains(res.stdout+res.stderr, "s3cr3t") {
		t.Errorf("the token or the secret was printed")
	}
}

// Private keys in the config, PEM as users paste them (also with \n written
// out): each algorithm's signature verifies with the public key.
func TestJwtAuthenticatorAsymmetricAlgorithms(t *testing.T) {
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ecKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	edPub, edKey, _ := ed25519.GenerateKey(rand.Reader)
	pemOf := func(typ string, der []byte) string {
		return string(pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}))
	}
	pkcs8 := func(k any) string { der, _ := x509.MarshalPKCS8PrivateKey(k); return pemOf("PRIVATE KEY", der) }
	ecDER, _ := x509.MarshalECPrivateKey(ecKey)
	digest := func(h crypto.Hash, b []byte) []byte { d := h.New(); d.Write(b); return d.Sum(nil) }
	cases := []struct {
		alg, key string
		verify   func(input, sig []byte) bool
	}{
		{"RS256", pemOf("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(rsaKey)), func(in, sig []byte) bool {
			return rsa.VerifyPKCS1v15(&rsaKey.PublicKey, crypto.SHA256, digest(crypto.SHA256, in), sig) == nil
		}},
		{"RS512", strings.ReplaceAll(pkcs8(rsaKey), "\n", `\n`), func(in, sig []byte) bool {
			return rsa.VerifyPKCS1v15(&rsaKey.PublicKey, crypto.SHA512, digest(crypto.SHA512, in), sig) == nil
		}},
		{"PS384", pkcs8(rsaKey), func(in, sig []byte) bool {
			return rsa.VerifyPSS(&rsaKey.PublicKey, crypto.SHA384, digest(crypto.SHA384, in), sig, &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash}) == nil
		}},
		{"ES256", pemOf("EC PRIVATE KEY", ecDER), func(in, sig []byte) bool {
			return len(sig) == 64 && ecdsa.Verify(&ecKey.PublicKey, digest(crypto.SHA256, in), new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:]))
		}},
		{"EdDSA", pkcs8(edKey), func(in, sig []byte) bool { return ed25519.Verify(edPub, in, sig) }},
	}
	for _, c := range cases {
		a := dataAPI(t)
		auth := "type: JwtAuthenticator\nsecret_key: \"{{ config['private_key'] }}\"\nalgorithm: " + c.alg + "\n"
		res := newConnector(t, jwtManifest(a.URL, auth), map[string]any{"private_key": c.key}, "s").read(t)
		reqs := a.requests()
		if res.code != 0 || len(reqs) != 1 {
			t.Fatalf("%s: exit %d: %s", c.alg, res.code, res.stdout)
		}
		header, _ := splitJWT(t, reqs[0].Header.Get("Authorization"), c.verify)
		if want := `{"alg":"` + c.alg + `","typ":"JWT"}`; header != want {
			t.Errorf("%s: header %s, want %s", c.alg, header, want)
		}
	}
}

// Keys encrypted with a passphrase as OpenSSL writes them (testdata/jwt,
// test keys made for this test with openssl genpkey and openssl pkcs8).
func TestJwtAuthenticatorEncryptedKeys(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile("testdata/jwt/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	public := func(name string) any {
		block, _ := pem.Decode([]byte(read(name)))
		k, err := x509.ParsePKIXPublicKey(block.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	rsaPub := public("rsa_aes256.pub.pem").(*rsa.PublicKey)
	ecPub := public("ec_des3.pub.pem").(*ecdsa.PublicKey)
	cases := []struct {
		alg, key, passphrase string
		verify               func(input, sig []byte) bool
	}{
		{"RS256", read("rsa_aes256.pem"), "s3cret", func(in, sig []byte) bool {
			d := sha256.Sum256(in)
			return rsa.VerifyPKCS1v15(rsaPub, crypto.SHA256, d[:], sig) == nil
		}},
		{"ES384", read("ec_des3.pem"), "pw", func(in, sig []byte) bool {
			d := sha512.Sum384(in)
			return len(sig) == 96 && ecdsa.Verify(ecPub, d[:], new(big.Int).SetBytes(sig[:48]), new(big.Int).SetBytes(sig[48:]))
		}},
	}
	for _, c := range cases {
		a := dataAPI(t)
		auth := "type: JwtAuthenticator\nsecret_key: \"{{ config['private_key'] }}\"\npassphrase: \"{{ config['passphrase'] }}\"\nalgorithm: " + c.alg + "\n"
		res := newConnector(t, jwtManifest(a.URL, auth), map[string]any{"private_key": c.key, "passphrase": c.passphrase}, "s").read(t)
		reqs := a.requests()
		if res.code != 0 || len(reqs) != 1 {
			t.Fatalf("%s: exit %d: %s", c.alg, res.code, res.stdout)
		}
		splitJWT(t, reqs[0].Header.Get("Authorization"), c.verify)

		// A wrong passphrase: a config error naming the key, before any request.
		b := dataAPI(t)
		conn := newConnector(t, jwtManifest(b.URL, auth), map[string]any{"private_key": c.key, "passphrase": "wrong"}, "s")
		errs := conn.read(t).errors()
		want := "stream s: streams[0].retriever.requester.authenticator.secret_key: the passphrase does not decrypt the key"
		if len(errs) == 0 || errs[0]["message"] != want || errs[0]["failure_type"] != "config_error" || len(b.requests()) != 0 {
			t.Errorf("%s with a wrong passphrase: %v, %d requests; want %q", c.alg, errs, len(b.requests()), want)
		}
		if st := conn.check(t).ofType("CONNECTION_STATUS"); len(st) != 1 || st[0]["connectionStatus"].(map[string]any)["status"] != "FAILED" {
			t.Errorf("check with a wrong passphrase: %v", st)
		}
	}
}

func TestJwtAuthenticatorRequestOptionAndBase64Secret(t *testing.T) {
	a := dataAPI(t)
	auth := `type: JwtAuthenticator
secret_key: "{{ config['secret'] }}"
base64_encode_secret_key: true
algorithm: HS512
jwt_headers: {typ: ""}
request_option: {type: RequestOption, inject_into: request_parameter, field_name: jwt}
`
	res := newConnector(t, jwtManifest(a.URL, auth), map[string]any{"secret": "s3cr3t"}, "s").read(t)
	reqs := a.requests()
	if res.code != 0 || len(reqs) != 1 || reqs[0].Header.Get("Authorization") != "" || !strings.HasPrefix(reqs[0].Query, "jwt=") {
		t.Fatalf("exit %d, requests %v: %s", res.code, reqs, res.stdout)
	}
	key := []byte(base64.StdEncoding.EncodeToString([]byte("s3cr3t")))
	header, _ := splitJWT(t, strings.TrimPrefix(reqs[0].Query, "jwt="), hmacVerifier(sha512.New, key))
	if want := `{"alg":"HS512"}`; header != want {
		t.Errorf("header %s, want %s (an empty typ drops it)", header, want)
	}
}

func TestJwtAuthenticatorManifestErrors(t *testing.T) {
	for _, c := range []struct{ auth, want string }{
		{"type: JwtAuthenticator\nsecret_key: x\nalgorithm: ES256K\n", "authenticator.algorithm: ES256K (the secp256k1 curve) is not supported here"},
		{"type: JwtAuthenticator\nsecret_key: x\nalgorithm: HS999\n", "authenticator.algorithm"},
		{"type: JwtAuthenticator\nsecret_key: x\nalgorithm: HS256\nadditional_jwt_payload: {exp: 1}\n", "authenticator.additional_jwt_payload.exp: is set by the authenticator itself"},
		{"type: JwtAuthenticator\nsecret_key: x\nalgorithm: HS256\nadditional_jwt_headers: {alg: none}\n", "authenticator.additional_jwt_headers.alg: is set by the authenticator itself"},
	} {
		res := runCLI(t, "discover", "--manifest", writeFile(t, t.TempDir(), "m.yaml", jwtManifest("http://127.0.0.1:1", c.auth)), "--config", writeFile(t, t.TempDir(), "c.json", "{}"))
		errs := res.errors()
		if res.code != 1 || len(errs) != 1 || !strings.Contains(errs[0]["message"].(string), c.want) {
			t.Errorf("%s: exit %d %v, want %q", c.auth, res.code, errs, c.want)
		}
	}
}
