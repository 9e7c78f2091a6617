package plan

import (
	"context"
	"iter"

	"github.com/airbyte-go/source-declarative/runtime/incremental"
	"github.com/airbyte-go/source-declarative/runtime/partition"
	"github.com/airbyte-go/source-declarative/runtime/retrieve"
)

// routing is what the partitionings of a stream with a partition router
// share: the router, made by prepare.
type routing struct {
	router partition.Router
}

func (r *routing) prepare(run *Run) error {
	var err error
	r.router, err = run.newRouter()
	return err
}

func (r *routing) inPartition(w Work, sl *incremental.Slice) *incremental.Slice {
	sl.Partition, sl.Extra = w.Part.Keys, w.Part.Extra
	if len(w.Part.Options) > 0 {
		sl.Inject = w.Part.Inject
	}
	return sl
}

// routed is the partitioning of a stream with a partition router and
// without incremental_sync: each partition is read whole, with a
// full-refresh cursor.
type routed struct {
	routing
	untracked
}

func (r *routed) options() retrieve.Options {
	return retrieve.Options{Cursor: incremental.FullRefresh{}} // each partition brings its own
}

func (r *routed) partitions(ctx context.Context) iter.Seq2[Work, error] {
	return func(yield func(Work, error) bool) {
		for part, err := range r.router.Partitions(ctx) {
			if err != nil {
				yield(Work{}, asError(err))
				return
			}
			if !yield(Work{Part: part, Cursor: incremental.FullRefresh{}}, nil) {
				return
			}
		}
	}
}

func (r *routed) done(Work) bool { return false }

func (r *routed) finish() {}

func (r *routed) settled() bool { return true }

func (r *routed) state() map[string]any { return incremental.FullRefresh{}.State() }

func (r *routed) incremental() bool { return false }

func (r *routed) intermediate() bool { return true }

func (r *routed) checkpoints() Checkpoints { return AtEnd }
