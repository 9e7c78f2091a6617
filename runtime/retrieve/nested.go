package retrieve

import (
	"context"
	"errors"
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
func readNested(ctx context.Context, env *Env, stream, path string, ret *manifest.Retriever, slice *incremental.Slice, reading string, each func(*transform.Object)) error {
	rt, err := New(env, &manifest.Stream{Name: stream, Path: path, Retriever: ret}, Options{Cursor: incremental.FullRefresh{}})
	if err != nil {
		return err
	}
	err = rt.Read(ctx, slice, 0, func(records [][]byte, _ []protocol.FileReference) error {
		for _, rec := range records {
			obj, err := transform.Decode(rec)
			if err != nil {
				return failure.System("stream %s: %s: %v", stream, path, err)
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

// errFirstRecord stops a read at its first record.
var errFirstRecord = errors.New("first record read")

// FirstRecord reads the first record of a stream's retriever, from the
// start (nil: it has none): the field descriptions of a dynamic schema.
func FirstRecord(ctx context.Context, env *Env, st *manifest.Stream) ([]byte, error) {
	rt, err := New(env, st, Options{Cursor: incremental.FullRefresh{}})
	if err != nil {
		return nil, err
	}
	var first []byte
	err = rt.Read(ctx, nil, 0, func(records [][]byte, _ []protocol.FileReference) error {
		first = records[0]
		return errFirstRecord
	})
	if err != nil && !errors.Is(err, errFirstRecord) {
		return nil, err
	}
	return first, nil
}
