package incremental

import (
	"bytes"
	"encoding/json"
)

// FieldValue returns the raw JSON value of a top-level key of a record (a
// valid JSON object, as records are once extracted), or nil. It reads only
// as far as the key, skipping nested values without decoding them.
func FieldValue(rec []byte, key string) []byte {
	i := skipSpace(rec, 0)
	if i >= len(rec) || rec[i] != '{' {
		return nil
	}
	i++
	for {
		i = skipSpace(rec, i)
		if i >= len(rec) || rec[i] != '"' {
			return nil
		}
		kend := skipString(rec, i)
		if kend < 0 {
			return nil
		}
		match := keyIs(rec[i:kend], key)
		i = skipSpace(rec, kend)
		if i >= len(rec) || rec[i] != ':' {
			return nil
		}
		vstart := skipSpace(rec, i+1)
		vend := skipValue(rec, vstart)
		if vend < 0 {
			return nil
		}
		if match {
			return rec[vstart:vend]
		}
		i = skipSpace(rec, vend)
		if i >= len(rec) || rec[i] != ',' {
			return nil
		}
		i++
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] ('"').
// Short strings are walked byte by byte; long ones are searched for quotes.
func skipString(b []byte, i int) int {
	i++
	for n := 0; n < 24 && i < len(b); n++ {
		switch b[i] {
		case '"':
			return i + 1
		case '\\':
			i += 2
		default:
			i++
		}
	}
	for i < len(b) {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return -1
		}
		end := i + j
		backslashes := 0
		for k := end - 1; k >= i && b[k] == '\\'; k-- {
			backslashes++
		}
		if backslashes%2 == 0 {
			return end + 1
		}
		i = end + 1
	}
	return -1
}

// skipValue returns the index after the value starting at b[i].
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				if i < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	}
	for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\n' && b[i] != '\r' && b[i] != '\t' {
		i++
	}
	return i
}

// keyIs compares a raw JSON key (with its quotes) to a name.
func keyIs(raw []byte, name string) bool {
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return string(inner) == name
	}
	var k string
	return json.Unmarshal(raw, &k) == nil && k == name
}

// valueText is the text of a raw JSON scalar: a string's content or a
// number as written. ok is false for null, a missing value and anything else.
func valueText(raw []byte) (string, bool) {
	if len(raw) == 0 {
		return "", false
	}
	switch c := raw[0]; {
	case c == '"':
		inner := raw[1 : len(raw)-1]
		if bytes.IndexByte(inner, '\\') < 0 {
			return string(inner), true
		}
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "", false
		}
		return s, true
	case c == '-' || (c >= '0' && c <= '9'):
		return string(raw), true
	}
	return "", false
}
