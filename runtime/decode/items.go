package decode

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/airbyte-go/source-declarative/lang/charset"
)

// jsonItems hands over the values at items_path of one JSON body, read as
// it arrives, as Python's ijson.items names them: dotted keys, where "item"
// stands for each element of an array ("data.item": the elements of data;
// "": the body). Only the values handed over are held whole.
func (d *Decoder) jsonItems(r io.Reader, emit func(Doc) error) error {
	text, err := charset.NewReader(d.m.Encoding, r)
	if err != nil {
		return err
	}
	w := &itemsWalker{dec: json.NewDecoder(text), target: d.m.ItemsPath, emit: emit}
	if err := w.value(nil); err != nil && err != io.EOF {
		return err
	}
	return nil
}

type itemsWalker struct {
	dec     *json.Decoder
	target  []string
	emit    func(Doc) error
	started bool // a token was read: the body is not empty
}

// value reads the value at prefix.
func (w *itemsWalker) value(prefix []string) error {
	if slices.Equal(prefix, w.target) {
		var raw json.RawMessage
		if err := w.dec.Decode(&raw); err != nil {
			return w.syntax(err)
		}
		w.started = true
		return w.emit(Doc{JSON: raw})
	}
	if len(prefix) >= len(w.target) || !slices.Equal(prefix, w.target[:len(prefix)]) {
		return w.skip()
	}
	tok, err := w.dec.Token()
	if err != nil {
		return w.syntax(err)
	}
	w.started = true
	switch tok {
	case json.Delim('{'):
		for w.dec.More() {
			key, err := w.dec.Token()
			if err != nil {
				return w.syntax(err)
			}
			if err := w.value(append(prefix, key.(string))); err != nil {
				return err
			}
		}
	case json.Delim('['):
		for w.dec.More() {
			if err := w.value(append(prefix, "item")); err != nil {
				return err
			}
		}
	default:
		return nil
	}
	_, err = w.dec.Token() // the closing delimiter
	return w.syntax(err)
}

// skip reads past one value without holding it.
func (w *itemsWalker) skip() error {
	depth := 0
	for {
		tok, err := w.dec.Token()
		if err != nil {
			return w.syntax(err)
		}
		w.started = true
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}

// syntax names a JSON syntax error as such; read errors stay as they are,
// and the end of an empty body is io.EOF.
func (w *itemsWalker) syntax(err error) error {
	var se *json.SyntaxError
	switch {
	case err == nil:
		return nil
	case err == io.EOF && !w.started:
		return io.EOF
	case err == io.EOF, err == io.ErrUnexpectedEOF:
		return fmt.Errorf("the body is not valid JSON: it ends too early")
	case errors.As(err, &se):
		return notJSON(err)
	}
	return err
}

// notJSON names a JSON syntax error: nesting past encoding/json's depth
// (10,000) as such, any other as invalid JSON.
func notJSON(err error) error {
	if strings.Contains(err.Error(), "exceeded max depth") {
		return errors.New("the body is JSON nested more than 10000 levels deep, deeper than it is read")
	}
	return fmt.Errorf("the body is not valid JSON: %v", err)
}
