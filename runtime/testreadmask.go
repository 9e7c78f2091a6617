package runtime

import (
	"net/http"
	"strings"
)

// headers are an exchange's headers as the builder shows them: the
// credential of an Authorization header hidden, its scheme kept.
func (t *testReader) headers(h http.Header) map[string]string {
	out := map[string]string{}
	for k, v := range h {
		val := strings.Join(v, ", ")
		if strings.EqualFold(k, "Authorization") {
			scheme, _, found := strings.Cut(val, " ")
			if found {
				val = scheme + " ****"
			} else {
				val = "****"
			}
		}
		out[k] = val
	}
	return out
}

// maskAuthorization hides the credential of every Authorization header of
// a StreamRead made elsewhere (by the CDK), as headers does.
func (t *testReader) maskAuthorization() {
	mask := func(req *HTTPRequest) {
		if req == nil {
			return
		}
		h := http.Header{}
		for k, v := range req.Headers {
			h[k] = []string{v}
		}
		req.Headers = t.headers(h)
	}
	for i := range t.read.Slices {
		for j := range t.read.Slices[i].Pages {
			mask(t.read.Slices[i].Pages[j].Request)
		}
		for j := range t.read.Slices[i].AuxiliaryRequests {
			mask(t.read.Slices[i].AuxiliaryRequests[j].Request)
		}
	}
	for i := range t.read.AuxiliaryRequests {
		mask(t.read.AuxiliaryRequests[i].Request)
	}
}

// mask hides the secrets in every captured exchange. It runs at the end,
// when every token obtained during the read is known as a secret.
func (t *testReader) mask() {
	m := t.r.Masker.Mask
	headers := func(h map[string]string) {
		for k, v := range h {
			h[k] = m(v)
		}
	}
	exchange := func(req *HTTPRequest, resp *HTTPResponse) {
		if req != nil {
			req.URL = m(req.URL)
			headers(req.Headers)
			if req.Body != nil {
				b := m(*req.Body)
				req.Body = &b
			}
		}
		if resp != nil {
			resp.Body = m(resp.Body)
			headers(resp.Headers)
		}
	}
	for i := range t.read.Slices {
		pages := t.read.Slices[i].Pages
		for j := range pages {
			exchange(pages[j].Request, pages[j].Response)
			pages[j].Decision = m(pages[j].Decision)
		}
		for _, a := range t.read.Slices[i].AuxiliaryRequests {
			exchange(a.Request, a.Response)
		}
	}
	for i := range t.read.AuxiliaryRequests {
		exchange(t.read.AuxiliaryRequests[i].Request, t.read.AuxiliaryRequests[i].Response)
	}
	for i := range t.read.Logs {
		t.read.Logs[i].Message = m(t.read.Logs[i].Message)
	}
}
