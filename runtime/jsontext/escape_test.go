package jsontext

import (
	"strings"
	"testing"
)

// Each byte that matters, and bytes that do not, at every offset of a text
// longer than a word, against the first such byte found one at a time.
func TestSpecial(t *testing.T) {
	for _, c := range []string{`"`, `\`, "\x00", "\x01", "\x1f", "\n", " ", "\x7f", "\xc3\xa9", "\xff", "!", "[", "#", "]"} {
		for at := 0; at < 20; at++ {
			b := []byte(strings.Repeat("x", at) + c + strings.Repeat("y", 20-at) + c)
			want := len(b)
			for i, x := range b {
				if x == '"' || x == '\\' || x < 0x20 {
					want = i
					break
				}
			}
			if got := Special(b); got != want {
				t.Errorf("%q: got %d, want %d", b, got, want)
			}
		}
	}
	if got := Special(nil); got != 0 {
		t.Errorf("empty: got %d", got)
	}
}
