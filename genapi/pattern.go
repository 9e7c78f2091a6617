package genapi

import (
	"regexp"
	"regexp/syntax"
	"strings"
)

// repeatLength is how many characters an open repetition (*, +, {n,})
// produces: long enough to look like a value, short enough to read.
const repeatLength = 8

// FromPattern returns a string that matches pattern, built from the regular
// expression's tree: the first branch of an alternation, each character
// class walked in order, open repetitions repeatLength times. ok is false
// when the pattern does not parse or the result does not match it (patterns
// with look-arounds or back-references are beyond a generator this simple).
func FromPattern(pattern string) (string, bool) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return "", false
	}
	var b strings.Builder
	generate(&b, re.Simplify())
	s := b.String()
	m, err := regexp.MatchString(pattern, s)
	return s, err == nil && m
}

func generate(b *strings.Builder, re *syntax.Regexp) {
	switch re.Op {
	case syntax.OpLiteral:
		b.WriteString(string(re.Rune))
	case syntax.OpCharClass:
		if len(re.Rune) > 0 {
			b.WriteRune(classRune(re.Rune, 0))
		}
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		b.WriteByte('x')
	case syntax.OpCapture, syntax.OpConcat:
		for _, s := range re.Sub {
			generate(b, s)
		}
	case syntax.OpAlternate:
		generate(b, re.Sub[0])
	case syntax.OpStar, syntax.OpPlus:
		repeat(b, re.Sub[0], repeatLength)
	case syntax.OpQuest:
		generate(b, re.Sub[0])
	case syntax.OpRepeat:
		n := re.Min
		if re.Max == -1 && n < repeatLength {
			n = repeatLength
		}
		repeat(b, re.Sub[0], n)
	}
}

// repeat writes n matches of sub; a character class cycles through its
// characters so that "[0-9a-f]+" gives "01234567" rather than "00000000".
func repeat(b *strings.Builder, sub *syntax.Regexp, n int) {
	for i := 0; i < n; i++ {
		if sub.Op == syntax.OpCharClass && len(sub.Rune) > 0 {
			b.WriteRune(classRune(sub.Rune, i))
			continue
		}
		generate(b, sub)
	}
}

// classRune is the i-th character of a class given as [lo, hi] pairs,
// wrapping around; printable ASCII is preferred to the class's first rune.
func classRune(ranges []rune, i int) rune {
	var all []rune
	for j := 0; j+1 < len(ranges); j += 2 {
		for r := max(ranges[j], ' '+1); r <= ranges[j+1] && r < 127; r++ {
			all = append(all, r)
		}
	}
	if len(all) == 0 {
		return ranges[0]
	}
	return all[i%len(all)]
}
