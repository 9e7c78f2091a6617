package schedule

import (
	"context"
	"iter"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// stream makes n partitions that wait for their turn on gate.
type stream struct {
	n        int
	gate     chan struct{}
	reading  *atomic.Int32
	most     *atomic.Int32
	finished []error
	done     bool
}

func (s *stream) Start(context.Context) error { return nil }

func (s *stream) Partitions(context.Context) iter.Seq2[Partition, error] {
	return func(yield func(Partition, error) bool) {
		for range s.n {
			if !yield(part{s}, nil) {
				return
			}
		}
	}
}

func (s *stream) Finish(errs []error) { s.finished, s.done = errs, true }

type part struct{ s *stream }

func (p part) Read(context.Context) error {
	now := p.s.reading.Add(1)
	for {
		most := p.s.most.Load()
		if now <= most || p.s.most.CompareAndSwap(most, now) {
			break
		}
	}
	<-p.s.gate
	p.s.reading.Add(-1)
	return nil
}

// Workers start as partitions arrive: a limit of a million with three
// partitions runs three goroutines reading, not a million, and holds no
// queue of a million places.
func TestWorkersStartAsPartitionsArrive(t *testing.T) {
	var reading, most atomic.Int32
	s := &stream{n: 3, gate: make(chan struct{}), reading: &reading, most: &most}
	before := runtime.NumGoroutine()
	var heap0 runtime.MemStats
	runtime.ReadMemStats(&heap0)
	var wg sync.WaitGroup
	wg.Go(func() { Run(context.Background(), []Stream{s}, ForLevel(1_000_000)) })
	for reading.Load() < 3 {
		runtime.Gosched()
	}
	during := runtime.NumGoroutine() - before
	var heap1 runtime.MemStats
	runtime.ReadMemStats(&heap1)
	close(s.gate)
	wg.Wait()
	if most.Load() != 3 || !s.done || s.finished != nil {
		t.Fatalf("read at once %d, finished %v %v", most.Load(), s.done, s.finished)
	}
	// Run, the stream's generator, and one worker per partition.
	if during > 6 {
		t.Errorf("%d goroutines while 3 partitions are read", during)
	}
	if grown := int64(heap1.HeapAlloc) - int64(heap0.HeapAlloc); grown > 1<<20 {
		t.Errorf("the heap grew by %d bytes for 3 partitions", grown)
	}
}

// At most Workers partitions are read at once.
func TestWorkersAreBounded(t *testing.T) {
	var reading, most atomic.Int32
	s := &stream{n: 50, gate: make(chan struct{}), reading: &reading, most: &most}
	var wg sync.WaitGroup
	wg.Go(func() { Run(context.Background(), []Stream{s}, Limits{Workers: 4, Generators: 1}) })
	for reading.Load() < 4 {
		runtime.Gosched()
	}
	for range 1000 {
		runtime.Gosched() // time for a fifth to start, if it could
	}
	close(s.gate)
	wg.Wait()
	if most.Load() != 4 || !s.done {
		t.Errorf("read at once %d, want 4; finished %v", most.Load(), s.done)
	}
}
