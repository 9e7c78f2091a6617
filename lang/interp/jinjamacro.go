package interp

import "strings"

// Macros defined in a template ({% macro %}): a call renders the body with
// the arguments bound, as Jinja's Macro does. Calls nest at most maxNesting
// deep (a macro may call itself), and their work counts in the steps.

func (m *macroStmt) exec(s *state) error {
	s.assign(m.name, m.callable())
	return s.step(1)
}

func (m *macroStmt) callable() *callable {
	return &callable{name: m.name, fn: func(s *state, a *args) (any, error) { return m.call(s, a) }}
}

// exec calls the macro with the keyword argument caller added.
func (c *callBlockStmt) exec(s *state) error {
	fn, err := c.call.fn.eval(s)
	if err != nil {
		return err
	}
	a, err := c.call.args.eval(s)
	if err != nil {
		return err
	}
	a.names = append(append([]string{}, a.names...), "caller")
	a.kw = append(append([]any{}, a.kw...), c.caller.callable())
	f, ok := fn.(*callable)
	if !ok {
		if u, isU := fn.(*undefined); isU {
			return u.err()
		}
		return typeErr("'%s' object is not callable", typeName(fn))
	}
	v, err := f.fn(s, a)
	if err != nil {
		return err
	}
	return s.writeValue(v, false)
}

func (m *macroStmt) call(s *state, a *args) (any, error) {
	if s.macroDepth >= int32(maxNesting) {
		return nil, valueErr("macro %s: calls nest deeper than %d levels", m.name, maxNesting)
	}
	frame := map[string]any{}
	if len(a.pos) > len(m.params) && !m.varargs {
		return nil, typeErr("macro '%s' takes not more than %d argument(s)", m.name, len(m.params))
	}
	for i, v := range a.pos {
		if i < len(m.params) {
			frame[m.params[i]] = v
		}
	}
	kwargs := map[string]any{}
	for i, name := range a.names {
		known := false
		for _, p := range m.params {
			known = known || p == name
		}
		switch {
		case known:
			if _, dup := frame[name]; dup {
				return nil, typeErr("macro '%s' got multiple values for argument '%s'", m.name, name)
			}
			frame[name] = a.kw[i]
		case name == "caller" && m.caller:
			frame[name] = a.kw[i]
		case m.kwargs:
			kwargs[name] = a.kw[i]
		default:
			return nil, typeErr("macro '%s' takes no keyword argument '%s'", m.name, name)
		}
	}
	if m.varargs {
		frame["varargs"] = tuple(append([]any{}, a.pos[min(len(a.pos), len(m.params)):]...))
	}
	if m.kwargs {
		frame["kwargs"] = kwargs
	}
	s.frames = append(s.frames, frame)
	defer func() { s.frames = s.frames[:len(s.frames)-1] }()
	for i, p := range m.params {
		if _, ok := frame[p]; ok {
			continue
		}
		if m.defaults[i] == nil {
			frame[p] = &undefined{hint: "parameter '" + p + "' was not provided"}
			continue
		}
		v, err := m.defaults[i].eval(s)
		if err != nil {
			return nil, err
		}
		frame[p] = v
	}
	s.macroDepth++
	defer func() { s.macroDepth-- }()
	saved := s.out
	var b strings.Builder
	s.out = &b
	err := s.run(m.body)
	s.out = saved
	if err == nil && saved.Len()+b.Len() > MaxOutput {
		err = valueErr("output larger than %d bytes", MaxOutput)
	}
	return b.String(), err
}
