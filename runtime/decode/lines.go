package decode

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/airbyte-go/source-declarative/runtime/transform"
)

// lineReader reads lines of any length up to a limit.
type lineReader struct {
	r    *bufio.Reader
	long []byte // a line longer than the buffer, gathered
	max  int64
	n    int // number of the line last read, from 1
}

func newLineReader(r io.Reader, max int64) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// next returns the next line without its line break (\n or \r\n), and
// the first without a byte order mark; ok is false at the end of the body. The line is valid until the next call.
func (l *lineReader) next() (line []byte, ok bool, err error) {
	l.long = l.long[:0]
	for {
		chunk, err := l.r.ReadSlice('\n')
		switch {
		case err == bufio.ErrBufferFull:
			l.long = append(l.long, chunk...)
			if int64(len(l.long)) > l.max {
				return nil, false, fmt.Errorf("line %d is longer than %d bytes", l.n+1, l.max)
			}
			continue
		case err == io.EOF && len(chunk) == 0 && len(l.long) == 0:
			return nil, false, nil
		case err != nil && err != io.EOF:
			return nil, false, err
		}
		if len(l.long) > 0 {
			chunk = append(l.long, chunk...)
		}
		if int64(len(chunk)) > l.max {
			return nil, false, fmt.Errorf("line %d is longer than %d bytes", l.n+1, l.max)
		}
		l.n++
		if l.n == 1 {
			chunk = TrimBOM(chunk)
		}
		chunk = bytes.TrimSuffix(chunk, []byte("\n"))
		return bytes.TrimSuffix(chunk, []byte("\r")), true, nil
	}
}

// jsonLines hands each non-blank line over as a document; its syntax is
// checked by the extractor, which skips a line that is not JSON.
func (d *Decoder) jsonLines(r io.Reader, emit func(Doc) error) error {
	lines := newLineReader(r, d.max)
	for {
		line, ok, err := lines.next()
		if err != nil || !ok {
			return err
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if !utf8.Valid(line) {
			return fmt.Errorf("line %d is not valid UTF-8 text", lines.n)
		}
		if err := emit(Doc{JSON: line, Line: lines.n}); err != nil {
			return err
		}
	}
}

// iterable makes each line {"record": "<line>"}; a lone \r breaks lines
// too, as Python's splitlines does.
func (d *Decoder) iterable(r io.Reader, emit func(Doc) error) error {
	lines := newLineReader(r, d.max)
	var buf []byte
	for {
		line, ok, err := lines.next()
		if err != nil || !ok {
			return err
		}
		if !utf8.Valid(line) {
			return fmt.Errorf("line %d is not valid UTF-8 text", lines.n)
		}
		for _, part := range bytes.Split(line, []byte("\r")) {
			buf = append(transform.AppendString(append(buf[:0], `{"record":`...), part), '}')
			if err := emit(Doc{JSON: buf}); err != nil {
				return err
			}
		}
	}
}
