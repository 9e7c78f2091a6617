package partition

import (
	"context"
	"fmt"
	"iter"

	"github.com/airbyte-go/source-declarative/manifest"
)

// product is a list of routers in partition_router: every combination of
// their partitions, the first router outermost. Keys and extra fields are
// merged, the first router winning a clash, and each router injects its own
// options (the first again winning a clash on the same request field). Every
// router's partitions are read, in order, before the first combination, as
// the CDK's itertools.product reads them all first: a router's parents are
// requested in the reference's order (a test read shows them), and a router
// that fails yields no combination.
type product struct {
	routers []Router
}

func newProduct(r *manifest.PartitionRouter, env Env) (*product, error) {
	for _, sub := range r.Product {
		if sub.Type == manifest.SubstreamRouter {
			env.log("WARN", fmt.Sprintf("Stream %s: %s is in a list of partition routers: its parents' state is not kept in the stream's state, so incremental_dependency cannot apply", env.Stream, sub.Path))
		}
	}
	routers, err := newAll(r.Product, env)
	if err != nil {
		return nil, err
	}
	return &product{routers: routers}, nil
}

func (p *product) Partitions(ctx context.Context) iter.Seq2[Partition, error] {
	return func(yield func(Partition, error) bool) {
		all, err := collect(ctx, p.routers)
		if err != nil {
			yield(Partition{}, err)
			return
		}
		for _, outer := range all[0] {
			if !combine(outer, all[1:], yield) {
				return
			}
		}
	}
}

// collect reads every partition of each router.
func collect(ctx context.Context, routers []Router) ([][]Partition, error) {
	all := make([][]Partition, 0, len(routers))
	for _, r := range routers {
		var parts []Partition
		for part, err := range r.Partitions(ctx) {
			if err != nil {
				return nil, err
			}
			parts = append(parts, part)
		}
		all = append(all, parts)
	}
	return all, nil
}

// combine yields outer merged with each combination of the inner lists, the
// last list varying fastest. False when the consumer stopped.
func combine(outer Partition, inner [][]Partition, yield func(Partition, error) bool) bool {
	if len(inner) == 0 {
		return yield(outer, nil)
	}
	for _, next := range inner[0] {
		if !combine(merge(outer, next), inner[1:], yield) {
			return false
		}
	}
	return true
}

// merge adds b's keys, extra fields and options to a's, a winning clashes.
func merge(a, b Partition) Partition {
	out := Partition{Keys: mergeMaps(a.Keys, b.Keys), Extra: mergeMaps(a.Extra, b.Extra), Lazy: a.Lazy}
	if out.Lazy == nil {
		out.Lazy = b.Lazy
	}
	seen := map[string]bool{}
	for _, o := range append(append([]Option{}, a.Options...), b.Options...) {
		if !seen[o.key()] {
			seen[o.key()] = true
			out.Options = append(out.Options, o)
		}
	}
	return out
}

// mergeMaps is a's entries and b's, a winning a clash.
func mergeMaps(a, b map[string]any) map[string]any {
	if a == nil && b == nil {
		return nil
	}
	out := make(map[string]any, len(a)+len(b))
	for k, v := range b {
		out[k] = v
	}
	for k, v := range a {
		out[k] = v
	}
	return out
}
