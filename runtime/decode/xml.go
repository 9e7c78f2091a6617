package decode

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/airbyte-go/source-declarative/lang/charset"
	"github.com/airbyte-go/source-declarative/runtime/transform"
)

// xml makes the document one object, as Python's xmltodict does: the root
// element under its name; attributes as "@name" keys first, then child
// elements in order, then text beside them as "#text"; an element with text
// only is its text and an empty one null; repeated siblings become a list
// (a single one does not); every value is text; namespace prefixes are kept
// ("ns:tag", "@xmlns:ns"). An empty body has no document.
func (d *Decoder) xml(r io.Reader, emit func(Doc) error) error {
	body, err := d.readAll(r)
	if err != nil {
		return err
	}
	body = TrimBOM(body)
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	dec := xml.NewDecoder(bytes.NewReader(body))
	dec.CharsetReader = charset.NewReader
	var stack []*xmlElement
	var root *xmlMembers
	for {
		tok, err := dec.RawToken()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("the body is not valid XML: %v", err)
		}
		if root != nil {
			// After the root element: what xmltodict calls junk (text, a
			// second element) is left out with a warning; the reference
			// decodes no document then.
			if ignored := afterRoot(tok); ignored != "" {
				return emit(Doc{JSON: root.appendJSON(nil), Ignored: ignored + " after the root element"})
			}
			continue
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if len(stack) == maxXMLDepth {
				return fmt.Errorf("the body is nested deeper than %d elements", maxXMLDepth)
			}
			e := &xmlElement{name: xmlName(t.Name)}
			for _, a := range t.Attr {
				e.add("@"+xmlName(a.Name), a.Value)
			}
			stack = append(stack, e)
		case xml.EndElement:
			if len(stack) == 0 || stack[len(stack)-1].name != xmlName(t.Name) {
				return fmt.Errorf("the body is not valid XML: unexpected </%s>", xmlName(t.Name))
			}
			e := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if len(stack) > 0 {
				stack[len(stack)-1].add(e.name, e.value())
			} else {
				root = &xmlMembers{}
				root.add(e.name, e.value())
			}
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].text.Write(t)
			} else if len(bytes.TrimSpace(t)) > 0 {
				return fmt.Errorf("the body is not valid XML: text before the root element")
			}
		}
	}
	if len(stack) > 0 || root == nil {
		return fmt.Errorf("the body is not valid XML: the document ends before its root element does")
	}
	return emit(Doc{JSON: root.appendJSON(nil)})
}

const maxXMLDepth = 1000

// afterRoot describes a token after the root element that is not white
// space, a comment or a processing instruction, "" for those.
func afterRoot(tok xml.Token) string {
	switch t := tok.(type) {
	case xml.CharData:
		if text := bytes.TrimSpace(t); len(text) > 0 {
			return fmt.Sprintf("text %q", clipText(string(text), 40))
		}
	case xml.StartElement:
		return fmt.Sprintf("a second element <%s>", xmlName(t.Name))
	case xml.EndElement:
		return fmt.Sprintf("a closing tag </%s>", xmlName(t.Name))
	}
	return ""
}

func clipText(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

func xmlName(n xml.Name) string {
	if n.Space != "" {
		return n.Space + ":" + n.Local
	}
	return n.Local
}

// xmlMembers are the keys of an object in document order; a value is a
// string, nil, *xmlMembers or []any.
type xmlMembers struct {
	keys []string
	vals []any
}

// add sets key, turning a repeated key into a list at its first place.
func (m *xmlMembers) add(key string, v any) {
	for i, k := range m.keys {
		if k == key {
			if l, ok := m.vals[i].([]any); ok {
				m.vals[i] = append(l, v)
			} else {
				m.vals[i] = []any{m.vals[i], v}
			}
			return
		}
	}
	m.keys = append(m.keys, key)
	m.vals = append(m.vals, v)
}

// xmlElement is an element being read.
type xmlElement struct {
	xmlMembers
	name string
	text strings.Builder
}

// value is what the element becomes once read.
func (e *xmlElement) value() any {
	text := strings.TrimSpace(e.text.String())
	if len(e.keys) == 0 {
		if text == "" {
			return nil
		}
		return text
	}
	if text != "" {
		e.add("#text", text)
	}
	return &e.xmlMembers
}

func (m *xmlMembers) appendJSON(dst []byte) []byte {
	dst = append(dst, '{')
	for i, k := range m.keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(transform.AppendString(dst, k), ':')
		dst = appendXMLValue(dst, m.vals[i])
	}
	return append(dst, '}')
}

func appendXMLValue(dst []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...)
	case string:
		return transform.AppendString(dst, x)
	case *xmlMembers:
		return x.appendJSON(dst)
	case []any:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendXMLValue(dst, e)
		}
		return append(dst, ']')
	}
	return dst
}
