package manifest

import (
	"strings"
	"testing"
)

func describeExpander(s *Selector) any {
	e := s.Expander
	if e == nil {
		return nil
	}
	var fields []any
	for _, f := range e.ParentFields {
		fields = append(fields, map[string]any{"path": f.Path, "parent_path": srcList(f.ParentPath), "record_path": srcList(f.RecordPath)})
	}
	return map[string]any{"path": e.Path, "expand": srcList(e.ExpandPath), "original": e.RemainOriginalRecord, "merge": e.MergeParent,
		"emit_parent": e.EmitParent, "indicator": srcList(e.TruncationIndicator), "fields": fields, "parameters": e.Parameters,
		"carries_parent": e.CarriesParent()}
}

func TestDecodeRecordExpander(t *testing.T) {
	decodesTo(t, `
sel:
  type: RecordSelector
  $parameters: {list: lines}
  extractor:
    type: DpathExtractor
    field_path: [data]
    record_expander:
      expand_records_from_field: ["{{ parameters.list }}", "*", data]
      remain_original_record: true
      merge_parent: true
      on_no_records: emit_parent
      truncation_indicator_path: [lines, has_more]
      parent_fields:
        - {type: ParentFieldPath, parent_path: [id], record_path: [invoice, "{{ config.key }}"]}
`, "sel", (*decoder).selector, describeExpander,
		`{"carries_parent":true,"emit_parent":true,"expand":["{{ parameters.list }}","*","data"],`+
			`"fields":[{"parent_path":["id"],"path":"sel.extractor.record_expander.parent_fields[0]","record_path":["invoice","{{ config.key }}"]}],`+
			`"indicator":["lines","has_more"],"merge":true,"original":true,"parameters":{"list":"lines"},"path":"sel.extractor.record_expander"}`)

	// Defaults: skip, no context, no indicator.
	decodesTo(t, `
sel: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [], record_expander: {type: RecordExpander, expand_records_from_field: [items]}}}
`, "sel", (*decoder).selector, describeExpander,
		`{"carries_parent":false,"emit_parent":false,"expand":["items"],"fields":null,"indicator":null,"merge":false,"original":false,"parameters":null,"path":"sel.extractor.record_expander"}`)

	// None: no expander.
	decodesTo(t, `
sel: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [], record_expander: null}}
`, "sel", (*decoder).selector, describeExpander, `null`)
}

func TestRecordExpanderErrors(t *testing.T) {
	for y, want := range map[string]string{
		`{expand_records_from_field: [a], parent_fields: [{type: ParentFieldPath, parent_path: ["a?"], record_path: [b]}]}`:                                                                                                                       `sel.extractor.record_expander.parent_fields[0].parent_path[0]: "a?" is a glob`,
		`{expand_records_from_field: [a], parent_fields: [{type: ParentFieldPath, parent_path: [a], record_path: []}]}`:                                                                                                                           `sel.extractor.record_expander.parent_fields[0].record_path: cannot be empty`,
		`{expand_records_from_field: [a], parent_fields: [{parent_path: [a], record_path: [b]}]}`:                                                                                                                                                 `sel.extractor.record_expander.parent_fields[0]: component has no type`,
		`{expand_records_from_field: [a], truncation_indicator_path: [a, "[x]"]}`:                                                                                                                                                                 `sel.extractor.record_expander.truncation_indicator_path[1]: "[x]" is a glob`,
		`{expand_records_from_field: [a], truncated_list_retriever: {type: SimpleRetriever, requester: {type: HttpRequester, url_base: "http://x"}, record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}}}`: `sel.extractor.record_expander.truncated_list_retriever: needs truncation_indicator_path`,
		`{expand_records_from_field: a}`: `sel.extractor.record_expander.expand_records_from_field`,
		`{remain_original_record: true}`: `sel.extractor.record_expander`,
	} {
		_, errs := decodeField(t, "sel: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [], record_expander: "+y+"}}", "sel", (*decoder).selector)
		if len(errs) != 1 || !strings.HasPrefix(errs[0], want) {
			t.Errorf("%s:\n got %q\nwant %q", y, errs, want)
		}
	}
}
