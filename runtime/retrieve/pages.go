package retrieve

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

// pages is the Retriever of a SimpleRetriever: it reads a slice's pages,
// each fetched as its requester says (pageFetcher), following the
// paginator.
type pages struct {
	env     *Env
	st      *manifest.Stream
	b       *builder
	fetcher pageFetcher
	ext     extract.Extractor // the records of its responses
	// lazy, when not nil, is the first page of each slice, taken from the
	// parent record (lazy_read_pointer) instead of requested.
	lazy   []byte
	cursor incremental.Cursor
	field  string // the record key holding the cursor value ("": none)
	warned bool   // whether a record without a readable cursor value was logged
	pipe   *extract.Pipeline
	piped  bool          // whether pipe was made (nil: records need no processing)
	files  *fileUploader // the stream's file_uploader; nil: none
	probe  bool          // Options.Probe
	// cached is how page requests use the sync's response cache.
	cached request.CacheUse
}

func newPages(env *Env, st *manifest.Stream, opts Options) (*pages, error) {
	if st.Retriever == nil || st.Retriever.Requester == nil || st.Retriever.Selector == nil {
		return nil, failure.Config("%s: the stream has no usable retriever", st.Path)
	}
	req := st.Retriever.Requester
	vars := env.BuildVars(req.Parameters)
	// A custom strategy is asked for its first token here, before any read:
	// the host's time limit on a call bounds it.
	pag, err := paginate.New(context.Background(), st.Retriever.Paginator, vars, env.Components)
	if f := failure.As(err); f != nil {
		return nil, f // the custom strategy's own failure, with its failure type
	}
	if err != nil {
		return nil, failure.Config("%s", err.Error())
	}
	if pag != nil {
		pag.Warn = func(msg string) { env.Log("WARN", msg) }
	}
	b, err := newBuilder(env, req, pag)
	if err != nil {
		return nil, err
	}
	field := opts.Field
	if field == "" {
		field = opts.Cursor.Field()
	}
	s := &pages{env: env, st: st, b: b, fetcher: requested{}, cursor: opts.Cursor, field: field, probe: opts.Probe, cached: opts.Cached,
		ext: extract.Extractor{Stream: st.Name, Decoder: decode.New(st.Retriever.Decoder, env.Client.MaxBody), Log: env.Log,
			Custom: st.Retriever.Selector.CustomExtractor, Host: env.Components}}
	if req.Properties != nil {
		s.fetcher = &queryProperties{m: req.Properties}
	}
	if s.ext.Path, err = interp.RenderEach(st.Retriever.Selector.FieldPath, vars); err != nil {
		return nil, failure.Config("%s", err.Error())
	}
	if err := extract.CheckPath(s.ext.Path, st.Path+".retriever.record_selector.extractor.field_path"); err != nil {
		return nil, err
	}
	return s, nil
}

// expand prepares the extractor's record_expander, if it has one.
func (s *pages) expand() error {
	m := s.st.Retriever.Selector.Expander
	if m == nil {
		return nil
	}
	env, st := s.env, s.st
	var err error
	s.ext.Expander, err = expand.New(m, env.BuildVars(m.Parameters), func(msg string) { env.Log("WARN", "Stream "+st.Name+": "+msg) })
	if err != nil {
		return failure.Config("%v", err)
	}
	if m.TruncatedRetriever != nil && s.ext.Expander != nil {
		s.ext.Expander.FetchTruncated(func(ctx context.Context, parent *transform.Object) ([]any, error) {
			return truncatedList(ctx, env, st, m, parent) // truncated.go
		})
	}
	return nil
}

// pageResult is one page read.
type pageResult struct {
	parts *request.Parts
	resp  *request.Response
}

// Read is Retriever.Read.
func (s *pages) Read(ctx context.Context, sl *incremental.Slice, maxPages int, emit Emit) error {
	return s.readSlice(ctx, sl, sl, maxPages, emit)
}

// readSlice reads the slice's pages, its records observed into observed
// (sl, or the job's slice while its downloads are read).
func (s *pages) readSlice(ctx context.Context, sl, observed *incremental.Slice, maxPages int, emit Emit) error {
	resets := s.pageResets(sl)
	resets.observed = observed
	for {
		var err error
		if s.streams() && s.lazy == nil {
			err = s.readStreamed(ctx, resets, maxPages > 0 || s.probe, emit)
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
func (s *pages) readPages(ctx context.Context, resets *pageResets, maxPages int, emit Emit) error {
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
		res, body, records, err = s.fetcher.page(ctx, s, pr, sl, page)
		if err != nil {
			if resets.asked(err) {
				if s.lazy != nil {
					return &failure.Error{Failure: protocol.SystemError, Message: fmt.Sprintf("stream %s: %s; a partition whose first page comes from its parent record (lazy_read_pointer) cannot start its pages again, as in Airbyte", s.st.Name, resets.reason)}
				}
				return errRestartPages
			}
			return err
		}
		if res.resp.Ignored {
			// The last response was ignored: no next page. Records of a
			// page's other chunks still go out. A test read shows it, as
			// the builder shows every response.
			return s.deliver(ctx, res, records, "stop: the response was ignored", resets.observed, emit)
		}
		inc := s.st.Incremental
		if inc.ClientSideIncremental() {
			records = s.inWindow(records)
		}
		var decoded []any
		pg := paginate.Page{
			Count:    len(body.Records),
			HTTP:     res.resp,
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
		next, more, err := s.b.pag.Next(ctx, token, pg)
		if inc != nil && inc.Datetime != nil && inc.Datetime.DataFeed && len(records) > 0 {
			// A data feed runs from the newest record back: a page ending
			// before the sync's window is the last one needed.
			if !s.cursor.Keep(incremental.FieldValue(records[len(records)-1], s.field)) {
				more = false
			}
			records = s.inWindow(records)
		}
		restart := resets.counted(len(records))
		d := ""
		if s.env.Observer != nil {
			d = decision(next, more, err)
			if restart {
				d = "pagination reset: " + resets.reason
			}
		}
		if err := s.deliver(ctx, res, records, d, resets.observed, emit); err != nil {
			return err
		}
		if s.ext.Recycle && s.env.Observer == nil {
			res.resp.Release()
		}
		if restart {
			return errRestartPages
		}
		if err != nil {
			if f := failure.As(err); f != nil {
				return f // a custom strategy's failure, of its type
			}
			return &failure.Error{Failure: protocol.SystemError, Message: err.Error()}
		}
		if !more || (maxPages > 0 && page >= maxPages) {
			return nil
		}
		token = next
	}
}

// deliver stages the files of a page's records (file_uploader), shows the
// page to a test read (res, with decision) and emits the records, which the
// cursor then observes. A file that cannot be staged ends the read after
// the records before it are shown and emitted, as the CDK emits each record
// once its file is staged. A check stages the first record's file only, as
// the CDK's check reads one record.
func (s *pages) deliver(ctx context.Context, res *pageResult, records [][]byte, decision string, observed *incremental.Slice, emit Emit) error {
	var files []protocol.FileReference
	var err error
	if s.files != nil {
		if s.probe {
			records = records[:min(len(records), 1)]
		}
		if records, files, err = s.files.upload(ctx, records); err != nil {
			decision = "stop: " + err.Error()
		}
	}
	if s.env.Observer != nil && res != nil {
		s.env.Observer.Page(s.st.Name, res.parts, res.resp, records, decision)
	}
	if len(records) > 0 {
		if err := emit(records, files); err != nil {
			return err
		}
		s.observe(observed, records)
	}
	return err
}

// pageFetcher fetches one page of a slice as the stream's requester says:
// requested, or requested once per chunk of its query properties.
type pageFetcher interface {
	// page fetches the page-th page (from 1) and returns its records,
	// processed.
	page(ctx context.Context, s *pages, pr pageRequest, sl *incremental.Slice, page int) (*pageResult, extract.Page, [][]byte, error)
	// streams tells whether a streaming decoder may read the body as it
	// arrives.
	streams() bool
}

// requested is the pageFetcher of a requester without query properties:
// one request a page, the first page of a lazy partition taken from its
// parent record.
type requested struct{}

func (requested) page(ctx context.Context, s *pages, pr pageRequest, sl *incremental.Slice, page int) (*pageResult, extract.Page, [][]byte, error) {
	return s.fetchPage(ctx, pr, sl, page == 1 && s.lazy != nil)
}

func (requested) streams() bool { return true }

// fetchPage requests one page (or takes the parent's, lazy) and returns its
// records, processed; a response the error handler ignores has none.
func (s *pages) fetchPage(ctx context.Context, pr pageRequest, sl *incremental.Slice, lazy bool) (*pageResult, extract.Page, [][]byte, error) {
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
	records, err := s.process(ctx, body.Records, sl)
	if err != nil {
		// Airbyte's builder logs the response before its records are
		// processed: the page shows, without records.
		s.observePage(res, "stop: "+err.Error())
	}
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
func (s *pages) fetch(ctx context.Context, pr pageRequest, check func(*request.Response) error) (*pageResult, error) {
	res := &pageResult{}
	ctx = request.ForStream(ctx, s.st.Name)
	send := func() (*request.Response, error) {
		return s.env.Client.SendCached(ctx, s.cached, func() (*http.Request, error) {
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
		s.env.Log("WARN", fmt.Sprintf("Stream %s: HTTP 401, obtaining a new token and trying once more", s.st.Name))
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
func (s *pages) observeFailed(res *pageResult) { s.observePage(res, "stop: the request failed") }

// observePage shows a test read a page without records, with the decision
// that ended the pages.
func (s *pages) observePage(res *pageResult, decision string) {
	if s.env.Observer != nil && res.parts != nil && res.resp != nil {
		s.env.Observer.Page(s.st.Name, res.parts, res.resp, nil, decision)
	}
}

func (s *pages) requestError(err error) error {
	if f := failure.As(err); f != nil {
		return &failure.Error{Failure: f.Failure, Status: f.Status, Internal: f.Internal, Message: fmt.Sprintf("stream %s: %s", s.st.Name, f.Message)}
	}
	return &failure.Error{Failure: protocol.ConfigError, Message: fmt.Sprintf("stream %s: %v", s.st.Name, err)}
}

func (s *pages) badResponse(resp *request.Response, err error) error {
	if le := (*listError)(nil); errors.As(err, &le) {
		return le.err
	}
	return &failure.Error{Failure: protocol.SystemError, Message: fmt.Sprintf("stream %s: %v (HTTP %d from %s): %s",
		s.st.Name, err, resp.Status, resp.URL, request.BodyStart(resp.Body))}
}

// process runs the record filter, transformations and normalization
// (extract.Pipeline) on a page's records, with the template variables of its
// slice.
func (s *pages) process(ctx context.Context, records [][]byte, sl *incremental.Slice) ([][]byte, error) {
	if !s.piped {
		pipe, err := extract.NewPipeline(s.st, s.env.Components, func() (map[string]any, error) { return s.env.Schema(ctx, s.st) },
			func(msg string) { s.env.Log("WARN", msg) })
		if err != nil {
			return nil, err
		}
		s.pipe, s.piped = pipe, true
	}
	if s.pipe == nil {
		return records, nil // nothing to do: no template variables to build
	}
	in := &extract.Input{Vars: s.env.Vars(s.b.req.Parameters, sl), Slice: componentSlice(sl)}
	return s.pipe.Run(ctx, records, in)
}

// inWindow keeps the records whose cursor value is inside the sync's window
// (client-side incremental streams and data feeds); a record without a
// readable cursor value is kept.
func (s *pages) inWindow(records [][]byte) [][]byte {
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
func (s *pages) observe(sl *incremental.Slice, records [][]byte) {
	if s.field == "" {
		return
	}
	for _, rec := range records {
		if err := s.cursor.Observe(sl, incremental.FieldValue(rec, s.field)); err != nil && !s.warned {
			s.warned = true
			s.env.Log("WARN", err.Error())
		}
	}
}

// Worker is Retriever.Worker: it makes its own record pipeline, whose
// once-per-field warnings are not shared between goroutines.
func (s *pages) Worker(c incremental.Cursor, recycle bool) Retriever {
	return s.worker(c, recycle)
}

func (s *pages) worker(c incremental.Cursor, recycle bool) *pages {
	other := *s
	other.cursor, other.warned = c, false
	other.pipe, other.piped = nil, false
	other.ext = s.ext.Fresh()
	other.ext.Recycle = recycle
	return &other
}

// Rebind is Retriever.Rebind.
func (s *pages) Rebind(c incremental.Cursor, lazy []byte) {
	s.cursor, s.lazy = c, lazy
}

// Field is Retriever.Field.
func (s *pages) Field() string { return s.field }
