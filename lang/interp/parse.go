package interp

import (
	"fmt"
	"strings"
)

// maxNesting bounds how deeply expressions and blocks nest.
const maxNesting = 64

// parser builds the syntax tree with Jinja's grammar, and notes the names a
// template reads before (or without) setting them: the reference refuses a
// template whose undeclared names the context does not hold.
type parser struct {
	toks       []token
	i          int
	depth      int
	scopes     []map[string]bool
	undeclared []string
}

func parseTemplate(src string) ([]stmt, []string, error) {
	toks, err := lex(src)
	if err != nil {
		return nil, nil, err
	}
	p := &parser{toks: toks, scopes: []map[string]bool{{}}}
	body, end, err := p.body()
	if err != nil {
		return nil, nil, err
	}
	if end != "" {
		return nil, nil, p.fail("encountered unknown tag %q", end)
	}
	return body, p.undeclared, nil
}

func (p *parser) cur() token  { return p.toks[p.i] }
func (p *parser) peek() token { return p.toks[min(p.i+1, len(p.toks)-1)] }
func (p *parser) next() token {
	t := p.toks[p.i]
	if p.i < len(p.toks)-1 {
		p.i++
	}
	return t
}

func (p *parser) fail(format string, args ...any) error {
	return fmt.Errorf("%s", fmt.Sprintf(format, args...))
}

func (p *parser) isOp(op string) bool {
	t := p.cur()
	return t.kind == tOp && t.val == op
}

func (p *parser) isName(name string) bool {
	t := p.cur()
	return t.kind == tName && t.val == name
}

func (p *parser) expectOp(op string) error {
	if !p.isOp(op) {
		return p.fail("expected %q, got %s", op, describe(p.cur()))
	}
	p.next()
	return nil
}

func (p *parser) expectName(name string) error {
	if !p.isName(name) {
		return p.fail("expected %q, got %s", name, describe(p.cur()))
	}
	p.next()
	return nil
}

func (p *parser) expectKind(k tokKind, what string) error {
	if p.cur().kind != k {
		return p.fail("expected %s, got %s", what, describe(p.cur()))
	}
	p.next()
	return nil
}

func describe(t token) string {
	switch t.kind {
	case tEOF:
		return "end of template"
	case tVarEnd:
		return "end of print statement"
	case tBlockEnd:
		return "end of statement block"
	case tName:
		return fmt.Sprintf("%q", t.val)
	case tString:
		return "string"
	case tInt, tFloat:
		return "number"
	case tOp:
		return fmt.Sprintf("%q", t.val)
	}
	return "template data"
}

// Scopes, for the undeclared names.

func (p *parser) push() { p.scopes = append(p.scopes, map[string]bool{}) }
func (p *parser) pop()  { p.scopes = p.scopes[:len(p.scopes)-1] }
func (p *parser) declare(names ...string) {
	for _, n := range names {
		p.scopes[len(p.scopes)-1][n] = true
	}
}

func (p *parser) load(name string) {
	for _, s := range p.scopes {
		if s[name] {
			return
		}
	}
	if _, ok := globals()[name]; ok {
		return
	}
	for _, u := range p.undeclared {
		if u == name {
			return
		}
	}
	p.undeclared = append(p.undeclared, name)
}

func (p *parser) enter() error {
	p.depth++
	if p.depth > maxNesting {
		return p.fail("template nests deeper than %d levels", maxNesting)
	}
	return nil
}

func (p *parser) leave() { p.depth-- }

// Statements.

// body parses statements up to an {% end... %}-like tag it does not know,
// whose name it returns after consuming it (the caller reads the rest).
func (p *parser) body() ([]stmt, string, error) {
	if err := p.enter(); err != nil {
		return nil, "", err
	}
	defer p.leave()
	var out []stmt
	for {
		t := p.cur()
		switch t.kind {
		case tEOF:
			return out, "", nil
		case tData:
			p.next()
			out = append(out, &dataStmt{text: t.val})
		case tVarBegin:
			p.next()
			x, err := p.tuple(false, true)
			if err != nil {
				return nil, "", err
			}
			if err := p.expectKind(tVarEnd, "end of print statement"); err != nil {
				return nil, "", err
			}
			out = append(out, &outputStmt{x: x})
		case tBlockBegin:
			p.next()
			name := p.cur()
			if name.kind != tName {
				return nil, "", p.fail("tag name expected")
			}
			s, err := p.statement(name.val)
			if err != nil {
				return nil, "", err
			}
			if s == nil {
				p.next()
				return out, name.val, nil
			}
			out = append(out, s)
		default:
			return nil, "", p.fail("unexpected %s", describe(t))
		}
	}
}

// refusedTag tells whether a Jinja tag is refused at load: file access and
// blocks.
func refusedTag(name string) bool {
	switch name {
	case "include", "import", "from", "extends", "block", "autoescape":
		return true
	}
	return false
}

// statement parses the tag named name, or returns nil for a tag that ends
// the enclosing block.
func (p *parser) statement(name string) (stmt, error) {
	switch name {
	case "for":
		p.next()
		return p.forStmt()
	case "if":
		p.next()
		return p.ifStmt()
	case "set":
		p.next()
		return p.setStmt()
	case "with":
		p.next()
		return p.withStmt()
	case "filter":
		p.next()
		return p.filterStmt()
	case "macro":
		p.next()
		return p.macroStmt()
	case "call":
		p.next()
		return p.callStmt()
	case "elif", "else", "endif", "endfor", "endset", "endwith", "endfilter", "endmacro", "endcall":
		return nil, nil
	}
	if refusedTag(name) {
		return nil, p.fail("{%% %s %%} is not allowed: templates may not load files", name)
	}
	return nil, p.fail("encountered unknown tag %q", name)
}

// block parses a body that must end with one of ends.
func (p *parser) block(ends ...string) ([]stmt, string, error) {
	body, end, err := p.body()
	if err != nil {
		return nil, "", err
	}
	for _, e := range ends {
		if end == e {
			return body, end, nil
		}
	}
	if end == "" {
		return nil, "", p.fail("unexpected end of template: expected {%% %s %%}", strings.Join(ends, " %} or {% "))
	}
	return nil, "", p.fail("unexpected {%% %s %%}: expected {%% %s %%}", end, strings.Join(ends, " %} or {% "))
}

func (p *parser) endTag() error { return p.expectKind(tBlockEnd, "end of statement block") }

// bodyTag ends a tag that opens a body ({% for ... %}, {% if ... %},
// {% else %}...), after a colon if there is one: Jinja's parse_statements
// skips it "for Python compatibility" ({% for p in projects: %}, gitlab's).
func (p *parser) bodyTag() error {
	if p.isOp(":") {
		p.next()
	}
	return p.endTag()
}

func (p *parser) forStmt() (stmt, error) {
	tg, err := p.assignTarget(false, "in")
	if err != nil {
		return nil, err
	}
	if err := p.expectName("in"); err != nil {
		return nil, err
	}
	iter, err := p.tuple(true, false, "recursive")
	if err != nil {
		return nil, err
	}
	s := &forStmt{target: tg, iter: iter}
	p.push()
	defer p.pop()
	p.declare(tg.names...)
	p.declare("loop")
	if p.isName("if") {
		p.next()
		if s.filter, err = p.expression(true); err != nil {
			return nil, err
		}
	}
	if p.isName("recursive") {
		return nil, p.fail("recursive loops are not supported")
	}
	if err := p.bodyTag(); err != nil {
		return nil, err
	}
	body, end, err := p.block("endfor", "else")
	if err != nil {
		return nil, err
	}
	s.body = body
	if end == "else" {
		if err := p.bodyTag(); err != nil {
			return nil, err
		}
		p.pop()
		p.push()
		if s.els, _, err = p.block("endfor"); err != nil {
			return nil, err
		}
	}
	return s, p.endTag()
}

func (p *parser) ifStmt() (stmt, error) {
	s := &ifStmt{}
	for {
		test, err := p.tuple(true, false)
		if err != nil {
			return nil, err
		}
		if err := p.bodyTag(); err != nil {
			return nil, err
		}
		p.push()
		body, end, err := p.block("elif", "else", "endif")
		p.pop()
		if err != nil {
			return nil, err
		}
		s.tests = append(s.tests, test)
		s.bodies = append(s.bodies, body)
		switch end {
		case "elif":
			continue
		case "else":
			if err := p.bodyTag(); err != nil {
				return nil, err
			}
			p.push()
			s.els, _, err = p.block("endif")
			p.pop()
			if err != nil {
				return nil, err
			}
		}
		return s, p.endTag()
	}
}

func (p *parser) setStmt() (stmt, error) {
	if p.cur().kind == tName && p.peek().kind == tOp && p.peek().val == "." {
		ns := p.next().val
		p.load(ns)
		p.next()
		if p.cur().kind != tName {
			return nil, p.fail("expected an attribute name after %q", ns+".")
		}
		attr := p.next().val
		if err := p.expectOp("="); err != nil {
			return nil, err
		}
		v, err := p.tuple(false, true)
		if err != nil {
			return nil, err
		}
		return &setStmt{target: target{names: []string{ns}, attr: attr}, value: v}, p.endTag()
	}
	tg, err := p.assignTarget(true, "")
	if err != nil {
		return nil, err
	}
	if p.isOp("=") {
		p.next()
		v, err := p.tuple(false, true)
		if err != nil {
			return nil, err
		}
		p.declare(tg.names...)
		return &setStmt{target: tg, value: v}, p.endTag()
	}
	if tg.tuple {
		return nil, p.fail("a block {%% set %%} assigns one name")
	}
	s := &setBlockStmt{name: tg.names[0]}
	if p.isOp("|") {
		if s.chain, err = p.filters(&blockText{}, false); err != nil {
			return nil, err
		}
	}
	if err := p.bodyTag(); err != nil {
		return nil, err
	}
	p.push()
	s.body, _, err = p.block("endset")
	p.pop()
	if err != nil {
		return nil, err
	}
	p.declare(s.name)
	return s, p.endTag()
}

// macroStmt parses {% macro name(a, b=default) %}...{% endmacro %}. Names
// the body reads that are neither its parameters nor set before are the
// template's, except varargs and kwargs, which make the macro take extra
// arguments.
func (p *parser) macroStmt() (stmt, error) {
	if p.cur().kind != tName {
		return nil, p.fail("expected a macro name, got %s", describe(p.cur()))
	}
	name := p.next().val
	if err := p.expectOp("("); err != nil {
		return nil, err
	}
	m, err := p.macroParams(name)
	if err != nil {
		return nil, err
	}
	p.declare(m.name)
	if err := p.macroBody(m, "endmacro"); err != nil {
		return nil, err
	}
	return m, p.endTag()
}

// callStmt parses {% call(params) macro(args) %}...{% endcall %}: the macro
// is called with caller, a macro whose body is the block's.
func (p *parser) callStmt() (stmt, error) {
	c := &macroStmt{name: "caller"}
	if p.isOp("(") {
		p.next()
		var err error
		if c, err = p.macroParams("caller"); err != nil {
			return nil, err
		}
	}
	x, err := p.expression(true)
	if err != nil {
		return nil, err
	}
	call, ok := x.(*callExpr)
	if !ok {
		return nil, p.fail("expected a call in {%% call %%}")
	}
	if err := p.macroBody(c, "endcall"); err != nil {
		return nil, err
	}
	return &callBlockStmt{call: call, caller: c}, p.endTag()
}

// macroParams parses a macro's parameters after its "(".
func (p *parser) macroParams(name string) (*macroStmt, error) {
	m := &macroStmt{name: name}
	for !p.isOp(")") {
		if len(m.params) > 0 {
			if err := p.expectOp(","); err != nil {
				return nil, err
			}
			if p.isOp(")") {
				break
			}
		}
		if p.cur().kind != tName {
			return nil, p.fail("expected a parameter name, got %s", describe(p.cur()))
		}
		m.params = append(m.params, p.next().val)
		var def expr
		if p.isOp("=") {
			p.next()
			var err error
			if def, err = p.expression(true); err != nil {
				return nil, err
			}
		} else if len(m.defaults) > 0 && m.defaults[len(m.defaults)-1] != nil {
			return nil, p.fail("non-default argument follows default argument")
		}
		m.defaults = append(m.defaults, def)
	}
	p.next()
	return m, nil
}

// macroBody parses the end of a macro's tag and its body, up to end.
func (p *parser) macroBody(m *macroStmt, end string) error {
	if err := p.bodyTag(); err != nil {
		return err
	}
	p.push()
	p.declare(m.params...)
	seen := len(p.undeclared)
	body, _, err := p.block(end)
	p.pop()
	if err != nil {
		return err
	}
	kept := append([]string(nil), p.undeclared[:seen]...)
	for _, name := range p.undeclared[seen:] {
		switch name {
		case "varargs":
			m.varargs = true
		case "kwargs":
			m.kwargs = true
		case "caller":
			m.caller = true
		default:
			kept = append(kept, name)
		}
	}
	p.undeclared = kept
	m.body = body
	return nil
}

func (p *parser) withStmt() (stmt, error) {
	s := &withStmt{}
	for p.cur().kind != tBlockEnd {
		if len(s.names) > 0 {
			if err := p.expectOp(","); err != nil {
				return nil, err
			}
		}
		if p.cur().kind != tName {
			return nil, p.fail("expected a name in {%% with %%}, got %s", describe(p.cur()))
		}
		name := p.next().val
		if err := p.expectOp("="); err != nil {
			return nil, err
		}
		v, err := p.expression(true)
		if err != nil {
			return nil, err
		}
		s.names = append(s.names, name)
		s.vals = append(s.vals, v)
	}
	if err := p.bodyTag(); err != nil {
		return nil, err
	}
	p.push()
	p.declare(s.names...)
	body, _, err := p.block("endwith")
	p.pop()
	if err != nil {
		return nil, err
	}
	s.body = body
	return s, p.endTag()
}

func (p *parser) filterStmt() (stmt, error) {
	chain, err := p.filters(&blockText{}, true)
	if err != nil {
		return nil, err
	}
	if err := p.bodyTag(); err != nil {
		return nil, err
	}
	p.push()
	body, _, err := p.block("endfilter")
	p.pop()
	if err != nil {
		return nil, err
	}
	return &filterStmt{chain: chain, body: body}, p.endTag()
}

// assignTarget reads a name or a tuple of names.
func (p *parser) assignTarget(withTuple bool, endName string) (target, error) {
	var tg target
	paren := p.isOp("(")
	if paren {
		p.next()
	}
	for {
		if p.cur().kind != tName {
			return tg, p.fail("can't assign to %s", describe(p.cur()))
		}
		tg.names = append(tg.names, p.next().val)
		if !p.isOp(",") {
			break
		}
		tg.tuple = true
		p.next()
		if (paren && p.isOp(")")) || (endName != "" && p.isName(endName)) || p.isOp("=") || p.cur().kind == tBlockEnd {
			break
		}
	}
	if paren {
		if err := p.expectOp(")"); err != nil {
			return tg, err
		}
		tg.tuple = tg.tuple || len(tg.names) > 1
	}
	_ = withTuple
	return tg, nil
}

// Expressions.

func (p *parser) tupleEnd(extra []string) bool {
	t := p.cur()
	switch t.kind {
	case tVarEnd, tBlockEnd, tEOF:
		return true
	case tOp:
		return t.val == ")"
	case tName:
		for _, e := range extra {
			if t.val == e {
				return true
			}
		}
	}
	return false
}

// tuple parses an expression, or several separated by commas as a tuple.
func (p *parser) tuple(noCond, explicitOK bool, extraEnd ...string) (expr, error) {
	var items []expr
	isTuple := false
	for {
		if len(items) > 0 {
			if err := p.expectOp(","); err != nil {
				return nil, err
			}
		}
		if p.tupleEnd(extraEnd) {
			break
		}
		x, err := p.expression(!noCond)
		if err != nil {
			return nil, err
		}
		items = append(items, x)
		if !p.isOp(",") {
			break
		}
		isTuple = true
	}
	if !isTuple {
		if len(items) > 0 {
			return items[0], nil
		}
		if !explicitOK {
			return nil, p.fail("expected an expression, got %s", describe(p.cur()))
		}
		return nil, p.fail("expected an expression, got %s", describe(p.cur()))
	}
	return &tupleExpr{items: items}, nil
}

func (p *parser) expression(withCond bool) (expr, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	if !withCond {
		return p.or()
	}
	x, err := p.or()
	if err != nil {
		return nil, err
	}
	for p.isName("if") {
		p.next()
		test, err := p.or()
		if err != nil {
			return nil, err
		}
		var other expr
		if p.isName("else") {
			p.next()
			if other, err = p.expression(true); err != nil {
				return nil, err
			}
		}
		x = &condExpr{test: test, then: x, other: other}
	}
	return x, nil
}

func (p *parser) or() (expr, error) {
	x, err := p.and()
	for err == nil && p.isName("or") {
		p.next()
		var r expr
		if r, err = p.and(); err == nil {
			x = &orExpr{l: x, r: r}
		}
	}
	return x, err
}

func (p *parser) and() (expr, error) {
	x, err := p.not()
	for err == nil && p.isName("and") {
		p.next()
		var r expr
		if r, err = p.not(); err == nil {
			x = &andExpr{l: x, r: r}
		}
	}
	return x, err
}

func (p *parser) not() (expr, error) {
	if p.isName("not") {
		p.next()
		if err := p.enter(); err != nil {
			return nil, err
		}
		defer p.leave()
		x, err := p.not()
		if err != nil {
			return nil, err
		}
		return &unaryExpr{op: "not", x: x}, nil
	}
	return p.compare()
}

// comparisonName is the name of a comparison operator ("": not one).
func comparisonName(op string) string {
	switch op {
	case "==":
		return "eq"
	case "!=":
		return "ne"
	case "<":
		return "lt"
	case "<=":
		return "lteq"
	case ">":
		return "gt"
	case ">=":
		return "gteq"
	}
	return ""
}

func (p *parser) compare() (expr, error) {
	x, err := p.math1()
	if err != nil {
		return nil, err
	}
	var ops []cmpOp
	for {
		t := p.cur()
		var op string
		switch {
		case t.kind == tOp && comparisonName(t.val) != "":
			op = comparisonName(t.val)
			p.next()
		case p.isName("in"):
			op = "in"
			p.next()
		case p.isName("not") && p.peek().kind == tName && p.peek().val == "in":
			op = "notin"
			p.next()
			p.next()
		default:
			if len(ops) == 0 {
				return x, nil
			}
			return &compareExpr{first: x, ops: ops}, nil
		}
		r, err := p.math1()
		if err != nil {
			return nil, err
		}
		ops = append(ops, cmpOp{op: op, x: r})
	}
}

func (p *parser) binaryLoop(next func() (expr, error), ops ...string) (expr, error) {
	x, err := next()
	if err != nil {
		return nil, err
	}
	for {
		t := p.cur()
		found := false
		for _, op := range ops {
			if t.kind == tOp && t.val == op {
				found = true
			}
		}
		if !found {
			return x, nil
		}
		p.next()
		r, err := next()
		if err != nil {
			return nil, err
		}
		x = &binaryExpr{op: t.val, l: x, r: r}
	}
}

func (p *parser) math1() (expr, error) { return p.binaryLoop(p.concat, "+", "-") }

func (p *parser) concat() (expr, error) {
	x, err := p.math2()
	if err != nil || !p.isOp("~") {
		return x, err
	}
	parts := []expr{x}
	for p.isOp("~") {
		p.next()
		r, err := p.math2()
		if err != nil {
			return nil, err
		}
		parts = append(parts, r)
	}
	return &concatExpr{parts: parts}, nil
}

func (p *parser) math2() (expr, error) { return p.binaryLoop(p.pow, "*", "/", "//", "%") }

func (p *parser) pow() (expr, error) {
	return p.binaryLoop(func() (expr, error) { return p.unary(true) }, "**")
}

func (p *parser) unary(withFilter bool) (expr, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	var x expr
	var err error
	switch {
	case p.isOp("-") || p.isOp("+"):
		op := p.next().val
		inner, err := p.unary(false)
		if err != nil {
			return nil, err
		}
		x = &unaryExpr{op: op, x: inner}
	default:
		if x, err = p.primary(); err != nil {
			return nil, err
		}
	}
	if x, err = p.postfix(x); err != nil {
		return nil, err
	}
	if withFilter {
		return p.filterExprs(x)
	}
	return x, nil
}

func (p *parser) primary() (expr, error) {
	t := p.cur()
	switch t.kind {
	case tName:
		p.next()
		switch t.val {
		case "true", "True":
			return &constExpr{v: true}, nil
		case "false", "False":
			return &constExpr{v: false}, nil
		case "none", "None":
			return &constExpr{v: nil}, nil
		}
		p.load(t.val)
		return &nameExpr{name: t.val}, nil
	case tString:
		var b strings.Builder
		for p.cur().kind == tString {
			b.WriteString(p.next().val)
		}
		return &constExpr{v: b.String()}, nil
	case tInt, tFloat:
		p.next()
		return &constExpr{v: t.num}, nil
	case tOp:
		switch t.val {
		case "(":
			p.next()
			if p.isOp(")") {
				p.next()
				return &constExpr{v: tuple{}}, nil
			}
			x, err := p.tuple(false, true)
			if err != nil {
				return nil, err
			}
			return x, p.expectOp(")")
		case "[":
			p.next()
			l := &listExpr{}
			for !p.isOp("]") {
				if len(l.items) > 0 {
					if err := p.expectOp(","); err != nil {
						return nil, err
					}
					if p.isOp("]") {
						break
					}
				}
				x, err := p.expression(true)
				if err != nil {
					return nil, err
				}
				l.items = append(l.items, x)
			}
			p.next()
			return l, nil
		case "{":
			p.next()
			d := &dictExpr{}
			for !p.isOp("}") {
				if len(d.keys) > 0 {
					if err := p.expectOp(","); err != nil {
						return nil, err
					}
					if p.isOp("}") {
						break
					}
				}
				k, err := p.expression(true)
				if err != nil {
					return nil, err
				}
				if err := p.expectOp(":"); err != nil {
					return nil, err
				}
				v, err := p.expression(true)
				if err != nil {
					return nil, err
				}
				d.keys = append(d.keys, k)
				d.vals = append(d.vals, v)
			}
			p.next()
			return d, nil
		}
	}
	return nil, p.fail("unexpected %s", describe(t))
}

func (p *parser) postfix(x expr) (expr, error) {
	for {
		var err error
		switch {
		case p.isOp(".") || p.isOp("["):
			x, err = p.subscript(x)
		case p.isOp("("):
			x, err = p.call(x)
		default:
			return x, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

func (p *parser) filterExprs(x expr) (expr, error) {
	for {
		var err error
		switch {
		case p.isOp("|"):
			x, err = p.filters(x, false)
		case p.isName("is"):
			x, err = p.test(x)
		case p.isOp("("):
			x, err = p.call(x)
		default:
			return x, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

func (p *parser) subscript(x expr) (expr, error) {
	t := p.next()
	if t.val == "." {
		a := p.next()
		switch a.kind {
		case tName:
			return &attrExpr{x: x, name: a.val}, nil
		case tInt:
			return &itemExpr{x: x, key: &constExpr{v: a.num}}, nil
		}
		return nil, p.fail("expected name or number after '.'")
	}
	var args []expr
	for !p.isOp("]") {
		if len(args) > 0 {
			if err := p.expectOp(","); err != nil {
				return nil, err
			}
		}
		a, err := p.subscribed(x)
		if err != nil {
			return nil, err
		}
		args = append(args, a)
	}
	p.next()
	switch len(args) {
	case 0:
		return nil, p.fail("expected subscript expression")
	case 1:
		if s, ok := args[0].(*sliceExpr); ok {
			return s, nil
		}
		return &itemExpr{x: x, key: args[0]}, nil
	}
	return &itemExpr{x: x, key: &tupleExpr{items: args}}, nil
}

// subscribed reads an index or a slice a:b:c.
func (p *parser) subscribed(x expr) (expr, error) {
	var parts [3]expr
	if !p.isOp(":") {
		e, err := p.expression(true)
		if err != nil {
			return nil, err
		}
		if !p.isOp(":") {
			return e, nil
		}
		parts[0] = e
	}
	p.next()
	if !p.isOp(":") && !p.isOp("]") && !p.isOp(",") {
		e, err := p.expression(true)
		if err != nil {
			return nil, err
		}
		parts[1] = e
	}
	if p.isOp(":") {
		p.next()
		if !p.isOp("]") && !p.isOp(",") {
			e, err := p.expression(true)
			if err != nil {
				return nil, err
			}
			parts[2] = e
		}
	}
	return &sliceExpr{x: x, lo: parts[0], hi: parts[1], stepExp: parts[2]}, nil
}

func (p *parser) callArgs() (callArgs, error) {
	var a callArgs
	if err := p.expectOp("("); err != nil {
		return a, err
	}
	first := true
	for !p.isOp(")") {
		if !first {
			if err := p.expectOp(","); err != nil {
				return a, err
			}
			if p.isOp(")") {
				break
			}
		}
		first = false
		switch {
		case p.isOp("*"):
			if a.star != nil || a.starStar != nil {
				return a, p.fail("invalid syntax for function call expression")
			}
			p.next()
			x, err := p.expression(true)
			if err != nil {
				return a, err
			}
			a.star = x
		case p.isOp("**"):
			if a.starStar != nil {
				return a, p.fail("invalid syntax for function call expression")
			}
			p.next()
			x, err := p.expression(true)
			if err != nil {
				return a, err
			}
			a.starStar = x
		case p.cur().kind == tName && p.peek().kind == tOp && p.peek().val == "=":
			if a.starStar != nil {
				return a, p.fail("invalid syntax for function call expression")
			}
			name := p.next().val
			p.next()
			x, err := p.expression(true)
			if err != nil {
				return a, err
			}
			a.names = append(a.names, name)
			a.kw = append(a.kw, x)
			a.hasKwargs = true
		default:
			if a.star != nil || a.starStar != nil || len(a.kw) > 0 {
				return a, p.fail("invalid syntax for function call expression")
			}
			x, err := p.expression(true)
			if err != nil {
				return a, err
			}
			a.pos = append(a.pos, x)
		}
	}
	p.next()
	return a, nil
}

func (p *parser) call(fn expr) (expr, error) {
	a, err := p.callArgs()
	if err != nil {
		return nil, err
	}
	return &callExpr{fn: fn, args: a}, nil
}

func (p *parser) dottedName() (string, error) {
	if p.cur().kind != tName {
		return "", p.fail("expected a name, got %s", describe(p.cur()))
	}
	name := p.next().val
	for p.isOp(".") {
		p.next()
		if p.cur().kind != tName {
			return "", p.fail("expected a name, got %s", describe(p.cur()))
		}
		name += "." + p.next().val
	}
	return name, nil
}

// filters parses `| name(args) | ...`; inline starts right at a name (the
// {% filter %} tag).
func (p *parser) filters(x expr, inline bool) (expr, error) {
	for p.isOp("|") || inline {
		if !inline {
			p.next()
		}
		inline = false
		name, err := p.dottedName()
		if err != nil {
			return nil, err
		}
		f, ok := filterFuncs()[name]
		if !ok {
			return nil, p.fail("no filter named %q", name)
		}
		fx := &filterExpr{x: x, name: name, f: f}
		if p.isOp("(") {
			if fx.args, err = p.callArgs(); err != nil {
				return nil, err
			}
		}
		if err := checkFilter(fx); err != nil {
			return nil, err
		}
		x = fx
	}
	return x, nil
}

func (p *parser) test(x expr) (expr, error) {
	p.next()
	negated := false
	if p.isName("not") {
		p.next()
		negated = true
	}
	name, err := p.dottedName()
	if err != nil {
		return nil, err
	}
	t, ok := testFuncs()[name]
	if !ok {
		return nil, p.fail("no test named %q", name)
	}
	tx := &testExpr{x: x, name: name, t: t}
	c := p.cur()
	switch {
	case p.isOp("("):
		if tx.args, err = p.callArgs(); err != nil {
			return nil, err
		}
	case (c.kind == tName || c.kind == tString || c.kind == tInt || c.kind == tFloat || p.isOp("[") || p.isOp("{")) &&
		!p.isName("else") && !p.isName("or") && !p.isName("and"):
		if p.isName("is") {
			return nil, p.fail("you cannot chain multiple tests with is")
		}
		arg, err := p.primary()
		if err != nil {
			return nil, err
		}
		if arg, err = p.postfix(arg); err != nil {
			return nil, err
		}
		tx.args.pos = []expr{arg}
	}
	if negated {
		return &unaryExpr{op: "not", x: tx}, nil
	}
	return tx, nil
}
