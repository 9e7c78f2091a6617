package runtime

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/airbyte-go/source-declarative/runtime/request"
)

// Page keeps a page as Airbyte's builder shows it: with the slice being
// read, or, for a parent stream, as an auxiliary request.
func (t *testReader) Page(stream string, req *request.Parts, resp *request.Response, records [][]byte, decision string) {
	if stream != t.stream {
		// A parent stream's page, read to make the partitions, titled as
		// Airbyte's builder titles it.
		t.mu.Lock()
		t.read.AuxiliaryRequests = append(t.read.AuxiliaryRequests, AuxiliaryRequest{
			Title: "Parent stream: Stream '" + stream + "' request", Type: "PARENT_STREAM",
			Description: "Request performed in order to extract records for stream '" + stream + "'",
			Request:     t.request(req), Response: t.response(resp)})
		t.mu.Unlock()
		return
	}
	page := TestPage{Request: t.request(req), Response: t.response(resp), Decision: decision, Records: []json.RawMessage{}}
	for _, rec := range records {
		page.Records = append(page.Records, json.RawMessage(rec))
	}
	t.mu.Lock()
	if t.current != nil {
		t.current.Pages = append(t.current.Pages, page)
	}
	t.mu.Unlock()
}

// Auxiliary keeps an auxiliary request as Airbyte's builder shows it: an
// AsyncRetriever's job requests with the slice being read, the others with
// the whole read; one made for a parent stream is titled as the parent's.
func (t *testReader) Auxiliary(kind, path, title, description string, req *request.Parts, resp *request.Response) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if rest, ok := strings.CutPrefix(path, t.path+"."); ok && strings.Contains(rest, "parent_stream_configs[") {
		kind, title = "PARENT_STREAM", "Parent stream: "+title
	}
	a := AuxiliaryRequest{Title: title, Type: kind, Description: description, Request: t.request(req), Response: t.response(resp)}
	if strings.HasPrefix(kind, "ASYNC_") && t.current != nil {
		t.current.AuxiliaryRequests = append(t.current.AuxiliaryRequests, a)
		return
	}
	t.read.AuxiliaryRequests = append(t.read.AuxiliaryRequests, a)
}

// request is a request as the builder shows it (nil: none).
func (t *testReader) request(p *request.Parts) *HTTPRequest {
	if p == nil {
		return nil
	}
	full, _ := p.FullURL()
	out := &HTTPRequest{URL: full, Headers: t.headers(p.Headers), HTTPMethod: p.Method}
	if body, ctype, err := p.Body(); err == nil && body != nil {
		s := string(body)
		out.Body = &s
		if p.Headers.Get("Content-Type") == "" {
			out.Headers["Content-Type"] = ctype // as the request sent it (Parts.HTTP)
		}
	}
	return out
}

// maxShownBody is the most of a response body a test read shows: enough
// to see what an API answers, where a body of many megabytes, copied into
// the StreamRead, masked and written as JSON, would cost several times its
// size in memory.
const maxShownBody = 1 << 20

// response is a response as the builder shows it (nil: none), its body cut
// at maxShownBody bytes, which the body then says.
func (t *testReader) response(r *request.Response) *HTTPResponse {
	if r == nil {
		return nil
	}
	return &HTTPResponse{Status: r.Status, Body: shownBody(r.Body), Headers: t.headers(r.Header)}
}

// shownBody is a body as a test read shows it: whole up to maxShownBody
// bytes, else its start (cut between characters) followed by "..." (after
// which the masker also hides the start of a secret the cut left: see
// Masker.Mask) and the body's length.
func shownBody(b []byte) string {
	if len(b) <= maxShownBody {
		return string(b)
	}
	cut := maxShownBody
	for cut > 0 && !utf8.RuneStart(b[cut]) {
		cut--
	}
	return string(b[:cut]) + fmt.Sprintf("... (cut by the test read: the first %d of %d bytes are shown)", cut, len(b))
}
