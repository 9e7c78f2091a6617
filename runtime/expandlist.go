package runtime

import (
	"context"
	"fmt"

	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/protocol"
	"github.com/airbyte-go/source-declarative/runtime/failure"
	"github.com/airbyte-go/source-declarative/runtime/incremental"
	"github.com/airbyte-go/source-declarative/runtime/transform"
)

// truncatedList reads the complete list of a parent whose embedded list is
// truncated, through the record expander's truncated_list_retriever: every
// page its paginator gives, with the parent as stream_slice['parent_record'],
// as Airbyte's RecordExpander does. Its records are the list's items.
func (r *Runner) truncatedList(ctx context.Context, st *manifest.Stream, m *manifest.RecordExpander, parent *transform.Object) ([]any, error) {
	where := m.Path + ".truncated_list_retriever"
	sr, err := r.streamReader(&manifest.Stream{Name: st.Name, Path: where, Retriever: m.TruncatedRetriever}, incremental.FullRefresh{})
	if err != nil {
		return nil, err
	}
	slice := &incremental.Slice{Partition: map[string]any{"parent_record": transform.ToPlain(parent)}}
	var items []any
	err = sr.read(ctx, slice, 0, func(records [][]byte) error {
		for _, rec := range records {
			obj, err := transform.Decode(rec)
			if err != nil {
				return &Error{Failure: protocol.SystemError, Message: fmt.Sprintf("stream %s: %s: %v", st.Name, where, err)}
			}
			items = append(items, obj)
		}
		return nil
	})
	if f := failure.As(err); f != nil {
		wrapped := *f
		wrapped.Message = fmt.Sprintf("%s (reading the complete list of a truncated record through %s)", f.Message, where)
		return nil, &listError{&wrapped}
	}
	return items, err
}

// listError is the failure of a truncated list's read: it ends the stream
// as it is (a 401 a config error, a 5xx given up a transient one), not as a
// page of the parent that could not be read.
type listError struct{ err *Error }

func (e *listError) Error() string { return e.err.Error() }

func (e *listError) Unwrap() error { return e.err }
