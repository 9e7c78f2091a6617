package retrieve

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/airbyte-go/source-declarative/runtime/decode"
	"github.com/airbyte-go/source-declarative/runtime/extract"
	"github.com/airbyte-go/source-declarative/runtime/failure"
	"github.com/airbyte-go/source-declarative/runtime/request"
)

// streams tells whether the stream's records are read as the body arrives:
// a streaming decoder (these never paginate), outside a test read (which
// shows bodies), with an error handler that does not read bodies, pages
// requested once each (pageFetcher.streams) and no custom extractor (which
// takes the whole response, whatever the decoder).
func (s *pages) streams() bool {
	return s.ext.Decoder.Streams() && s.env.Observer == nil && !s.b.policy.ReadsBody() && s.fetcher.streams() && s.ext.Custom == nil && !s.b.pag.Custom()
}

// Batches of streamed records: the first is emitted once it holds
// firstBatch bytes, so that a body cut short before then is fetched again
// with nothing emitted twice; later ones every batchBytes.
const (
	firstBatch = 16 << 20
	batchBytes = 1 << 20
)

// readStreamed reads the one response of a stream whose decoder streams,
// emitting its records in batches as the body arrives: memory holds a
// batch, never the body. A body that breaks off before the first batch was
// emitted is fetched again; after, the stream fails (transient_error)
// rather than emit records twice or skip some, since a new response need
// not hold the same records in the same order. A body the decoder cannot
// read fails the stream (system_error), as in the reference.
//
// With firstOnly (a check), reading stops at the first records. As one run
// of the slice's pages, it ends with errRestartPages when they must start
// again (pageResets).
func (s *pages) readStreamed(ctx context.Context, resets *pageResets, firstOnly bool, emit Emit) error {
	token, sl := s.b.pag.First(), resets.original
	emitted, stopped := 0, false
	var batch extract.Batch
	flush := func() error {
		records, err := s.process(ctx, batch.Records, sl)
		if err == nil && s.st.Incremental.ClientSideIncremental() {
			records = s.inWindow(records)
		}
		if err == nil && len(records) > 0 {
			err = s.deliver(ctx, nil, records, "", resets.observed, emit)
			emitted += len(records)
		}
		batch.Reset()
		return err
	}
	read := func(resp *request.Response, body io.Reader) error {
		batch.Reset()
		src := &trackedReader{r: body}
		err := s.ext.Decoder.Decode(src, func(doc decode.Doc) error {
			records, err := s.ext.Doc(ctx, doc)
			batch.Add(records)
			switch {
			case err != nil:
			case firstOnly && len(batch.Records) > 0:
				if err = flush(); err == nil {
					err = errEnough
				}
			case batch.Size >= batchBytes && emitted > 0, batch.Size >= firstBatch:
				err = flush()
			}
			return err
		})
		if err == nil {
			err = flush()
		}
		if errors.Is(err, ErrStop) {
			// Not an error of the body's: the request is not sent again.
			stopped, err = true, nil
		} else if err == errEnough {
			err = nil
		}
		return s.streamError(resp, src, emitted, err)
	}
	_, err := s.fetch(request.WithBodyReader(ctx, s.b.policy, read), pageRequest{token: token, slice: resets.current, withSlice: true}, nil)
	switch {
	case stopped:
		return ErrStop
	case err != nil && resets.asked(err):
		return errRestartPages
	case err == nil && resets.counted(emitted):
		return errRestartPages
	}
	return err
}

// errEnough stops reading a body.
var errEnough = errors.New("enough records read")

// streamError says whether a streamed body that failed is fetched again.
func (s *pages) streamError(resp *request.Response, src *trackedReader, emitted int, err error) error {
	var de *decode.Error
	var bb *extract.BadBody
	switch {
	case err == nil:
		return nil
	case src.err != nil && emitted == 0:
		return fmt.Errorf("reading the body: %v", src.err) // fetched again
	case src.err != nil:
		return failure.Transient("the response body from %s broke off after %d records were emitted (%v); not reading it again, which would emit them twice",
			resp.URL, emitted, src.err)
	case errors.As(err, &de), errors.As(err, &bb):
		return failure.System("%v (HTTP %d from %s)", err, resp.Status, resp.URL)
	}
	return &failure.Error{Failure: failure.Type(err), Message: fmt.Sprintf("%v (HTTP %d from %s)", err, resp.Status, resp.URL)}
}

// trackedReader remembers the error of the body it reads, telling a
// connection that broke from a body the decoder cannot read.
type trackedReader struct {
	r   io.Reader
	err error
}

func (t *trackedReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if err != nil && err != io.EOF {
		t.err = err
	}
	return n, err
}
