// Package charset decodes text in the encodings manifests name the way
// Python names its codecs (utf-8, latin-1, cp1252, utf-16, shift_jis...),
// strictly: bytes the encoding cannot decode are an error, never replaced.
package charset

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

// Check tells whether the encoding is one we decode.
func Check(name string) error {
	_, err := lookup(name)
	return err
}

// NewReader reads r's text as UTF-8. A UTF-8 byte order mark at the start
// is dropped.
func NewReader(name string, r io.Reader) (io.Reader, error) {
	t, err := lookup(name)
	if err != nil {
		return nil, err
	}
	if t == nil {
		br := bufio.NewReaderSize(r, 64<<10)
		if b, _ := br.Peek(3); bytes.Equal(b, utf8BOM) {
			br.Discard(3)
		}
		return transform.NewReader(br, encoding.UTF8Validator), nil
	}
	return transform.NewReader(r, t), nil
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// ErrUndecodable is text the encoding cannot decode.
var ErrUndecodable = errors.New("bytes that the encoding cannot decode")

// lookup finds the decoder of an encoding; nil is UTF-8.
func lookup(name string) (transform.Transformer, error) {
	n := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(name)), "_", "-")
	switch n {
	case "", "utf-8", "utf8", "u8", "utf", "cp65001", "utf-8-sig", "utf8-sig":
		return nil, nil
	case "latin-1", "latin1", "latin", "l1", "iso-8859-1", "iso8859-1", "8859", "cp819", "iso-ir-100":
		return charmap.ISO8859_1.NewDecoder(), nil
	case "utf-16", "utf16":
		return strict(unicode.UTF16(unicode.LittleEndian, unicode.UseBOM)), nil
	case "utf-16-le", "utf-16le":
		return strict(unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM)), nil
	case "utf-16-be", "utf-16be":
		return strict(unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM)), nil
	}
	for _, candidate := range aliases(n) {
		if e := ianaEncoding(candidate); e != nil {
			return strict(e), nil
		}
	}
	return nil, fmt.Errorf("unknown encoding %q", name)
}

// aliases spells a Python codec name as IANA names it.
func aliases(n string) []string {
	out := []string{n, strings.ReplaceAll(n, "-", "_"), strings.ReplaceAll(n, "-", "")}
	if rest, ok := strings.CutPrefix(n, "cp"); ok {
		out = append(out, "windows-"+rest, "ibm"+rest)
	}
	if rest, ok := strings.CutPrefix(n, "iso8859-"); ok {
		out = append(out, "iso-8859-"+rest)
	}
	if n == "ascii" || n == "646" {
		out = append(out, "us-ascii")
	}
	return out
}

// decodable is an encoding we decode from (we never encode).
type decodable interface {
	NewDecoder() *encoding.Decoder
}

// strict decodes with e and fails where e would write a replacement
// character: the encodings other than UTF-8 write one only for bytes they
// cannot decode.
func strict(e decodable) transform.Transformer {
	return transform.Chain(e.NewDecoder(), noReplacement{})
}

type noReplacement struct{ transform.NopResetter }

var replacement = []byte("\uFFFD")

func (noReplacement) Transform(dst, src []byte, atEOF bool) (int, int, error) {
	if bytes.Contains(src, replacement) {
		return 0, 0, ErrUndecodable
	}
	if len(dst) >= len(src) {
		n := copy(dst, src)
		return n, n, nil
	}
	// Stop at a character boundary, so that the next call sees whole characters.
	n := len(dst)
	for n > 0 && !utf8.RuneStart(src[n]) {
		n--
	}
	copy(dst, src[:n])
	return n, n, transform.ErrShortDst
}

// asciiEncoding decodes US-ASCII: a byte above 0x7F becomes U+FFFD, which
// strict refuses.
type asciiEncoding struct{}

func (asciiEncoding) NewDecoder() *encoding.Decoder {
	return &encoding.Decoder{Transformer: asciiDecoder{}}
}

type asciiDecoder struct{ transform.NopResetter }

func (asciiDecoder) Transform(dst, src []byte, atEOF bool) (nDst, nSrc int, err error) {
	for ; nSrc < len(src); nSrc++ {
		c := src[nSrc]
		if c < utf8.RuneSelf {
			if nDst >= len(dst) {
				return nDst, nSrc, transform.ErrShortDst
			}
			dst[nDst] = c
			nDst++
			continue
		}
		if nDst+len(replacement) > len(dst) {
			return nDst, nSrc, transform.ErrShortDst
		}
		nDst += copy(dst[nDst:], replacement)
	}
	return nDst, nSrc, nil
}
