package runtime

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/protocol"
	"github.com/airbyte-go/source-declarative/runtime/auth"
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
	au, err := r.authenticator(req.Auth)
	if err != nil {
		return nil, err
	}
	sr := &streamReader{r: r, st: st, b: &builder{r: r, req: req, auth: au, pag: pag}}
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
	records [][]byte
	parts   *request.Parts
	resp    *request.Response
}

// read fetches pages until the paginator stops or maxPages pages were read
// (0: no limit), handing each page's records to emit.
func (s *streamReader) read(ctx context.Context, maxPages int, emit func([][]byte) error) error {
	token := s.b.pag.First()
	var previous string
	for page := 1; ; page++ {
		var raw [][]byte
		var extractErr error
		res, err := s.fetch(ctx, token, func(resp *request.Response) error {
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
		// An offset or page token injected nowhere gives the same request
		// forever (a cursor has its own guard against repeating).
		if sig := signature(res.parts); sig == previous && !s.b.pag.IsCursor() {
			return &Error{Failure: protocol.ConfigError, Message: fmt.Sprintf(
				"stream %s: page %d would be requested exactly like page %d (%s); the pagination token is injected nowhere, stopping instead of reading the same page forever",
				s.st.Name, page, page-1, res.resp.URL)}
		} else {
			previous = sig
		}
		if extractErr != nil {
			return s.badResponse(res.resp, extractErr)
		}
		records, err := s.filter(raw, token)
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

// fetch sends one page request; a 401 with a token-based authenticator
// refreshes the token once and tries again.
func (s *streamReader) fetch(ctx context.Context, token paginate.Token, check func(*request.Response) error) (*pageResult, error) {
	res := &pageResult{}
	send := func() (*request.Response, error) {
		return s.r.Client.SendChecked(ctx, func() (*http.Request, error) {
			p, err := s.b.build(ctx, token, nil)
			if err != nil {
				return nil, err
			}
			res.parts = p
			return p.HTTP(ctx)
		}, s.b.req.ErrorHandler, check)
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
	var re *request.Error
	if errors.As(err, &re) {
		return &Error{Failure: re.Failure, Message: fmt.Sprintf("stream %s: %s", s.st.Name, re.Message)}
	}
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	return &Error{Failure: protocol.ConfigError, Message: fmt.Sprintf("stream %s: %v", s.st.Name, err)}
}

func (s *streamReader) badResponse(resp *request.Response, err error) error {
	return &Error{Failure: protocol.SystemError, Message: fmt.Sprintf("stream %s: %v (HTTP %d from %s): %s",
		s.st.Name, err, resp.Status, resp.URL, request.BodyStart(resp.Body))}
}

// filter keeps the records the record filter accepts.
func (s *streamReader) filter(records [][]byte, token paginate.Token) ([][]byte, error) {
	f := s.st.Retriever.Selector.Filter
	if f == nil {
		return records, nil
	}
	vars := s.r.vars(s.b.req.Parameters)
	vars["next_page_token"] = token.Vars()
	kept := records[:0:0]
	for _, rec := range records {
		vars["record"] = decodeJSON(rec)
		ok, err := f.Bool(vars)
		if err != nil {
			return nil, &Error{Failure: protocol.ConfigError, Message: err.Error()}
		}
		if ok {
			kept = append(kept, rec)
		}
	}
	return kept, nil
}

// signature identifies a request: method, URL, headers and body.
func signature(p *request.Parts) string {
	if p == nil {
		return ""
	}
	full, _ := p.FullURL()
	body, _, _ := p.Body()
	var b strings.Builder
	b.WriteString(p.Method + " " + full + "\n")
	for _, k := range interp.SortedKeys(p.Headers) {
		b.WriteString(k + ": " + strings.Join(p.Headers[k], ",") + "\n")
	}
	b.Write(body)
	return b.String()
}
