package plan

import (
	"context"
	"iter"

	"github.com/airbyte-go/source-declarative/runtime/incremental"
	"github.com/airbyte-go/source-declarative/runtime/retrieve"
)

// partitioning is how a run splits its stream into partitions and keeps
// their cursors: one partition with the stream's cursor (single), a
// router's partitions read whole (routed), or a router's partitions each
// with its own cursor (perPartition).
type partitioning interface {
	// options are the retriever options the partitioning sets: the cursor
	// the retriever starts with and the cursor field.
	options() retrieve.Options
	// prepare makes what the partitions come from (the router), once the
	// run's retriever is made.
	prepare(run *Run) error
	// partitions yields the partitions to read, each with its cursor.
	partitions(ctx context.Context) iter.Seq2[Work, error]
	// inPartition gives a slice of w's cursor the partition's keys, extra
	// fields and request options.
	inPartition(w Work, sl *incremental.Slice) *incremental.Slice
	// done marks w read, its slices all closed; it tells whether the
	// stream's state moved with it and is to be written (throttled).
	done(w Work) bool
	// finish moves the state to what was read, once every partition was.
	finish()
	// settled tells that no partition opened is left half read.
	settled() bool
	// state is the stream's state now.
	state() map[string]any
	// incremental tells whether the stream's state moves (a cursor).
	incremental() bool
	// intermediate tells whether a state written while the stream is read
	// holds what it should.
	intermediate() bool
	// checkpoints is when a read writes the stream's state before its end.
	checkpoints() Checkpoints
	// tracksParents tells whether the states of the incremental_dependency
	// parents are kept in the stream's.
	tracksParents() bool
	// parentStart is the state a tracked parent starts from, taken from the
	// stream's incoming state (nil: its start); field is its cursor field.
	parentStart(name, field string) map[string]any
	// keepParent keeps a tracked parent being read, whose state the
	// stream's keeps.
	keepParent(name string, parent *Run)
}

// Checkpoints is when a read writes a stream's state before its end.
type Checkpoints int

const (
	// AtEnd is a stream whose state is written once it is read (a
	// partition router without incremental_sync).
	AtEnd Checkpoints = iota
	// EachSlice is a stream whose state is written after each slice read
	// (no partition router).
	EachSlice
	// EachPartition is a stream whose state is written after a partition
	// is read, throttled (a cursor per partition).
	EachPartition
)

// untracked is a partitioning that keeps no parent's state.
type untracked struct{}

func (untracked) tracksParents() bool                       { return false }
func (untracked) parentStart(string, string) map[string]any { return nil }
func (untracked) keepParent(string, *Run)                   {}
