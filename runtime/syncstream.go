package runtime

import (
	"context"
	"fmt"
	"iter"
	"sync"

	"github.com/airbyte-go/source-declarative/protocol"
	"github.com/airbyte-go/source-declarative/runtime/incremental"
	"github.com/airbyte-go/source-declarative/runtime/plan"
	"github.com/airbyte-go/source-declarative/runtime/retrieve"
	"github.com/airbyte-go/source-declarative/runtime/schedule"
)

// syncStream is a configured stream as a sync reads it (schedule.Stream):
// each slice of each of its partitions is a unit of work of its own, read
// from its first page by whichever worker is free. A stream without
// partition router writes its state after each slice read to its end; one
// with a router and incremental_sync after a partition is read (at most
// once a partitionStateEvery); both once at the end, each with the number
// of records emitted since the previous one. A state never covers a slice
// not read to its end: the cursors keep the slices closed, and a state
// covers only their unbroken run from the start. A stream that fails writes
// the state of what it has read.
type syncStream struct {
	r       *Runner
	name    string
	run     *plan.Run
	err     error // why the stream cannot be read (not in the manifest)
	broken  error // why it fails once started: its partitions' cursor fails on the config (plan.StreamError)
	pg      *progress
	readers readerPool
	failed  bool // set by Finish
}

func (s *syncStream) streamName() string { return s.name }
func (s *syncStream) hasFailed() bool    { return s.failed }

// Start writes STARTED and prepares the stream's retriever and router:
// templates over the config are rendered here, so a config that does not
// fit fails the stream before any request.
func (s *syncStream) Start(context.Context) error {
	if s.err != nil {
		return s.err
	}
	s.r.Out.Status(s.name, protocol.StatusStarted)
	if s.broken != nil {
		return s.broken
	}
	s.pg = &progress{r: s.r, name: s.name, run: s.run}
	if err := s.run.Prepare(); err != nil {
		return err
	}
	s.readers.base = s.run.Retriever()
	if s.run.Cleared() {
		s.pg.last = "{}"
		return s.r.Out.StreamState(s.name, map[string]any{}, 0)
	}
	return nil
}

// Partitions yields a unit of work per slice of each partition, in order.
func (s *syncStream) Partitions(ctx context.Context) iter.Seq2[schedule.Partition, error] {
	return func(yield func(schedule.Partition, error) bool) {
		for w, err := range s.run.Partitions(ctx) {
			if err != nil {
				yield(nil, err)
				return
			}
			p := &partitionRead{s: s, w: w, left: 1}
			for sl := range w.Cursor.Slices() {
				p.add()
				if !yield(&sliceRead{p: p, sl: s.run.InPartition(w, sl)}, nil) {
					return
				}
			}
			if _, err := p.release(); err != nil {
				yield(nil, err)
				return
			}
		}
	}
}

// Finish writes the stream's last state and COMPLETE, or, when it failed
// once started, the state of what was read (of a stream with a cursor: where
// a sync resumes, its start when no slice was read; of a full-refresh
// stream: {"__ab_no_cursor_state_message": true}), as the reference's
// ConcurrentReadProcessor writes every stream's state when it is done,
// failed or not, then a TRACE ERROR per error (a partition's each, as the
// reference reports each exception) and INCOMPLETE.
func (s *syncStream) Finish(errs []error) {
	if len(errs) == 0 {
		s.run.Finish()
		s.pg.start()
		err := s.pg.checkpoint(false)
		if err == nil {
			s.run.Complete()
			s.r.log("INFO", fmt.Sprintf("Read %d records from stream %s", s.pg.total, s.name))
			s.r.Out.Status(s.name, protocol.StatusComplete)
			return
		}
		errs = []error{err}
	} else if s.pg != nil {
		if s.run.Settled() {
			s.run.Finish()
		}
		s.pg.checkpoint(false)
	}
	s.failed = true
	for _, err := range errs {
		s.r.Out.Error(FailureType(err), OneLine(err), internalMessage(err), s.name)
	}
	s.r.Out.Status(s.name, protocol.StatusIncomplete)
}

// partitionRead is a partition whose slices are being read: the last slice
// read (or the end of its slices, if later) marks it read.
type partitionRead struct {
	s    *syncStream
	w    plan.Work
	mu   sync.Mutex
	left int // slices not read yet, and one while they are being made
}

func (p *partitionRead) add() {
	p.mu.Lock()
	p.left++
	p.mu.Unlock()
}

// release says a slice was read (or the slices were all made) and tells
// whether it was the last; the last one marks the partition read, and a
// stream with a router and incremental_sync then writes its state
// (throttled).
func (p *partitionRead) release() (last bool, err error) {
	p.mu.Lock()
	p.left--
	last = p.left == 0
	p.mu.Unlock()
	if !last {
		return false, nil
	}
	if !p.s.run.Done(p.w) {
		return true, nil // no cursor per partition, or a duplicate partition, not read
	}
	return true, p.s.pg.checkpoint(true)
}

// sliceRead is one slice of a partition, the unit a worker reads.
type sliceRead struct {
	p  *partitionRead
	sl *incremental.Slice
}

// Read reads the slice's pages and closes it; a stream without router then
// writes its state, and one with a cursor per partition writes it
// (throttled) after any slice, as the CDK's per-partition cursor tries at
// each slice it closes: its first state comes after the first slice read,
// not after the first partition.
func (r *sliceRead) Read(ctx context.Context) error {
	s, w := r.p.s, r.p.w
	sr := s.readers.get(w.Cursor, s.run.LazyBody(w))
	err := s.run.ReadSlice(ctx, sr, w, r.sl, 0, s.pg.emit)
	s.readers.put(sr)
	if err != nil {
		return err
	}
	if s.run.Checkpoints() == plan.EachSlice {
		if err := s.pg.checkpoint(false); err != nil {
			return err
		}
	}
	last, err := r.p.release()
	if err != nil || last || s.run.Checkpoints() != plan.EachPartition {
		return err
	}
	return s.pg.checkpoint(true)
}

// readerPool keeps the retrievers of a stream that no slice is reading: a
// slice takes one and sets its cursor, so that a stream makes one retriever
// (and one record pipeline) per slice read at the same time, not per slice.
type readerPool struct {
	mu   sync.Mutex
	base retrieve.Retriever
	free []retrieve.Retriever
}

// get returns a retriever observing cursor c, whose slices start with lazy
// (nil: with a request).
func (p *readerPool) get(c incremental.Cursor, lazy []byte) retrieve.Retriever {
	p.mu.Lock()
	var sr retrieve.Retriever
	if n := len(p.free); n > 0 {
		sr, p.free = p.free[n-1], p.free[:n-1]
	}
	p.mu.Unlock()
	if sr == nil {
		sr = p.base.Worker(c, true) // the sync's emit copies the records out
	}
	sr.Rebind(c, lazy)
	return sr
}

func (p *readerPool) put(sr retrieve.Retriever) {
	p.mu.Lock()
	p.free = append(p.free, sr)
	p.mu.Unlock()
}
