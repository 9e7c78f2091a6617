// Package schedule reads the streams of a sync on one pool of workers, as
// Airbyte's concurrent source does: the streams start in order, a few at a
// time make their partitions (reading parent streams as they go), and every
// partition of every stream waits its turn for the same workers. A
// partition that fails does not stop its stream: its error is kept and the
// stream's other partitions are read, as the concurrent source reads them,
// so that one partition that keeps failing (an account the API refuses)
// does not keep the others from being read sync after sync. A stream whose
// partitions cannot be made (its router or a parent fails) makes no more.
// The other streams are not affected.
package schedule

import (
	"context"
	"iter"
	"sync"
)

// Stream is one stream of a sync.
type Stream interface {
	// Start is called when the stream's turn to make partitions comes, in
	// the order the streams were given, before its partitions are asked
	// for; an error fails the stream without any.
	Start(ctx context.Context) error
	// Partitions yields the stream's partitions, made as they are asked
	// for; an error fails the stream, and no more is asked for.
	Partitions(ctx context.Context) iter.Seq2[Partition, error]
	// Finish is called once, after every partition made was read, with the
	// stream's errors in the order they came (none: every partition was
	// read).
	Finish(errs []error)
}

// Partition is one unit of work of a stream, read by one worker.
type Partition interface {
	Read(ctx context.Context) error
}

// Limits say how much runs at once.
type Limits struct {
	Workers    int // partitions read at once, of every stream together
	Generators int // streams making partitions at once
}

// ForLevel are the limits of Airbyte's concurrent source for a
// concurrency_level: that many workers, and half as many streams making
// partitions at once (at least one).
func ForLevel(level int) Limits {
	return Limits{Workers: max(level, 1), Generators: max(level/2, 1)}
}

// job is a partition handed to the workers, with its stream.
type job struct {
	part Partition
	run  *running
}

// running is a stream being read: its partitions not yet read (and one
// more while they are being made), and its errors.
type running struct {
	s    Stream
	done func()

	mu        sync.Mutex
	left      int
	errs      []error
	cancelled bool // the sync's context ended: said once
}

func (r *running) fail(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, err)
}

// cancel keeps the error of the sync's context, once.
func (r *running) cancel(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.cancelled {
		r.cancelled = true
		r.errs = append(r.errs, err)
	}
}

func (r *running) add() {
	r.mu.Lock()
	r.left++
	r.mu.Unlock()
}

// release says a partition (or the making of them) is over; the last one
// finishes the stream.
func (r *running) release() {
	r.mu.Lock()
	r.left--
	last, errs := r.left == 0, r.errs
	r.mu.Unlock()
	if last {
		r.s.Finish(errs)
		r.done()
	}
}

// Run reads every stream and returns once each is finished. The partitions
// go from the streams making them to the workers through a queue of at most
// as many as the pool (see pool): what is held in memory is bounded by the
// workers and the streams making partitions, not by the number of
// partitions, and follows the partitions in flight, not the limit.
func Run(ctx context.Context, streams []Stream, lim Limits) {
	lim = Limits{Workers: max(lim.Workers, 1), Generators: max(lim.Generators, 1)}
	workers := newPool(lim.Workers, func(j job) {
		if ctx.Err() != nil {
			j.run.cancel(ctx.Err())
		} else if err := j.part.Read(ctx); err != nil {
			j.run.fail(err)
		}
		j.run.release()
	})
	var all sync.WaitGroup
	generating := make(chan struct{}, lim.Generators)
	for _, s := range streams {
		generating <- struct{}{}
		all.Add(1)
		r := &running{s: s, done: all.Done, left: 1}
		if err := s.Start(ctx); err != nil {
			r.fail(err)
			<-generating
			r.release()
			continue
		}
		go func() {
			defer r.release()
			defer func() { <-generating }()
			for part, err := range s.Partitions(ctx) {
				if err != nil {
					r.fail(err)
					return
				}
				r.add()
				if !workers.put(ctx, job{part, r}) {
					r.cancel(ctx.Err())
					r.release()
					return
				}
			}
		}()
	}
	all.Wait()
	workers.close()
}
