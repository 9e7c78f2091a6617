// Package jsontext holds the byte-level search that JSON scanners share.
package jsontext

import (
	"encoding/binary"
	"math/bits"
)

// Special is the index of the first quote, backslash or byte below 0x20 in
// b, or len(b): the bytes of a JSON string's text that need a closer look.
// It tests eight bytes at a time with the usual zero-byte and less-than
// tests on a word, whose lowest flagged byte is the first that matches.
func Special(b []byte) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		q, e := w^(ones*'"'), w^(ones*'\\')
		if m := ((q-ones)&^q | (e-ones)&^e | (w-ones*0x20)&^w) & highs; m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c == '"' || c == '\\' || c < 0x20 {
			return i
		}
	}
	return i
}
