package incremental

import (
	"cmp"
	"slices"
	"sync"
)

// interval is a range of cursor values read completely, with the highest
// value a record of it carried.
type interval struct {
	lo, hi int64
	max    int64
	hasMax bool
}

// history is the set of intervals read, kept sorted and merged as the CDK's
// concurrent cursor merges them: an interval starting at most gap after the
// end of another continues it. It is safe for concurrent use.
type history struct {
	mu   sync.Mutex
	gap  int64
	list []interval
}

func newHistory(gap int64, initial ...interval) *history {
	h := &history{gap: gap}
	for _, iv := range initial {
		h.add(iv)
	}
	return h
}

// add records an interval read and merges the touching ones.
func (h *history) add(iv interval) {
	h.mu.Lock()
	defer h.mu.Unlock()
	list := append(h.list, iv)
	slices.SortFunc(list, func(a, b interval) int {
		if a.lo != b.lo {
			return cmp.Compare(a.lo, b.lo)
		}
		return cmp.Compare(a.hi, b.hi)
	})
	merged := list[:1]
	for _, cur := range list[1:] {
		last := &merged[len(merged)-1]
		if last.hi+h.gap < cur.lo {
			merged = append(merged, cur)
			continue
		}
		last.hi = max(last.hi, cur.hi)
		switch {
		case cur.hasMax && last.hasMax:
			last.max = max(last.max, cur.max)
		case cur.hasMax:
			last.max, last.hasMax = cur.max, true
		}
	}
	h.list = merged
}

// complete is the highest value of the unbroken run of intervals that begins
// at start: everything up to it has been read. With no such run (a gap right
// at the start) it is start itself.
func (h *history) complete(start int64) int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.list) == 0 || h.list[0].lo > start+h.gap {
		return start
	}
	first := h.list[0]
	if first.hasMax {
		return max(first.max, start)
	}
	return max(first.lo, start)
}

// snapshot returns a copy of the merged intervals.
func (h *history) snapshot() []interval {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.list)
}
