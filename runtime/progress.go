package runtime

import (
	"sync"
	"time"

	"github.com/airbyte-go/source-declarative/protocol"
	"github.com/airbyte-go/source-declarative/runtime/plan"
)

// partitionStateEvery is the least time between two states of a stream
// with a partition router while it is read (the first and the last are
// always written): each holds every partition's cursor, so writing one per
// partition would grow as their square. The reference waits ten minutes.
const partitionStateEvery = time.Minute

// progress writes the records and states of one stream, from any worker.
type progress struct {
	r       *Runner
	name    string
	run     *plan.Run
	mu      sync.Mutex
	running bool
	count   int64 // records since the previous state
	total   int64
	last    string    // the previous state's JSON
	lastAt  time.Time // when it was written
}

// start writes RUNNING, if no record or state did.
func (pg *progress) start() {
	pg.mu.Lock()
	defer pg.mu.Unlock()
	pg.runningLocked()
}

// runningLocked writes the stream's RUNNING status once: before its first
// record, or before its first state when it has none, so that a stream's
// statuses and states come in the protocol's order (STARTED, RUNNING,
// records and states, COMPLETE).
func (pg *progress) runningLocked() {
	if !pg.running {
		pg.running = true
		pg.r.Out.Status(pg.name, protocol.StatusRunning)
	}
}

// emit writes the records of one page, whole, in order, each with its
// file (retrieve.Emit).
func (pg *progress) emit(records [][]byte, files []protocol.FileReference) error {
	pg.mu.Lock()
	defer pg.mu.Unlock()
	pg.runningLocked()
	pg.count += int64(len(records))
	pg.total += int64(len(records))
	return pg.r.Out.WriteRecords(pg.name, records, files, pg.r.Now().UnixMilli())
}

// checkpoint writes the stream's state unless it is the previous one with
// no record since; throttled, it also waits partitionStateEvery after the
// previous one, and writes no global state without parent state (that
// skipped state starts the wait too, as the reference's throttle is spent
// before it looks at the parent state).
func (pg *progress) checkpoint(throttled bool) error {
	pg.mu.Lock()
	defer pg.mu.Unlock()
	if throttled {
		if !pg.lastAt.IsZero() && time.Since(pg.lastAt) < partitionStateEvery {
			return nil
		}
		if !pg.run.Intermediate() {
			pg.lastAt = time.Now()
			return nil
		}
	}
	state := pg.run.State()
	text := jsonText(state)
	if text == pg.last && pg.count == 0 {
		return nil
	}
	pg.last, pg.lastAt = text, time.Now()
	pg.runningLocked()
	err := pg.r.Out.StreamState(pg.name, state, pg.count)
	pg.count = 0
	return err
}
