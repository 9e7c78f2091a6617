package jsontext

import (
	"strings"
	"testing"
)

// Each byte that matters, at every offset of a text longer than a word,
// against the first such byte found one at a time.
func TestEscapeOrControl(t *testing.T) {
	for _, c := range []string{`\`, "\x00", "\x01", "\x1f", "\n", " ", "\"", "\x7f", "\xc3\xa9", "\xff", "!", "["} {
		for at := 0; at < 20; at++ {
			b := []byte(strings.Repeat("x", at) + c + strings.Repeat("y", 20-at))
			want := -1
			for i, x := range b {
				if x == '\\' || x < 0x20 {
					want = i
					break
				}
			}
			if got := EscapeOrControl(b); got != want {
				t.Errorf("%q: got %d, want %d", b, got, want)
			}
		}
	}
	if got := EscapeOrControl(nil); got != -1 {
		t.Errorf("empty: got %d", got)
	}
}
