package extract

import (
	"fmt"

	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/protocol"
	"github.com/airbyte-go/source-declarative/runtime/failure"
	"github.com/airbyte-go/source-declarative/runtime/transform"
)

// Pipeline turns a page's extracted records into the records emitted: the
// record filter, the transformations in manifest order (before the filter
// with transform_before_filtering) and schema normalization. A stream with
// none of them has no pipeline: its records are emitted as the slices of
// the page they were cut from.
type Pipeline struct {
	stream         string
	filter         *transform.Filter
	transforms     []transform.Transformation
	normalizer     *transform.Normalizer
	transformFirst bool
}

// NewPipeline prepares the record processing of a stream; nil when there
// is nothing to do. loadSchema gives the stream's schema, asked for only when
// its records are normalized; warn takes the normalizer's warnings.
func NewPipeline(st *manifest.Stream, loadSchema func() (map[string]any, error), warn func(msg string)) (*Pipeline, error) {
	sel := st.Retriever.Selector
	if sel.Filter == nil && len(st.Transformations) == 0 && !sel.Normalize {
		return nil, nil
	}
	p := &Pipeline{stream: st.Name, transformFirst: st.Retriever.Selector.TransformBeforeFiltering}
	if sel.Filter != nil {
		p.filter = transform.NewFilter(sel.Filter, sel.FilterParams)
		p.filter.Warn = warn
	}
	var err error
	if p.transforms, err = transform.NewList(st.Transformations); err != nil {
		return nil, failure.Config("%v", err)
	}
	if sel.Normalize {
		schema, err := loadSchema()
		if err != nil {
			return nil, err
		}
		p.normalizer = transform.NewNormalizer(schema, func(field, got, want string) {
			warn(fmt.Sprintf("Stream %s: field %s is %s, which cannot be cast to %s as the schema says; it is kept as it is (said once per field)", st.Name, field, got, want))
		})
	}
	return p, nil
}

// Run processes one page's records. vars are the template variables of the
// request that fetched the page; Run adds record (and each component's own
// parameters) to a copy of them.
func (p *Pipeline) Run(raw [][]byte, vars interp.Vars) ([][]byte, error) {
	if p == nil || len(raw) == 0 {
		return raw, nil
	}
	v := make(interp.Vars, len(vars)+4)
	for k, e := range vars {
		v[k] = e
	}
	if len(p.transforms) == 0 && p.normalizer == nil {
		return p.filterOnly(raw, v)
	}
	var buf []byte
	ends := make([]int, 0, len(raw))
	for _, b := range raw {
		rec, err := transform.Decode(b)
		if err != nil {
			return nil, &failure.Error{Failure: protocol.SystemError, Message: fmt.Sprintf("stream %s: %v", p.stream, err)}
		}
		keep, err := p.process(rec, v)
		if err != nil {
			return nil, &failure.Error{Failure: protocol.ConfigError, Message: fmt.Sprintf("stream %s: %v", p.stream, err)}
		}
		if keep {
			buf = transform.AppendJSON(buf, rec)
			ends = append(ends, len(buf))
		}
	}
	out := make([][]byte, len(ends))
	start := 0
	for i, end := range ends {
		out[i] = buf[start:end:end]
		start = end
	}
	return out, nil
}

// process runs filter, transformations and normalization on one record and
// tells whether it is kept.
func (p *Pipeline) process(rec *transform.Object, vars interp.Vars) (bool, error) {
	if p.filter != nil && !p.transformFirst {
		if keep, err := p.filter.Keep(rec, vars); err != nil || !keep {
			return false, err
		}
	}
	for _, t := range p.transforms {
		if err := t.Apply(rec, vars); err != nil {
			return false, err
		}
	}
	if p.filter != nil && p.transformFirst {
		if keep, err := p.filter.Keep(rec, vars); err != nil || !keep {
			return false, err
		}
	}
	if p.normalizer != nil {
		p.normalizer.Apply(rec)
	}
	return true, nil
}

// filterOnly keeps the records the filter accepts, as they were sent.
func (p *Pipeline) filterOnly(raw [][]byte, vars interp.Vars) ([][]byte, error) {
	kept := raw[:0:0]
	for _, b := range raw {
		rec, err := transform.Decode(b)
		if err != nil {
			return nil, &failure.Error{Failure: protocol.SystemError, Message: fmt.Sprintf("stream %s: %v", p.stream, err)}
		}
		keep, err := p.filter.Keep(rec, vars)
		if err != nil {
			return nil, &failure.Error{Failure: protocol.ConfigError, Message: fmt.Sprintf("stream %s: %v", p.stream, err)}
		}
		if keep {
			kept = append(kept, b)
		}
	}
	return kept, nil
}
