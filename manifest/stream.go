package manifest

import (
	"fmt"

	"github.com/airbyte-go/source-declarative/runtime/interp"
)

// Stream is a DeclarativeStream.
type Stream struct {
	Name       string
	Path       string // manifest path, e.g. streams[0]
	PrimaryKey [][]string
	Schema     map[string]any // nil: a permissive object schema
	Retriever  *Retriever
}

// Retriever is a SimpleRetriever.
type Retriever struct {
	Requester *Requester
	Selector  *Selector
	Paginator *Paginator // nil: one request
	// PartitionRouter is nil for a stream read as one partition.
	PartitionRouter *PartitionRouter
}

// Selector is a RecordSelector with a DpathExtractor.
type Selector struct {
	FieldPath []*interp.Template
	Filter    *interp.Template
}

func (d *decoder) stream(v any, path string) *Stream {
	m, _, ok := d.component(v, path, "DeclarativeStream")
	if !ok {
		return nil
	}
	st := &Stream{Path: path}
	st.Name, _ = m["name"].(string)
	if st.Name == "" {
		d.fail(path+".name", "is required")
	}
	for _, f := range []string{"incremental_sync", "transformations", "state_migrations", "file_uploader"} {
		if x, ok := m[f]; ok && x != nil && !isFalsy(x) {
			d.unsupported(x, join(path, f))
		}
	}
	switch pk := m["primary_key"].(type) {
	case string:
		if pk != "" {
			st.PrimaryKey = [][]string{{pk}}
		}
	case []any:
		for _, e := range pk {
			if l, ok := e.([]any); ok {
				st.PrimaryKey = append(st.PrimaryKey, strList(l))
			} else {
				st.PrimaryKey = append(st.PrimaryKey, []string{interp.String(e)})
			}
		}
	}
	if sl, ok := m["schema_loader"]; ok && sl != nil {
		if slm, _, ok := d.component(sl, path+".schema_loader", "InlineSchemaLoader"); ok {
			st.Schema, _ = slm["schema"].(map[string]any)
		}
	}
	st.Retriever = d.retriever(m["retriever"], path+".retriever")
	return st
}

func (d *decoder) retriever(v any, path string) *Retriever {
	m, _, ok := d.component(v, path, "SimpleRetriever")
	if !ok {
		return nil
	}
	r := &Retriever{}
	if pr, ok := m["partition_router"]; ok && pr != nil && !isFalsy(pr) {
		r.PartitionRouter = d.partitionRouter(pr, path+".partition_router")
	}
	if dec, ok := m["decoder"]; ok && dec != nil {
		d.component(dec, path+".decoder", "JsonDecoder")
	}
	r.Requester = d.requester(m["requester"], path+".requester", allAuth)
	r.Selector = d.selector(m["record_selector"], path+".record_selector")
	if p, ok := m["paginator"]; ok && p != nil {
		r.Paginator = d.paginator(p, path+".paginator")
	}
	if r.Paginator != nil && r.Requester != nil {
		d.checkCollisions(r.Requester, r.Paginator)
	}
	return r
}

func (d *decoder) selector(v any, path string) *Selector {
	m, _, ok := d.component(v, path, "RecordSelector")
	if !ok {
		return nil
	}
	s := &Selector{}
	if ex, _, ok := d.component(m["extractor"], path+".extractor", "DpathExtractor"); ok {
		for i, seg := range ex["field_path"].([]any) {
			s.FieldPath = append(s.FieldPath, d.value(seg, fmt.Sprintf("%s.extractor.field_path[%d]", path, i)))
		}
	}
	if f, ok := m["record_filter"]; ok && f != nil {
		if fm, _, ok := d.component(f, path+".record_filter", "RecordFilter"); ok {
			s.Filter = d.tpl(fm, "condition", path+".record_filter")
			if s.Filter == nil {
				s.Filter = interp.Constant(false, path+".record_filter.condition")
			}
		}
	}
	return s
}
