package decode

import (
	"bufio"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/airbyte-go/source-declarative/lang/charset"
	"github.com/airbyte-go/source-declarative/runtime/transform"
)

// csv makes each row after the header an object of text values, keyed by
// the header, in Python's csv.DictReader way: blank lines are skipped, a
// short row's missing cells are null, quoted cells may span lines, and line
// breaks are read as universal newlines. A row longer than the header is an
// error (the reference would emit a record with a null key and fail).
func (d *Decoder) csv(r io.Reader, emit func(Doc) error) error {
	text, err := charset.NewReader(d.m.Encoding, r)
	if err != nil {
		return err
	}
	cr := &csvReader{r: bufio.NewReaderSize(&universalNewlines{r: text}, 64<<10), comma: d.m.Delimiter, max: d.max}
	header, _, err := cr.read()
	if err == io.EOF {
		return nil
	}
	if err != nil {
		return err
	}
	cols := csvColumns(header)
	nulls := map[string]bool{}
	for _, v := range d.m.Nulls {
		nulls[v] = true
	}
	width := len(header)
	var buf []byte
	for {
		cells, line, err := cr.read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if len(cells) > width {
			return fmt.Errorf("the row on line %d has %d cells, the header has %d", line, len(cells), width)
		}
		buf = append(buf[:0], '{')
		for i, c := range cols {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = append(buf, c.key...)
			if c.index >= len(cells) || nulls[cells[c.index]] {
				buf = append(buf, "null"...)
			} else {
				buf = transform.AppendString(buf, cells[c.index])
			}
		}
		buf = append(buf, '}')
		if err := emit(Doc{JSON: buf}); err != nil {
			return err
		}
	}
}

// csvReader reads rows as Python's csv module does with its default
// dialect, which decides what a malformed row holds: a quote opens a quoted
// cell only at the start of a cell; there, two quotes are one, and a quote
// followed by anything but the delimiter or a line break ends the quoting
// while the cell goes on ("a"b is ab, "4" ,x is "4 " then x); a quoted
// cell left open at the end of the body ends there.
type csvReader struct {
	r     *bufio.Reader // with \n line breaks only
	comma rune
	max   int64 // the longest row, in bytes
	line  int   // lines read
	cells []string
	cell  []byte
}

type csvState int

const (
	rowStart csvState = iota
	cellStart
	inCell
	inQuotes
	quoteInQuotes
)

// read returns the next row that is not blank, with the line it starts on,
// or io.EOF at the end of the body. The cells are valid until the next call.
func (c *csvReader) read() (cells []string, line int, err error) {
	c.cells = c.cells[:0]
	c.cell = c.cell[:0]
	state, size := rowStart, int64(0)
	for {
		r, n, err := c.next()
		if err == io.EOF {
			if state == rowStart {
				return nil, 0, io.EOF
			}
			return c.end(), line, nil
		}
		if err != nil {
			return nil, 0, err
		}
		if size += int64(n); size > c.max {
			return nil, 0, fmt.Errorf("a row is longer than %d bytes", c.max)
		}
		if r == '\n' {
			c.line++
		}
		switch state {
		case rowStart:
			if r == '\n' {
				size = 0
				continue
			}
			line = c.line + 1
			state = cellStart
			fallthrough
		case cellStart:
			switch r {
			case '"':
				state = inQuotes
				continue
			case '\n':
				return c.end(), line, nil
			case c.comma:
				c.save()
				continue
			}
			state = inCell
			c.add(r)
		case quoteInQuotes:
			if r == '"' {
				c.cell = append(c.cell, '"')
				state = inQuotes
				break
			}
			state = inCell // the quoting ends; the cell goes on
			fallthrough
		case inCell:
			switch r {
			case '\n':
				return c.end(), line, nil
			case c.comma:
				c.save()
				state = cellStart
			default:
				c.add(r)
			}
		case inQuotes:
			if r == '"' {
				state = quoteInQuotes
			} else {
				c.add(r)
			}
		}
		if state == inCell || state == inQuotes {
			size += c.run(state == inQuotes)
		}
	}
}

// run appends to the cell, with an ASCII delimiter, the buffered bytes that
// cannot end it or change its state: all but the delimiter and a line break
// in a cell, all but a quote in a quoted one.
func (c *csvReader) run(quoted bool) int64 {
	if c.comma >= utf8.RuneSelf {
		return 0
	}
	buf, _ := c.r.Peek(c.r.Buffered())
	k := 0
	for ; k < len(buf); k++ {
		b := buf[k]
		if quoted && b == '"' || !quoted && (b == '\n' || rune(b) == c.comma) {
			break
		}
		if b == '\n' {
			c.line++
		}
	}
	c.cell = append(c.cell, buf[:k]...)
	c.r.Discard(k)
	return int64(k)
}

// next reads one character; with an ASCII delimiter, one byte (the bytes
// of a multi-byte character are none of the bytes a row's syntax uses).
func (c *csvReader) next() (r rune, size int, err error) {
	if c.comma < utf8.RuneSelf {
		b, err := c.r.ReadByte()
		return rune(b), 1, err
	}
	return c.r.ReadRune()
}

// add appends what next read to the cell.
func (c *csvReader) add(r rune) {
	if c.comma < utf8.RuneSelf {
		c.cell = append(c.cell, byte(r))
	} else {
		c.cell = utf8.AppendRune(c.cell, r)
	}
}

func (c *csvReader) save() {
	c.cells = append(c.cells, string(c.cell))
	c.cell = c.cell[:0]
}

// end saves the last cell and returns the row.
func (c *csvReader) end() []string {
	c.save()
	return c.cells
}

// csvColumn is one key of the objects: its JSON text with the colon, and
// the cell it takes.
type csvColumn struct {
	key   []byte
	index int
}

// csvColumns orders the keys as the header does; a repeated name keeps its
// first place and takes the last cell of that name, as a Python dict does.
func csvColumns(header []string) []csvColumn {
	var cols []csvColumn
	at := map[string]int{}
	for i, name := range header {
		if j, seen := at[name]; seen {
			cols[j].index = i
			continue
		}
		at[name] = len(cols)
		cols = append(cols, csvColumn{key: append(transform.AppendString(nil, name), ':'), index: i})
	}
	return cols
}

// universalNewlines reads \r\n and a lone \r as \n, as Python's text files do.
type universalNewlines struct {
	r  io.Reader
	cr bool // the last byte read was \r
}

func (u *universalNewlines) Read(p []byte) (int, error) {
	n, err := u.r.Read(p)
	out := 0
	for _, c := range p[:n] {
		if u.cr {
			u.cr = false
			if c == '\n' {
				continue
			}
		}
		if c == '\r' {
			u.cr = true
			c = '\n'
		}
		p[out] = c
		out++
	}
	return out, err
}
