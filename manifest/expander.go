package manifest

import (
	"strings"

	"github.com/airbyte-go/source-declarative/lang/interp"
)

// RecordExpander is a DpathExtractor's record_expander: each extracted
// record is replaced by the items of the lists at ExpandPath, optionally
// carrying context from the record they came from (the parent).
type RecordExpander struct {
	Path string // manifest path, e.g. streams[0].retriever.record_selector.extractor.record_expander
	// ExpandPath is expand_records_from_field: a dpath glob rendered with
	// config and parameters; every list it matches gives its items.
	ExpandPath []*interp.Template
	// RemainOriginalRecord puts the parent under original_record in each item.
	RemainOriginalRecord bool
	// MergeParent puts the parent's fields, without the expanded lists,
	// under each item's own.
	MergeParent bool
	// ParentFields copy single parent values onto each item.
	ParentFields []ParentFieldPath
	// EmitParent (on_no_records: emit_parent) emits the parent unchanged
	// when it has no item to expand; otherwise it gives no record.
	EmitParent bool
	// TruncationIndicator is truncation_indicator_path (nil: none): where a
	// parent says its embedded list is not complete.
	TruncationIndicator []*interp.Template
	// TruncatedRetriever is truncated_list_retriever (nil: none): it reads
	// the complete list of a truncated parent, which its templates see as
	// stream_slice['parent_record'].
	TruncatedRetriever *Retriever
	Parameters         map[string]any
}

// ParentFieldPath copies the value at ParentPath on the parent to
// RecordPath on each item (null when the parent has none).
type ParentFieldPath struct {
	Path                   string
	ParentPath, RecordPath []*interp.Template
}

// CarriesParent tells whether items carry parent context; a non-object
// item is then wrapped as {"value": item}.
func (e *RecordExpander) CarriesParent() bool {
	return e.RemainOriginalRecord || e.MergeParent || len(e.ParentFields) > 0
}

// recordExpander decodes a record_expander. Paths that must name a single
// field (parent_fields, truncation_indicator_path) are refused at load when
// a segment is a glob; a templated segment is checked once rendered.
func (d *decoder) recordExpander(v any, path string) *RecordExpander {
	m, _, ok := d.component(v, path, "RecordExpander")
	if !ok {
		return nil
	}
	e := &RecordExpander{Path: path}
	e.Parameters, _ = m["$parameters"].(map[string]any)
	e.ExpandPath = d.pathTemplates(m["expand_records_from_field"], path+".expand_records_from_field", false)
	e.RemainOriginalRecord, _ = m["remain_original_record"].(bool)
	e.MergeParent, _ = m["merge_parent"].(bool)
	e.EmitParent = m["on_no_records"] == "emit_parent"
	if x, ok := m["truncation_indicator_path"]; ok && x != nil {
		e.TruncationIndicator = d.pathTemplates(x, path+".truncation_indicator_path", true)
	}
	if x, ok := m["truncated_list_retriever"]; ok && x != nil {
		rp := path + ".truncated_list_retriever"
		if e.TruncationIndicator == nil {
			d.fail(rp, "needs truncation_indicator_path: it is read for the parents whose field there is truthy")
		}
		// The fetched items replace the one list the path names.
		e.ExpandPath = d.pathTemplates(m["expand_records_from_field"], path+".expand_records_from_field", true)
		e.TruncatedRetriever = d.simpleRetriever(x, rp)
	}
	fields, _ := m["parent_fields"].([]any)
	for i, f := range fields {
		fp := index(path+".parent_fields", i)
		fm, _, ok := d.component(f, fp, "ParentFieldPath")
		if !ok {
			continue
		}
		pf := ParentFieldPath{Path: fp,
			ParentPath: d.pathTemplates(fm["parent_path"], fp+".parent_path", true),
			RecordPath: d.pathTemplates(fm["record_path"], fp+".record_path", true),
		}
		for _, p := range []struct {
			segs []*interp.Template
			name string
		}{{pf.ParentPath, "parent_path"}, {pf.RecordPath, "record_path"}} {
			if len(p.segs) == 0 {
				d.fail(fp+"."+p.name, "cannot be empty: it names one field")
			}
		}
		e.ParentFields = append(e.ParentFields, pf)
	}
	return e
}

// pathTemplates compiles a list of path segments. With single, a segment
// without template holding a glob character (*, ? or [) is refused: the
// path must name one field.
func (d *decoder) pathTemplates(v any, path string, single bool) []*interp.Template {
	list, _ := v.([]any)
	out := make([]*interp.Template, 0, len(list))
	for i, seg := range list {
		sp := index(path, i)
		t := d.value(seg, sp)
		if single && t.IsStatic() {
			if s, ok := seg.(string); ok && IsGlob(s) {
				d.fail(sp, "%q is a glob; this path must name a single field (no *, ? or [)", s)
			}
		}
		out = append(out, t)
	}
	return out
}

// IsGlob tells whether a path segment is a dpath pattern rather than a key.
func IsGlob(seg string) bool { return strings.ContainsAny(seg, "*?[") }
