// Package incremental holds the cursors of incremental streams: the slices a
// read is cut into, the cursor values observed in the records emitted, the
// state written after each slice read to its end and the state a read starts
// from. It follows the Airbyte declarative CDK's concurrent cursor: slices may
// be read in any order (and, later, at the same time), and a state covers
// only the unbroken run of slices read to their end.
package incremental

import (
	"iter"

	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/runtime/request"
)

// Cursor is the position of a stream, or of one partition of it. Observe is
// called from the goroutine reading the slice; Close and State may be called
// from any goroutine, in any order of slices.
type Cursor interface {
	// Slices yields the slices to read, in order, made when asked for.
	Slices() iter.Seq[*Slice]
	// Field is the top-level record key holding the cursor value ("": none).
	Field() string
	// Observe takes the cursor value (raw JSON, nil when the record has none)
	// of a record emitted while reading s. An error says the value cannot be
	// read; the record stays emitted and the state does not move for it.
	Observe(s *Slice, raw []byte) error
	// Keep tells whether a record with this cursor value (raw JSON) belongs to
	// the sync's window; a value that cannot be read is kept.
	Keep(raw []byte) bool
	// Close records that s was read to its end.
	Close(s *Slice)
	// State is the stream state: it covers the records of the slices closed
	// in an unbroken run from the start of the sync, never more.
	State() map[string]any
}

// Slice is one unit of a read: each of its pages is requested with its
// options, and its records count for the state once it is closed.
type Slice struct {
	// Partition holds the keys of a partition router (none without one).
	Partition map[string]any
	// Cursor holds the cursor's keys: the bounds of a datetime cursor under
	// its partition_field_start and partition_field_end names, the start of a
	// counting cursor.
	Cursor map[string]any
	// Extra holds data carried with the slice that is not part of its identity.
	Extra map[string]any
	// Options are the values the slice puts into each request.
	Options []Option
	// Inject, when set, puts the partition's values into each request (a
	// partition router's request options).
	Inject func(*request.Parts) error

	lower, upper int64  // the interval read, in the cursor's unit
	max          int64  // the highest cursor value observed
	seen         bool   // whether max holds a value
	descending   bool   // whether a value came after a higher one
	pending      []byte // the highest text of a sortable format, not read yet
	mapping      map[string]any
	template     *interp.Object
}

// Option is a value injected into requests where a RequestOption says.
type Option struct {
	Where *manifest.RequestOption
	Value any
}

// Mapping is the slice as one mapping, for messages and descriptors: the
// partition and cursor keys, and the extra fields under extra_fields
// (templates see Template).
func (s *Slice) Mapping() map[string]any {
	if s == nil {
		return map[string]any{}
	}
	if s.mapping == nil {
		m := make(map[string]any, len(s.Partition)+len(s.Cursor)+1)
		for k, v := range s.Partition {
			m[k] = v
		}
		for k, v := range s.Cursor {
			m[k] = v
		}
		if len(s.Extra) > 0 {
			m["extra_fields"] = s.Extra
		}
		s.mapping = m
	}
	return s.mapping
}

// Template is the slice as templates see it under stream_slice,
// stream_partition and stream_interval, the reference's StreamSlice: the
// partition and cursor keys, with the attributes partition, _partition,
// cursor_slice and extra_fields.
func (s *Slice) Template() *interp.Object {
	if s == nil {
		return interp.StreamSlice(nil, nil, nil)
	}
	if s.template == nil {
		s.template = interp.StreamSlice(s.Partition, s.Cursor, s.Extra)
	}
	return s.template
}

// WithExtra is a copy of the slice for building requests, with one more
// extra field (a chunk of query properties); s may be nil. The copy shares
// the partition, cursor keys and request options, and observes nothing.
func (s *Slice) WithExtra(key string, v any) *Slice {
	c := &Slice{Extra: map[string]any{key: v}}
	if s == nil {
		return c
	}
	for k, e := range s.Extra {
		if k != key {
			c.Extra[k] = e
		}
	}
	c.Partition, c.Cursor, c.Options, c.Inject = s.Partition, s.Cursor, s.Options, s.Inject
	return c
}

// Descriptor is the slice as a test read shows it: nil for the one slice of
// a stream without cursor or partitions.
func (s *Slice) Descriptor() any {
	if len(s.Partition) == 0 && len(s.Cursor) == 0 {
		return nil
	}
	return s.Mapping()
}

// observe keeps the highest value seen in the slice.
func (s *Slice) observe(v int64) {
	if s.seen && v < s.max {
		s.descending = true
	}
	if !s.seen || v > s.max {
		s.max, s.seen = v, true
	}
}
