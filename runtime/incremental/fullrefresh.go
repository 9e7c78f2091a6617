package incremental

import "iter"

// FullRefresh is the cursor of a stream without incremental_sync: one slice
// and the state {"__ab_no_cursor_state_message": true}, as the CDK's
// FinalStateCursor writes.
type FullRefresh struct{}

// Slices is the one slice of the stream.
func (FullRefresh) Slices() iter.Seq[*Slice] {
	return func(yield func(*Slice) bool) { yield(&Slice{}) }
}

// Field is empty: records are not observed.
func (FullRefresh) Field() string { return "" }

// Observe does nothing.
func (FullRefresh) Observe(*Slice, []byte) error { return nil }

// Keep keeps every record.
func (FullRefresh) Keep([]byte) bool { return true }

// Close does nothing.
func (FullRefresh) Close(*Slice) {}

// State marks the end of a full refresh.
func (FullRefresh) State() map[string]any {
	return map[string]any{"__ab_no_cursor_state_message": true}
}
