package transform

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// snakeCase renames a key as the reference's KeysToSnakeCase does: the key
// is made ASCII, cut into tokens (an upper-case run with the lower-case
// letters after it, a lower-case run, a digit run; anything else separates),
// separators inside the key dropped and those at its ends kept as one empty
// token, an empty token put before a leading number, then lower-cased and
// joined by "_": FirstName -> first_name, 123abc -> _123_abc, __x__ -> _x_.
func snakeCase(key string) string {
	s := toASCII(key)
	var tokens []string
	for i := 0; i < len(s); {
		start := i
		c := s[i]
		switch {
		case isUpper(c):
			for i < len(s) && isUpper(s[i]) {
				i++
			}
			for i < len(s) && isLower(s[i]) {
				i++
			}
		case isLower(c):
			for i < len(s) && isLower(s[i]) {
				i++
			}
		case isDigit(c):
			for i < len(s) && isDigit(s[i]) {
				i++
			}
		default:
			for i < len(s) && !isUpper(s[i]) && !isLower(s[i]) && !isDigit(s[i]) {
				i++
			}
			tokens = append(tokens, "")
			continue
		}
		tokens = append(tokens, s[start:i])
	}
	if len(tokens) >= 3 {
		kept := []string{tokens[0]}
		for _, t := range tokens[1 : len(tokens)-1] {
			if t != "" {
				kept = append(kept, t)
			}
		}
		tokens = append(kept, tokens[len(tokens)-1])
	}
	if len(tokens) > 0 && tokens[0] != "" && isDigit(tokens[0][0]) {
		tokens = append([]string{""}, tokens...)
	}
	return strings.ToLower(strings.Join(tokens, "_"))
}

func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }

// isLower also takes the bytes of a letter toASCII kept (not ASCII): they
// join a lower-case run.
func isLower(c byte) bool { return c >= 'a' && c <= 'z' || c >= utf8.RuneSelf }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// latin are the letters that do not decompose into an ASCII letter and marks.
var latin = map[rune]string{
	'ß': "ss", 'Æ': "AE", 'æ': "ae", 'Ø': "O", 'ø': "o", 'Œ': "OE", 'œ': "oe", 'Đ': "D", 'đ': "d",
	'Ł': "L", 'ł': "l", 'Þ': "Th", 'þ': "th", 'Ð': "D", 'ð': "d", 'ı': "i", 'Ħ': "H", 'ħ': "h",
}

// toASCII transliterates accented Latin letters to their ASCII base letter
// (é -> e, ß -> ss); other letters and digits are kept as they are, any
// other non-ASCII character becomes a separator.
func toASCII(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return s
	}
	var b strings.Builder
	for _, r := range norm.NFKD.String(s) {
		switch {
		case r < utf8.RuneSelf:
			b.WriteRune(r)
		case unicode.Is(unicode.Mn, r):
		case latin[r] != "":
			b.WriteString(latin[r])
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			// Not transliterated (the reference's anyascii would, 日本 ->
			// ri_ben): kept, so that such keys do not all become "" and
			// overwrite each other.
			b.WriteRune(r)
		default:
			b.WriteByte(' ')
		}
	}
	return b.String()
}
