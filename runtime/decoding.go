package runtime

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/runtime/decode"
	"github.com/airbyte-go/source-declarative/runtime/failure"
	"github.com/airbyte-go/source-declarative/runtime/request"
)

// decodedPage is what a response read whole holds.
type decodedPage struct {
	records [][]byte
	doc     []byte // the body as one JSON document: cursor templates' response
	top     []topMember
}

// decodePage decodes a response read whole with the stream's decoder and
// extracts its records (expanded when the extractor has a record_expander:
// the paginator counts and sees the expanded records, as in the reference,
// whose paginators recount with the extractor and its expander). The JSON
// decoder cuts them out of the body itself, in one pass and without
// copying; other decoders' documents are decoded first and their records
// copied.
func (s *streamReader) decodePage(ctx context.Context, resp *request.Response) (decodedPage, error) {
	if s.dec.IsJSON() {
		var into [][]byte
		if s.recycle {
			into = s.spare[:0] // the previous page's, emitted
		}
		body := decode.TrimBOM(resp.Body)
		records, top, err := cutRecords(into, body, s.path, true)
		if fixed, ok := nonFinite(body, err); ok {
			body = fixed
			records, top, err = cutRecords(into, body, s.path, true)
			s.logNonFinite(err)
		}
		if s.recycle {
			s.spare = records
		}
		if err == errNotJSON {
			err = &badBody{decoder: s.dec.Name(), err: err}
		}
		if err == nil && s.expander != nil {
			records, err = s.expander.Expand(ctx, records)
		}
		return decodedPage{records: records, doc: body, top: top}, err
	}
	var p decodedPage
	var batch recordBatch
	err := s.dec.DecodeBytes(resp.Body, func(doc decode.Doc) error {
		if p.doc == nil {
			p.doc = append([]byte(nil), doc.JSON...)
		}
		records, err := s.extract(ctx, doc)
		batch.add(records)
		return err
	})
	p.records = batch.records
	var de *decode.Error
	if errors.As(err, &de) {
		err = &badBody{decoder: de.Decoder, err: de.Err}
	}
	return p, err
}

// extract takes the records of one decoded document, expanded when the
// extractor has a record_expander. A JSON lines line that is not JSON is
// skipped with a warning; another document that is not JSON is a bad body.
func (s *streamReader) extract(ctx context.Context, doc decode.Doc) ([][]byte, error) {
	records, err := extractRecords(nil, doc.JSON, s.path, doc.Elements)
	if fixed, ok := nonFinite(doc.JSON, err); ok {
		records, err = extractRecords(nil, fixed, s.path, doc.Elements)
		s.logNonFinite(err)
	}
	if err == nil && s.expander != nil {
		return s.expander.Expand(ctx, records)
	}
	switch {
	case err != errNotJSON:
		return records, err
	case doc.Line > 0:
		s.r.log("WARN", fmt.Sprintf("Stream %s: %s: line %d is not JSON, skipped: %s", s.st.Name, s.dec.Name(), doc.Line, request.BodyStart(doc.JSON)))
		return nil, nil
	}
	return nil, &badBody{decoder: s.dec.Name(), err: err}
}

// nonFinite gives, when a document is not JSON and holds NaN, Infinity or
// -Infinity, the document with null in their place, to be read again as the
// reference reads such values.
func nonFinite(doc []byte, err error) ([]byte, bool) {
	if err != errNotJSON {
		return nil, false
	}
	return decode.NonFiniteToNull(doc)
}

// logNonFinite logs the first document of a reader read with null in place
// of NaN or Infinity.
func (s *streamReader) logNonFinite(err error) {
	if err == nil && !s.nonFiniteLogged {
		s.nonFiniteLogged = true
		s.r.log("WARN", fmt.Sprintf("Stream %s: %s: the response holds NaN, Infinity or -Infinity, which JSON does not have: read as null", s.st.Name, s.dec.Name()))
	}
}

// responseValue is the response variable of cursor templates: the decoded
// body, with only the top-level keys the templates read.
func (p decodedPage) responseValue(u interp.Usage) any { return decodeTopKeys(p.doc, p.top, u) }

// badBody is a body that is not what the decoder expects: a response read
// whole is fetched again, as the body may have been cut short on the way.
type badBody struct {
	decoder string
	err     error
}

func (e *badBody) Error() string { return e.decoder + ": " + e.err.Error() }

func isBadBody(err error) bool {
	var b *badBody
	return errors.As(err, &b)
}

// streams tells whether the stream's records are read as the body arrives:
// a streaming decoder (these never paginate), outside a test read (which
// shows bodies), with an error handler that does not read bodies.
func (s *streamReader) streams() bool {
	return s.dec.Streams() && s.r.Observer == nil && !s.b.policy.ReadsBody() && s.props == nil
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
func (s *streamReader) readStreamed(ctx context.Context, resets *pageResets, firstOnly bool, emit func([][]byte) error) error {
	token, sl := s.b.pag.First(), resets.original
	emitted := 0
	var batch recordBatch
	flush := func() error {
		records, err := s.process(ctx, batch.records, token, sl)
		if err == nil && s.st.Incremental.ClientSideIncremental() {
			records = s.inWindow(records)
		}
		if err == nil && len(records) > 0 {
			if err = emit(records); err == nil {
				s.observe(sl, records)
			}
			emitted += len(records)
		}
		batch.reset()
		return err
	}
	read := func(resp *request.Response, body io.Reader) error {
		batch.reset()
		src := &trackedReader{r: body}
		err := s.dec.Decode(src, func(doc decode.Doc) error {
			records, err := s.extract(ctx, doc)
			batch.add(records)
			switch {
			case err != nil:
			case firstOnly && len(batch.records) > 0:
				if err = flush(); err == nil {
					err = errEnough
				}
			case batch.size >= batchBytes && emitted > 0, batch.size >= firstBatch:
				err = flush()
			}
			return err
		})
		if err == nil {
			err = flush()
		} else if err == errEnough {
			err = nil
		}
		return s.streamError(resp, src, emitted, err)
	}
	_, err := s.fetch(request.WithBodyReader(ctx, s.b.policy, read), pageRequest{token: token, slice: resets.current, withSlice: true}, nil)
	switch {
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
func (s *streamReader) streamError(resp *request.Response, src *trackedReader, emitted int, err error) error {
	var de *decode.Error
	var bb *badBody
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
	return &failure.Error{Failure: FailureType(err), Message: fmt.Sprintf("%v (HTTP %d from %s)", err, resp.Status, resp.URL)}
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

// recordBatch holds copies of records, in chunks of memory that never move
// or grow, so that the batch takes the memory of its records and no more.
type recordBatch struct {
	records [][]byte
	size    int      // bytes of the records
	chunks  [][]byte // kept for the next batch
	used    int      // chunks in use
}

const chunkSize = 1 << 20

func (b *recordBatch) add(records [][]byte) {
	for _, r := range records {
		if b.used == 0 || cap(b.chunks[b.used-1])-len(b.chunks[b.used-1]) < len(r) {
			if b.used == len(b.chunks) {
				b.chunks = append(b.chunks, make([]byte, 0, max(chunkSize, len(r))))
			} else if cap(b.chunks[b.used]) < len(r) {
				b.chunks[b.used] = make([]byte, 0, len(r))
			}
			b.used++
		}
		c := b.chunks[b.used-1]
		start := len(c)
		c = append(c, r...)
		b.chunks[b.used-1] = c
		b.records = append(b.records, c[start:len(c):len(c)])
		b.size += len(r)
	}
}

func (b *recordBatch) reset() {
	clear(b.records)
	b.records = b.records[:0]
	for i := range b.chunks[:b.used] {
		b.chunks[i] = b.chunks[i][:0]
	}
	b.used, b.size = 0, 0
}
