package request

import (
	"io"
	"sync"
)

// Response bodies are read into buffers that the reader of a page may give
// back once nothing holds a slice of the body any more (Release): a stream
// of 1,000 pages then reads them into a few buffers instead of leaving 1,000
// bodies (and io.ReadAll's growing copies of each) to the garbage collector.
var bodies = sync.Pool{New: func() any { return new([]byte) }}

const (
	firstBodyBuffer = 32 << 10 // when the length is not announced
	largestPooled   = 16 << 20 // a larger buffer is left to the collector
)

// readBody reads a body whole into a buffer from the pool. size is the
// announced length (-1: unknown); more than limit bytes is an error of the
// caller's choosing, signalled by a body of limit+1 bytes.
func readBody(body io.Reader, size, limit int64) (*[]byte, error) {
	bp := bodies.Get().(*[]byte)
	buf := (*bp)[:0]
	want := int64(firstBodyBuffer)
	if size >= 0 {
		want = min(size, limit) + 1 // room to see the end without growing
	}
	if int64(cap(buf)) < want {
		buf = make([]byte, 0, want)
	}
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		room := buf[len(buf):cap(buf)]
		if left := limit + 1 - int64(len(buf)); int64(len(room)) > left {
			room = room[:left]
		}
		n, err := body.Read(room)
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > limit {
			break
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			*bp = buf
			return bp, err
		}
	}
	*bp = buf
	return bp, nil
}

// Release gives the response's body buffer back for another response to be
// read into; r.Body must not be used afterwards, nor any slice of it.
func (r *Response) Release() {
	if r.buffer == nil {
		return
	}
	if cap(*r.buffer) <= largestPooled {
		bodies.Put(r.buffer)
	}
	r.buffer, r.Body = nil, nil
}
