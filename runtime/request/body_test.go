package request

import (
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestReadBodyWholeWithOrWithoutALength(t *testing.T) {
	long := strings.Repeat("0123456789", 10000) // larger than the first buffer
	for _, c := range []struct {
		name string
		body io.Reader
		size int64
		want string
	}{
		{"announced", strings.NewReader(long), int64(len(long)), long},
		{"unannounced", strings.NewReader(long), -1, long},
		{"one byte a read", iotest.OneByteReader(strings.NewReader("abc")), -1, "abc"},
		{"wrong announced length", strings.NewReader(long), 10, long},
		{"empty", strings.NewReader(""), 0, ""},
	} {
		bp, err := readBody(c.body, c.size, 1<<20)
		if err != nil || string(*bp) != c.want {
			t.Errorf("%s: got %d bytes, %v; want %d bytes", c.name, len(*bp), err, len(c.want))
		}
	}
}

func TestReadBodyStopsOneByteAfterTheLimit(t *testing.T) {
	for _, size := range []int64{-1, 100} {
		bp, err := readBody(strings.NewReader(strings.Repeat("x", 100)), size, 10)
		if err != nil || len(*bp) != 11 {
			t.Errorf("size %d: got %d bytes, %v; want 11 (limit + 1)", size, len(*bp), err)
		}
		bp, _ = readBody(strings.NewReader(strings.Repeat("x", 10)), size, 10)
		if len(*bp) != 10 {
			t.Errorf("size %d: a body of exactly the limit: got %d bytes", size, len(*bp))
		}
	}
}

func TestReleasedBufferIsReadIntoAgain(t *testing.T) {
	first := &Response{}
	first.buffer, _ = readBody(strings.NewReader(`{"page":1}`), -1, 1<<20)
	first.Body = *first.buffer
	first.Release()
	if first.Body != nil || first.buffer != nil {
		t.Fatal("a released response keeps its body")
	}
	first.Release() // twice is harmless
	bp, _ := readBody(strings.NewReader(`{"page":2}`), -1, 1<<20)
	if string(*bp) != `{"page":2}` {
		t.Fatalf("got %q", *bp)
	}
}
