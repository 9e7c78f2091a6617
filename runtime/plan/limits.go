package plan

import (
	"context"
	"iter"
)

// Limits bound a read as a Connector Builder test read bounds every stream
// it makes, its parents included: at most Slices slices (0: all), its
// partitions' slices in order, the partitions after them not made, each of
// at most Pages pages (0: all).
type Limits struct {
	Slices, Pages int
}

// FirstSlices yields the run's partitions up to the one holding its max-th
// slice (0: all of them), that one cut there, and makes no partition after
// it, as the CDK cuts a test read's slices (islice over the stream's
// slices): the parent pages a later partition would need are not requested.
func (run *Run) FirstSlices(ctx context.Context, max int) iter.Seq2[Work, error] {
	if max <= 0 {
		return run.Partitions(ctx)
	}
	return func(yield func(Work, error) bool) {
		left := max
		for w, err := range run.Partitions(ctx) {
			if err == nil {
				n := 0
				for range w.Cursor.Slices() {
					n++
				}
				w.slices = min(n, left)
				left -= w.slices
			}
			if !yield(w, err) || err != nil || left == 0 {
				return
			}
		}
	}
}
