// Package expand runs a DpathExtractor's record_expander (Airbyte's
// RecordExpander): each extracted record (the parent) is replaced by the
// items of the lists its expand path matches, in document order, before the
// record filter and the transformations see them.
//
// Items are objects taken as they are, or, when parent context is asked
// for, objects built as the reference builds them: the parent's fields
// without the expanded lists under the item's own (merge_parent), then the
// parent_fields copied on top, then the whole parent under original_record.
// A non-object item is wrapped as {"value": item} when parent context is
// asked for; otherwise it is a record like any extracted one (a null is
// skipped, anything else is not a record).
package expand

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/runtime/transform"
)

// Expander is a record_expander with its paths rendered.
type Expander struct {
	glob           transform.Glob
	expandPath     []string
	originalRecord bool
	mergeParent    bool
	carries        bool // items carry parent context
	fields         []parentField
	emitParent     bool
	indicator      []string // nil: no truncation indicator
	// warn logs a warning; warned makes the truncation warning once per
	// stream, whichever worker meets it first.
	warn   func(string)
	warned *atomic.Bool
	// fetch, when set, reads the complete list of a truncated parent
	// (truncated_list_retriever).
	fetch func(ctx context.Context, parent *transform.Object) ([]any, error)
}

// FetchTruncated sets how the complete list of a truncated parent is read:
// its items replace the embedded ones, which stay when it reads none.
func (e *Expander) FetchTruncated(fetch func(ctx context.Context, parent *transform.Object) ([]any, error)) {
	e.fetch = fetch
}

type parentField struct{ parent, record []string }

// New renders the expander's paths with vars (config and parameters). A
// path that must name one field and renders to a glob is a configuration
// error naming its manifest path. An empty expand path expands nothing, as
// in the reference: New then returns nil. warn logs the truncation warning.
func New(m *manifest.RecordExpander, vars interp.Vars, warn func(string)) (*Expander, error) {
	if m == nil || len(m.ExpandPath) == 0 {
		return nil, nil
	}
	where := m.Path + ".expand_records_from_field"
	expandPath, err := render(m.ExpandPath, vars, where, m.TruncatedRetriever != nil)
	if err != nil {
		return nil, err
	}
	e := &Expander{expandPath: expandPath, originalRecord: m.RemainOriginalRecord, mergeParent: m.MergeParent,
		carries: m.CarriesParent(), emitParent: m.EmitParent, warn: warn, warned: &atomic.Bool{}}
	if e.glob, err = transform.CompileGlob(expandPath); err != nil {
		return nil, fmt.Errorf("%s: %v", where, err)
	}
	if m.TruncationIndicator != nil {
		if e.indicator, err = render(m.TruncationIndicator, vars, m.Path+".truncation_indicator_path", true); err != nil {
			return nil, err
		}
	}
	for _, f := range m.ParentFields {
		var pf parentField
		if pf.parent, err = render(f.ParentPath, vars, f.Path+".parent_path", true); err != nil {
			return nil, err
		}
		if pf.record, err = render(f.RecordPath, vars, f.Path+".record_path", true); err != nil {
			return nil, err
		}
		e.fields = append(e.fields, pf)
	}
	return e, nil
}

// render renders path segments; with single, a segment that is a glob is
// refused.
func render(segs []*interp.Template, vars interp.Vars, where string, single bool) ([]string, error) {
	out, err := interp.RenderEach(segs, vars)
	if err != nil {
		return nil, err
	}
	for i, s := range out {
		if single && manifest.IsGlob(s) {
			return nil, fmt.Errorf("%s[%d]: %q is a glob; this path must name a single field (no *, ? or [)", where, i, s)
		}
	}
	return out, nil
}

// Expand returns the records that the page's extracted records expand to,
// in order. A record that is not a JSON object is kept as it is.
func (e *Expander) Expand(ctx context.Context, records [][]byte) ([][]byte, error) {
	var out output
	for _, rec := range records {
		parent, err := transform.Decode(rec)
		if err != nil {
			out.add(rec)
			continue
		}
		if err := e.expand(ctx, rec, parent, &out); err != nil {
			return nil, err
		}
	}
	return out.records(), nil
}

// expand adds the records one parent expands to.
func (e *Expander) expand(ctx context.Context, raw []byte, parent *transform.Object, out *output) error {
	var lists [][]any
	count := 0
	for _, v := range e.glob.Values(parent) {
		if l, ok := v.([]any); ok {
			lists = append(lists, l)
			count += len(l)
		}
	}
	switch {
	case e.indicator == nil || !e.truncated(parent):
	case e.fetch != nil:
		items, err := e.fetch(ctx, parent)
		if err != nil {
			return err
		}
		if len(items) > 0 {
			lists, count = [][]any{items}, len(items)
		}
	default:
		e.warnTruncated(parent, count)
	}
	var base *transform.Object
	if e.mergeParent && count > 0 {
		base = e.withoutLists(parent)
	}
	var original []byte // the parent encoded once, for every item's original_record
	if e.originalRecord && count > 0 {
		original = transform.AppendJSON(nil, parent)
	}
	for _, l := range lists {
		for _, item := range l {
			if !e.carries {
				switch item.(type) {
				case *transform.Object:
					out.encode(item)
				case nil: // skipped, as a null extracted record is
				default:
					return fmt.Errorf("an item of the list at %s must be a JSON object to be a record, got %s", pyList(e.expandPath), truncate(string(transform.AppendJSON(nil, item)), 40))
				}
				continue
			}
			out.withOriginal(e.withParent(parent, item, base), parent, original)
		}
	}
	if count == 0 && e.emitParent {
		out.add(raw)
	}
	return nil
}

// withParent builds one item carrying parent context, leaving parent and
// base untouched: the merged parent underneath, then parent_fields
// (original_record is added as it is encoded).
func (e *Expander) withParent(parent *transform.Object, item any, base *transform.Object) *transform.Object {
	child, ok := deepCopy(item).(*transform.Object)
	if !ok {
		child = &transform.Object{Fields: []transform.Field{{Key: "value", Value: deepCopy(item)}}}
	}
	if base != nil {
		merged := deepCopy(base).(*transform.Object)
		for _, f := range child.Fields {
			merged.Set(f.Key, f.Value)
		}
		child = merged
	}
	for _, f := range e.fields {
		v, _ := transform.Get(parent, f.parent) // absent: null
		transform.Create(child, f.record, deepCopy(v))
	}
	return child
}

// withoutLists is a copy of the parent without any value its expand path
// matches (siblings of the lists stay).
func (e *Expander) withoutLists(parent *transform.Object) *transform.Object {
	base := deepCopy(parent).(*transform.Object)
	if _, err := e.glob.Delete(base, nil); err == nil {
		transform.Compact(base)
	}
	return base
}

// truncated tells whether a parent says its embedded list is truncated.
func (e *Expander) truncated(parent *transform.Object) bool {
	v, ok := transform.Get(parent, e.indicator)
	return ok && interp.Truthy(transform.TemplateValue(v))
}

// warnTruncated logs, once per stream, that a parent's embedded list is
// truncated and no retriever reads the rest: only the embedded items are
// expanded.
func (e *Expander) warnTruncated(parent *transform.Object, embedded int) {
	if !e.warned.CompareAndSwap(false, true) {
		return
	}
	total := ""
	sibling := append(e.indicator[:len(e.indicator)-1:len(e.indicator)-1], "total_count")
	if n, ok := transform.Get(parent, sibling); ok {
		if s, isInt := integer(n); isInt {
			total = " of " + s + " total"
		}
	}
	e.warn(fmt.Sprintf("The nested list at %s is marked as truncated (the field at %s is truthy), so only the %d embedded item(s)%s were expanded "+
		"and the remaining items are not emitted: set truncated_list_retriever to fetch the complete list. "+
		"This warning is emitted once per stream; other records may be truncated as well.",
		pyList(e.expandPath), pyList(e.indicator), embedded, total))
}

// integer gives the text of a JSON integer (not a float, not a boolean).
func integer(v any) (string, bool) {
	switch x := v.(type) {
	case transform.Number:
		if _, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return string(x), true
		}
	case int64:
		return strconv.FormatInt(x, 10), true
	}
	return "", false
}

// pyList writes a path as Python prints a list of strings, as the
// reference's messages show it: ['lines', 'data'].
func pyList(path []string) string {
	parts := make([]string, len(path))
	for i, s := range path {
		q := "'"
		if strings.Contains(s, "'") && !strings.Contains(s, `"`) {
			q = `"`
		}
		r := strings.NewReplacer(`\`, `\\`, q, `\`+q, "\n", `\n`, "\r", `\r`, "\t", `\t`)
		parts[i] = q + r.Replace(s) + q
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// deepCopy copies objects and lists; other values are immutable.
func deepCopy(v any) any {
	switch x := v.(type) {
	case *transform.Object:
		o := &transform.Object{Fields: make([]transform.Field, len(x.Fields))}
		for i, f := range x.Fields {
			o.Fields[i] = transform.Field{Key: f.Key, Value: deepCopy(f.Value)}
		}
		return o
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}

// output collects a page's records in one buffer.
type output struct {
	buf  []byte
	ends []int
}

func (o *output) add(raw []byte) {
	o.buf = append(o.buf, raw...)
	o.ends = append(o.ends, len(o.buf))
}

func (o *output) encode(v any) {
	o.buf = transform.AppendJSON(o.buf, v)
	o.ends = append(o.ends, len(o.buf))
}

// withOriginal encodes an item with the parent as its original_record (none
// when original is nil): appended as encoded once, original, or in the
// place of the item's own original_record key when it has one.
func (o *output) withOriginal(child, parent *transform.Object, original []byte) {
	if original == nil {
		o.encode(child)
		return
	}
	if _, ok := child.Get("original_record"); ok {
		child.Set("original_record", parent)
		o.encode(child)
		return
	}
	o.buf = transform.AppendJSON(o.buf, child)
	o.buf = o.buf[:len(o.buf)-1] // the closing brace
	if len(child.Fields) > 0 {
		o.buf = append(o.buf, ',')
	}
	o.buf = append(append(append(o.buf, `"original_record":`...), original...), '}')
	o.ends = append(o.ends, len(o.buf))
}

func (o *output) records() [][]byte {
	out := make([][]byte, len(o.ends))
	start := 0
	for i, end := range o.ends {
		out[i] = o.buf[start:end:end]
		start = end
	}
	return out
}
