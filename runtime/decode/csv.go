package decode

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"

	"github.com/airbyte-go/source-declarative/runtime/decode/charset"
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
	row := &rowLimit{r: &universalNewlines{r: text}, max: d.max}
	cr := csv.NewReader(row)
	cr.Comma = d.m.Delimiter
	cr.LazyQuotes = true
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err == io.EOF {
		return nil
	}
	if err != nil {
		return csvError(err)
	}
	cols := csvColumns(header)
	nulls := map[string]bool{}
	for _, v := range d.m.Nulls {
		nulls[v] = true
	}
	width := len(header)
	var buf []byte
	for {
		row.n = 0
		cells, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return csvError(err)
		}
		if len(cells) > width {
			line, _ := cr.FieldPos(0)
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

func csvError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) && pe.Err != nil {
		return fmt.Errorf("line %d: %w", pe.Line, pe.Err)
	}
	return err
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

// rowLimit fails a row (counted from n = 0) longer than max bytes, such as
// a quote that never closes.
type rowLimit struct {
	r   io.Reader
	n   int64
	max int64
}

func (l *rowLimit) Read(p []byte) (int, error) {
	if l.n > l.max {
		return 0, fmt.Errorf("a row is longer than %d bytes", l.max)
	}
	n, err := l.r.Read(p)
	l.n += int64(n)
	return n, err
}
