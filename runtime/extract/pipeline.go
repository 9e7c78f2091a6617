package extract

import (
	"context"
	"fmt"

	"github.com/airbyte-go/source-declarative/components"
	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/protocol"
	"github.com/airbyte-go/source-declarative/runtime/failure"
	"github.com/airbyte-go/source-declarative/runtime/transform"
)

// Pipeline turns a page's extracted records into the records emitted: the
// record filter, the transformations in manifest order (before the filter
// with transform_before_filtering) and schema normalization. Each is a step
// over the whole page; a custom one (a Python class) is one call to the
// components host per page, consecutive custom transformations one call
// together. A stream with none of them has no pipeline: its records are
// emitted as the slices of the page they were cut from.
type Pipeline struct {
	stream string
	steps  []step
}

// step is one stage of the pipeline, run on a page's records.
type step interface {
	run(ctx context.Context, pg *page, in *Input) error
}

// Input is what a page's records are processed with: the template
// variables of the request that fetched the page (config, parameters and
// the slice; not next_page_token, which Airbyte's retriever does not hand
// its record selector: a filter sees it None, a transformation not at all),
// and its slice as the CDK's components take it.
type Input struct {
	Vars  interp.Vars
	Slice *components.Slice
}

// NewPipeline prepares the record processing of a stream; nil when there
// is nothing to do. loadSchema gives the stream's schema, asked for only when
// its records are normalized; warn takes the normalizer's and the filter's
// warnings; host runs its custom components.
func NewPipeline(st *manifest.Stream, host *components.Host, loadSchema func() (map[string]any, error), warn func(msg string)) (*Pipeline, error) {
	sel := st.Retriever.Selector
	if sel.Filter == nil && sel.CustomFilter == nil && len(st.Transformations) == 0 && !sel.Normalize && sel.CustomNormalization == nil {
		return nil, nil
	}
	p := &Pipeline{stream: st.Name}
	var filter step
	switch {
	case sel.Filter != nil:
		f := transform.NewFilter(sel.Filter, sel.FilterParams)
		f.Warn = warn
		filter = goFilter{f}
	case sel.CustomFilter != nil:
		filter = &customStep{host: host, op: "filter", c: sel.CustomFilter}
	}
	var transforms []step
	for _, t := range st.Transformations {
		if t.Custom != nil {
			if n := len(transforms); n > 0 {
				if prev, ok := transforms[n-1].(*customStep); ok && prev.op == "transform" {
					prev.paths = append(prev.paths, t.Custom.Path)
					continue
				}
			}
			transforms = append(transforms, &customStep{host: host, op: "transform", c: t.Custom, paths: []string{t.Custom.Path}})
			continue
		}
		tr, err := transform.New(t)
		if err != nil {
			return nil, failure.Config("%v", err)
		}
		transforms = append(transforms, goTransform{tr})
	}
	if filter != nil && !sel.TransformBeforeFiltering {
		p.steps = append(p.steps, filter)
	}
	p.steps = append(p.steps, transforms...)
	if filter != nil && sel.TransformBeforeFiltering {
		p.steps = append(p.steps, filter)
	}
	if sel.Normalize || sel.CustomNormalization != nil {
		schema, err := loadSchema()
		if err != nil {
			return nil, err
		}
		if sel.CustomNormalization != nil {
			p.steps = append(p.steps, &customStep{host: host, op: "normalize", c: sel.CustomNormalization, schema: schema})
		} else {
			p.steps = append(p.steps, goNormalize{transform.NewNormalizer(schema, func(field, got, want string) {
				warn(fmt.Sprintf("Stream %s: field %s is %s, which cannot be cast to %s as the schema says; it is kept as it is (said once per field)", st.Name, field, got, want))
			})})
		}
	}
	return p, nil
}

// Run processes one page's records.
func (p *Pipeline) Run(ctx context.Context, raw [][]byte, in *Input) ([][]byte, error) {
	if p == nil || len(raw) == 0 {
		return raw, nil
	}
	v := make(interp.Vars, len(in.Vars)+4)
	for k, e := range in.Vars {
		v[k] = e
	}
	in = &Input{Vars: v, Slice: in.Slice}
	pg := &page{stream: p.stream, raw: raw}
	for _, s := range p.steps {
		if len(pg.raw) == 0 && len(pg.objs) == 0 {
			break
		}
		if err := s.run(ctx, pg, in); err != nil {
			return nil, err
		}
	}
	return pg.bytes(), nil
}

// page holds a page's records as they pass the steps: as JSON bytes (as
// cut from the response, or as a custom step gave them) or decoded.
type page struct {
	stream string
	raw    [][]byte            // valid when objs is nil
	objs   []*transform.Object // decoded, once a Go step changed them
}

// decoded returns the records decoded, decoding them once.
func (pg *page) decoded() ([]*transform.Object, error) {
	if pg.objs == nil {
		pg.objs = make([]*transform.Object, 0, len(pg.raw))
		for _, b := range pg.raw {
			rec, err := transform.Decode(b)
			if err != nil {
				return nil, &failure.Error{Failure: protocol.SystemError, Message: fmt.Sprintf("stream %s: %v", pg.stream, err)}
			}
			pg.objs = append(pg.objs, rec)
		}
		pg.raw = nil
	}
	return pg.objs, nil
}

// bytes returns the records as JSON, encoding decoded ones into one buffer.
func (pg *page) bytes() [][]byte {
	if pg.objs == nil {
		return pg.raw
	}
	var buf []byte
	ends := make([]int, 0, len(pg.objs))
	for _, rec := range pg.objs {
		buf = transform.AppendJSON(buf, rec)
		ends = append(ends, len(buf))
	}
	out := make([][]byte, len(ends))
	start := 0
	for i, end := range ends {
		out[i] = buf[start:end:end]
		start = end
	}
	pg.raw, pg.objs = out, nil
	return out
}

// goFilter is a RecordFilter. A page still as sent keeps its records' bytes.
type goFilter struct{ f *transform.Filter }

func (s goFilter) run(_ context.Context, pg *page, in *Input) error {
	in = &Input{Vars: filterVars(in.Vars), Slice: in.Slice}
	if pg.objs == nil {
		kept := pg.raw[:0:0]
		for _, b := range pg.raw {
			rec, err := transform.Decode(b)
			if err != nil {
				return &failure.Error{Failure: protocol.SystemError, Message: fmt.Sprintf("stream %s: %v", pg.stream, err)}
			}
			keep, err := s.f.Keep(rec, in.Vars)
			if err != nil {
				return recordErr(pg.stream, err)
			}
			if keep {
				kept = append(kept, b)
			}
		}
		pg.raw = kept
		return nil
	}
	kept := pg.objs[:0]
	for _, rec := range pg.objs {
		keep, err := s.f.Keep(rec, in.Vars)
		if err != nil {
			return recordErr(pg.stream, err)
		}
		if keep {
			kept = append(kept, rec)
		}
	}
	pg.objs = kept
	return nil
}

// filterVars are a record filter's template variables: the page's, and
// next_page_token, always None. Airbyte's SimpleRetriever parses a page's
// records without the token it was requested with (_parse_records passes
// none to the record selector), so a condition on next_page_token sees None
// on every page, in a sync and in the builder's test read alike.
func filterVars(page interp.Vars) interp.Vars {
	return page.With("next_page_token", nil)
}

type goTransform struct{ t transform.Transformation }

func (s goTransform) run(_ context.Context, pg *page, in *Input) error {
	recs, err := pg.decoded()
	if err != nil {
		return err
	}
	for _, rec := range recs {
		if err := s.t.Apply(rec, in.Vars); err != nil {
			return recordErr(pg.stream, err)
		}
	}
	return nil
}

type goNormalize struct{ n *transform.Normalizer }

func (s goNormalize) run(_ context.Context, pg *page, _ *Input) error {
	recs, err := pg.decoded()
	if err != nil {
		return err
	}
	for _, rec := range recs {
		s.n.Apply(rec)
	}
	return nil
}

// recordErr is a record filter's or transformation's failure on a record: a
// system_error (the API's data or the manifest, not the user's config, as
// Airbyte's runtime reports any exception of a partition's read), unless
// err says otherwise (a template Airbyte refuses to evaluate: a
// config_error).
func recordErr(stream string, err error) error {
	return &failure.Error{Failure: failure.Type(err), Message: fmt.Sprintf("stream %s: %v", stream, err)}
}

// customStep is a custom filter, transformations or schema normalization:
// one call to the components host with the page's records as JSON lines.
type customStep struct {
	host   *components.Host
	op     string // filter, transform or normalize
	c      *manifest.Custom
	paths  []string       // transform: the consecutive custom transformations
	schema map[string]any // normalize: the stream's schema
}

func (s *customStep) run(ctx context.Context, pg *page, in *Input) error {
	params := map[string]any{"slice": in.Slice}
	switch s.op {
	case "transform":
		params["paths"] = s.paths
	case "filter":
		params["next_page_token"] = nil // as the CDK's retriever gives it (filterVars)
	case "normalize":
		params["schema"] = s.schema
	}
	out, err := s.host.CallBlob(ctx, s.c, s.op, params, components.JoinRecords(pg.bytes()), nil)
	if err != nil {
		return err
	}
	pg.raw, pg.objs = components.SplitLines(out), nil
	return nil
}
