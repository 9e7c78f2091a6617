package partition

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"

	"github.com/airbyte-go/source-declarative/manifest"
)

// substream is a SubstreamPartitionRouter: one partition per record of each
// parent, parents in manifest order.
type substream struct {
	env     Env
	parents []*parent
}

// parent is a ParentStreamConfig with its templates rendered.
type parent struct {
	cfg    *manifest.ParentStreamConfig
	name   string   // the parent stream's name
	key    []string // parent_key split on "/"
	keyRaw string
	field  string // partition_field
	extra  [][]string
	lazy   []string
	option *placement
}

// warnedRecords is how many records lacking the parent key are logged one
// by one; the rest are counted in one message when the parent ends.
const warnedRecords = 5

func newSubstream(r *manifest.PartitionRouter, env Env) (*substream, error) {
	if env.ReadParent == nil {
		return nil, fmt.Errorf("%s: no parent reader to read the parent streams with", r.Path)
	}
	s := &substream{env: env}
	for _, pc := range r.Substream.Parents {
		p, err := newParent(pc, env.vars(firstNonNil(pc.Parameters, r.Parameters)))
		if err != nil {
			return nil, err
		}
		s.parents = append(s.parents, p)
	}
	return s, nil
}

func newParent(pc *manifest.ParentStreamConfig, vars map[string]any) (*parent, error) {
	p := &parent{cfg: pc, name: pc.Stream.Name}
	var err error
	if p.keyRaw, err = render(pc.ParentKey, vars, pc.Path+".parent_key"); err != nil {
		return nil, err
	}
	// "/" (or nothing) is the whole record, as dpath reads it (railz's
	// partitions are their parent's records).
	if key := strings.TrimPrefix(p.keyRaw, "/"); key != "" {
		p.key = strings.Split(key, "/")
	}
	for _, seg := range p.key {
		if seg == "" || strings.Contains(seg, "*") {
			return nil, configErr("%s.parent_key: %q must be a path of field names separated by / (no empty segment, no *)", pc.Path, p.keyRaw)
		}
	}
	if p.field, err = render(pc.PartitionField, vars, pc.Path+".partition_field"); err != nil {
		return nil, err
	}
	for i, segs := range pc.ExtraFields {
		var path []string
		for j, seg := range segs {
			s, err := render(seg, vars, fmt.Sprintf("%s.extra_fields[%d][%d]", pc.Path, i, j))
			if err != nil {
				return nil, err
			}
			path = append(path, s)
		}
		p.extra = append(p.extra, path)
	}
	for i, seg := range pc.LazyReadPointer {
		s, err := render(seg, vars, fmt.Sprintf("%s.lazy_read_pointer[%d]", pc.Path, i))
		if err != nil {
			return nil, err
		}
		p.lazy = append(p.lazy, s)
	}
	if p.option, err = place(pc.RequestOption, vars); err != nil {
		return nil, err
	}
	return p, nil
}

func firstNonNil(maps ...map[string]any) map[string]any {
	for _, m := range maps {
		if m != nil {
			return m
		}
	}
	return nil
}

// errStopped ends a parent read when the consumer wants no more partitions.
var errStopped = errors.New("partitions no longer wanted")

func (s *substream) Partitions(ctx context.Context) iter.Seq2[Partition, error] {
	return func(yield func(Partition, error) bool) {
		for _, p := range s.parents {
			skipped := 0
			err := s.env.ReadParent(ctx, p.cfg, func(rec ParentRecord) error {
				part, ok := p.partition(rec)
				if !ok {
					skipped++
					if skipped <= warnedRecords {
						s.env.log("WARN", fmt.Sprintf("Stream %s: a record of parent stream %s has no %q, or a null one (%s.parent_key); it is skipped", s.env.Stream, p.name, p.keyRaw, p.cfg.Path))
					}
					return nil
				}
				if !yield(part, nil) {
					return errStopped
				}
				return nil
			})
			if skipped > warnedRecords {
				s.env.log("WARN", fmt.Sprintf("Stream %s: %d records of parent stream %s had no %q, or a null one, and were skipped", s.env.Stream, skipped, p.name, p.keyRaw))
			}
			if errors.Is(err, errStopped) {
				return
			}
			if err != nil {
				yield(Partition{}, fmt.Errorf("stream %s: reading its parent stream %s failed: %w", s.env.Stream, p.name, err))
				return
			}
		}
	}
}

// partition is the partition of one parent record; false when the record
// lacks the parent key or holds null there.
func (p *parent) partition(rec ParentRecord) (Partition, bool) {
	var data any
	d := json.NewDecoder(bytes.NewReader(rec.Data))
	d.UseNumber()
	if d.Decode(&data) != nil {
		return Partition{}, false
	}
	value, ok := manifest.Lookup(data, p.key)
	if !ok || value == nil {
		// A null key names no child: its request would read another
		// resource (a path segment that collapses) or send "None", as
		// Airbyte's runtime does.
		return Partition{}, false
	}
	parentSlice := rec.Partition
	if parentSlice == nil {
		parentSlice = map[string]any{}
	}
	part := Partition{Keys: map[string]any{p.field: plain(value), "parent_slice": parentSlice}}
	if len(p.extra) > 0 {
		part.Extra = make(map[string]any, len(p.extra))
		for _, path := range p.extra {
			v, _ := manifest.Lookup(data, path)
			part.Extra[strings.Join(path, ".")] = plain(v)
		}
	}
	if p.lazy != nil {
		part.Lazy = []byte("[]")
		if v, ok := manifest.Lookup(data, p.lazy); ok {
			part.Lazy, _ = json.Marshal(v)
		}
	}
	part.Options = p.option.options(part.Keys[p.field])
	return part, true
}

// plain turns decoded JSON numbers into int64 (integers that fit), float64
// (fractions), or keep them as json.Number (integers too large for int64,
// so an id is never rounded).
func plain(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		if !strings.ContainsAny(string(x), ".eE") {
			return x
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = plain(e)
		}
	case []any:
		for i, e := range x {
			x[i] = plain(e)
		}
	}
	return v
}
