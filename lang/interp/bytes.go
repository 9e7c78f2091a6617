package interp

import (
	"strings"
	"unicode/utf8"
)

// pyBytes is a Python bytes value, from str.encode(): it writes as b'...',
// has a length in bytes, and gives integers when indexed or iterated.
type pyBytes string

// strEncode is str.encode(encoding='utf-8', errors='strict') for the
// encodings UTF-8, ASCII and Latin-1.
func strEncode(_ *state, recv any, a *args) (any, error) {
	enc, mode, limit, err := codecArgs(a, "encode")
	if err != nil {
		return nil, err
	}
	s := recvStr(recv)
	if limit == utf8.MaxRune {
		return pyBytes(s), nil
	}
	var b strings.Builder
	for i, r := range s {
		if r <= limit {
			b.WriteByte(byte(r))
			continue
		}
		switch mode {
		case "ignore":
		case "replace":
			b.WriteByte('?')
		default:
			return nil, valueErr("'%s' codec can't encode character at position %d", strings.ToLower(enc), utf8.RuneCountInString(s[:i]))
		}
	}
	return pyBytes(b.String()), nil
}

// codecArgs reads the (encoding, errors) arguments of encode or decode.
func codecArgs(a *args, fn string) (enc, mode string, limit rune, err error) {
	if err = a.check(fn, 2, "encoding", "errors"); err != nil {
		return
	}
	if enc, _, err = argStr(a, 0, "encoding", fn); err != nil {
		return
	}
	if mode, _, err = argStr(a, 1, "errors", fn); err != nil {
		return
	}
	limit, err = encodingLimit(enc)
	return
}

// encodingLimit is the highest character an encoding writes as one byte
// (utf8.MaxRune for UTF-8, which writes every character).
func encodingLimit(name string) (rune, error) {
	switch strings.ReplaceAll(strings.ToLower(name), "_", "-") {
	case "", "utf-8", "utf8", "u8":
		return utf8.MaxRune, nil
	case "ascii", "us-ascii":
		return 0x7f, nil
	case "latin-1", "latin1", "iso-8859-1", "iso8859-1", "l1":
		return 0xff, nil
	}
	return 0, valueErr("unknown encoding: %s", name)
}

// bytesDecode is bytes.decode(encoding='utf-8', errors='strict').
func bytesDecode(_ *state, recv any, a *args) (any, error) {
	enc, _, limit, err := codecArgs(a, "decode")
	if err != nil {
		return nil, err
	}
	b := string(recv.(pyBytes))
	if limit == utf8.MaxRune {
		if !utf8.ValidString(b) {
			return nil, valueErr("'utf-8' codec can't decode the bytes")
		}
		return b, nil
	}
	var out strings.Builder
	for i := 0; i < len(b); i++ {
		if rune(b[i]) > limit {
			return nil, valueErr("'%s' codec can't decode byte at position %d", strings.ToLower(enc), i)
		}
		out.WriteRune(rune(b[i]))
	}
	return out.String(), nil
}

// bytesRepr is Python's repr of bytes: b'...', printable ASCII as it is.
func bytesRepr(b pyBytes) string { return "b" + quoteRepr(string(b), true) }

// byteItems are the bytes as integers, as iterating bytes gives them.
func byteItems(b pyBytes) []any {
	out := make([]any, len(b))
	for i := 0; i < len(b); i++ {
		out[i] = int64(b[i])
	}
	return out
}
