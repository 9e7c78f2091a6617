package interp

// Usage tells how a template uses a variable: not at all, through some of its
// top-level keys only, or in any other way (All).
type Usage struct {
	Used bool
	All  bool
	Keys map[string]bool
}

// Merge adds another template's usage.
func (u *Usage) Merge(o Usage) {
	u.Used = u.Used || o.Used
	u.All = u.All || o.All
	for k := range o.Keys {
		if u.Keys == nil {
			u.Keys = map[string]bool{}
		}
		u.Keys[k] = true
	}
}

// UsageOf reports how the template uses the variable name: `name.key`,
// `name['key']` and `name.get('key', ...)` use one key; any other mention
// (a method such as name.items(), a computed key, name itself) uses all of
// it. A nil or static template uses nothing.
func (t *Template) UsageOf(name string) Usage {
	u := Usage{Keys: map[string]bool{}}
	if t == nil || t.static {
		return u
	}
	isName := func(x expr) bool {
		n, ok := x.(*nameExpr)
		return ok && n.name == name
	}
	key := func(k string) {
		u.Used = true
		u.Keys[k] = true
	}
	var visit func(n any)
	visit = func(n any) {
		switch x := n.(type) {
		case *nameExpr:
			if x.name == name {
				u.Used, u.All = true, true
			}
			return
		case *callExpr:
			if a, ok := x.fn.(*attrExpr); ok && isName(a.x) && a.name == "get" && len(x.args.pos) > 0 {
				if c, ok := x.args.pos[0].(*constExpr); ok {
					if k, ok := c.v.(string); ok {
						key(k)
						for _, e := range x.args.pos[1:] {
							visit(e)
						}
						for _, e := range x.args.kw {
							visit(e)
						}
						return
					}
				}
			}
		case *itemExpr:
			if c, ok := x.key.(*constExpr); ok && isName(x.x) {
				if k, ok := c.v.(string); ok {
					key(k)
					return
				}
			}
		case *attrExpr:
			if isName(x.x) {
				if methods().dict[x.name] != nil {
					u.Used, u.All = true, true
				} else {
					key(x.name)
				}
				return
			}
		}
		children(n, visit)
	}
	for _, st := range t.body {
		visit(st)
	}
	return u
}

// children calls f on the direct sub-nodes of a node.
func children(n any, f func(any)) {
	each := func(xs []expr) {
		for _, x := range xs {
			if x != nil {
				f(x)
			}
		}
	}
	body := func(ss []stmt) {
		for _, s := range ss {
			f(s)
		}
	}
	callArgs := func(a callArgs) {
		each(a.pos)
		each(a.kw)
		each([]expr{a.star, a.starStar})
	}
	switch x := n.(type) {
	case *attrExpr:
		f(x.x)
	case *itemExpr:
		each([]expr{x.x, x.key})
	case *sliceExpr:
		each([]expr{x.x, x.lo, x.hi, x.stepExp})
	case *callExpr:
		f(x.fn)
		callArgs(x.args)
	case *filterExpr:
		f(x.x)
		callArgs(x.args)
	case *testExpr:
		f(x.x)
		callArgs(x.args)
	case *unaryExpr:
		f(x.x)
	case *binaryExpr:
		each([]expr{x.l, x.r})
	case *concatExpr:
		each(x.parts)
	case *andExpr:
		each([]expr{x.l, x.r})
	case *orExpr:
		each([]expr{x.l, x.r})
	case *compareExpr:
		f(x.first)
		for _, op := range x.ops {
			f(op.x)
		}
	case *condExpr:
		each([]expr{x.test, x.then, x.other})
	case *listExpr:
		each(x.items)
	case *tupleExpr:
		each(x.items)
	case *dictExpr:
		each(x.keys)
		each(x.vals)
	case *outputStmt:
		f(x.x)
	case *ifStmt:
		each(x.tests)
		for _, b := range x.bodies {
			body(b)
		}
		body(x.els)
	case *forStmt:
		each([]expr{x.iter, x.filter})
		body(x.body)
		body(x.els)
	case *setStmt:
		f(x.value)
	case *setBlockStmt:
		body(x.body)
		if x.chain != nil {
			f(x.chain)
		}
	case *withStmt:
		each(x.vals)
		body(x.body)
	case *filterStmt:
		f(x.chain)
		body(x.body)
	case *macroStmt:
		each(x.defaults)
		body(x.body)
	case *callBlockStmt:
		f(x.call)
		f(x.caller)
	}
}
