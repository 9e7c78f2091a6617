package interp

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha3"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"hash"
	"strings"
	"unicode/utf8"
)

// The filters Airbyte's declarative CDK adds to Jinja (filters.py).
func cdkFilters() map[string]filterFunc {
	return map[string]filterFunc{
		"hash":                  fHash,
		"base64encode":          fBase64Encode,
		"base64decode":          fBase64Decode,
		"base64binascii_decode": fBase64BinasciiDecode,
		"string":                fString,
		"regex_search":          fRegexSearch,
		"regex_replace":         fRegexReplace,
		"hmac":                  fHMAC,
	}
}

// hashNamed is the hash function of a Python hashlib name, or nil.
func hashNamed(name string) func() hash.Hash {
	switch name {
	case "md5":
		return md5.New
	case "sha1":
		return sha1.New
	case "sha224":
		return sha256.New224
	case "sha256":
		return sha256.New
	case "sha384":
		return sha512.New384
	case "sha512":
		return sha512.New
	case "sha3_224":
		return func() hash.Hash { return sha3.New224() }
	case "sha3_256":
		return func() hash.Hash { return sha3.New256() }
	case "sha3_384":
		return func() hash.Hash { return sha3.New384() }
	case "sha3_512":
		return func() hash.Hash { return sha3.New512() }
	}
	return nil
}

// fHash is hash(value, hash_type="md5", salt=None): the hex digest of
// str(value) followed by str(salt) when the salt is set.
func fHash(s *state, in any, a *args) (any, error) {
	if err := a.check("hash", 2, "hash_type", "salt"); err != nil {
		return nil, err
	}
	kind, ok, err := argStr(a, 0, "hash_type", "hash")
	if err != nil {
		return nil, err
	}
	if !ok {
		kind = "md5"
	}
	newHash := hashNamed(kind)
	if newHash == nil {
		return nil, valueErr("No hashing function named %s", kind)
	}
	h := newHash()
	text, err := pyText(in)
	if err != nil {
		return nil, err
	}
	h.Write([]byte(text))
	if salt, ok := a.get(1, "salt"); ok && Truthy(salt) {
		saltText, err := pyText(salt)
		if err != nil {
			return nil, err
		}
		h.Write([]byte(saltText))
	}
	return hex.EncodeToString(h.Sum(nil)), s.charge(len(text))
}

// strArg is a filter input that must be a string (the CDK calls .encode).
func strArg(in any, fn string) (string, error) {
	switch x := in.(type) {
	case string:
		return x, nil
	case *undefined:
		return "", x.err()
	}
	return "", valueErr("%s: '%s' object has no attribute 'encode'", fn, typeName(in))
}

func fBase64Encode(_ *state, in any, a *args) (any, error) {
	text, err := strArg(in, "base64encode")
	if err != nil {
		return nil, err
	}
	out := base64.StdEncoding.EncodeToString([]byte(text))
	return out, checkLen(len(out))
}

// fBase64Decode decodes as Python's b64decode does: characters outside the
// alphabet are dropped, the padding must be right, and the bytes UTF-8.
func fBase64Decode(_ *state, in any, a *args) (any, error) {
	text, err := strArg(in, "base64decode")
	if err != nil {
		return nil, err
	}
	clean := strings.Map(func(r rune) rune {
		if (r >= 'A' && r <= 'Z') || (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '+' || r == '/' || r == '=' {
			return r
		}
		return -1
	}, text)
	if i := strings.IndexByte(clean, '='); i >= 0 {
		data := strings.TrimRight(clean[:i], "=")
		need := (4 - len(data)%4) % 4
		if len(clean)-i < need || need == 3 {
			return nil, valueErr("Incorrect padding")
		}
		clean = data + strings.Repeat("=", need)
	} else if len(clean)%4 != 0 {
		return nil, valueErr("Incorrect padding")
	}
	b, err := base64.StdEncoding.DecodeString(clean)
	if err != nil {
		return nil, valueErr("Incorrect padding")
	}
	if !utf8.Valid(b) {
		return nil, valueErr("base64decode: the decoded bytes are not UTF-8")
	}
	return string(b), nil
}

// fBase64BinasciiDecode does what the CDK's filter of that name does:
// despite its name, it encodes ASCII text to base64.
func fBase64BinasciiDecode(_ *state, in any, a *args) (any, error) {
	text, err := strArg(in, "base64binascii_decode")
	if err != nil {
		return nil, err
	}
	for _, r := range text {
		if r > 0x7f {
			return nil, valueErr("base64binascii_decode: the text is not ASCII")
		}
	}
	return base64.StdEncoding.EncodeToString([]byte(text)), nil
}

// fString keeps a string and writes anything else as JSON (true, [1, "a"]).
// The reference wraps that JSON in triple quotes so that its typing step
// keeps it a string; here the evaluation remembers it instead, so that the
// quotes never reach a URL.
func fString(s *state, in any, a *args) (any, error) {
	if str, ok := in.(string); ok {
		s.jsonText = false
		return str, nil
	}
	out, err := pyJSON(in, 0)
	if err != nil {
		return nil, err
	}
	s.jsonText = true
	return out, checkLen(len(out))
}

func regexArgs(in any, a *args, fn string, n int) (*pyRegex, string, error) {
	if len(a.pos) < n {
		return nil, "", typeErr("%s() missing required arguments", fn)
	}
	pattern, ok := a.pos[0].(string)
	if !ok {
		return nil, "", typeErr("first argument must be string or compiled pattern")
	}
	text, ok := in.(string)
	if !ok {
		// Python's re on any other value, an undefined one included.
		return nil, "", typeErr("expected string or bytes-like object, got '%s'", typeName(in))
	}
	re, err := compileRegex(pattern)
	if err != nil {
		return nil, "", valueErr("%s", err.Error())
	}
	return re, text, nil
}

// fRegexSearch is group 1 of the first match, "" without a match.
func fRegexSearch(s *state, in any, a *args) (any, error) {
	re, text, err := regexArgs(in, a, "regex_search", 1)
	if err != nil {
		return nil, err
	}
	if err := s.charge(len(text)); err != nil {
		return nil, err
	}
	m, err := re.search(text, s)
	if err != nil {
		return nil, err
	}
	if m == nil || re.count == 0 {
		return "", nil
	}
	return groupText(m, 1), nil
}

// fRegexReplace is re.sub(regex, repl, value).
func fRegexReplace(s *state, in any, a *args) (any, error) {
	re, text, err := regexArgs(in, a, "regex_replace", 2)
	if err != nil {
		return nil, err
	}
	repl, ok := a.pos[1].(string)
	if !ok {
		return nil, typeErr("the replacement must be a string")
	}
	if err := s.charge(len(text)); err != nil {
		return nil, err
	}
	return re.sub(text, repl, s)
}

// fHMAC is hmac(value, key, hash_type="sha256"): only sha256 is allowed.
func fHMAC(s *state, in any, a *args) (any, error) {
	key, ok := a.get(0, "key")
	if !ok {
		return nil, typeErr("hmac() missing required argument 'key'")
	}
	kind, ok, err := argStr(a, 1, "hash_type", "hmac")
	if err != nil {
		return nil, err
	}
	if ok && kind != "sha256" {
		return nil, valueErr("Hash type '%s' is not allowed. Allowed types: sha256", kind)
	}
	keyText, err := pyText(key)
	if err != nil {
		return nil, err
	}
	text, err := pyText(in)
	if err != nil {
		return nil, err
	}
	m := hmac.New(sha256.New, []byte(keyText))
	m.Write([]byte(text))
	return hex.EncodeToString(m.Sum(nil)), s.charge(len(text))
}
