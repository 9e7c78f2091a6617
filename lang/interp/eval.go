package interp

import (
	"strings"
)

// Limits of one evaluation, checked by the evaluator itself: a template that
// passes one fails with an error naming the limit.
const (
	// MaxOutput bounds the rendered text and any string a template builds.
	MaxOutput = 1 << 20
	// MaxSteps bounds the work of one evaluation: statements, loop
	// iterations, calls, and filters in proportion to what they process.
	MaxSteps = 1_000_000
	// MaxItems bounds the length of a list a template builds.
	MaxItems = 1 << 20
)

// state is one evaluation of a template.
type state struct {
	vars   Vars
	frames []map[string]any // local scopes, innermost last
	out    *strings.Builder
	steps  int
	blocks []string // text of the enclosing {% filter %} and {% set %} blocks
	// jsonText tells that the last string filter wrote JSON of a non-string,
	// which the typing of a whole-expression result keeps as text.
	jsonText bool
	// macroDepth counts the macro calls under way.
	macroDepth int32
}

func (s *state) step(n int) error {
	s.steps += n
	if s.steps > MaxSteps {
		return valueErr("template evaluation exceeded %d steps", MaxSteps)
	}
	return nil
}

// charge counts the work of processing n bytes or items.
func (s *state) charge(n int) error { return s.step(1 + n/64) }

// sizeOf is how many items or bytes an operation on v may go through.
func sizeOf(v any) int {
	switch x := v.(type) {
	case string:
		return len(x)
	case []any:
		return len(x)
	case tuple:
		return len(x)
	case map[string]any:
		return len(x)
	case *view:
		return len(x.items)
	case pyBytes:
		return len(x)
	case *pyDict:
		return len(x.keys)
	case List:
		return len(x)
	case *pyList:
		return len(x.items)
	}
	return 0
}

func checkLen(n int) error {
	if n > MaxOutput {
		return valueErr("a string longer than %d bytes", MaxOutput)
	}
	return nil
}

func checkItems(n int) error {
	if n > MaxItems {
		return valueErr("a list longer than %d items", MaxItems)
	}
	return nil
}

// writeValue writes a value's text (see boundedText).
func (s *state) writeValue(v any, asString bool) error {
	text, err := boundedText(v, asString)
	if err != nil {
		return err
	}
	return s.write(text)
}

func (s *state) write(text string) error {
	if s.out.Len()+len(text) > MaxOutput {
		return valueErr("output larger than %d bytes", MaxOutput)
	}
	s.out.WriteString(text)
	return nil
}

func (s *state) lookup(name string) any {
	v := s.lookupRaw(name)
	if o, ok := v.(*Object); ok {
		return o.Map
	}
	return v
}

// lookupRaw is lookup keeping an Object that a variable holds.
func (s *state) lookupRaw(name string) any {
	for i := len(s.frames) - 1; i >= 0; i-- {
		if v, ok := s.frames[i][name]; ok {
			return v
		}
	}
	if v, ok := s.vars[name]; ok {
		if o, ok := v.(*Object); ok {
			return o
		}
		return canon(v)
	}
	if g, ok := globals()[name]; ok {
		return g
	}
	return &undefined{hint: "'" + name + "' is undefined"}
}

func (s *state) assign(name string, v any) {
	if len(s.frames) == 0 {
		s.frames = append(s.frames, map[string]any{})
	}
	s.frames[len(s.frames)-1][name] = v
}

func (s *state) run(body []stmt) error {
	for _, st := range body {
		if err := st.exec(s); err != nil {
			return err
		}
	}
	return nil
}

// Statements.

func (d *dataStmt) exec(s *state) error { return s.write(d.text) }

func (o *outputStmt) exec(s *state) error {
	v, err := o.x.eval(s)
	if err != nil {
		return err
	}
	if err := s.step(1); err != nil {
		return err
	}
	return s.writeValue(v, true)
}

func (i *ifStmt) exec(s *state) error {
	if err := s.step(1); err != nil {
		return err
	}
	for n, t := range i.tests {
		v, err := t.eval(s)
		if err != nil {
			return err
		}
		if Truthy(v) {
			return s.run(i.bodies[n])
		}
	}
	return s.run(i.els)
}

func (f *forStmt) exec(s *state) error {
	v, err := f.iter.eval(s)
	if err != nil {
		return err
	}
	items, err := iterate(v)
	if err != nil {
		return err
	}
	s.frames = append(s.frames, map[string]any{})
	defer func() { s.frames = s.frames[:len(s.frames)-1] }()
	if f.filter != nil {
		var kept []any
		for _, it := range items {
			if err := s.step(1); err != nil {
				return err
			}
			if err := f.target.bind(s, it); err != nil {
				return err
			}
			ok, err := f.filter.eval(s)
			if err != nil {
				return err
			}
			if Truthy(ok) {
				kept = append(kept, it)
			}
		}
		items = kept
	}
	if len(items) == 0 {
		s.frames[len(s.frames)-1] = map[string]any{}
		return s.run(f.els)
	}
	loop := &loopInfo{items: items, depth: 1}
	if outer, ok := s.lookup("loop").(*loopInfo); ok {
		loop.depth = outer.depth + 1
	}
	for i, it := range items {
		if err := s.step(1); err != nil {
			return err
		}
		frame := s.frames[len(s.frames)-1]
		for k := range frame {
			delete(frame, k)
		}
		loop.index = i
		frame["loop"] = loop
		if err := f.target.bind(s, it); err != nil {
			return err
		}
		if err := s.run(f.body); err != nil {
			return err
		}
	}
	return nil
}

// bind assigns a loop item or a set value to the target.
func (t target) bind(s *state, v any) error {
	if !t.tuple {
		s.assign(t.names[0], v)
		return nil
	}
	items, err := iterate(v)
	if err != nil {
		return typeErr("cannot unpack non-iterable %s object", typeName(v))
	}
	if len(items) != len(t.names) {
		if len(items) > len(t.names) {
			return valueErr("too many values to unpack (expected %d)", len(t.names))
		}
		return valueErr("not enough values to unpack (expected %d, got %d)", len(t.names), len(items))
	}
	for i, n := range t.names {
		s.assign(n, items[i])
	}
	return nil
}

func (st *setStmt) exec(s *state) error {
	v, err := st.value.eval(s)
	if err != nil {
		return err
	}
	if err := s.step(1); err != nil {
		return err
	}
	if st.target.attr != "" {
		ns, ok := s.lookup(st.target.names[0]).(*namespace)
		if !ok {
			return valueErr("cannot assign attribute on non-namespace object")
		}
		ns.attrs[st.target.attr] = v
		return nil
	}
	return st.target.bind(s, v)
}

// capture renders body into a string of its own.
func (s *state) capture(body []stmt) (string, error) {
	saved := s.out
	var b strings.Builder
	s.out = &b
	s.frames = append(s.frames, map[string]any{})
	err := s.run(body)
	s.frames = s.frames[:len(s.frames)-1]
	s.out = saved
	if err == nil && saved.Len()+b.Len() > MaxOutput {
		err = valueErr("output larger than %d bytes", MaxOutput)
	}
	return b.String(), err
}

func (st *setBlockStmt) exec(s *state) error {
	text, err := s.capture(st.body)
	if err != nil {
		return err
	}
	var v any = text
	if st.chain != nil {
		s.blocks = append(s.blocks, text)
		v, err = st.chain.eval(s)
		s.blocks = s.blocks[:len(s.blocks)-1]
		if err != nil {
			return err
		}
	}
	s.assign(st.name, v)
	return nil
}

func (w *withStmt) exec(s *state) error {
	vals := make([]any, len(w.vals))
	for i, x := range w.vals {
		v, err := x.eval(s)
		if err != nil {
			return err
		}
		vals[i] = v
	}
	frame := map[string]any{}
	for i, n := range w.names {
		frame[n] = vals[i]
	}
	s.frames = append(s.frames, frame)
	err := s.run(w.body)
	s.frames = s.frames[:len(s.frames)-1]
	return err
}

func (f *filterStmt) exec(s *state) error {
	text, err := s.capture(f.body)
	if err != nil {
		return err
	}
	s.blocks = append(s.blocks, text)
	v, err := f.chain.eval(s)
	s.blocks = s.blocks[:len(s.blocks)-1]
	if err != nil {
		return err
	}
	return s.writeValue(v, false)
}

// Expressions.

func (b *blockText) eval(s *state) (any, error) { return s.blocks[len(s.blocks)-1], nil }

func (c *constExpr) eval(*state) (any, error) { return c.v, nil }

func (n *nameExpr) eval(s *state) (any, error) { return s.lookup(n.name), nil }

// value evaluates x for an operator, a filter or a test: a list the
// template made is read as its items then (pyList), as the value it holds
// at that moment.
func (s *state) value(x expr) (any, error) {
	v, err := x.eval(s)
	if l, ok := v.(*pyList); ok {
		return l.items, err
	}
	return v, err
}

func (a *attrExpr) eval(s *state) (any, error) {
	v, err := s.operand(a.x)
	if err != nil {
		return nil, err
	}
	if o, ok := v.(*Object); ok {
		return o.attr(a.name)
	}
	return getattr(v, a.name)
}

func (it *itemExpr) eval(s *state) (any, error) {
	v, err := s.operand(it.x)
	if err != nil {
		return nil, err
	}
	k, err := it.key.eval(s)
	if err != nil {
		return nil, err
	}
	if o, ok := v.(*Object); ok {
		return o.item(k)
	}
	return getitem(v, k)
}

func (sl *sliceExpr) eval(s *state) (any, error) {
	v, err := sl.x.eval(s)
	if err != nil {
		return nil, err
	}
	var bounds [3]any
	for i, x := range []expr{sl.lo, sl.hi, sl.stepExp} {
		if x == nil {
			continue
		}
		if bounds[i], err = x.eval(s); err != nil {
			return nil, err
		}
	}
	if err := s.charge(sizeOf(v)); err != nil {
		return nil, err
	}
	return slice(v, bounds[0], bounds[1], bounds[2])
}

func (c *callExpr) eval(s *state) (any, error) {
	if err := s.step(1); err != nil {
		return nil, err
	}
	if a, ok := c.fn.(*attrExpr); ok {
		recv, err := a.x.eval(s)
		if err != nil {
			return nil, err
		}
		if m := findMethod(recv, a.name); m != nil {
			args, err := c.args.eval(s)
			if err != nil {
				return nil, err
			}
			if err := s.charge(sizeOf(recv)); err != nil {
				return nil, err
			}
			return s.produced(m(s, recv, args))
		}
		fn, err := getattr(recv, a.name)
		if err != nil {
			return nil, err
		}
		return s.callValue(fn, c.args)
	}
	fn, err := c.fn.eval(s)
	if err != nil {
		return nil, err
	}
	return s.callValue(fn, c.args)
}

func (s *state) callValue(fn any, ca callArgs) (any, error) {
	switch f := fn.(type) {
	case *undefined:
		return nil, f.err()
	case *callable:
		args, err := ca.eval(s)
		if err != nil {
			return nil, err
		}
		if f.name != "namespace" && f.name != "dict" {
			args.settle() // namespace(l=[]) and dict(l=[]) hold the list itself
		}
		return s.produced(f.fn(s, args))
	case *boundMethod:
		args, err := ca.eval(s)
		if err != nil {
			return nil, err
		}
		return s.produced(f.fn(s, f.recv, args))
	}
	return nil, typeErr("'%s' object is not callable", typeName(fn))
}

func (f *filterExpr) eval(s *state) (any, error) {
	in, err := s.value(f.x)
	if err != nil {
		return nil, err
	}
	args, err := f.args.eval(s)
	if err != nil {
		return nil, err
	}
	args.settle()
	if err := s.charge(sizeOf(in)); err != nil {
		return nil, err
	}
	out, err := s.produced(f.f(s, in, args))
	if err != nil && kindOf(err) == kindType && !strings.HasPrefix(err.Error(), "filter ") {
		err = typeErr("filter %s: %s", f.name, err)
	}
	return out, err
}

// produced bounds what a function, a method or a filter gave, whichever it
// is: a string or bytes longer than MaxOutput, or a list longer than
// MaxItems, is an error, and what it made counts in the steps (as what it
// read did), so that no function escapes the bounds on its own.
func (s *state) produced(v any, err error) (any, error) {
	if err != nil {
		return v, err
	}
	switch x := v.(type) {
	case string:
		err = checkLen(len(x))
	case pyBytes:
		err = checkLen(len(x))
	case []any, tuple, List:
		err = checkItems(sizeOf(x))
	}
	if err != nil {
		return nil, err
	}
	return v, s.charge(sizeOf(v))
}

func (t *testExpr) eval(s *state) (any, error) {
	in, err := s.value(t.x)
	if err != nil {
		return nil, err
	}
	args, err := t.args.eval(s)
	if err != nil {
		return nil, err
	}
	args.settle()
	size := sizeOf(in)
	if len(args.pos) > 0 {
		size += sizeOf(args.pos[0])
	}
	if err := s.charge(size); err != nil {
		return nil, err
	}
	return t.t(s, in, args)
}

func (u *unaryExpr) eval(s *state) (any, error) {
	v, err := s.value(u.x)
	if err != nil {
		return nil, err
	}
	switch u.op {
	case "not":
		return !Truthy(v), nil
	case "-":
		return neg(v)
	}
	return pos(v)
}

func (b *binaryExpr) eval(s *state) (any, error) {
	l, err := s.value(b.l)
	if err != nil {
		return nil, err
	}
	r, err := s.value(b.r)
	if err != nil {
		return nil, err
	}
	return binary(s, b.op, l, r)
}

func (c *concatExpr) eval(s *state) (any, error) {
	var b strings.Builder
	for _, p := range c.parts {
		v, err := p.eval(s)
		if err != nil {
			return nil, err
		}
		text, err := boundedText(v, false)
		if err != nil {
			return nil, err
		}
		b.WriteString(text)
		if err := checkLen(b.Len()); err != nil {
			return nil, err
		}
	}
	return b.String(), s.charge(b.Len())
}

func (a *andExpr) eval(s *state) (any, error) {
	l, err := a.l.eval(s)
	if err != nil || !Truthy(l) {
		return l, err
	}
	return a.r.eval(s)
}

func (o *orExpr) eval(s *state) (any, error) {
	l, err := o.l.eval(s)
	if err != nil || Truthy(l) {
		return l, err
	}
	return o.r.eval(s)
}

func (c *compareExpr) eval(s *state) (any, error) {
	l, err := s.value(c.first)
	if err != nil {
		return nil, err
	}
	for _, op := range c.ops {
		r, err := s.value(op.x)
		if err != nil {
			return nil, err
		}
		if err := s.charge(sizeOf(l) + sizeOf(r)); err != nil {
			return nil, err
		}
		ok, err := compareOp(op.op, l, r)
		if err != nil || !ok {
			return false, err
		}
		l = r
	}
	return true, nil
}

func (c *condExpr) eval(s *state) (any, error) {
	t, err := c.test.eval(s)
	if err != nil {
		return nil, err
	}
	if Truthy(t) {
		return c.then.eval(s)
	}
	if c.other == nil {
		return &undefined{hint: "the inline if-expression evaluated to false and no else section was defined"}, nil
	}
	return c.other.eval(s)
}

func (l *listExpr) eval(s *state) (any, error) {
	out := make([]any, len(l.items))
	for i, x := range l.items {
		v, err := x.eval(s)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return &pyList{items: out}, nil
}

func (t *tupleExpr) eval(s *state) (any, error) {
	out := make(tuple, len(t.items))
	for i, x := range t.items {
		v, err := x.eval(s)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

func (d *dictExpr) eval(s *state) (any, error) {
	keys, vals := make([]any, len(d.keys)), make([]any, len(d.keys))
	allStrings := true
	for i, kx := range d.keys {
		k, err := s.value(kx)
		if err != nil {
			return nil, err
		}
		if vals[i], err = d.vals[i].eval(s); err != nil {
			return nil, err
		}
		if _, err := dictKey(k); err != nil {
			return nil, err
		}
		_, isStr := k.(string)
		keys[i], allStrings = k, allStrings && isStr
	}
	if !allStrings {
		out := &pyDict{}
		for i, k := range keys {
			out.set(k, vals[i])
		}
		return out, nil
	}
	out := make(map[string]any, len(keys))
	for i, k := range keys {
		out[k.(string)] = vals[i]
	}
	return out, nil
}

// dictKey is the key a value has in a dict: strings as they are, other
// hashable values by their text.
func dictKey(k any) (string, error) {
	switch x := k.(type) {
	case string:
		return x, nil
	case []any, map[string]any, *view, *pyDict:
		return "", typeErr("unhashable type: '%s'", typeName(k))
	case *undefined:
		return "", x.err()
	}
	return pyStr(k), nil
}

// args are the evaluated arguments of a call.
type args struct {
	pos   []any
	names []string
	kw    []any
}

// settle reads each list the template made among the arguments as its
// items, for a filter, a test or a function; a method's arguments stay as
// they are (l.append(other) holds the other list itself, as Python does).
func (a *args) settle() {
	for _, vs := range [][]any{a.pos, a.kw} {
		for i, v := range vs {
			if l, ok := v.(*pyList); ok {
				vs[i] = l.items
			}
		}
	}
}

func (ca *callArgs) eval(s *state) (*args, error) {
	if len(ca.pos) == 0 && !ca.hasKwargs && ca.star == nil && ca.starStar == nil {
		return &args{}, nil
	}
	a := &args{pos: make([]any, 0, len(ca.pos)), names: ca.names}
	for _, x := range ca.pos {
		v, err := x.eval(s)
		if err != nil {
			return nil, err
		}
		a.pos = append(a.pos, v)
	}
	if ca.star != nil {
		v, err := ca.star.eval(s)
		if err != nil {
			return nil, err
		}
		items, err := iterate(v)
		if err != nil {
			return nil, err
		}
		a.pos = append(a.pos, items...)
	}
	for _, x := range ca.kw {
		v, err := x.eval(s)
		if err != nil {
			return nil, err
		}
		a.kw = append(a.kw, v)
	}
	if ca.starStar != nil {
		v, err := ca.starStar.eval(s)
		if err != nil {
			return nil, err
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, typeErr("argument after ** must be a mapping, not %s", typeName(v))
		}
		a.names = append([]string{}, a.names...)
		for _, k := range SortedKeys(m) {
			a.names = append(a.names, k)
			a.kw = append(a.kw, m[k])
		}
	}
	return a, nil
}

// get returns the argument at position i or named name.
func (a *args) get(i int, name string) (any, bool) {
	for j, n := range a.names {
		if n == name {
			return a.kw[j], true
		}
	}
	if i >= 0 && i < len(a.pos) {
		return a.pos[i], true
	}
	return nil, false
}

// check refuses more positional arguments than max and unknown names.
func (a *args) check(fn string, max int, names ...string) error {
	if len(a.pos) > max {
		return typeErr("%s() takes at most %d arguments (%d given)", fn, max, len(a.pos))
	}
	for j, n := range a.names {
		ok := false
		for i, k := range names {
			if k == n {
				ok = true
				if i < len(a.pos) {
					return typeErr("%s() got multiple values for argument '%s'", fn, n)
				}
			}
		}
		if !ok {
			return typeErr("%s() got an unexpected keyword argument '%s'", fn, a.names[j])
		}
	}
	return nil
}
