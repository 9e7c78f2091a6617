package manifest

import (
	"errors"
	"fmt"
	"strings"

	"github.com/airbyte-go/source-declarative/lang/interp"
)

// Mapping is a string-keyed map of templates, in key order.
type Mapping struct {
	Keys   []string
	Values map[string]*interp.Template
	Whole  *interp.Template // the mapping given as one template string
}

// Load finds nothing itself: it resolves, validates and decodes raw.
func Load(raw map[string]any) (*Source, error) {
	resolved, err := Resolve(raw)
	if err != nil {
		return nil, err
	}
	if errs := parameterErrors(resolved, ""); len(errs) > 0 {
		return nil, errors.New(strings.Join(errs, "; "))
	}
	Propagate(resolved)
	d := &decoder{parts: &customParts{}}
	d.parts = d.findCustom(resolved)
	src := d.source(resolved)
	if len(d.errs) > 0 {
		return nil, errors.New(strings.Join(d.errs, "; "))
	}
	src.Custom, src.CustomConfig = d.parts.all, d.parts.config
	src.Resolved = resolved
	src.Warnings = d.warnings()
	return src, nil
}

// ResolveOnly resolves references and parameters without decoding, for the
// parts (spec, resolve_manifest) that need no runtime components.
func ResolveOnly(raw map[string]any) (map[string]any, error) {
	resolved, err := Resolve(raw)
	if err != nil {
		return nil, err
	}
	Propagate(resolved)
	return resolved, nil
}

type decoder struct {
	errs  []string
	warns []warning
	parts *customParts // where the custom components are; nil for a stream decoded alone
}

// warning is one thing the manifest says that is ignored; the same message at
// several paths is one warning.
type warning struct {
	path, message string
	others        int
}

func (d *decoder) fail(path, format string, args ...any) {
	msg := path + ": " + fmt.Sprintf(format, args...)
	for _, e := range d.errs {
		if e == msg {
			return
		}
	}
	d.errs = append(d.errs, msg)
}

// warn records something the manifest says that is ignored, for a LOG WARN.
func (d *decoder) warn(path, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	for i := range d.warns {
		if d.warns[i].message == msg {
			d.warns[i].others++
			return
		}
	}
	d.warns = append(d.warns, warning{path: path, message: msg})
}

// warnings are the decoder's warnings, one line each.
func (d *decoder) warnings() []string {
	out := make([]string, 0, len(d.warns))
	for _, w := range d.warns {
		line := w.path + ": " + w.message
		switch w.others {
		case 0:
		case 1:
			line += " (also at 1 other place)"
		default:
			line += fmt.Sprintf(" (also at %d other places)", w.others)
		}
		out = append(out, line)
	}
	return out
}

// component checks that v is a mapping whose type is one of allowed and that
// it matches that type's schema.
func (d *decoder) component(v any, path string, allowed ...string) (map[string]any, string, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		d.fail(path, "must be a mapping (a component with a type), got %s", describe(v))
		return nil, "", false
	}
	typ, _ := m["type"].(string)
	if typ == "" {
		d.fail(path, "component has no type (expected one of %s)", strings.Join(allowed, ", "))
		return nil, "", false
	}
	found := false
	for _, a := range allowed {
		if a == typ {
			found = true
		}
	}
	if isCustom(m) {
		d.custom(m, path)
		return nil, "", false
	}
	if !found {
		if componentDefinition(typ) != nil || knownCDKTypes[typ] {
			d.fail(path, "%s is not supported here (supported: %s)", typ, strings.Join(allowed, ", "))
		} else {
			d.fail(path+".type", "unknown component type %q (supported: %s)", typ, strings.Join(allowed, ", "))
		}
		return nil, "", false
	}
	if def := componentDefinition(typ); def != nil && !d.check(def, typ, m, path) {
		return nil, "", false
	}
	return m, typ, true
}

func describe(v any) string {
	switch v.(type) {
	case nil:
		return "nothing"
	case string:
		return "a string"
	case []any:
		return "a list"
	case bool:
		return "a boolean"
	case int64, float64:
		return "a number"
	}
	return fmt.Sprintf("%T", v)
}

// tpl compiles the template at m[key]; absent gives nil. Numbers and
// booleans become constants.
func (d *decoder) tpl(m map[string]any, key, path string) *interp.Template {
	v, ok := m[key]
	if !ok || v == nil {
		return nil
	}
	return d.value(v, join(path, key))
}

func (d *decoder) value(v any, path string) *interp.Template {
	s, ok := v.(string)
	if !ok {
		return interp.Constant(v, path)
	}
	t, err := interp.Compile(s, path)
	if err != nil {
		// Airbyte compiles a template when it first evaluates it: one that
		// does not compile fails then, and a manifest that never evaluates
		// it runs (ticktick's OAuth client_secret, a token being given).
		d.warn(path, "%s: it fails when it is evaluated, as in Airbyte's runtime", strings.TrimPrefix(err.Error(), path+": "))
		return interp.Broken(s, path, err)
	}
	return t
}

func str(m map[string]any, key, def string) string {
	if s, ok := m[key].(string); ok && s != "" {
		return s
	}
	return def
}

func strList(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, e := range l {
		out = append(out, interp.String(e))
	}
	return out
}

// mapping compiles a string-keyed map of templates, or one template string.
func (d *decoder) mapping(m map[string]any, key, path string) *Mapping {
	v, ok := m[key]
	if !ok || v == nil {
		return nil
	}
	p := join(path, key)
	if s, ok := v.(string); ok {
		return &Mapping{Whole: d.value(s, p)}
	}
	mm, ok := v.(map[string]any)
	if !ok {
		d.fail(p, "must be a mapping of names to values")
		return nil
	}
	out := &Mapping{Values: map[string]*interp.Template{}}
	out.Keys = interp.SortedKeys(mm)
	for _, k := range out.Keys {
		out.Values[k] = d.value(mm[k], join(p, k))
	}
	return out
}

// nested compiles every string leaf of a JSON body into a template.
func (d *decoder) nested(v any, path string) any {
	switch x := v.(type) {
	case string:
		return d.value(x, path)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = d.nested(e, join(path, k))
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = d.nested(e, index(path, i))
		}
		return out
	}
	return v
}

func (d *decoder) errsFor(prefix string) (string, bool) {
	for _, e := range d.errs {
		if strings.HasPrefix(e, prefix) {
			return e, true
		}
	}
	return "", false
}

func pathOr(v any, def ...string) []string {
	if l := strList(v); len(l) > 0 {
		return l
	}
	return def
}
