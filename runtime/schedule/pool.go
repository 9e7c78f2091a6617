package schedule

import (
	"context"
	"sync"
)

// pool is a queue of jobs and the workers that read them, as a buffered
// channel of size limit read by limit goroutines behaves, except that both
// cost only what is in use: a worker is started when a job is queued and
// none is idle, up to limit, and the queue holds the jobs waiting, not
// limit places. A concurrency_level of a million reading three partitions
// costs three workers.
type pool struct {
	limit int
	run   func(job)
	room  chan struct{} // a place per job waiting; empty structs: no buffer

	mu      sync.Mutex
	wake    *sync.Cond
	queue   []job
	idle    int // workers waiting for a job
	started int
	closed  bool
	workers sync.WaitGroup
}

func newPool(limit int, run func(job)) *pool {
	p := &pool{limit: limit, run: run, room: make(chan struct{}, limit)}
	p.wake = sync.NewCond(&p.mu)
	return p
}

// put queues j once the queue has room (limit jobs waiting at most); false
// when ctx ended first, j not queued.
func (p *pool) put(ctx context.Context, j job) bool {
	select {
	case p.room <- struct{}{}:
	case <-ctx.Done():
		return false
	}
	p.mu.Lock()
	p.queue = append(p.queue, j)
	if len(p.queue) > p.idle && p.started < p.limit {
		p.started++
		p.workers.Go(p.work)
	} else {
		p.wake.Signal()
	}
	p.mu.Unlock()
	return true
}

// work reads jobs until the pool is closed and its queue empty.
func (p *pool) work() {
	for {
		p.mu.Lock()
		for len(p.queue) == 0 && !p.closed {
			p.idle++
			p.wake.Wait()
			p.idle--
		}
		if len(p.queue) == 0 {
			p.mu.Unlock()
			return
		}
		j := p.queue[0]
		p.queue[0] = job{}
		p.queue = p.queue[1:]
		if len(p.queue) == 0 {
			p.queue = nil // let a long queue's array go
		}
		p.mu.Unlock()
		<-p.room
		p.run(j)
	}
}

// close waits for every worker to end, once no more jobs are put.
func (p *pool) close() {
	p.mu.Lock()
	p.closed = true
	p.wake.Broadcast()
	p.mu.Unlock()
	p.workers.Wait()
}
