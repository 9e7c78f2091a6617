package auth

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/des"
	"crypto/pbkdf2"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"errors"
	"fmt"
	"hash"
)

// parsePrivateKey reads a PEM private key: PKCS #1 (RSA), SEC 1 (EC),
// PKCS #8, or PKCS #8 encrypted with a passphrase (PBES2 with PBKDF2 and
// AES or 3DES in CBC mode, what OpenSSL and Python's cryptography write).
func parsePrivateKey(pemText, passphrase []byte) (any, error) {
	block, _ := pem.Decode(pemText)
	if block == nil {
		return nil, errors.New("holds no PEM private key (-----BEGIN ... PRIVATE KEY-----)")
	}
	if block.Headers["Proc-Type"] != "" {
		return nil, errors.New("the key is encrypted the legacy OpenSSL way (Proc-Type: 4,ENCRYPTED), which is not supported: convert it to PKCS #8 (openssl pkcs8 -topk8)")
	}
	der := block.Bytes
	switch block.Type {
	case "RSA PRIVATE KEY":
		return x509.ParsePKCS1PrivateKey(der)
	case "EC PRIVATE KEY":
		return x509.ParseECPrivateKey(der)
	case "ENCRYPTED PRIVATE KEY":
		if len(passphrase) == 0 {
			return nil, errors.New("the key is encrypted: set the authenticator's passphrase")
		}
		der, err := decryptPKCS8(der, passphrase)
		if err != nil {
			return nil, err
		}
		key, err := x509.ParsePKCS8PrivateKey(der)
		if err != nil { // the padding happened to look right
			return nil, errWrongPassphrase
		}
		return key, nil
	case "PRIVATE KEY":
	default:
		return nil, fmt.Errorf("a PEM block of type %q is not a private key", block.Type)
	}
	return x509.ParsePKCS8PrivateKey(der)
}

var (
	oidPBES2      = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 13}
	oidPBKDF2     = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 12}
	oidHMACSHA1   = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 7}
	oidHMACSHA256 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 9}
	oidHMACSHA384 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 10}
	oidHMACSHA512 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 11}
	oidAES128CBC  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 2}
	oidAES192CBC  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 22}
	oidAES256CBC  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 42}
	oidDESEDE3CBC = asn1.ObjectIdentifier{1, 2, 840, 113549, 3, 7}
)

type encryptedPrivateKeyInfo struct {
	Algorithm pkix.AlgorithmIdentifier
	Data      []byte
}

type pbes2Params struct {
	KDF        pkix.AlgorithmIdentifier
	Encryption pkix.AlgorithmIdentifier
}

type pbkdf2Params struct {
	Salt       []byte
	Iterations int
	KeyLength  int                      `asn1:"optional"`
	PRF        pkix.AlgorithmIdentifier `asn1:"optional"`
}

// errWrongPassphrase is a static value: nothing is built at package init.
var errWrongPassphrase error = wrongPassphrase{}

type wrongPassphrase struct{}

func (wrongPassphrase) Error() string { return "the passphrase does not decrypt the key" }

// decryptPKCS8 decrypts an EncryptedPrivateKeyInfo (RFC 5958, PBES2 of
// RFC 8018) into the PKCS #8 key it holds.
func decryptPKCS8(der, passphrase []byte) ([]byte, error) {
	var info encryptedPrivateKeyInfo
	if _, err := asn1.Unmarshal(der, &info); err != nil {
		return nil, fmt.Errorf("the encrypted key cannot be read: %v", err)
	}
	if !info.Algorithm.Algorithm.Equal(oidPBES2) {
		return nil, fmt.Errorf("the key is encrypted with %v; only PBES2 (PKCS #8 v2) is supported", info.Algorithm.Algorithm)
	}
	var params pbes2Params
	if _, err := asn1.Unmarshal(info.Algorithm.Parameters.FullBytes, &params); err != nil || !params.KDF.Algorithm.Equal(oidPBKDF2) {
		return nil, errors.New("the encrypted key's PBES2 parameters cannot be read (only PBKDF2 is supported)")
	}
	var kdf pbkdf2Params
	if _, err := asn1.Unmarshal(params.KDF.Parameters.FullBytes, &kdf); err != nil {
		return nil, fmt.Errorf("the encrypted key's PBKDF2 parameters cannot be read: %v", err)
	}
	var prf func() hash.Hash
	switch p := kdf.PRF.Algorithm; {
	case len(p) == 0 || p.Equal(oidHMACSHA1):
		prf = sha1.New
	case p.Equal(oidHMACSHA256):
		prf = sha256.New
	case p.Equal(oidHMACSHA384):
		prf = sha512.New384
	case p.Equal(oidHMACSHA512):
		prf = sha512.New
	default:
		return nil, fmt.Errorf("the encrypted key's PBKDF2 function %v is not supported", p)
	}
	var keyLen int
	var newCipher func([]byte) (cipher.Block, error)
	switch e := params.Encryption.Algorithm; {
	case e.Equal(oidAES128CBC):
		keyLen, newCipher = 16, aes.NewCipher
	case e.Equal(oidAES192CBC):
		keyLen, newCipher = 24, aes.NewCipher
	case e.Equal(oidAES256CBC):
		keyLen, newCipher = 32, aes.NewCipher
	case e.Equal(oidDESEDE3CBC):
		keyLen, newCipher = 24, des.NewTripleDESCipher
	default:
		return nil, fmt.Errorf("the key's cipher %v is not supported (AES-CBC and 3DES-CBC are)", e)
	}
	var iv []byte
	if _, err := asn1.Unmarshal(params.Encryption.Parameters.FullBytes, &iv); err != nil {
		return nil, fmt.Errorf("the encrypted key's IV cannot be read: %v", err)
	}
	key, err := pbkdf2.Key(prf, string(passphrase), kdf.Salt, kdf.Iterations, keyLen)
	if err != nil {
		return nil, fmt.Errorf("the key cannot be derived from the passphrase: %v", err)
	}
	block, err := newCipher(key)
	if err != nil {
		return nil, err
	}
	if len(iv) != block.BlockSize() || len(info.Data) == 0 || len(info.Data)%block.BlockSize() != 0 {
		return nil, errors.New("the encrypted key is malformed")
	}
	plain := make([]byte, len(info.Data))
	cipher.NewCBCDecrypter(block, iv).CryptBlocks(plain, info.Data)
	pad := int(plain[len(plain)-1])
	if pad == 0 || pad > block.BlockSize() {
		return nil, errWrongPassphrase
	}
	for _, b := range plain[len(plain)-pad:] {
		if int(b) != pad {
			return nil, errWrongPassphrase
		}
	}
	return plain[:len(plain)-pad], nil
}
