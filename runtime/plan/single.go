package plan

import (
	"context"
	"iter"

	"github.com/airbyte-go/source-declarative/runtime/incremental"
	"github.com/airbyte-go/source-declarative/runtime/retrieve"
)

// single is the partitioning of a stream without partition router: one
// partition, read with the stream's cursor.
type single struct {
	untracked
	cursor incremental.Cursor
}

func (s *single) options() retrieve.Options { return retrieve.Options{Cursor: s.cursor} }

func (s *single) prepare(*Run) error { return nil }

func (s *single) partitions(context.Context) iter.Seq2[Work, error] {
	return func(yield func(Work, error) bool) {
		yield(Work{Cursor: s.cursor}, nil)
	}
}

func (s *single) inPartition(_ Work, sl *incremental.Slice) *incremental.Slice { return sl }

func (s *single) done(Work) bool { return false }

func (s *single) finish() {}

func (s *single) settled() bool { return true }

func (s *single) state() map[string]any { return s.cursor.State() }

func (s *single) incremental() bool {
	_, full := s.cursor.(incremental.FullRefresh)
	return !full
}

func (s *single) intermediate() bool { return true }

func (s *single) checkpoints() Checkpoints { return EachSlice }
