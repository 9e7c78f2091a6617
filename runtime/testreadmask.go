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

// mask hides the secrets in every captured exchange. It runs at the end,
// when every token obtained during the read is known as a secret.
func (t *testReader) mask() {
	m := t.r.Masker.Mask
	maskReq := func(r *HTTPRequest) {
		if r == nil {
			return
		}
		r.URL = m(r.URL)
		for k, v := range r.Headers {
			r.Headers[k] = m(v)
		}
		if r.Body != nil {
			b := m(*r.Body)
			r.Body = &b
		}
	}
	maskResp := func(r *HTTPResponse) {
		if r == nil {
			return
		}
		r.Body = m(r.Body)
		for k, v := range r.Headers {
			r.Headers[k] = m(v)
		}
	}
	for i := range t.read.Slices {
		pages := t.read.Slices[i].Pages
		for j := range pages {
			maskReq(pages[j].Request)
			maskResp(pages[j].Response)
			pages[j].Decision = m(pages[j].Decision)
		}
		for _, a := range t.read.Slices[i].AuxiliaryRequests {
			maskReq(a.Request)
			maskResp(a.Response)
		}
	}
	for i := range t.read.AuxiliaryRequests {
		maskReq(t.read.AuxiliaryRequests[i].Request)
		maskResp(t.read.AuxiliaryRequests[i].Response)
	}
	for i := range t.read.Logs {
		t.read.Logs[i].Message = m(t.read.Logs[i].Message)
	}
}
