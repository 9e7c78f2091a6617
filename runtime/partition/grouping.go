package partition

import (
	"context"
	"encoding/json"
	"iter"

	"github.com/airbyte-go/source-declarative/manifest"
)

// grouping is a GroupingPartitionRouter: the underlying router's partitions
// in batches of size (the last may be shorter), each batch one partition
// whose keys hold the list of the batch's values. It injects nothing.
//
// With deduplicate, a value seen before is skipped for the whole read, not
// only within its batch (the reference's documentation says per batch, its
// code does it per read, which is what spares requests): the seen values
// are kept in memory.
type grouping struct {
	size        int
	deduplicate bool
	underlying  Router
}

func newGrouping(r *manifest.PartitionRouter, env Env) (*grouping, error) {
	u, err := New(r.Grouping.Underlying, env)
	if err != nil {
		return nil, err
	}
	return &grouping{size: r.Grouping.GroupSize, deduplicate: r.Grouping.Deduplicate, underlying: u}, nil
}

func (g *grouping) Partitions(ctx context.Context) iter.Seq2[Partition, error] {
	return func(yield func(Partition, error) bool) {
		seen := map[string]bool{}
		var batch []Partition
		for part, err := range g.underlying.Partitions(ctx) {
			if err != nil {
				yield(Partition{}, err)
				return
			}
			if g.deduplicate {
				k := canonical(value(part))
				if seen[k] {
					continue
				}
				seen[k] = true
			}
			batch = append(batch, part)
			if len(batch) == g.size {
				if !yield(group(batch), nil) {
					return
				}
				batch = nil
			}
		}
		if len(batch) > 0 {
			yield(group(batch), nil)
		}
	}
}

// value is the partition's key besides parent_slice: list, substream and
// union partitions, the only ones grouped, have exactly one.
func value(p Partition) any {
	for k, v := range p.Keys {
		if k != "parent_slice" {
			return v
		}
	}
	return nil
}

// group makes one partition of a batch: each key of the first partition
// maps to the list of the batch's values, and so do extra fields (null
// where a partition lacks one).
func group(batch []Partition) Partition {
	out := Partition{Keys: map[string]any{}}
	for k := range batch[0].Keys {
		values := make([]any, len(batch))
		for i, p := range batch {
			values[i] = p.Keys[k]
		}
		out.Keys[k] = values
	}
	for _, p := range batch {
		for k := range p.Extra {
			if out.Extra == nil {
				out.Extra = map[string]any{}
			}
			if _, done := out.Extra[k]; done {
				continue
			}
			values := make([]any, len(batch))
			for i, q := range batch {
				values[i] = q.Extra[k]
			}
			out.Extra[k] = values
		}
	}
	return out
}

// canonical is a value's identity for de-duplication (JSON with sorted keys).
func canonical(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
