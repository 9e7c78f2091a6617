package runtime

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/protocol"
	"github.com/airbyte-go/source-declarative/runtime/auth"
	"github.com/airbyte-go/source-declarative/runtime/decode"
	"github.com/airbyte-go/source-declarative/runtime/expand"
	"github.com/airbyte-go/source-declarative/runtime/extract"
	"github.com/airbyte-go/source-declarative/runtime/failure"
	"github.com/airbyte-go/source-declarative/runtime/incremental"
	"github.com/airbyte-go/source-declarative/runtime/paginate"
	"github.com/airbyte-go/source-declarative/runtime/request"
	"github.com/airbyte-go/source-declarative/runtime/transform"
)

// streamReader reads the pages of one stream, slice by slice.
type streamReader struct {
	r      *Runner
	st     *manifest.Stream
	b      *builder
	ext    extract.Extractor // the records of its responses
	cursor incremental.Cursor
	field  string // the record key holding the cursor value ("": none)
	warned bool   // whether a record without a readable cursor value was logged
	pipe   *extract.Pipeline
	piped  bool // whether pipe was made (nil: records need no processing)
	// lazy, when not nil, is the first page of each slice, taken from the
	// parent record (lazy_read_pointer) instead of requested.
	lazy []byte
	// probe reads only to see that the stream answers (check): as in the
	// reference, whose check stops at the first record, pagination_reset's
	// limits do not apply.
	probe bool
	// props, when set, are the requester's query properties: each page is
	// requested once per chunk (queryproperties.go); shared by the copies
	// of the reader.
	props *queryProperties
	// job, for an AsyncRetriever, runs each slice's job before its
	// downloads are read (asyncjob.go); nil: the slice's pages are read.
	job *asyncJob
	// downloading is the job's slice while its downloads are read: the
	// records observed count for it.
	downloading *incremental.Slice
	// cached is how page requests use the sync's response cache.
	cached request.CacheUse
}

func (r *Runner) streamReader(st *manifest.Stream, cursor incremental.Cursor) (*streamReader, error) {
	if st.Retriever == nil || st.Retriever.Requester == nil || st.Retriever.Selector == nil {
		return nil, ConfigErr("%s: the stream has no usable retriever", st.Path)
	}
	req := st.Retriever.Requester
	vars := r.vars(req.Parameters, nil)
	pag, err := paginate.New(st.Retriever.Paginator, vars)
	if err != nil {
		return nil, &Error{Failure: protocol.ConfigError, Message: err.Error()}
	}
	b, err := r.newBuilder(req, pag)
	if err != nil {
		return nil, err
	}
	sr := &streamReader{r: r, st: st, b: b, cursor: cursor, field: cursor.Field(),
		ext: extract.Extractor{Stream: st.Name, Decoder: decode.New(st.Retriever.Decoder, r.Client.MaxBody), Log: r.log}}
	if req.Properties != nil {
		sr.props = &queryProperties{m: req.Properties}
	}
	if sr.ext.Path, err = interp.RenderEach(st.Retriever.Selector.FieldPath, vars); err != nil {
		return nil, &Error{Failure: protocol.ConfigError, Message: err.Error()}
	}
	if err := extract.CheckPath(sr.ext.Path, st.Path+".retriever.record_selector.extractor.field_path"); err != nil {
		return nil, err
	}
	if st.Retriever.Async != nil {
		if sr.job, err = r.newAsyncJob(st); err != nil {
			return nil, err
		}
	}
	if m := st.Retriever.Selector.Expander; m != nil {
		sr.ext.Expander, err = expand.New(m, r.vars(m.Parameters, nil), func(msg string) { r.log("WARN", "Stream "+st.Name+": "+msg) })
		if err != nil {
			return nil, ConfigErr("%v", err)
		}
		if m.TruncatedRetriever != nil && sr.ext.Expander != nil {
			sr.ext.Expander.FetchTruncated(func(ctx context.Context, parent *transform.Object) ([]any, error) {
				return r.truncatedList(ctx, st, m, parent) // expandlist.go
			})
		}
	}
	return sr, nil
}

// pageResult is one page read.
type pageResult struct {
	parts *request.Parts
	resp  *request.Response
}

// read fetches the pages of a slice, from the first, until the paginator
// stops or maxPages pages were read (0: no limit), handing each page's
// records to emit; the cursor then observes them. An AsyncRetriever's
// slice runs its job first and reads the pages of each download.
func (s *streamReader) read(ctx context.Context, sl *incremental.Slice, maxPages int, emit func([][]byte) error) error {
	if s.job != nil {
		return s.readJob(ctx, sl, maxPages, emit)
	}
	return s.readSlice(ctx, sl, maxPages, emit)
}

// readSlice is read of the slice's own pages.
func (s *streamReader) readSlice(ctx context.Context, sl *incremental.Slice, maxPages int, emit func([][]byte) error) error {
	resets := s.pageResets(sl)
	for {
		var err error
		if s.streams() && s.lazy == nil {
			err = s.readStreamed(ctx, resets, maxPages > 0, emit)
		} else {
			err = s.readPages(ctx, resets, maxPages, emit)
		}
		if err != errRestartPages {
			return err
		}
		if err := resets.restart(); err != nil {
			return err
		}
	}
}

// readPages is one run of a slice's pages, from the first: it ends with
// errRestartPages when they must start again (pageResets).
func (s *streamReader) readPages(ctx context.Context, resets *pageResets, maxPages int, emit func([][]byte) error) error {
	sl, req := resets.original, resets.current
	token := s.b.pag.First()
	sent := paginate.NewRequestLog()
	for page := 1; ; page++ {
		pr := pageRequest{token: token, slice: req, withSlice: page == 1 || !s.st.Retriever.IgnoreSlicerOnPages,
			check: func(p *request.Parts) error { return sent.Check(page, token, p) }}
		var res *pageResult
		var body extract.Page
		var records [][]byte
		var err error
		if s.props != nil {
			res, body, records, err = s.fetchChunks(ctx, pr, sl)
		} else {
			res, body, records, err = s.fetchPage(ctx, pr, sl, page == 1 && s.lazy != nil)
		}
		if err != nil {
			if resets.asked(err) {
				if s.lazy != nil {
					return &Error{Failure: protocol.SystemError, Message: fmt.Sprintf("stream %s: %s; a partition whose first page comes from its parent record (lazy_read_pointer) cannot start its pages again, as in Airbyte", s.st.Name, resets.reason)}
				}
				return errRestartPages
			}
			return err
		}
		if res.resp.Ignored {
			// The last response was ignored: no next page. Records of a
			// page's other chunks still go out. A test read shows it, as
			// the builder shows every response.
			if s.r.Observer != nil {
				s.r.Observer.Page(s.st.Name, res.parts, res.resp, records, "stop: the response was ignored")
			}
			if len(records) > 0 {
				if err := emit(records); err != nil {
					return err
				}
				s.observe(sl, records)
			}
			return nil
		}
		inc := s.st.Incremental
		if inc.ClientSideIncremental() {
			records = s.inWindow(records)
		}
		var decoded []any
		pg := paginate.Page{
			Count:    len(body.Records),
			Header:   res.resp.Header,
			Response: body.ResponseValue,
			LastRecords: func() []any {
				if decoded == nil {
					decoded = make([]any, len(records))
					for i, rec := range records {
						decoded[i] = extract.DecodeJSON(rec)
					}
				}
				return decoded
			},
		}
		next, more, err := s.b.pag.Next(token, pg)
		if inc != nil && inc.Datetime != nil && inc.Datetime.DataFeed && len(records) > 0 {
			// A data feed runs from the newest record back: a page ending
			// before the sync's window is the last one needed.
			if !s.cursor.Keep(incremental.FieldValue(records[len(records)-1], s.field)) {
				more = false
			}
			records = s.inWindow(records)
		}
		restart := resets.counted(len(records))
		if s.r.Observer != nil {
			d := decision(next, more, err)
			if restart {
				d = "pagination reset: " + resets.reason
			}
			s.r.Observer.Page(s.st.Name, res.parts, res.resp, records, d)
		}
		if len(records) > 0 {
			if err := emit(records); err != nil {
				return err
			}
			s.observe(sl, records)
		}
		if s.ext.Recycle && s.r.Observer == nil {
			res.resp.Release()
		}
		if restart {
			return errRestartPages
		}
		if err != nil {
			return &Error{Failure: protocol.SystemError, Message: err.Error()}
		}
		if !more || (maxPages > 0 && page >= maxPages) {
			return nil
		}
		token = next
	}
}

// fetchPage requests one page (or takes the parent's, lazy) and returns its
// records, processed; a response the error handler ignores has none.
func (s *streamReader) fetchPage(ctx context.Context, pr pageRequest, sl *incremental.Slice, lazy bool) (*pageResult, extract.Page, [][]byte, error) {
	var body extract.Page
	var extractErr error
	var res *pageResult
	var err error
	if lazy {
		res = &pageResult{resp: &request.Response{Status: http.StatusOK, Header: http.Header{}, Body: s.lazy}}
		body, extractErr = s.ext.Page(ctx, res.resp)
	} else {
		res, err = s.fetch(ctx, pr, func(resp *request.Response) error {
			body, extractErr = s.ext.Page(ctx, resp)
			if extract.IsBadBody(extractErr) {
				return extractErr // a truncated or garbled body is fetched again
			}
			return nil
		})
	}
	if err != nil || res.resp.Ignored {
		return res, body, nil, err
	}
	if extractErr != nil {
		s.observeFailed(res)
		return nil, body, nil, s.badResponse(res.resp, extractErr)
	}
	records, err := s.process(ctx, body.Records, pr.token, sl)
	return res, body, records, err
}

func decision(next paginate.Token, more bool, err error) string {
	switch {
	case err != nil:
		return "stop: " + err.Error()
	case !more:
		return "stop: no next page"
	}
	return "next token: " + interp.String(next.Value)
}

// fetch sends one page request; a 401 with a token-based authenticator
// refreshes the token once and tries again.
func (s *streamReader) fetch(ctx context.Context, pr pageRequest, check func(*request.Response) error) (*pageResult, error) {
	res := &pageResult{}
	ctx = request.ForStream(ctx, s.st.Name)
	send := func() (*request.Response, error) {
		return s.r.Client.SendCached(ctx, s.cached, func() (*http.Request, error) {
			p, err := s.b.build(ctx, pr)
			if err != nil {
				return nil, err
			}
			res.parts = p
			return p.HTTP(ctx)
		}, s.b.policy, check)
	}
	resp, err := send()
	if refresher, ok := s.b.auth.(auth.Refresher); ok && res.parts != nil && res.parts.Credentials.Withheld == "" && request.IsStatus(err, http.StatusUnauthorized) {
		s.r.log("WARN", fmt.Sprintf("Stream %s: HTTP 401, obtaining a new token and trying once more", s.st.Name))
		refresher.Invalidate(res.parts.Headers)
		resp, err = send()
	}
	res.resp = resp
	var reset *request.PaginationReset
	if errors.As(err, &reset) {
		return nil, err // the pages start again (pageResets.asked)
	}
	if err != nil {
		s.observeFailed(res)
		return nil, s.requestError(err)
	}
	return res, nil
}

// observeFailed shows a test read the exchange that failed, as Airbyte's
// builder does: it logs each response before its error handler runs.
func (s *streamReader) observeFailed(res *pageResult) {
	if s.r.Observer != nil && res.parts != nil && res.resp != nil {
		s.r.Observer.Page(s.st.Name, res.parts, res.resp, nil, "stop: the request failed")
	}
}

func (s *streamReader) requestError(err error) error {
	if f := failure.As(err); f != nil {
		return &Error{Failure: f.Failure, Status: f.Status, Internal: f.Internal, Message: fmt.Sprintf("stream %s: %s", s.st.Name, f.Message)}
	}
	return &Error{Failure: protocol.ConfigError, Message: fmt.Sprintf("stream %s: %v", s.st.Name, err)}
}

func (s *streamReader) badResponse(resp *request.Response, err error) error {
	if le := (*listError)(nil); errors.As(err, &le) {
		return le.err
	}
	return &Error{Failure: protocol.SystemError, Message: fmt.Sprintf("stream %s: %v (HTTP %d from %s): %s",
		s.st.Name, err, resp.Status, resp.URL, request.BodyStart(resp.Body))}
}

// process runs the record filter, transformations and normalization
// (extract.Pipeline) on a page's records, with the template variables of the
// request that fetched the page.
func (s *streamReader) process(ctx context.Context, records [][]byte, token paginate.Token, sl *incremental.Slice) ([][]byte, error) {
	if !s.piped {
		pipe, err := extract.NewPipeline(s.st, func() (map[string]any, error) { return s.r.schemas.Stream(ctx, s.st) },
			func(msg string) { s.r.log("WARN", msg) })
		if err != nil {
			return nil, err
		}
		s.pipe, s.piped = pipe, true
	}
	if s.pipe == nil {
		return records, nil // nothing to do: no template variables to build
	}
	vars := s.r.vars(s.b.req.Parameters, sl)
	vars["next_page_token"] = token.Vars()
	return s.pipe.Run(records, vars)
}

// inWindow keeps the records whose cursor value is inside the sync's window
// (client-side incremental streams and data feeds); a record without a
// readable cursor value is kept.
func (s *streamReader) inWindow(records [][]byte) [][]byte {
	kept := records[:0:0]
	for _, rec := range records {
		if s.cursor.Keep(incremental.FieldValue(rec, s.field)) {
			kept = append(kept, rec)
		}
	}
	return kept
}

// observe hands the cursor value of each emitted record to the cursor. A
// record without a readable value is logged once per stream.
func (s *streamReader) observe(sl *incremental.Slice, records [][]byte) {
	if s.field == "" {
		return
	}
	if s.downloading != nil {
		sl = s.downloading
	}
	for _, rec := range records {
		if err := s.cursor.Observe(sl, incremental.FieldValue(rec, s.field)); err != nil && !s.warned {
			s.warned = true
			s.r.log("WARN", err.Error())
		}
	}
}

// withLazy is a reader of the same stream whose slices start with the page
// body instead of a request.
func (s *streamReader) withLazy(body []byte) *streamReader {
	other := *s
	other.lazy = body
	return &other
}

// withCursor is a reader of the same stream observing another cursor (one
// partition's), for one worker: it makes its own record pipeline, whose
// once-per-field warnings are not shared between goroutines.
func (s *streamReader) withCursor(c incremental.Cursor) *streamReader {
	other := *s
	other.cursor, other.warned = c, false
	other.pipe, other.piped = nil, false
	other.ext = s.ext.Fresh()
	return &other
}

// errFirstRecord stops a read at its first record.
var errFirstRecord = errors.New("first record read")

// firstRecord reads the first record of a stream's retriever, from the
// start (nil: it has none): the field descriptions of a dynamic schema.
func (r *Runner) firstRecord(ctx context.Context, st *manifest.Stream) ([]byte, error) {
	sr, err := r.streamReader(st, incremental.FullRefresh{})
	if err != nil {
		return nil, err
	}
	var first []byte
	err = sr.read(ctx, nil, 0, func(records [][]byte) error {
		first = records[0]
		return errFirstRecord
	})
	if err != nil && !errors.Is(err, errFirstRecord) {
		return nil, err
	}
	return first, nil
}
