package retrieve

import (
	"context"

	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/runtime/failure"
	"github.com/airbyte-go/source-declarative/runtime/incremental"
	"github.com/airbyte-go/source-declarative/runtime/transform"
)

// truncatedList reads the complete list of a parent whose embedded list is
// truncated, through the record expander's truncated_list_retriever: every
// page its paginator gives, with the parent as stream_slice['parent_record'],
// as Airbyte's RecordExpander does. Its records are the list's items.
func truncatedList(ctx context.Context, env *Env, st *manifest.Stream, m *manifest.RecordExpander, parent *transform.Object) ([]any, error) {
	slice := &incremental.Slice{Partition: map[string]any{"parent_record": transform.ToPlain(parent)}}
	var items []any
	err := readNested(ctx, env, st.Name, m.Path+".truncated_list_retriever", m.TruncatedRetriever, slice,
		"reading the complete list of a truncated record through", func(obj *transform.Object) { items = append(items, obj) })
	if f := failure.As(err); f != nil {
		return nil, &listError{f}
	}
	return items, err
}

// listError is the failure of a truncated list's read: it ends the stream
// as it is (a 401 a config error, a 5xx given up a transient one), not as a
// page of the parent that could not be read.
type listError struct{ err *failure.Error }

func (e *listError) Error() string { return e.err.Error() }

func (e *listError) Unwrap() error { return e.err }
