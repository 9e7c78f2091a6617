package runtime

import (
	"context"
	"fmt"
	"net/http"

	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/protocol"
	"github.com/airbyte-go/source-declarative/runtime/auth"
	"github.com/airbyte-go/source-declarative/runtime/failure"
	"github.com/airbyte-go/source-declarative/runtime/interp"
	"github.com/airbyte-go/source-declarative/runtime/paginate"
	"github.com/airbyte-go/source-declarative/runtime/request"
)

// streamReader reads the pages of one stream.
type streamReader struct {
	r    *Runner
	st   *manifest.Stream
	b    *builder
	path []string // the record path, rendered
}

func (r *Runner) streamReader(st *manifest.Stream) (*streamReader, error) {
	if st.Retriever == nil || st.Retriever.Requester == nil || st.Retriever.Selector == nil {
		return nil, ConfigErr("%s: the stream has no usable retriever", st.Path)
	}
	if pr := st.Retriever.PartitionRouter; pr != nil {
		return nil, ConfigErr("%s: partition routers are not supported yet: the read loop does not run them", pr.Path)
	}
	req := st.Retriever.Requester
	vars := r.vars(req.Parameters)
	pag, err := paginate.New(st.Retriever.Paginator, vars)
	if err != nil {
		return nil, &Error{Failure: protocol.ConfigError, Message: err.Error()}
	}
	b, err := r.newBuilder(req, pag)
	if err != nil {
		return nil, err
	}
	sr := &streamReader{r: r, st: st, b: b}
	for _, seg := range st.Retriever.Selector.FieldPath {
		s, err := seg.Render(vars)
		if err != nil {
			return nil, &Error{Failure: protocol.ConfigError, Message: err.Error()}
		}
		sr.path = append(sr.path, s)
	}
	return sr, nil
}

// pageResult is one page read.
type pageResult struct {
	parts *request.Parts
	resp  *request.Response
}

// read fetches pages until the paginator stops or maxPages pages were read
// (0: no limit), handing each page's records to emit.
func (s *streamReader) read(ctx context.Context, maxPages int, emit func([][]byte) error) error {
	pipe, err := s.r.newPipeline(ctx, s.st)
	if err != nil {
		return err
	}
	token := s.b.pag.First()
	sent := paginate.NewRequestLog()
	for page := 1; ; page++ {
		var raw [][]byte
		var extractErr error
		repeated := func(p *request.Parts) error { return sent.Check(page, token, p) }
		res, err := s.fetch(ctx, token, repeated, func(resp *request.Response) error {
			raw, extractErr = extractRecords(resp.Body, s.path)
			if extractErr == errNotJSON {
				return extractErr // a truncated or garbled body is fetched again
			}
			return nil
		})
		if err != nil {
			return err
		}
		if res.resp.Ignored {
			return nil
		}
		if extractErr != nil {
			return s.badResponse(res.resp, extractErr)
		}
		// The record filter, transformations and normalization (pipeline.go)
		// see the variables of the request that fetched the page.
		vars := s.r.vars(s.b.req.Parameters)
		vars["next_page_token"] = token.Vars()
		records, err := pipe.run(raw, vars)
		if err != nil {
			return err
		}
		var decoded []any
		pg := paginate.Page{
			Count:    len(raw),
			Header:   res.resp.Header,
			Response: func(u interp.Usage) any { return decodeJSONKeys(res.resp.Body, u) },
			LastRecords: func() []any {
				if decoded == nil {
					decoded = make([]any, len(records))
					for i, rec := range records {
						decoded[i] = decodeJSON(rec)
					}
				}
				return decoded
			},
		}
		next, more, err := s.b.pag.Next(token, pg)
		if s.r.Observer != nil {
			s.r.Observer.Page(s.st.Name, res.parts, res.resp, records, decision(next, more, err))
		}
		if len(records) > 0 {
			if err := emit(records); err != nil {
				return err
			}
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

func decision(next paginate.Token, more bool, err error) string {
	switch {
	case err != nil:
		return "stop: " + err.Error()
	case !more:
		return "stop: no next page"
	}
	return "next token: " + interp.String(next.Value)
}

// fetch sends one page request; repeated refuses a request an earlier page
// sent. A 401 with a token-based authenticator refreshes the token once and
// tries again.
func (s *streamReader) fetch(ctx context.Context, token paginate.Token, repeated func(*request.Parts) error, check func(*request.Response) error) (*pageResult, error) {
	res := &pageResult{}
	send := func() (*request.Response, error) {
		return s.r.Client.SendChecked(ctx, func() (*http.Request, error) {
			p, err := s.b.build(ctx, token, repeated)
			if err != nil {
				return nil, err
			}
			res.parts = p
			return p.HTTP(ctx)
		}, s.b.policy, check)
	}
	resp, err := send()
	if refresher, ok := s.b.auth.(auth.Refresher); ok && request.IsStatus(err, http.StatusUnauthorized) {
		s.r.log("WARN", fmt.Sprintf("Stream %s: HTTP 401, obtaining a new token and trying once more", s.st.Name))
		refresher.Invalidate()
		resp, err = send()
	}
	res.resp = resp
	if err != nil {
		return nil, s.requestError(err)
	}
	return res, nil
}

func (s *streamReader) requestError(err error) error {
	if f := failure.As(err); f != nil {
		return &Error{Failure: f.Failure, Status: f.Status, Message: fmt.Sprintf("stream %s: %s", s.st.Name, f.Message)}
	}
	return &Error{Failure: protocol.ConfigError, Message: fmt.Sprintf("stream %s: %v", s.st.Name, err)}
}

func (s *streamReader) badResponse(resp *request.Response, err error) error {
	return &Error{Failure: protocol.SystemError, Message: fmt.Sprintf("stream %s: %v (HTTP %d from %s): %s",
		s.st.Name, err, resp.Status, resp.URL, request.BodyStart(resp.Body))}
}
