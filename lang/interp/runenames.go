package interp

import (
	"strconv"
	"strings"
	"sync"

	"golang.org/x/text/unicode/runenames"
)

// Unicode character names, for \N{NAME} escapes in string literals.

var (
	runeNames     map[string]rune
	runeNamesOnce sync.Once
)

// runeNamed is the character a Unicode name names, case-insensitively as
// Python reads \N{...}: the names of the Unicode Character Database and the
// CJK UNIFIED IDEOGRAPH-XXXX names. The table is built on first use (some
// 35,000 names, 3 MB).
func runeNamed(name string) (rune, bool) {
	name = strings.ToUpper(name)
	if hex, ok := strings.CutPrefix(name, "CJK UNIFIED IDEOGRAPH-"); ok && (len(hex) == 4 || len(hex) == 5) {
		n, err := strconv.ParseUint(hex, 16, 32)
		if err == nil && strings.HasPrefix(runenames.Name(rune(n)), "<CJK Ideograph") {
			return rune(n), true
		}
		return 0, false
	}
	runeNamesOnce.Do(func() {
		runeNames = make(map[string]rune, 35000)
		for r := rune(0); r <= 0x10FFFF; r++ {
			if n := runenames.Name(r); n != "" && n[0] != '<' {
				runeNames[n] = r
			}
		}
	})
	r, ok := runeNames[name]
	return r, ok
}
