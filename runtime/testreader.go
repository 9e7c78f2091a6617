package runtime

import (
	"context"
	"errors"
	"sync"

	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/protocol"
	"github.com/airbyte-go/source-declarative/runtime/incremental"
	"github.com/airbyte-go/source-declarative/runtime/plan"
)

// testReader collects the exchanges of a test read, slice by slice.
type testReader struct {
	r       *Runner
	mu      sync.Mutex
	read    *StreamRead
	current *TestSlice // the slice being read
	stream  string     // the stream read (pages of others are its parents')
	path    string     // its manifest path
	field   string     // the cursor field, "" without one
	// latest is the last state written, since the records emitted after it.
	latest *TestState
	since  int
	// due tells that a partitioned stream's first slice was read and its
	// state not written yet: it is written once the slice's partition is
	// read to its end or its next slice begins, whichever comes first.
	due bool
	// firstWritten tells that a partitioned stream's first state was due.
	firstWritten bool
	// lastShown tells that the last slice closed is shown (see show).
	lastShown bool
}

// slices reads up to MaxSlices slices (each partition's slices in turn) of
// MaxPagesPerSlice pages each, and stops at MaxRecords records. States are
// written where a read writes them in Airbyte's builder: after each slice of
// an incremental stream (after the first slice only for a partitioned one,
// as its cursor writes at most one state in ten minutes), and when the
// stream ends.
func (t *testReader) slices(ctx context.Context, st *manifest.Stream, limits TestLimits, state map[string]any) error {
	p := t.r.planner()
	p.Parents = plan.Limits{Slices: limits.MaxSlices, Pages: limits.MaxPagesPerSlice}
	run, err := p.NewRun(st, nil, state)
	if err != nil {
		return err
	}
	if err := run.Prepare(); err != nil {
		return err
	}
	t.stream, t.path = st.Name, st.Path
	t.field = run.Retriever().Field()
	total, read := 0, 0
	h := plan.Hooks{
		MaxPages: limits.MaxPagesPerSlice,
		Emit: func(records [][]byte, _ []protocol.FileReference) error {
			n := min(len(records), limits.MaxRecords-total)
			total += n
			t.since += n
			if total >= limits.MaxRecords {
				return errLimit
			}
			return nil
		},
		Before: func(sl *incremental.Slice) error {
			t.writeDue(run)
			if read == limits.MaxSlices {
				return errSlicesRead
			}
			read++
			t.current = &TestSlice{Pages: []TestPage{}, SliceDescriptor: sliceDescriptor(sl), State: []*TestState{}, AuxiliaryRequests: []AuxiliaryRequest{}}
			return nil
		},
		After: func(*incremental.Slice) error {
			switch {
			case run.Incremental() && run.Checkpoints() == plan.EachSlice:
				t.write(run.State())
			case run.Checkpoints() == plan.EachPartition && !t.firstWritten:
				t.due, t.firstWritten = true, true
			}
			t.closeSlice()
			return nil
		},
		Failed: func(_ *incremental.Slice, err error) error {
			if errors.Is(err, errLimit) {
				return err
			}
			t.fail(err)
			t.closeSlice()
			return nil
		},
	}
	failed, err := t.readPartitions(ctx, run, h, limits.MaxSlices)
	if !failed && err == nil {
		run.Finish()
	}
	// The stream ends with its state, shown with the last slice, whether
	// the read ended, met the record limit or failed.
	t.write(run.State())
	if t.current != nil {
		t.current.State = []*TestState{t.latest}
	} else {
		t.showLatest()
	}
	return err
}

// readPartitions reads the stream's partitions as Airbyte's builder does:
// those holding its first max slices are made first (their parents read),
// then read in turn; a slice that fails is shown and its error logged, and
// the partition's other slices and the other partitions are read still.
// failed tells that one failed; err is errLimit when the record limit
// stopped the read.
func (t *testReader) readPartitions(ctx context.Context, run *plan.Run, h plan.Hooks, max int) (failed bool, err error) {
	// A partitioned incremental stream's partitions come one behind the
	// router's (run.partitions holds each back until the next is made, as
	// the CDK's per-partition cursor looks one ahead): the parent page of
	// the partition after the last one read is requested too.
	var works []plan.Work
	for w, err := range run.FirstSlices(ctx, max) {
		if err != nil {
			t.fail(err)
			failed = true
			break
		}
		works = append(works, w)
	}
	for _, w := range works {
		err := run.ReadPartition(ctx, w, h)
		switch {
		case errors.Is(err, errSlicesRead):
			return failed, nil
		case errors.Is(err, errLimit):
			return failed, err
		case err == nil:
			t.writeDue(run)
		case errors.Is(err, plan.ErrSliceFailed): // shown and logged by Hooks.Failed
			failed = true
		default:
			t.fail(err)
			failed = true
			if t.current != nil {
				t.closeSlice()
			}
		}
	}
	return failed, nil
}

// writeDue writes a partitioned incremental stream's first state, due since
// its first slice was read, when the partition of that slice was read to its
// end or its next slice begins: the CDK's per-partition cursor writes when a
// slice closes, at most one state in ten minutes (and the last when the
// stream ends), with its partition's parent state once the partition is
// read. It is shown with that slice; none is written for a global cursor
// without parent state, which the reference skips.
func (t *testReader) writeDue(run *plan.Run) {
	if !t.due {
		return
	}
	t.due = false
	if run.Intermediate() {
		t.write(run.State())
		t.showLatest()
	}
}

// showLatest shows the latest state written with the last slice read, if
// that slice is shown.
func (t *testReader) showLatest() {
	if n := len(t.read.Slices); n > 0 && t.lastShown {
		t.read.Slices[n-1].State = []*TestState{t.latest}
	}
}

// closeSlice ends the slice being read: it shows the latest state written.
func (t *testReader) closeSlice() {
	if t.latest != nil {
		t.current.State = []*TestState{t.latest}
	}
	t.show(t.current)
	t.current = nil
}

// show adds a slice read to the StreamRead, unless nothing of it was
// exchanged with the API (its first request failed before an answer, or was
// never sent): Airbyte's builder groups a test read's slices by the pages it
// logged, and shows no slice without one (found on source-pennylane, whose
// plan_items' request could not reach its host).
func (t *testReader) show(sl *TestSlice) {
	t.lastShown = len(sl.Pages) > 0 || len(sl.AuxiliaryRequests) > 0
	if t.lastShown {
		t.read.Slices = append(t.read.Slices, *sl)
	}
}

// fail logs an error that ended a partition or the read, as the builder
// shows an error TRACE: its internal message is the technical detail, or the
// error itself (Airbyte's from_exception).
func (t *testReader) fail(err error) {
	internal := internalMessage(err)
	if internal == "" {
		internal = OneLine(err)
	}
	internal = t.r.Masker.Mask(internal)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.read.Logs = append(t.read.Logs, TestLog{Message: OneLine(err), Level: "ERROR", InternalMessage: &internal})
}

// write writes a state with the records emitted since the one before.
func (t *testReader) write(state map[string]any) {
	t.latest = newTestState(t.stream, state, t.since)
	t.since = 0
}

// log keeps a WARN or ERROR logged during the read.
func (t *testReader) log(level, msg string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.read.Logs = append(t.read.Logs, TestLog{Message: msg, Level: level})
}
