// Package jsontext holds the byte-level tests that JSON scanners share.
package jsontext

import "encoding/binary"

// EscapeOrControl is the index of the first backslash or byte below 0x20 in
// b, or -1: eight bytes at a time, with the usual tests for a zero byte and
// for a byte below n in a word. In the text of a JSON string before its
// closing quote, these are the bytes that need a closer look.
func EscapeOrControl(b []byte) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		bs := w ^ (ones * '\\')
		if ((w-ones*0x20)&^w|(bs-ones)&^bs)&highs != 0 {
			break
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c == '\\' || c < 0x20 {
			return i
		}
	}
	return -1
}
