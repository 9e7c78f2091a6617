package plan

import (
	"context"
	"iter"
	"time"

	"github.com/airbyte-go/source-declarative/runtime/failure"
	"github.com/airbyte-go/source-declarative/runtime/incremental"
	"github.com/airbyte-go/source-declarative/runtime/partition"
	"github.com/airbyte-go/source-declarative/runtime/retrieve"
)

// perPartition is the partitioning of a stream with a partition router and
// incremental_sync: a cursor per partition, kept with the global state and
// the incremental_dependency parents' states.
type perPartition struct {
	routing
	cursors *incremental.Partitioned
	// parents are the incremental_dependency parents being read or read,
	// whose states the child's keeps; only the goroutine ranging over the
	// partitions touches the map.
	parents map[string]*Run
	now     func() time.Time
}

func (pp *perPartition) options() retrieve.Options {
	return retrieve.Options{Cursor: incremental.FullRefresh{}, Field: pp.cursors.Field()} // each partition brings its own
}

// partitions yields each partition once the next one is made (or the
// router ended), its cursor opened then, with the parents' state taken when
// it was made, as the reference's per-partition cursor looks one partition
// ahead: the partition made ahead has no cursor yet.
func (pp *perPartition) partitions(ctx context.Context) iter.Seq2[Work, error] {
	return func(yield func(Work, error) bool) {
		var held *partition.Partition
		var heldParent map[string]any
		open := func() bool {
			w := Work{Part: *held}
			var err error
			if w.Cursor, w.seq, err = pp.cursors.Open(held.Keys, heldParent); err != nil {
				yield(Work{}, failure.Config("%v", err))
				return false
			}
			return yield(w, nil)
		}
		for part, err := range pp.router.Partitions(ctx) {
			if err != nil {
				yield(Work{}, asError(err))
				return
			}
			if held != nil && !open() {
				return
			}
			held, heldParent = &part, pp.parentSnapshot()
		}
		if held != nil {
			open()
		}
	}
}

// parentSnapshot is the parents' state now, as the reference's
// get_stream_state reads its parents' cursors (nil: no
// incremental_dependency parent).
func (pp *perPartition) parentSnapshot() map[string]any {
	if len(pp.parents) == 0 {
		return nil
	}
	out := make(map[string]any, len(pp.parents))
	for k, p := range pp.parents {
		out[k] = p.State()
	}
	return out
}

// done is false for a duplicate partition, not read.
func (pp *perPartition) done(w Work) bool { return pp.cursors.Done(w.seq, w.Cursor) }

// finish moves the global state and the parent state to what was read.
func (pp *perPartition) finish() {
	pp.cursors.SetParentState(pp.parentSnapshot())
	pp.cursors.Finish(pp.now())
}

func (pp *perPartition) settled() bool { return pp.cursors.Settled() }

func (pp *perPartition) state() map[string]any { return pp.cursors.State() }

func (pp *perPartition) incremental() bool { return true }

// intermediate: see incremental.Partitioned.Intermediate.
func (pp *perPartition) intermediate() bool { return pp.cursors.Intermediate() }

func (pp *perPartition) checkpoints() Checkpoints { return EachPartition }

func (pp *perPartition) tracksParents() bool { return true }

func (pp *perPartition) parentStart(name, field string) map[string]any {
	return pp.cursors.ParentStart(name, field)
}

func (pp *perPartition) keepParent(name string, parent *Run) {
	if pp.parents == nil {
		pp.parents = map[string]*Run{}
	}
	pp.parents[name] = parent
}
