package partition

import (
	"context"
	"iter"

	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/manifest"
)

// union is a UnionPartitionRouter: its routers' partitions in order, each
// value of the partition field once (the first occurrence wins, for the
// whole read). A partition holds only the partition field; the other keys
// (such as parent_slice) move to its extra fields. It injects nothing.
type union struct {
	path    string
	field   string
	routers []Router
}

func newUnion(r *manifest.PartitionRouter, env Env) (*union, error) {
	field, err := render(r.Union.PartitionField, env.vars(r.Parameters), r.Path+".partition_field")
	if err != nil {
		return nil, err
	}
	routers, err := newAll(r.Union.Routers, env)
	if err != nil {
		return nil, err
	}
	return &union{path: r.Path, field: field, routers: routers}, nil
}

func (u *union) Partitions(ctx context.Context) iter.Seq2[Partition, error] {
	return func(yield func(Partition, error) bool) {
		seen := map[string]bool{}
		for _, r := range u.routers {
			for part, err := range r.Partitions(ctx) {
				if err != nil {
					yield(Partition{}, err)
					return
				}
				value, ok := part.Keys[u.field]
				if !ok {
					yield(Partition{}, configErr("%s: every partition of a UnionPartitionRouter needs the partition field %q, got keys %v", u.path, u.field, interp.SortedKeys(part.Keys)))
					return
				}
				if seen[canonical(value)] {
					continue
				}
				seen[canonical(value)] = true
				out := Partition{Keys: map[string]any{u.field: value}, Lazy: part.Lazy}
				for k, v := range part.Extra {
					out.setExtra(k, v)
				}
				for k, v := range part.Keys {
					if k != u.field {
						out.setExtra(k, v)
					}
				}
				if !yield(out, nil) {
					return
				}
			}
		}
	}
}

func (p *Partition) setExtra(k string, v any) {
	if p.Extra == nil {
		p.Extra = map[string]any{}
	}
	p.Extra[k] = v
}
