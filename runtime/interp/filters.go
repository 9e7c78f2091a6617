package interp

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"hash"
	"regexp"

	"github.com/nikolalohinski/gonja/v2/exec"
)

// airbyteFilters are the filters Airbyte's declarative CDK adds to Jinja.
func airbyteFilters() map[string]exec.FilterFunction {
	return map[string]exec.FilterFunction{
		"hash": func(_ *exec.Evaluator, in *exec.Value, p *exec.VarArgs) *exec.Value {
			kind, salt := "md5", ""
			if len(p.Args) > 0 {
				kind = p.Args[0].String()
			}
			if len(p.Args) > 1 {
				salt = String(native(p.Args[1]))
			}
			h := newHash(kind)
			if h == nil {
				return exec.AsValue(fmt.Errorf("hash: unknown hash type %q", kind))
			}
			h.Write([]byte(String(native(in)) + salt))
			return exec.AsValue(hex.EncodeToString(h.Sum(nil)))
		},
		"base64encode": func(_ *exec.Evaluator, in *exec.Value, _ *exec.VarArgs) *exec.Value {
			return exec.AsValue(base64.StdEncoding.EncodeToString([]byte(String(native(in)))))
		},
		"base64decode": func(_ *exec.Evaluator, in *exec.Value, _ *exec.VarArgs) *exec.Value {
			b, err := base64.StdEncoding.DecodeString(String(native(in)))
			if err != nil {
				return exec.AsValue(fmt.Errorf("base64decode: %v", err))
			}
			return exec.AsValue(string(b))
		},
		"string": func(_ *exec.Evaluator, in *exec.Value, _ *exec.VarArgs) *exec.Value {
			return exec.AsValue(String(native(in)))
		},
		"regex_search": func(_ *exec.Evaluator, in *exec.Value, p *exec.VarArgs) *exec.Value {
			re, err := regexp.Compile(p.First().String())
			if err != nil {
				return exec.AsValue(fmt.Errorf("regex_search: %v", err))
			}
			m := re.FindStringSubmatch(String(native(in)))
			if len(m) < 2 {
				return exec.AsValue("")
			}
			return exec.AsValue(m[1])
		},
		"regex_replace": func(_ *exec.Evaluator, in *exec.Value, p *exec.VarArgs) *exec.Value {
			if len(p.Args) < 2 {
				return exec.AsValue(fmt.Errorf("regex_replace(pattern, replacement) needs two arguments"))
			}
			re, err := regexp.Compile(p.Args[0].String())
			if err != nil {
				return exec.AsValue(fmt.Errorf("regex_replace: %v", err))
			}
			return exec.AsValue(re.ReplaceAllString(String(native(in)), p.Args[1].String()))
		},
		"hmac": func(_ *exec.Evaluator, in *exec.Value, p *exec.VarArgs) *exec.Value {
			if len(p.Args) > 1 && p.Args[1].String() != "sha256" {
				return exec.AsValue(fmt.Errorf("hmac: only sha256 is supported"))
			}
			m := hmac.New(sha256.New, []byte(p.First().String()))
			m.Write([]byte(String(native(in))))
			return exec.AsValue(hex.EncodeToString(m.Sum(nil)))
		},
	}
}

func newHash(kind string) hash.Hash {
	switch kind {
	case "md5":
		return md5.New()
	case "sha1":
		return sha1.New()
	case "sha256":
		return sha256.New()
	case "sha512":
		return sha512.New()
	}
	return nil
}
