package interp

import (
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Python's two string formattings: 'fmt' % args and 'fmt'.format(...).

// percentFormat is Python's printf-style formatting, `format % arg`.
func percentFormat(format string, arg any) (string, error) {
	var pos []any
	mapping, isMap := arg.(map[string]any)
	if t, ok := arg.(tuple); ok {
		pos = t
	} else {
		pos = []any{arg}
	}
	used := 0
	usedMap := false
	next := func() (any, error) {
		if used >= len(pos) {
			return nil, typeErr("not enough arguments for format string")
		}
		used++
		return pos[used-1], nil
	}
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(format) {
			return "", valueErr("incomplete format")
		}
		var val any
		hasVal := false
		if format[i] == '(' {
			end := strings.IndexByte(format[i:], ')')
			if end < 0 {
				return "", valueErr("incomplete format key")
			}
			if !isMap {
				return "", typeErr("format requires a mapping")
			}
			key := format[i+1 : i+end]
			v, ok := mapping[key]
			if !ok {
				return "", valueErr("format key %q is missing", key)
			}
			val, hasVal, usedMap = canon(v), true, true
			i += end + 1
		}
		var spec fmtSpec
		for i < len(format) && strings.IndexByte("#0- +", format[i]) >= 0 {
			switch format[i] {
			case '#':
				spec.alt = true
			case '0':
				spec.zero = true
			case '-':
				spec.left = true
			case ' ', '+':
				spec.sign = format[i]
			}
			i++
		}
		readNum := func() (int, bool, error) {
			if i < len(format) && format[i] == '*' {
				i++
				v, err := next()
				if err != nil {
					return 0, false, err
				}
				n, ok := intLike(v)
				if !ok {
					return 0, false, typeErr("* wants int")
				}
				return int(n), true, nil
			}
			start := i
			for i < len(format) && format[i] >= '0' && format[i] <= '9' {
				i++
			}
			if i == start {
				return 0, false, nil
			}
			n, _ := strconv.Atoi(format[start:i])
			return n, true, nil
		}
		w, _, err := readNum()
		if err != nil {
			return "", err
		}
		spec.width = w
		if i < len(format) && format[i] == '.' {
			i++
			p, _, err := readNum()
			if err != nil {
				return "", err
			}
			spec.prec = p
			spec.hasPrec = true
		}
		for i < len(format) && strings.IndexByte("hlL", format[i]) >= 0 {
			i++
		}
		if i >= len(format) {
			return "", valueErr("incomplete format")
		}
		verb := format[i]
		if verb == '%' {
			b.WriteByte('%')
			continue
		}
		if !hasVal {
			if val, err = next(); err != nil {
				return "", err
			}
		}
		if spec.width > MaxOutput || spec.prec > MaxOutput {
			return "", valueErr("a string longer than %d bytes", MaxOutput)
		}
		out, err := percentOne(verb, val, spec)
		if err != nil {
			return "", err
		}
		b.WriteString(out)
		if err := checkLen(b.Len()); err != nil {
			return "", err
		}
	}
	if used < len(pos) && !isMap && !usedMap {
		return "", typeErr("not all arguments converted during string formatting")
	}
	return b.String(), nil
}

type fmtSpec struct {
	alt, zero, left bool
	sign            byte // 0, ' ' or '+'
	width, prec     int
	hasPrec         bool
}

func percentOne(verb byte, v any, sp fmtSpec) (string, error) {
	if u, ok := v.(*undefined); ok && verb != 's' {
		return "", u.err()
	}
	var body string
	numeric := true
	switch verb {
	case 's', 'r', 'a':
		numeric = false
		if verb == 's' {
			body = pyStr(v)
		} else {
			body = repr(v)
		}
		if sp.hasPrec && utf8.RuneCountInString(body) > sp.prec {
			body = string([]rune(body)[:sp.prec])
		}
	case 'd', 'i', 'u':
		i, f, isF, ok := num(v)
		if b, isB := v.(*big.Int); isB {
			body = b.String()
			break
		}
		if !ok {
			return "", typeErr("%%%c format: a real number is required, not %s", verb, typeName(v))
		}
		if isF {
			if math.IsInf(f, 0) || math.IsNaN(f) {
				return "", valueErr("cannot convert float infinity or NaN to integer")
			}
			body = strconv.FormatFloat(math.Trunc(f), 'f', 0, 64)
		} else {
			body = strconv.FormatInt(i, 10)
		}
	case 'x', 'X', 'o':
		i, ok := intLike(v)
		if !ok {
			return "", typeErr("%%%c format: an integer is required, not %s", verb, typeName(v))
		}
		base := map[byte]int{'x': 16, 'X': 16, 'o': 8}[verb]
		body = strconv.FormatInt(i, base)
		if verb == 'X' {
			body = strings.ToUpper(body)
		}
		if sp.alt {
			prefix := map[byte]string{'x': "0x", 'X': "0X", 'o': "0o"}[verb]
			if strings.HasPrefix(body, "-") {
				body = "-" + prefix + body[1:]
			} else {
				body = prefix + body
			}
		}
	case 'e', 'E', 'f', 'F', 'g', 'G':
		i, f, isF, ok := num(v)
		if !ok {
			return "", typeErr("must be real number, not %s", typeName(v))
		}
		prec := 6
		if sp.hasPrec {
			prec = sp.prec
		}
		body = formatFloatVerb(toFloat(i, f, isF), verb, prec, sp.alt)
	case 'c':
		numeric = false
		switch x := v.(type) {
		case int64:
			body = string(rune(x))
		case string:
			if utf8.RuneCountInString(x) != 1 {
				return "", typeErr("%%c requires int or char")
			}
			body = x
		default:
			return "", typeErr("%%c requires int or char")
		}
	default:
		return "", valueErr("unsupported format character '%c'", verb)
	}
	if numeric && !strings.HasPrefix(body, "-") && sp.sign != 0 {
		body = string(sp.sign) + body
	}
	n := utf8.RuneCountInString(body)
	if n >= sp.width {
		return body, nil
	}
	padding := sp.width - n
	switch {
	case sp.left:
		return body + strings.Repeat(" ", padding), nil
	case sp.zero && numeric && !strings.ContainsAny(body, "niI"):
		sign := ""
		if body != "" && strings.IndexByte("+- ", body[0]) >= 0 {
			sign, body = body[:1], body[1:]
		}
		return sign + strings.Repeat("0", padding) + body, nil
	}
	return strings.Repeat(" ", padding) + body, nil
}

// formatFloatVerb formats f with a printf float verb as Python does.
func formatFloatVerb(f float64, verb byte, prec int, alt bool) string {
	upper := verb == 'E' || verb == 'F' || verb == 'G'
	switch {
	case math.IsNaN(f):
		if upper {
			return "NAN"
		}
		return "nan"
	case math.IsInf(f, 0):
		s := "inf"
		if upper {
			s = "INF"
		}
		if f < 0 {
			return "-" + s
		}
		return s
	}
	var s string
	switch verb {
	case 'f', 'F':
		s = strconv.FormatFloat(f, 'f', prec, 64)
	case 'e', 'E':
		s = strconv.FormatFloat(f, 'e', prec, 64)
	default:
		if prec == 0 {
			prec = 1
		}
		s = strconv.FormatFloat(f, 'e', prec-1, 64)
		exp, _ := strconv.Atoi(s[strings.IndexByte(s, 'e')+1:])
		if exp < -4 || exp >= prec {
			if !alt {
				mant, e, _ := strings.Cut(s, "e")
				if strings.Contains(mant, ".") {
					mant = strings.TrimRight(strings.TrimRight(mant, "0"), ".")
				}
				s = mant + "e" + e
			}
		} else {
			s = strconv.FormatFloat(f, 'f', max(prec-1-exp, 0), 64)
			if !alt && strings.Contains(s, ".") {
				s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
			}
		}
	}
	if alt && !strings.Contains(s, ".") {
		if i := strings.IndexByte(s, 'e'); i >= 0 {
			s = s[:i] + "." + s[i:]
		} else {
			s += "."
		}
	}
	if upper {
		s = strings.ToUpper(s)
	}
	return s
}

// strFormat is str.format(*args, **kwargs) as Jinja's sandbox runs it.
func strFormat(format string, a *args) (string, error) {
	var b strings.Builder
	auto := 0
	manual := false
	for i := 0; i < len(format); i++ {
		c := format[i]
		switch {
		case c == '{' && i+1 < len(format) && format[i+1] == '{':
			b.WriteByte('{')
			i++
			continue
		case c == '}' && i+1 < len(format) && format[i+1] == '}':
			b.WriteByte('}')
			i++
			continue
		case c == '}':
			return "", valueErr("single '}' encountered in format string")
		case c != '{':
			b.WriteByte(c)
			continue
		}
		end, depth := i+1, 1
		for ; end < len(format); end++ {
			if format[end] == '{' {
				depth++
			} else if format[end] == '}' {
				depth--
				if depth == 0 {
					break
				}
			}
		}
		if end >= len(format) {
			return "", valueErr("expected '}' before end of string")
		}
		field := format[i+1 : end]
		i = end
		name, spec, hasSpec := strings.Cut(field, ":")
		conv := byte(0)
		if j := strings.IndexByte(name, '!'); j >= 0 {
			if j+2 != len(name) {
				return "", valueErr("expected ':' after conversion specifier")
			}
			conv = name[j+1]
			name = name[:j]
		}
		if hasSpec && strings.Contains(spec, "{") {
			nested, err := strFormat(spec, a)
			if err != nil {
				return "", err
			}
			spec = nested
		}
		v, err := formatField(name, a, &auto, &manual)
		if err != nil {
			return "", err
		}
		switch conv {
		case 0:
		case 's':
			v = pyStr(v)
		case 'r', 'a':
			v = repr(v)
		default:
			return "", valueErr("unknown conversion specifier %c", conv)
		}
		out, err := formatValue(v, spec)
		if err != nil {
			return "", err
		}
		b.WriteString(out)
		if err := checkLen(b.Len()); err != nil {
			return "", err
		}
	}
	return b.String(), nil
}

func formatField(name string, a *args, auto *int, manual *bool) (any, error) {
	first := name
	rest := ""
	if j := strings.IndexAny(name, ".["); j >= 0 {
		first, rest = name[:j], name[j:]
	}
	var v any
	switch {
	case first == "":
		if *manual {
			return nil, valueErr("cannot switch from manual field specification to automatic field numbering")
		}
		if *auto >= len(a.pos) {
			return nil, valueErr("Replacement index %d out of range for positional args tuple", *auto)
		}
		v = a.pos[*auto]
		*auto++
	case first[0] >= '0' && first[0] <= '9':
		if *auto > 0 {
			return nil, valueErr("cannot switch from automatic field numbering to manual field specification")
		}
		*manual = true
		n, err := strconv.Atoi(first)
		if err != nil || n >= len(a.pos) {
			return nil, valueErr("Replacement index %s out of range for positional args tuple", first)
		}
		v = a.pos[n]
	default:
		found := false
		for j, k := range a.names {
			if k == first {
				v, found = a.kw[j], true
			}
		}
		if !found {
			return nil, valueErr("format field %q is missing", first)
		}
	}
	for rest != "" {
		var err error
		if rest[0] == '.' {
			j := strings.IndexAny(rest[1:], ".[")
			attr := rest[1:]
			if j >= 0 {
				attr, rest = rest[1:j+1], rest[j+1:]
			} else {
				rest = ""
			}
			if strings.HasPrefix(attr, "_") {
				return nil, valueErr("access to attribute %q is unsafe", attr)
			}
			if v, err = getattr(v, attr); err != nil {
				return nil, err
			}
			continue
		}
		j := strings.IndexByte(rest, ']')
		if j < 0 {
			return nil, valueErr("missing ']' in format string")
		}
		key := rest[1:j]
		rest = rest[j+1:]
		var k any = key
		if n, err := strconv.ParseInt(key, 10, 64); err == nil {
			k = n
		}
		if v, err = getitem(v, k); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// formatValue is Python's format(value, spec).
func formatValue(v any, spec string) (string, error) {
	switch x := canon(v).(type) {
	case time.Time:
		return strftime(x, spec)
	case date:
		return strftime(x.t, spec)
	case string:
		return formatSpec(x, spec, false)
	case int64, float64:
		return formatSpec(x, spec, true)
	case bool:
		if spec == "" {
			return pyStr(x), nil
		}
		i, _ := intLike(x)
		return formatSpec(i, spec, true)
	}
	if spec != "" {
		return "", typeErr("unsupported format string passed to %s.__format__", typeName(v))
	}
	return pyStr(v), nil
}

// formatSpec applies the format mini-language to a string or a number.
func formatSpec(v any, spec string, numeric bool) (string, error) {
	fill, align := " ", byte(0)
	if r, n := utf8.DecodeRuneInString(spec); n > 0 && n < len(spec) && strings.IndexByte("<>=^", spec[n]) >= 0 {
		fill, align, spec = string(r), spec[n], spec[n+1:]
	} else if spec != "" && strings.IndexByte("<>=^", spec[0]) >= 0 {
		align, spec = spec[0], spec[1:]
	}
	sign := byte('-')
	if spec != "" && strings.IndexByte("+- ", spec[0]) >= 0 {
		sign, spec = spec[0], spec[1:]
	}
	alt := strings.HasPrefix(spec, "#")
	if alt {
		spec = spec[1:]
	}
	if strings.HasPrefix(spec, "0") {
		if align == 0 {
			fill, align = "0", '='
		}
		spec = spec[1:]
	}
	i := 0
	for i < len(spec) && spec[i] >= '0' && spec[i] <= '9' {
		i++
	}
	width, _ := strconv.Atoi(spec[:i])
	spec = spec[i:]
	group := ""
	if spec != "" && (spec[0] == ',' || spec[0] == '_') {
		group, spec = spec[:1], spec[1:]
	}
	prec, hasPrec := 0, false
	if strings.HasPrefix(spec, ".") {
		j := 1
		for j < len(spec) && spec[j] >= '0' && spec[j] <= '9' {
			j++
		}
		prec, _ = strconv.Atoi(spec[1:j])
		hasPrec, spec = true, spec[j:]
	}
	if len(spec) > 1 {
		return "", valueErr("invalid format specifier")
	}
	if width > MaxOutput || prec > MaxOutput {
		return "", valueErr("a string longer than %d bytes", MaxOutput)
	}
	verb := byte(0)
	if spec != "" {
		verb = spec[0]
	}
	var body string
	if !numeric {
		if verb != 0 && verb != 's' {
			return "", valueErr("unknown format code '%c' for object of type 'str'", verb)
		}
		body = v.(string)
		if hasPrec && utf8.RuneCountInString(body) > prec {
			body = string([]rune(body)[:prec])
		}
		if align == 0 {
			align = '<'
		}
	} else {
		var err error
		if body, err = formatNumber(v, verb, prec, hasPrec, alt, group); err != nil {
			return "", err
		}
		if sign != '-' && !strings.HasPrefix(body, "-") {
			body = string(sign) + body
		}
		if align == 0 {
			align = '>'
		}
	}
	n := utf8.RuneCountInString(body)
	if n >= width {
		return body, nil
	}
	padding := width - n
	switch align {
	case '<':
		return body + strings.Repeat(fill, padding), nil
	case '^':
		return strings.Repeat(fill, padding/2) + body + strings.Repeat(fill, padding-padding/2), nil
	case '=':
		signPart := ""
		if body != "" && strings.IndexByte("+- ", body[0]) >= 0 {
			signPart, body = body[:1], body[1:]
		}
		return signPart + strings.Repeat(fill, padding) + body, nil
	}
	return strings.Repeat(fill, padding) + body, nil
}

func formatNumber(v any, verb byte, prec int, hasPrec, alt bool, group string) (string, error) {
	i, isInt := v.(int64)
	f, _ := v.(float64)
	if isInt {
		switch verb {
		case 0, 'd', 'n':
			return groupDigits(strconv.FormatInt(i, 10), group), nil
		case 'b', 'o', 'x', 'X':
			base := map[byte]int{'b': 2, 'o': 8, 'x': 16, 'X': 16}[verb]
			s := strconv.FormatInt(abs64(i), base)
			if verb == 'X' {
				s = strings.ToUpper(s)
			}
			if alt {
				s = map[byte]string{'b': "0b", 'o': "0o", 'x': "0x", 'X': "0X"}[verb] + s
			}
			if i < 0 {
				s = "-" + s
			}
			return s, nil
		case 'c':
			return string(rune(i)), nil
		}
		f = float64(i)
	} else if verb == 'd' || verb == 'b' || verb == 'o' || verb == 'x' || verb == 'X' || verb == 'c' {
		return "", valueErr("unknown format code '%c' for object of type 'float'", verb)
	}
	switch verb {
	case 0:
		if !hasPrec {
			return groupDigits(FormatFloat(f), group), nil
		}
		s := formatFloatVerb(f, 'g', max(prec, 1), alt)
		if !strings.ContainsAny(s, ".enia") {
			s += ".0"
		}
		return groupDigits(s, group), nil
	case '%':
		p := 6
		if hasPrec {
			p = prec
		}
		return groupDigits(formatFloatVerb(f*100, 'f', p, alt), group) + "%", nil
	case 'e', 'E', 'f', 'F', 'g', 'G', 'n':
		if verb == 'n' {
			verb = 'g'
		}
		p := 6
		if hasPrec {
			p = prec
		}
		return groupDigits(formatFloatVerb(f, verb, p, alt), group), nil
	}
	return "", valueErr("unknown format code '%c' for object of type '%s'", verb, typeName(v))
}

// groupDigits inserts a thousands separator into the integer part.
func groupDigits(s, sep string) string {
	if sep == "" {
		return s
	}
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	intPart, rest := s, ""
	if j := strings.IndexAny(s, ".e"); j >= 0 {
		intPart, rest = s[:j], s[j:]
	}
	var b strings.Builder
	for k, c := range intPart {
		if k > 0 && (len(intPart)-k)%3 == 0 {
			b.WriteString(sep)
		}
		b.WriteRune(c)
	}
	return sign + b.String() + rest
}
