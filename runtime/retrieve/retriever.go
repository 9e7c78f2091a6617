package retrieve

import (
	"context"
	"errors"

	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/protocol"
	"github.com/airbyte-go/source-declarative/runtime/incremental"
	"github.com/airbyte-go/source-declarative/runtime/request"
)

// Retriever reads the pages of a stream's slices and hands their records
// on. There is one implementation per kind of retriever: a
// SimpleRetriever's pages, and an AsyncRetriever's job per slice whose
// downloads are read as pages. A Retriever is used by one goroutine at a
// time; Worker makes another.
type Retriever interface {
	// Read fetches the pages of a slice, from the first, until the
	// paginator stops or maxPages pages were read (0: no limit), handing
	// each page's records to emit; the cursor then observes them.
	Read(ctx context.Context, sl *incremental.Slice, maxPages int, emit Emit) error
	// Worker is a retriever of the same stream for another goroutine,
	// observing cursor c, with its own buffers and record pipeline. With
	// recycle, nothing keeps a record once emit returns, so each page's
	// memory is reused for the next.
	Worker(c incremental.Cursor, recycle bool) Retriever
	// Rebind points the retriever at another partition: cursor c, and the
	// first page of its slices taken from lazy, the parent record's
	// embedded body (nil: requested).
	Rebind(c incremental.Cursor, lazy []byte)
	// Field is the record key holding the cursor value ("": none).
	Field() string
}

// Emit takes a page's records, in order, as the stream emits them, with the
// files its file_uploader staged for them: one per record, or nil for a
// stream without one.
type Emit func(records [][]byte, files []protocol.FileReference) error

// ErrStop, returned by an Emit, ends the read there (a check has its first
// record): the read returns it as it is, asking the paginator nothing more.
var ErrStop = errors.New("the read has what it wanted")

// Options say how a stream is read.
type Options struct {
	// Cursor observes the records (FullRefresh when the caller's
	// partitions bring their own).
	Cursor incremental.Cursor
	// Field, when set, is the cursor field instead of Cursor's.
	Field string
	// Cached is how page requests use the sync's response cache.
	Cached request.CacheUse
	// Probe reads only to see that the stream answers (check): as in the
	// reference, whose check stops at the first record, pagination_reset's
	// limits do not apply, and a job's downloads stop at the first record.
	Probe bool
}

// New prepares the retriever of a stream; templates over the config are
// rendered here, so a config that does not fit fails before any request.
func New(env *Env, st *manifest.Stream, opts Options) (Retriever, error) {
	p, err := newPages(env, st, opts)
	if err != nil {
		return nil, err
	}
	var rt Retriever = p
	switch {
	case st.Retriever.Async != nil: // a file_uploader is not run, as in Airbyte
		if rt, err = newAsyncJob(p); err != nil {
			return nil, err
		}
	case st.FileUploader != nil:
		if p.files, err = newFileUploader(env, st); err != nil {
			return nil, err
		}
	}
	if err := p.expand(); err != nil {
		return nil, err
	}
	return rt, nil
}
