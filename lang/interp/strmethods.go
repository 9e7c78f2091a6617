package interp

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Python's str methods.

// pySpace is Python's str.isspace for one character.
func pySpace(r rune) bool { return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f) }

func recvStr(recv any) string { return recv.(string) }

// stripChars reads the optional chars argument of strip, lstrip and rstrip.
func stripFunc(a *args, fn string) (func(rune) bool, error) {
	if err := a.check(fn, 1, "chars"); err != nil {
		return nil, err
	}
	chars, ok, err := argStr(a, 0, "chars", fn)
	if err != nil {
		return nil, err
	}
	if !ok {
		return pySpace, nil
	}
	return func(r rune) bool { return strings.ContainsRune(chars, r) }, nil
}

// strMethodsTable is built by a function, not as the variable's value:
// str.format reaches attributes, which reach these methods.
var (
	strMethodsTable     map[string]methodFunc
	strMethodsTableOnce sync.Once
)

// strMethods returns the table, built on first use rather than at package init:
// a run builds only the tables its templates need.
func strMethods() map[string]methodFunc {
	strMethodsTableOnce.Do(buildStrMethods)
	return strMethodsTable
}

func buildStrMethods() {
	strMethodsTable = map[string]methodFunc{
		"encode": strEncode,
		"lower":  func(_ *state, recv any, a *args) (any, error) { return strings.ToLower(recvStr(recv)), nil },
		"upper":  func(_ *state, recv any, a *args) (any, error) { return strings.ToUpper(recvStr(recv)), nil },
		"casefold": func(_ *state, recv any, a *args) (any, error) {
			return strings.ToLower(recvStr(recv)), nil
		},
		"strip": func(_ *state, recv any, a *args) (any, error) {
			f, err := stripFunc(a, "strip")
			if err != nil {
				return nil, err
			}
			return strings.TrimFunc(recvStr(recv), f), nil
		},
		"lstrip": func(_ *state, recv any, a *args) (any, error) {
			f, err := stripFunc(a, "lstrip")
			if err != nil {
				return nil, err
			}
			return strings.TrimLeftFunc(recvStr(recv), f), nil
		},
		"rstrip": func(_ *state, recv any, a *args) (any, error) {
			f, err := stripFunc(a, "rstrip")
			if err != nil {
				return nil, err
			}
			return strings.TrimRightFunc(recvStr(recv), f), nil
		},
		"split":  func(s *state, recv any, a *args) (any, error) { return split(s, recvStr(recv), a, false) },
		"rsplit": func(s *state, recv any, a *args) (any, error) { return split(s, recvStr(recv), a, true) },
		"splitlines": func(s *state, recv any, a *args) (any, error) {
			return splitLines(recvStr(recv)), s.charge(len(recvStr(recv)))
		},
		"replace": func(s *state, recv any, a *args) (any, error) {
			if err := a.check("replace", 3, "count"); err != nil {
				return nil, err
			}
			if len(a.pos) < 2 {
				return nil, typeErr("replace expected at least 2 arguments, got %d", len(a.pos))
			}
			old, ok1 := a.pos[0].(string)
			repl, ok2 := a.pos[1].(string)
			if !ok1 || !ok2 {
				return nil, typeErr("replace() argument must be str")
			}
			n, err := argInt(a, 2, "count", "replace", -1)
			if err != nil {
				return nil, err
			}
			return replaceChecked(s, recvStr(recv), old, repl, int(max(min(n, MaxOutput), -1)))
		},
		"startswith": func(_ *state, recv any, a *args) (any, error) { return affix(recvStr(recv), a, "startswith") },
		"endswith":   func(_ *state, recv any, a *args) (any, error) { return affix(recvStr(recv), a, "endswith") },
		"join": func(s *state, recv any, a *args) (any, error) {
			if len(a.pos) != 1 {
				return nil, typeErr("join() takes exactly one argument (%d given)", len(a.pos))
			}
			return joinStrings(s, recvStr(recv), a.pos[0])
		},
		"format": func(s *state, recv any, a *args) (any, error) {
			out, err := strFormat(recvStr(recv), a)
			if err != nil {
				return nil, err
			}
			return out, checkLen(len(out))
		},
		"find":   func(_ *state, recv any, a *args) (any, error) { return find(recvStr(recv), a, "find", false) },
		"rfind":  func(_ *state, recv any, a *args) (any, error) { return find(recvStr(recv), a, "rfind", true) },
		"index":  func(_ *state, recv any, a *args) (any, error) { return strIndex(recvStr(recv), a, "index", false) },
		"rindex": func(_ *state, recv any, a *args) (any, error) { return strIndex(recvStr(recv), a, "rindex", true) },
		"count": func(_ *state, recv any, a *args) (any, error) {
			sub, ok, err := argStr(a, 0, "sub", "count")
			if err != nil || !ok {
				return nil, orTypeErr(err, "count() takes at least 1 argument")
			}
			str := recvStr(recv)
			if sub == "" {
				return int64(utf8.RuneCountInString(str) + 1), nil
			}
			return int64(strings.Count(str, sub)), nil
		},
		"title":      func(_ *state, recv any, a *args) (any, error) { return pyTitle(recvStr(recv)), nil },
		"capitalize": func(_ *state, recv any, a *args) (any, error) { return capitalize(recvStr(recv)), nil },
		"swapcase": func(_ *state, recv any, a *args) (any, error) {
			return strings.Map(func(r rune) rune {
				if unicode.IsUpper(r) {
					return unicode.ToLower(r)
				}
				return unicode.ToUpper(r)
			}, recvStr(recv)), nil
		},
		"isdigit":   isEvery(unicode.IsDigit),
		"isdecimal": isEvery(unicode.IsDigit),
		"isnumeric": isEvery(unicode.IsNumber),
		"isalpha":   isEvery(unicode.IsLetter),
		"isalnum":   isEvery(func(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }),
		"isspace":   isEvery(pySpace),
		"islower":   isCased(unicode.IsLower, unicode.IsUpper),
		"isupper":   isCased(unicode.IsUpper, unicode.IsLower),
		"zfill": func(_ *state, recv any, a *args) (any, error) {
			w, err := argInt(a, 0, "width", "zfill", 0)
			if err != nil {
				return nil, err
			}
			if err := checkLen(int(min(w, MaxOutput+1))); err != nil {
				return nil, err
			}
			str := recvStr(recv)
			n := int(w) - utf8.RuneCountInString(str)
			if n <= 0 {
				return str, nil
			}
			sign := ""
			if str != "" && (str[0] == '+' || str[0] == '-') {
				sign, str = str[:1], str[1:]
			}
			return sign + strings.Repeat("0", n) + str, nil
		},
		"ljust":  justify("ljust"),
		"rjust":  justify("rjust"),
		"center": justify("center"),
		"partition": func(_ *state, recv any, a *args) (any, error) {
			sep, ok, err := argStr(a, 0, "sep", "partition")
			if err != nil || !ok || sep == "" {
				return nil, orValueErr(err, "partition() needs a non-empty separator")
			}
			before, after, found := strings.Cut(recvStr(recv), sep)
			if !found {
				return tuple{recvStr(recv), "", ""}, nil
			}
			return tuple{before, sep, after}, nil
		},
		"rpartition": func(_ *state, recv any, a *args) (any, error) {
			sep, ok, err := argStr(a, 0, "sep", "rpartition")
			if err != nil || !ok || sep == "" {
				return nil, orValueErr(err, "rpartition() needs a non-empty separator")
			}
			str := recvStr(recv)
			i := strings.LastIndex(str, sep)
			if i < 0 {
				return tuple{"", "", str}, nil
			}
			return tuple{str[:i], sep, str[i+len(sep):]}, nil
		},
		"removeprefix": func(_ *state, recv any, a *args) (any, error) {
			p, _, err := argStr(a, 0, "prefix", "removeprefix")
			return strings.TrimPrefix(recvStr(recv), p), err
		},
		"removesuffix": func(_ *state, recv any, a *args) (any, error) {
			p, _, err := argStr(a, 0, "suffix", "removesuffix")
			return strings.TrimSuffix(recvStr(recv), p), err
		},
	}
}

func orTypeErr(err error, msg string) error {
	if err != nil {
		return err
	}
	return typeErr("%s", msg)
}

func orValueErr(err error, msg string) error {
	if err != nil {
		return err
	}
	return valueErr("%s", msg)
}

func replaceChecked(s *state, str, old, repl string, n int) (string, error) {
	if len(repl) > len(old) {
		count := strings.Count(str, old)
		if old == "" {
			count = utf8.RuneCountInString(str) + 1
		}
		if n >= 0 && n < count {
			count = n
		}
		if err := checkLen(len(str) + count*(len(repl)-len(old))); err != nil {
			return "", err
		}
	}
	out := strings.Replace(str, old, repl, n)
	return out, s.charge(len(out))
}

func isEvery(f func(rune) bool) methodFunc {
	return func(_ *state, recv any, a *args) (any, error) {
		str := recvStr(recv)
		if str == "" {
			return false, nil
		}
		for _, r := range str {
			if !f(r) {
				return false, nil
			}
		}
		return true, nil
	}
}

func isCased(want, other func(rune) bool) methodFunc {
	return func(_ *state, recv any, a *args) (any, error) {
		found := false
		for _, r := range recvStr(recv) {
			if other(r) || unicode.IsTitle(r) {
				return false, nil
			}
			if want(r) {
				found = true
			}
		}
		return found, nil
	}
}

func split(s *state, str string, a *args, right bool) (any, error) {
	fn := "split"
	if right {
		fn = "rsplit"
	}
	if err := a.check(fn, 2, "sep", "maxsplit"); err != nil {
		return nil, err
	}
	sep, hasSep, err := argStr(a, 0, "sep", fn)
	if err != nil {
		return nil, err
	}
	maxsplit, err := argInt(a, 1, "maxsplit", fn, -1)
	if err != nil {
		return nil, err
	}
	if err := s.charge(len(str)); err != nil {
		return nil, err
	}
	var parts []string
	switch {
	case hasSep && sep == "":
		return nil, valueErr("empty separator")
	case hasSep && !right:
		parts = strings.SplitN(str, sep, splitN(maxsplit))
	case hasSep:
		parts = rsplitN(str, sep, splitN(maxsplit))
	default:
		parts = splitSpace(str, int(maxsplit), right)
	}
	out := make([]any, len(parts))
	for i, p := range parts {
		out[i] = p
	}
	return out, nil
}

func splitN(maxsplit int64) int {
	if maxsplit < 0 {
		return -1
	}
	return int(min(maxsplit, MaxItems)) + 1
}

func rsplitN(str, sep string, n int) []string {
	if n < 0 {
		return strings.Split(str, sep)
	}
	var rev []string
	for len(rev) < n-1 {
		i := strings.LastIndex(str, sep)
		if i < 0 {
			break
		}
		rev = append(rev, str[i+len(sep):])
		str = str[:i]
	}
	out := []string{str}
	for i := len(rev) - 1; i >= 0; i-- {
		out = append(out, rev[i])
	}
	return out
}

// splitSpace is str.split() without a separator: runs of whitespace split,
// and the ends are ignored.
func splitSpace(str string, maxsplit int, right bool) []string {
	if !right {
		var out []string
		for {
			str = strings.TrimLeftFunc(str, pySpace)
			if str == "" {
				return out
			}
			if maxsplit >= 0 && len(out) == maxsplit {
				return append(out, str)
			}
			i := strings.IndexFunc(str, pySpace)
			if i < 0 {
				return append(out, str)
			}
			out = append(out, str[:i])
			str = str[i:]
		}
	}
	var rev []string
	for {
		str = strings.TrimRightFunc(str, pySpace)
		if str == "" {
			break
		}
		if maxsplit >= 0 && len(rev) == maxsplit {
			rev = append(rev, str)
			break
		}
		i := strings.LastIndexFunc(str, pySpace)
		if i < 0 {
			rev = append(rev, str)
			break
		}
		_, n := utf8.DecodeRuneInString(str[i:])
		rev = append(rev, str[i+n:])
		str = str[:i]
	}
	out := make([]string, len(rev))
	for i := range rev {
		out[i] = rev[len(rev)-1-i]
	}
	return out
}

func splitLines(str string) []any {
	out := []any{}
	start := 0
	for i := 0; i < len(str); {
		r, n := utf8.DecodeRuneInString(str[i:])
		switch r {
		case '\n', '\r', '\v', '\f', 0x1c, 0x1d, 0x1e, 0x85, 0x2028, 0x2029:
			out = append(out, str[start:i])
			if r == '\r' && i+1 < len(str) && str[i+1] == '\n' {
				n++
			}
			start = i + n
		}
		i += n
	}
	if start < len(str) {
		out = append(out, str[start:])
	}
	return out
}

// affix is startswith/endswith(prefix or tuple of prefixes[, start[, end]]).
func affix(str string, a *args, fn string) (any, error) {
	if len(a.pos) < 1 {
		return nil, typeErr("%s() takes at least 1 argument (0 given)", fn)
	}
	sub, err := runeRange(str, a, 1, fn)
	if err != nil {
		return nil, err
	}
	var cands []any
	switch x := a.pos[0].(type) {
	case string:
		cands = []any{x}
	case tuple:
		cands = x
	default:
		return nil, typeErr("%s first arg must be str or a tuple of str, not %s", fn, typeName(x))
	}
	for _, c := range cands {
		p, ok := c.(string)
		if !ok {
			return nil, typeErr("tuple for %s must only contain str, not %s", fn, typeName(c))
		}
		if (fn == "startswith" && strings.HasPrefix(sub, p)) || (fn == "endswith" && strings.HasSuffix(sub, p)) {
			return true, nil
		}
	}
	return false, nil
}

// runeRange applies the optional start and end arguments (code point
// indexes) at position from.
func runeRange(str string, a *args, from int, fn string) (string, error) {
	if len(a.pos) <= from {
		return str, nil
	}
	var lo, hi any
	lo = a.pos[from]
	if len(a.pos) > from+1 {
		hi = a.pos[from+1]
	}
	v, err := slice(str, lo, hi, nil)
	if err != nil {
		return "", err
	}
	return v.(string), nil
}

func find(str string, a *args, fn string, last bool) (any, error) {
	sub, ok, err := argStr(a, 0, "sub", fn)
	if err != nil || !ok {
		return nil, orTypeErr(err, fn+"() takes at least 1 argument")
	}
	offset := 0
	if len(a.pos) > 1 {
		start, _ := intLike(a.pos[1])
		n := int64(utf8.RuneCountInString(str))
		if start < 0 {
			start = max(start+n, 0)
		}
		offset = int(min(start, n))
	}
	window, err := runeRange(str, a, 1, fn)
	if err != nil {
		return nil, err
	}
	var i int
	if last {
		i = strings.LastIndex(window, sub)
	} else {
		i = strings.Index(window, sub)
	}
	if i < 0 {
		return int64(-1), nil
	}
	return int64(offset + utf8.RuneCountInString(window[:i])), nil
}

func strIndex(str string, a *args, fn string, last bool) (any, error) {
	i, err := find(str, a, fn, last)
	if err != nil {
		return nil, err
	}
	if i.(int64) < 0 {
		return nil, valueErr("substring not found")
	}
	return i, nil
}

// pyTitle is str.title: a letter after a non-letter is upper case, others
// lower case.
func pyTitle(str string) string {
	var b strings.Builder
	prevCased := false
	for _, r := range str {
		cased := unicode.IsUpper(r) || unicode.IsLower(r) || unicode.IsTitle(r)
		switch {
		case cased && prevCased:
			b.WriteRune(unicode.ToLower(r))
		case cased:
			b.WriteRune(unicode.ToTitle(r))
		default:
			b.WriteRune(r)
		}
		prevCased = cased
	}
	return b.String()
}

func capitalize(str string) string {
	r, n := utf8.DecodeRuneInString(str)
	if n == 0 {
		return str
	}
	return string(unicode.ToTitle(r)) + strings.ToLower(str[n:])
}

func justify(fn string) methodFunc {
	return func(_ *state, recv any, a *args) (any, error) {
		if err := a.check(fn, 2, "fillchar"); err != nil {
			return nil, err
		}
		w, err := argInt(a, 0, "width", fn, 0)
		if err != nil {
			return nil, err
		}
		fill := " "
		if f, ok, err := argStr(a, 1, "fillchar", fn); err != nil {
			return nil, err
		} else if ok {
			if utf8.RuneCountInString(f) != 1 {
				return nil, typeErr("the fill character must be exactly one character long")
			}
			fill = f
		}
		if err := checkLen(int(min(w, MaxOutput+1))); err != nil {
			return nil, err
		}
		return pad(recvStr(recv), int(w), fill, fn), nil
	}
}

func pad(str string, width int, fill, how string) string {
	n := width - utf8.RuneCountInString(str)
	if n <= 0 {
		return str
	}
	switch how {
	case "ljust":
		return str + strings.Repeat(fill, n)
	case "rjust":
		return strings.Repeat(fill, n) + str
	}
	left := n/2 + (n & width & 1)
	return strings.Repeat(fill, left) + str + strings.Repeat(fill, n-left)
}
