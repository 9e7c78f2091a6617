package components

import (
	"bytes"
	"net/http"
	"strings"
)

// Slice is a stream slice as the CDK's StreamSlice holds it, for the
// components that take one.
type Slice struct {
	Partition   map[string]any `json:"partition"`
	CursorSlice map[string]any `json:"cursor_slice"`
	ExtraFields map[string]any `json:"extra_fields"`
}

// JoinRecords writes records (each one JSON value) as one JSON array, as
// the host takes them.
func JoinRecords(records [][]byte) []byte {
	n := 2
	for _, r := range records {
		n += len(r) + 1
	}
	out := make([]byte, 0, n)
	out = append(out, '[')
	for i, r := range records {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, r...)
	}
	return append(out, ']')
}

// SplitLines cuts the host's answer, one JSON value a line, into records.
func SplitLines(blob []byte) [][]byte {
	if len(blob) == 0 {
		return nil
	}
	lines := bytes.Split(blob, []byte{'\n'})
	out := lines[:0]
	for _, l := range lines {
		if len(l) > 0 {
			out = append(out, l[:len(l):len(l)])
		}
	}
	return out
}

// ResponseParams describe a response to the host, beside its body: the
// host makes a requests.Response of them for the component.
func ResponseParams(status int, header http.Header, url string) map[string]any {
	return map[string]any{"status": status, "headers": Headers(header), "url": url}
}

// Headers are headers as the host's requests objects hold them: one value
// a name, a repeated header joined as requests joins it.
func Headers(header http.Header) map[string]string {
	h := make(map[string]string, len(header))
	for k, vs := range header {
		h[k] = strings.Join(vs, ", ")
	}
	return h
}
