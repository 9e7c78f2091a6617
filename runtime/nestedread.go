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

// readNested reads every page of a retriever nested in a component of a
// stream (a properties endpoint, a truncated list's retriever; path is its
// manifest path), in slice (nil: none), and hands each record to each as an
// object. A failure keeps its type; its message says what was being read.
func (r *Runner) readNested(ctx context.Context, stream, path string, ret *manifest.Retriever, slice *incremental.Slice, reading string, each func(*transform.Object)) error {
	sr, err := r.streamReader(&manifest.Stream{Name: stream, Path: path, Retriever: ret}, incremental.FullRefresh{})
	if err != nil {
		return err
	}
	err = sr.read(ctx, slice, 0, func(records [][]byte) error {
		for _, rec := range records {
			obj, err := transform.Decode(rec)
			if err != nil {
				return &Error{Failure: protocol.SystemError, Message: fmt.Sprintf("stream %s: %s: %v", stream, path, err)}
			}
			each(obj)
		}
		return nil
	})
	if f := failure.As(err); f != nil {
		wrapped := *f
		wrapped.Message = fmt.Sprintf("%s (%s %s)", f.Message, reading, path)
		return &wrapped
	}
	return err
}
