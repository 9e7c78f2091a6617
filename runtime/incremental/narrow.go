package incremental

// Narrower is a cursor that can start a slice again at the newest cursor
// value read in it, for a retriever whose pagination is reset with
// SPLIT_USING_CURSOR (the CDK's ConcurrentCursor.reduce_slice_range).
type Narrower interface {
	// Narrowed is s from the newest cursor value observed in it (records
	// before it were read already) to its end; ok is false when no value was
	// observed. The same partition, extra fields and request options, with
	// the start moved, are used for the requests; records are still observed
	// into s, which is the slice closed. ascending is false when a record came
	// after one with a higher value: narrowing may then skip records.
	Narrowed(s *Slice) (n *Slice, ascending, ok bool)
}

// Narrowed starts s at the newest value observed in it, in datetime_format.
// As in the CDK, the start is that value itself, not one granularity after:
// the records on it are read again.
func (c *DatetimeCursor) Narrowed(s *Slice) (*Slice, bool, bool) {
	c.settle(s)
	if !s.seen {
		return s, !s.descending, false
	}
	spec := c.spec
	start := spec.out.FormatMicros(s.max)
	n := &Slice{Partition: s.Partition, Extra: s.Extra, Inject: s.Inject, lower: s.max, upper: s.upper}
	n.Cursor = make(map[string]any, len(s.Cursor))
	for k, v := range s.Cursor {
		n.Cursor[k] = v
	}
	n.Cursor[spec.startKey] = start
	for _, o := range s.Options {
		if o.Where == spec.startOption {
			o.Value = start
		}
		n.Options = append(n.Options, o)
	}
	return n, !s.descending, true
}
