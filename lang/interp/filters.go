package interp

import (
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// filterFunc is a filter: x | name(args).
type filterFunc func(s *state, in any, a *args) (any, error)

// filterFuncsTable is Jinja's built-in filters that templates may use, and
// the Airbyte CDK's (cdkfilters.go). A filter not listed here is refused when
// the manifest loads.
var (
	filterFuncsTable     map[string]filterFunc
	filterFuncsTableOnce sync.Once
)

// filterFuncs returns the table, built on first use rather than at package init:
// a run builds only the tables its templates need.
func filterFuncs() map[string]filterFunc {
	filterFuncsTableOnce.Do(buildFilterFuncs)
	return filterFuncsTable
}

func buildFilterFuncs() {
	filterFuncsTable = map[string]filterFunc{
		"abs":         fAbs,
		"attr":        fAttr,
		"batch":       fBatch,
		"capitalize":  strFilter(capitalize),
		"center":      fCenter,
		"count":       fLength,
		"d":           fDefault,
		"default":     fDefault,
		"dictsort":    fDictsort,
		"e":           fEscape,
		"escape":      fEscape,
		"first":       fFirst,
		"float":       fFloat,
		"forceescape": fEscape,
		"format":      fFormat,
		"groupby":     fGroupby,
		"indent":      fIndent,
		"int":         fInt,
		"items":       fItems,
		"join":        fJoin,
		"last":        fLast,
		"length":      fLength,
		"list":        fList,
		"lower":       strFilter(strings.ToLower),
		"map":         fMap,
		"max":         fMinMax(1),
		"min":         fMinMax(-1),
		"reject":      fSelect(false, false),
		"rejectattr":  fSelect(false, true),
		"replace":     fReplace,
		"reverse":     fReverse,
		"round":       fRound,
		"safe":        fSafe,
		"select":      fSelect(true, false),
		"selectattr":  fSelect(true, true),
		"sort":        fSort,
		"striptags":   fStriptags,
		"sum":         fSum,
		"title":       strFilter(pyTitle),
		"tojson":      fToJSON,
		"trim":        fTrim,
		"truncate":    fTruncate,
		"unique":      fUnique,
		"upper":       strFilter(strings.ToUpper),
		"urlencode":   fURLEncode,
		"wordcount":   fWordcount,
	}
	for name, f := range cdkFilters() {
		filterFuncsTable[name] = f
	}
}

// checkFilter checks at load what can be checked: a literal regular
// expression must compile.
func checkFilter(f *filterExpr) error {
	if f.name != "regex_search" && f.name != "regex_replace" || len(f.args.pos) == 0 {
		return nil
	}
	if c, ok := f.args.pos[0].(*constExpr); ok {
		if p, ok := c.v.(string); ok {
			if _, err := compileRegex(p); err != nil {
				return err
			}
		}
	}
	return nil
}

func failUndefined(v any) error {
	if u, ok := v.(*undefined); ok {
		return u.err()
	}
	return nil
}

func strFilter(f func(string) string) filterFunc {
	return func(s *state, in any, a *args) (any, error) {
		str, err := pyText(in)
		if err != nil {
			return nil, err
		}
		return f(str), s.charge(len(str))
	}
}

func fAbs(_ *state, in any, a *args) (any, error) {
	switch x := in.(type) {
	case int64:
		if x == math.MinInt64 {
			return normInt(new(big.Int).Abs(big.NewInt(x)))
		}
		return abs64(x), nil
	case *big.Int:
		return normInt(new(big.Int).Abs(x))
	case float64:
		return math.Abs(x), nil
	case bool:
		i, _ := intLike(x)
		return i, nil
	}
	return nil, typeErr("bad operand type for abs(): '%s'", typeName(in))
}

func fAttr(_ *state, in any, a *args) (any, error) {
	name, ok, err := argStr(a, 0, "name", "attr")
	if err != nil || !ok {
		return nil, orTypeErr(err, "attr() missing required argument 'name'")
	}
	if err := failUndefined(in); err != nil {
		return nil, err
	}
	if m, isMap := in.(map[string]any); isMap {
		if findMethod(m, name) == nil {
			return noAttr(in, name), nil
		}
	}
	return getattr(in, name)
}

func fCenter(s *state, in any, a *args) (any, error) {
	w, err := argInt(a, 0, "width", "center", 80)
	if err != nil {
		return nil, err
	}
	if err := checkLen(int(min(w, MaxOutput+1))); err != nil {
		return nil, err
	}
	return pad(pyStr(in), int(w), " ", "center"), nil
}

func fLength(_ *state, in any, a *args) (any, error) {
	switch x := canon(in).(type) {
	case string:
		return int64(utf8.RuneCountInString(x)), nil
	case []any:
		return int64(len(x)), nil
	case tuple:
		return int64(len(x)), nil
	case map[string]any:
		return int64(len(x)), nil
	case *view:
		return int64(len(x.items)), nil
	case pyBytes:
		return int64(len(x)), nil
	case *pyDict:
		return int64(len(x.keys)), nil
	case *undefined:
		return int64(0), nil
	}
	return nil, typeErr("object of type '%s' has no len()", typeName(in))
}

func fDefault(_ *state, in any, a *args) (any, error) {
	if err := a.check("default", 2, "default_value", "boolean"); err != nil {
		return nil, err
	}
	def, ok := a.get(0, "default_value")
	if !ok {
		def = ""
	}
	boolean, _ := a.get(1, "boolean")
	if _, undef := in.(*undefined); undef || (Truthy(boolean) && !Truthy(in)) {
		return def, nil
	}
	return in, nil
}

func fDictsort(s *state, in any, a *args) (any, error) {
	if d, isD := in.(*pyDict); isD {
		pairs, err := d.sortedPairs()
		if err != nil {
			return nil, err
		}
		return dictsortPairs(s, pairs, a)
	}
	m, ok := canon(in).(map[string]any)
	if !ok {
		if err := failUndefined(in); err != nil {
			return nil, err
		}
		return nil, typeErr("dictsort needs a dict, not %s", typeName(in))
	}
	return dictsortPairs(s, dictView(m, "items").items, a)
}

// dictsortPairs sorts a dict's (key, value) tuples as dictsort's arguments say.
func dictsortPairs(s *state, pairs []any, a *args) (any, error) {
	by, _, err := argStr(a, 2, "by", "dictsort")
	if err != nil {
		return nil, err
	}
	caseSensitive, _ := a.get(1, "case_sensitive")
	reverse, _ := a.get(3, "reverse")
	pos := 0
	if by == "value" {
		pos = 1
	} else if by != "" && by != "key" {
		return nil, valueErr("You can only sort by either 'key' or 'value'")
	}
	return sortItems(s, pairs, func(v any) (any, error) {
		return sortKey(v.(tuple)[pos], Truthy(caseSensitive)), nil
	}, Truthy(reverse))
}

func fEscape(_ *state, in any, a *args) (any, error) {
	text, err := pyText(in)
	return htmlEscape(text), err
}

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;").Replace(s)
}

func fFirst(_ *state, in any, a *args) (any, error) {
	items, err := iterate(in)
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return &undefined{hint: "No first item, sequence was empty."}, nil
	}
	return items[0], nil
}

func fLast(_ *state, in any, a *args) (any, error) {
	if _, ok := in.(*undefined); ok {
		return nil, typeErr("'Undefined' object is not reversible")
	}
	items, err := iterate(in)
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return &undefined{hint: "No last item, sequence was empty."}, nil
	}
	return items[len(items)-1], nil
}

// pyFloat is Python's float() of a string.
func pyFloat(str string) (float64, bool) {
	t := strings.TrimFunc(str, pySpace)
	low := strings.ToLower(strings.TrimLeft(t, "+-"))
	switch low {
	case "inf", "infinity":
		if strings.HasPrefix(t, "-") {
			return math.Inf(-1), true
		}
		return math.Inf(1), true
	case "nan":
		return math.NaN(), true
	}
	if strings.Contains(t, "__") || strings.HasPrefix(t, "_") || strings.HasSuffix(t, "_") || strings.ContainsAny(t, "xXpP") {
		return 0, false
	}
	f, err := strconv.ParseFloat(strings.ReplaceAll(t, "_", ""), 64)
	if err != nil && !strings.Contains(err.Error(), "range") {
		return 0, false
	}
	return f, true
}

// pyInt is Python's int() of a string in a base.
func pyInt(str string, base int) (any, bool, error) {
	t := strings.TrimFunc(str, pySpace)
	sign := ""
	if t != "" && (t[0] == '+' || t[0] == '-') {
		sign, t = t[:1], t[1:]
	}
	lower := strings.ToLower(t)
	if (base == 16 && strings.HasPrefix(lower, "0x")) || (base == 8 && strings.HasPrefix(lower, "0o")) || (base == 2 && strings.HasPrefix(lower, "0b")) {
		t = t[2:]
		t = strings.TrimPrefix(t, "_")
	}
	if t == "" || strings.HasPrefix(t, "_") || strings.HasSuffix(t, "_") || strings.Contains(t, "__") {
		return nil, false, nil
	}
	digits := sign + strings.ReplaceAll(t, "_", "")
	if n, err := strconv.ParseInt(digits, base, 64); err == nil {
		return n, true, nil
	}
	b, ok := new(big.Int).SetString(digits, base)
	if !ok {
		return nil, false, nil
	}
	n, err := normInt(b) // past 4,300 digits Python refuses it
	return n, true, err
}

func fInt(_ *state, in any, a *args) (any, error) {
	if err := a.check("int", 2, "default", "base"); err != nil {
		return nil, err
	}
	def, ok := a.get(0, "default")
	if !ok {
		def = int64(0)
	}
	base, err := argInt(a, 1, "base", "int", 10)
	if err != nil {
		return nil, err
	}
	if n, ok, err := intOfNumber(in); ok {
		return n, err
	}
	switch x := in.(type) {
	case string:
		if base >= 2 && base <= 36 {
			if n, ok, err := pyInt(x, int(base)); ok {
				return n, err
			}
		}
		if f, ok := pyFloat(x); ok && !math.IsNaN(f) && !math.IsInf(f, 0) {
			return truncInt(f)
		}
		return def, nil
	case *undefined:
		return nil, x.err()
	}
	return def, nil
}

// intOfNumber is Python's int() of an integer, a bool or a float; ok is
// false when v is none of them.
func intOfNumber(v any) (n any, ok bool, err error) {
	switch x := v.(type) {
	case int64, *big.Int:
		return x, true, nil
	case bool:
		i, _ := intLike(x)
		return i, true, nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, true, valueErr("cannot convert float infinity or NaN to integer")
		}
		n, err := truncInt(x)
		return n, true, err
	}
	return nil, false, nil
}

func truncInt(f float64) (any, error) {
	t := math.Trunc(f)
	if t >= 9.223372036854775807e18 || t < -9.223372036854775808e18 {
		b, _ := big.NewFloat(t).Int(nil)
		return normInt(b)
	}
	return int64(t), nil
}

func fFloat(_ *state, in any, a *args) (any, error) {
	def, ok := a.get(0, "default")
	if !ok {
		def = 0.0
	}
	switch x := in.(type) {
	case string:
		if f, ok := pyFloat(x); ok {
			return f, nil
		}
		return def, nil
	case int64:
		return float64(x), nil
	case float64:
		return x, nil
	case bool:
		i, _ := intLike(x)
		return float64(i), nil
	case *undefined:
		return nil, x.err()
	}
	return def, nil
}

func fFormat(_ *state, in any, a *args) (any, error) {
	var arg any = tuple(a.pos)
	if len(a.names) > 0 {
		if len(a.pos) > 0 {
			return nil, valueErr("can't handle positional and keyword arguments at the same time")
		}
		m := map[string]any{}
		for i, n := range a.names {
			m[n] = a.kw[i]
		}
		arg = m
	}
	out, err := percentFormat(pyStr(in), arg)
	if err != nil {
		return nil, err
	}
	return out, checkLen(len(out))
}

func fIndent(s *state, in any, a *args) (any, error) {
	width, err := argInt(a, 0, "width", "indent", 4)
	if err != nil {
		return nil, err
	}
	first, _ := a.get(1, "first")
	blank, _ := a.get(2, "blank")
	if err := checkLen(int(min(width, MaxOutput+1))); err != nil {
		return nil, err
	}
	ind := strings.Repeat(" ", int(max(width, 0)))
	text := pyStr(in) + "\n"
	lines := strings.Split(text, "\n")
	lines = lines[:len(lines)-1]
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		if (i > 0 || Truthy(first)) && (l != "" || Truthy(blank)) {
			b.WriteString(ind)
		}
		b.WriteString(l)
		if err := checkLen(b.Len()); err != nil {
			return nil, err
		}
	}
	out := b.String()
	return out, s.charge(len(out))
}

func fItems(_ *state, in any, a *args) (any, error) {
	switch x := canon(in).(type) {
	case *undefined:
		return []any{}, nil
	case map[string]any:
		return dictView(x, "items").items, nil
	}
	return nil, typeErr("Can only get item pairs from a mapping.")
}

func fJoin(s *state, in any, a *args) (any, error) {
	sep, _, err := argStr(a, 0, "d", "join")
	if err != nil {
		return nil, err
	}
	items, err := iterate(in)
	if err != nil {
		return nil, err
	}
	if attr, ok := a.get(1, "attribute"); ok && attr != nil {
		if items, err = mapAttr(items, attr); err != nil {
			return nil, err
		}
	}
	var b strings.Builder
	for i, it := range items {
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(pyStr(it))
		if err := checkLen(b.Len()); err != nil {
			return nil, err
		}
	}
	return b.String(), s.charge(b.Len() + len(items))
}

func fList(s *state, in any, a *args) (any, error) {
	items, err := iterate(in)
	if err != nil {
		return nil, err
	}
	return append([]any{}, items...), s.charge(len(items))
}

// attrGetter reads a dotted attribute (a.b, 0.name) of an item, as Jinja's
// make_attrgetter does.
func attrGetter(attr any) func(any) (any, error) {
	var parts []any
	switch x := attr.(type) {
	case string:
		for _, p := range strings.Split(x, ".") {
			if n, err := strconv.ParseInt(p, 10, 64); err == nil {
				parts = append(parts, n)
			} else {
				parts = append(parts, p)
			}
		}
	default:
		parts = []any{attr}
	}
	return func(v any) (any, error) {
		for _, p := range parts {
			var err error
			if v, err = getitem(v, p); err != nil {
				return nil, err
			}
		}
		return v, nil
	}
}

func mapAttr(items []any, attr any) ([]any, error) {
	get := attrGetter(attr)
	out := make([]any, len(items))
	for i, it := range items {
		v, err := get(it)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

func fMap(s *state, in any, a *args) (any, error) {
	items, err := iterate(in)
	if err != nil {
		return nil, err
	}
	if err := s.charge(len(items)); err != nil {
		return nil, err
	}
	if attr, ok := a.get(-1, "attribute"); ok {
		out, err := mapAttr(items, attr)
		if err != nil {
			return nil, err
		}
		if def, ok := a.get(-1, "default"); ok {
			for i, v := range out {
				if _, undef := v.(*undefined); undef {
					out[i] = def
				}
			}
		}
		return out, nil
	}
	if len(a.pos) == 0 {
		return nil, valueErr("map requires a filter argument")
	}
	name, ok := a.pos[0].(string)
	if !ok {
		return nil, typeErr("map: the filter name must be a string")
	}
	f, ok := filterFuncs()[name]
	if !ok {
		return nil, valueErr("no filter named %q", name)
	}
	rest := &args{pos: a.pos[1:], names: a.names, kw: a.kw}
	out := make([]any, len(items))
	for i, it := range items {
		if out[i], err = f(s, it, rest); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// sortKey is the key Jinja sorts by: strings lower-cased unless case
// sensitive.
func sortKey(v any, caseSensitive bool) any {
	if s, ok := v.(string); ok && !caseSensitive {
		return strings.ToLower(s)
	}
	return v
}

func sortItems(s *state, items []any, key func(any) (any, error), reverse bool) ([]any, error) {
	if err := s.charge(len(items) * 8); err != nil {
		return nil, err
	}
	keys := make([]any, len(items))
	for i, it := range items {
		k, err := key(it)
		if err != nil {
			return nil, err
		}
		keys[i] = k
	}
	idx := make([]int, len(items))
	for i := range idx {
		idx[i] = i
	}
	var failure error
	sort.SliceStable(idx, func(x, y int) bool {
		a, b := keys[idx[x]], keys[idx[y]]
		if reverse {
			a, b = b, a
		}
		lt, err := less(a, b)
		if err != nil && failure == nil {
			failure = err
		}
		return lt
	})
	if failure != nil {
		return nil, failure
	}
	out := make([]any, len(items))
	for i, j := range idx {
		out[i] = items[j]
	}
	return out, nil
}

func fSort(s *state, in any, a *args) (any, error) {
	if err := a.check("sort", 3, "reverse", "case_sensitive", "attribute"); err != nil {
		return nil, err
	}
	items, err := iterate(in)
	if err != nil {
		return nil, err
	}
	reverse, _ := a.get(0, "reverse")
	cs, _ := a.get(1, "case_sensitive")
	get := func(v any) (any, error) { return v, nil }
	if attr, ok := a.get(2, "attribute"); ok && attr != nil {
		get = attrGetter(attr)
	}
	return sortItems(s, items, func(v any) (any, error) {
		k, err := get(v)
		return sortKey(k, Truthy(cs)), err
	}, Truthy(reverse))
}

func fUnique(s *state, in any, a *args) (any, error) {
	items, err := iterate(in)
	if err != nil {
		return nil, err
	}
	if err := s.charge(len(items) * 4); err != nil {
		return nil, err
	}
	cs, _ := a.get(0, "case_sensitive")
	get := func(v any) (any, error) { return v, nil }
	if attr, ok := a.get(1, "attribute"); ok && attr != nil {
		get = attrGetter(attr)
	}
	var out, seen []any
	for _, it := range items {
		k, err := get(it)
		if err != nil {
			return nil, err
		}
		k = sortKey(k, Truthy(cs))
		if err := s.charge(len(seen)); err != nil {
			return nil, err
		}
		if !containsItem(seen, k) {
			seen = append(seen, k)
			out = append(out, it)
		}
	}
	if out == nil {
		out = []any{}
	}
	return out, nil
}

func fMinMax(sign int) filterFunc {
	return func(s *state, in any, a *args) (any, error) {
		items, err := iterate(in)
		if err != nil {
			return nil, err
		}
		if len(items) == 0 {
			return &undefined{hint: "No aggregated item, sequence was empty."}, nil
		}
		cs, _ := a.get(0, "case_sensitive")
		get := func(v any) (any, error) { return v, nil }
		if attr, ok := a.get(1, "attribute"); ok && attr != nil {
			get = attrGetter(attr)
		}
		best := items[0]
		bestKey, err := get(best)
		if err != nil {
			return nil, err
		}
		bestKey = sortKey(bestKey, Truthy(cs))
		for _, it := range items[1:] {
			k, err := get(it)
			if err != nil {
				return nil, err
			}
			k = sortKey(k, Truthy(cs))
			c, err := cmp(k, bestKey, "<")
			if err != nil {
				return nil, err
			}
			if c*sign > 0 && c != 2 {
				best, bestKey = it, k
			}
		}
		return best, s.charge(len(items))
	}
}

func fSelect(keep, byAttr bool) filterFunc {
	return func(s *state, in any, a *args) (any, error) {
		items, err := iterate(in)
		if err != nil {
			return nil, err
		}
		if err := s.charge(len(items)); err != nil {
			return nil, err
		}
		pos := a.pos
		get := func(v any) (any, error) { return v, nil }
		if byAttr {
			if len(pos) == 0 {
				return nil, typeErr("missing parameter for attribute name")
			}
			get = attrGetter(pos[0])
			pos = pos[1:]
		}
		test := func(_ *state, v any, _ *args) (any, error) { return Truthy(v), nil }
		rest := &args{names: a.names, kw: a.kw}
		if len(pos) > 0 {
			name, ok := pos[0].(string)
			if !ok {
				return nil, typeErr("the test name must be a string")
			}
			t, ok := testFuncs()[name]
			if !ok {
				return nil, valueErr("no test named %q", name)
			}
			test = t
			rest.pos = pos[1:]
		}
		out := []any{}
		for _, it := range items {
			v, err := get(it)
			if err != nil {
				return nil, err
			}
			ok, err := test(s, v, rest)
			if err != nil {
				return nil, err
			}
			if Truthy(ok) == keep {
				out = append(out, it)
			}
		}
		return out, nil
	}
}

func fReplace(s *state, in any, a *args) (any, error) {
	if len(a.pos) < 2 {
		return nil, typeErr("replace() missing required arguments 'old' and 'new'")
	}
	n, err := argInt(a, 2, "count", "replace", -1)
	if err != nil {
		return nil, err
	}
	return replaceChecked(s, pyStr(in), pyStr(a.pos[0]), pyStr(a.pos[1]), int(max(min(n, MaxOutput), -1)))
}

func fReverse(s *state, in any, a *args) (any, error) {
	if str, ok := in.(string); ok {
		r := []rune(str)
		for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
			r[i], r[j] = r[j], r[i]
		}
		return string(r), nil
	}
	items, err := iterate(in)
	if err != nil {
		return nil, err
	}
	out := make([]any, len(items))
	for i, it := range items {
		out[len(items)-1-i] = it
	}
	return out, s.charge(len(items))
}

func fRound(_ *state, in any, a *args) (any, error) {
	prec, err := argInt(a, 0, "precision", "round", 0)
	if err != nil {
		return nil, err
	}
	method, ok, err := argStr(a, 1, "method", "round")
	if err != nil {
		return nil, err
	}
	if !ok {
		method = "common"
	}
	i, f, isF, isNum := num(in)
	if !isNum {
		return nil, typeErr("type %s doesn't define __round__ method", typeName(in))
	}
	scale := math.Pow(10, float64(prec))
	switch method {
	case "common":
		if !isF {
			if prec >= 0 {
				return i, nil
			}
			r := math.RoundToEven(float64(i)*scale) / scale
			return int64(r), nil
		}
		return pyRound(f, int(prec)), nil
	case "ceil":
		return math.Ceil(toFloat(i, f, isF)*scale) / scale, nil
	case "floor":
		return math.Floor(toFloat(i, f, isF)*scale) / scale, nil
	}
	return nil, valueErr("method must be common, ceil or floor")
}

// pyRound is Python's round(float, ndigits): the exact value rounded half to
// even at that decimal.
func pyRound(f float64, ndigits int) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return f
	}
	if ndigits >= 0 {
		if ndigits > 300 {
			return f
		}
		r, _ := strconv.ParseFloat(strconv.FormatFloat(f, 'f', ndigits, 64), 64)
		return r
	}
	scale := math.Pow(10, float64(-ndigits))
	return math.RoundToEven(f/scale) * scale
}

func fSafe(_ *state, in any, a *args) (any, error) { return pyText(in) }

func fStriptags(_ *state, in any, a *args) (any, error) {
	text, err := pyText(in)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(text, '<')
		if i < 0 {
			b.WriteString(text)
			break
		}
		b.WriteString(text[:i])
		rest := text[i:]
		end := "<!--"
		if strings.HasPrefix(rest, end) {
			j := strings.Index(rest, "-->")
			if j < 0 {
				b.WriteString(rest)
				break
			}
			text = rest[j+3:]
			continue
		}
		j := strings.IndexByte(rest, '>')
		if j < 0 {
			b.WriteString(rest)
			break
		}
		text = rest[j+1:]
	}
	return strings.Join(strings.FieldsFunc(htmlUnescape(b.String()), pySpace), " "), nil
}

func htmlUnescape(s string) string {
	return strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">", "&#34;", `"`, "&#39;", "'", "&quot;", `"`, "&nbsp;", "\u00a0").Replace(s)
}

func fSum(s *state, in any, a *args) (any, error) {
	items, err := iterate(in)
	if err != nil {
		return nil, err
	}
	if attr, ok := a.get(0, "attribute"); ok && attr != nil {
		if items, err = mapAttr(items, attr); err != nil {
			return nil, err
		}
	}
	total, ok := a.get(1, "start")
	if !ok {
		total = int64(0)
	}
	for _, it := range items {
		if total, err = binary(s, "+", total, it); err != nil {
			return nil, err
		}
	}
	return total, nil
}

func fToJSON(_ *state, in any, a *args) (any, error) {
	indent, err := argInt(a, 0, "indent", "tojson", 0)
	if err != nil {
		return nil, err
	}
	out, err := pyJSON(in, int(min(indent, 64)))
	if err != nil {
		return nil, err
	}
	return strings.NewReplacer("<", `\u003c`, ">", `\u003e`, "&", `\u0026`, "'", `\u0027`).Replace(out), checkLen(len(out))
}

func fTrim(_ *state, in any, a *args) (any, error) {
	chars, ok, err := argStr(a, 0, "chars", "trim")
	if err != nil {
		return nil, err
	}
	text, err := pyText(in)
	if err != nil {
		return nil, err
	}
	if ok {
		return strings.Trim(text, chars), nil
	}
	return strings.TrimFunc(text, pySpace), nil
}

func fTruncate(_ *state, in any, a *args) (any, error) {
	length, err := argInt(a, 0, "length", "truncate", 255)
	if err != nil {
		return nil, err
	}
	killwords, _ := a.get(1, "killwords")
	end, ok, err := argStr(a, 2, "end", "truncate")
	if err != nil {
		return nil, err
	}
	if !ok {
		end = "..."
	}
	leeway, err := argInt(a, 3, "leeway", "truncate", 5)
	if err != nil {
		return nil, err
	}
	text, err := pyText(in)
	if err != nil {
		return nil, err
	}
	r := []rune(text)
	if length < int64(utf8.RuneCountInString(end)) || leeway < 0 {
		return nil, valueErr("truncate: the length must be at least the end's length")
	}
	if int64(len(r)) <= length+leeway {
		return string(r), nil
	}
	cut := string(r[:length-int64(utf8.RuneCountInString(end))])
	if Truthy(killwords) {
		return cut + end, nil
	}
	if i := strings.LastIndexByte(cut, ' '); i >= 0 {
		cut = cut[:i]
	}
	return cut + end, nil
}

// urlQuote is Jinja's url_quote: UTF-8 percent-encoding, keeping "/" unless
// forQuery (where a space becomes "+").
func urlQuote(s string, forQuery bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strings.IndexByte("_.-~", c) >= 0:
			b.WriteByte(c)
		case c == '/' && !forQuery:
			b.WriteByte(c)
		case c == ' ' && forQuery:
			b.WriteByte('+')
		default:
			b.WriteString("%" + strings.ToUpper(hex2(int(c))))
		}
	}
	return b.String()
}

func fURLEncode(_ *state, in any, a *args) (any, error) {
	var pairs [][2]any
	switch x := canon(in).(type) {
	case string:
		return urlQuote(x, false), nil
	case map[string]any:
		for _, k := range SortedKeys(x) {
			pairs = append(pairs, [2]any{k, x[k]})
		}
	case []any, tuple:
		for _, it := range items(x) {
			p, err := iterate(it)
			if err != nil || len(p) != 2 {
				return nil, valueErr("urlencode needs pairs of key and value")
			}
			pairs = append(pairs, [2]any{p[0], p[1]})
		}
	default:
		text, err := pyText(x)
		return urlQuote(text, false), err
	}
	parts := make([]string, len(pairs))
	for i, p := range pairs {
		parts[i] = urlQuote(pyStr(p[0]), true) + "=" + urlQuote(pyStr(p[1]), true)
	}
	return strings.Join(parts, "&"), nil
}

func fWordcount(_ *state, in any, a *args) (any, error) {
	text, err := pyText(in)
	if err != nil {
		return nil, err
	}
	n := 0
	inWord := false
	for _, r := range text {
		w := r == '_' || isWordRune(r)
		if w && !inWord {
			n++
		}
		inWord = w
	}
	return int64(n), nil
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }

// fBatch is batch(linecount, fill_with=None): the items in lists of
// linecount, the last one filled up with fill_with when it is given.
func fBatch(s *state, in any, a *args) (any, error) {
	if err := a.check("batch", 2, "linecount", "fill_with"); err != nil {
		return nil, err
	}
	if _, ok := a.get(0, "linecount"); !ok {
		return nil, typeErr("do_batch() missing 1 required positional argument: 'linecount'")
	}
	n, err := argInt(a, 0, "linecount", "batch", 0)
	if err != nil {
		return nil, err
	}
	items, err := iterate(in)
	if err != nil {
		return nil, err
	}
	var out []any
	tmp := []any{}
	for _, it := range items {
		if int64(len(tmp)) == n {
			out = append(out, tmp)
			tmp = []any{}
		}
		tmp = append(tmp, it)
	}
	if len(tmp) > 0 {
		if fill, ok := a.get(1, "fill_with"); ok && fill != nil && int64(len(tmp)) < n {
			if err := checkItems(int(min(n, MaxItems+1))); err != nil {
				return nil, err
			}
			for int64(len(tmp)) < n {
				tmp = append(tmp, fill)
			}
		}
		out = append(out, tmp)
	}
	if out == nil {
		out = []any{}
	}
	return out, s.charge(len(items) + len(tmp))
}

// groupTuple is one group of groupby: a (grouper, list) tuple whose items
// are also its attributes grouper and list.
type groupTuple tuple

// fGroupby is groupby(attribute, default=None, case_sensitive=False): the
// items sorted by the attribute and grouped by it, each group a (grouper,
// list) tuple; without case_sensitive, texts compare lower-cased and a group
// is named by its first item's value.
func fGroupby(s *state, in any, a *args) (any, error) {
	if err := a.check("groupby", 3, "attribute", "default", "case_sensitive"); err != nil {
		return nil, err
	}
	attr, ok := a.get(0, "attribute")
	if !ok {
		return nil, typeErr("sync_do_groupby() missing 1 required positional argument: 'attribute'")
	}
	def, _ := a.get(1, "default")
	cs, _ := a.get(2, "case_sensitive")
	items, err := iterate(in)
	if err != nil {
		return nil, err
	}
	get := attrGetter(attr)
	value := func(v any) (any, error) {
		k, err := get(v)
		if _, undef := k.(*undefined); undef && def != nil {
			k = def
		}
		return k, err
	}
	key := func(v any) (any, error) {
		k, err := value(v)
		return sortKey(k, Truthy(cs)), err
	}
	sorted, err := sortItems(s, items, key, false)
	if err != nil {
		return nil, err
	}
	out := []any{}
	var last any
	for i, it := range sorted {
		k, err := key(it)
		if err != nil {
			return nil, err
		}
		if i == 0 || !equal(k, last) {
			grouper, err := value(it)
			if err != nil {
				return nil, err
			}
			out = append(out, groupTuple{grouper, []any{}})
			last = k
		}
		g := out[len(out)-1].(groupTuple)
		g[1] = append(g[1].([]any), it)
	}
	return out, s.charge(len(items))
}
