package decode

import (
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
)

var gzipMagic = []byte{0x1f, 0x8b}

// gzip decompresses a body that starts with the gzip magic bytes and hands
// any other body to the inner decoder unchanged, as the reference does; an
// empty body has no document.
func (d *Decoder) gzip(r io.Reader, emit func(Doc) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	head, err := br.Peek(2)
	if len(head) == 0 {
		if err == io.EOF {
			return nil
		}
		return err
	}
	if !bytes.Equal(head, gzipMagic) {
		return d.inner.decode(br, emit)
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		return fmt.Errorf("the body is not valid gzip: %v", err)
	}
	defer zr.Close()
	return d.inner.decode(zr, emit)
}

// zip reads a zip archive (held whole: its index is at the end) and hands
// each file, in the archive's order, to the inner decoder. Folders are
// skipped.
func (d *Decoder) zip(r io.Reader, emit func(Doc) error) error {
	body, err := d.readAll(r)
	if err != nil {
		return err
	}
	zr, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
	if err != nil {
		return fmt.Errorf("the body is not a valid zip archive: %v", err)
	}
	for _, f := range zr.File {
		if f.FileInfo().IsDir() {
			continue
		}
		if err := d.member(f, emit); err != nil {
			return err
		}
	}
	return nil
}

func (d *Decoder) member(f *zip.File, emit func(Doc) error) error {
	rc, err := f.Open()
	if err != nil {
		return fmt.Errorf("file %s of the archive: %v", f.Name, err)
	}
	defer rc.Close()
	var emitErr error
	err = d.inner.decode(rc, func(doc Doc) error {
		emitErr = emit(doc)
		return emitErr
	})
	if err != nil && emitErr == nil {
		return fmt.Errorf("file %s of the archive: %w", f.Name, err)
	}
	return err
}
