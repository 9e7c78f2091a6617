package genapi

import (
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"fmt"
)

// Shape puts records where an extractor's field_path finds them: under each
// key in turn; a `*` segment becomes a list with one element per record, or
// the records themselves when it is last. With no path the records are the
// body, a list.
func Shape(fieldPath []string, records []any) any {
	if len(fieldPath) == 0 {
		return append([]any{}, records...)
	}
	if fieldPath[0] == "*" {
		out := make([]any, len(records))
		for i, r := range records {
			out[i] = shapeOne(fieldPath[1:], r)
		}
		return out
	}
	return map[string]any{fieldPath[0]: Shape(fieldPath[1:], records)}
}

func shapeOne(fieldPath []string, record any) any {
	if len(fieldPath) == 0 {
		return record
	}
	if fieldPath[0] == "*" {
		return []any{shapeOne(fieldPath[1:], record)}
	}
	return map[string]any{fieldPath[0]: shapeOne(fieldPath[1:], record)}
}

// Decoder says how a stream's responses are encoded.
type Decoder struct {
	Kind      string // json, jsonl, csv or xml
	Delimiter string // csv
	Gzip      bool
}

// DecoderOf reads a retriever's decoder: JsonDecoder (the default),
// JsonlDecoder, XmlDecoder, and CompositeRawDecoder with a JsonParser,
// JsonLineParser or CsvParser, gzipped or not. ok is false for a decoder the
// mock cannot encode for.
func DecoderOf(d map[string]any) (Decoder, bool) {
	if d == nil {
		return Decoder{Kind: "json"}, true
	}
	switch d["type"] {
	case "JsonDecoder", nil:
		return Decoder{Kind: "json"}, true
	case "JsonlDecoder":
		return Decoder{Kind: "jsonl"}, true
	case "XmlDecoder":
		return Decoder{Kind: "xml"}, true
	case "CompositeRawDecoder":
		parser, _ := d["parser"].(map[string]any)
		return parserOf(parser)
	}
	return Decoder{}, false
}

func parserOf(p map[string]any) (Decoder, bool) {
	switch p["type"] {
	case "JsonParser":
		return Decoder{Kind: "json"}, true
	case "JsonLineParser":
		return Decoder{Kind: "jsonl"}, true
	case "CsvParser":
		delim, _ := p["delimiter"].(string)
		if delim == "" {
			delim = ","
		}
		return Decoder{Kind: "csv", Delimiter: delim}, true
	case "GzipParser":
		inner, _ := p["inner_parser"].(map[string]any)
		d, ok := parserOf(inner)
		d.Gzip = true
		return d, ok
	}
	return Decoder{}, false
}

// Encode writes a response body holding records for the decoder: the shaped
// body as JSON; one shaped body per record and line for JSON lines; a header
// and one row per record for CSV; elements named after the path for XML.
func (d Decoder) Encode(fieldPath []string, records []any, body any) ([]byte, string) {
	var b []byte
	ctype := "application/json"
	switch d.Kind {
	case "jsonl":
		var buf bytes.Buffer
		for _, r := range records {
			line, _ := json.Marshal(Shape(fieldPath, []any{r}))
			buf.Write(append(line, '\n'))
		}
		b, ctype = buf.Bytes(), "application/jsonl"
	case "csv":
		b, ctype = encodeCSV(records, d.Delimiter), "text/csv"
	case "xml":
		b, ctype = encodeXML(fieldPath, records), "application/xml"
	default:
		b, _ = json.Marshal(body)
	}
	if d.Gzip {
		var buf bytes.Buffer
		w := gzip.NewWriter(&buf)
		w.Write(b)
		w.Close()
		b = buf.Bytes()
	}
	return b, ctype
}

func encodeCSV(records []any, delimiter string) []byte {
	cols := map[string]bool{}
	for _, r := range records {
		for k := range asMap(r) {
			cols[k] = true
		}
	}
	header := sortedKeys(cols)
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.Comma = []rune(delimiter)[0]
	w.Write(header)
	for _, r := range records {
		row := make([]string, len(header))
		for i, k := range header {
			if v, ok := asMap(r)[k]; ok && v != nil {
				row[i] = fmt.Sprint(v)
			}
		}
		w.Write(row)
	}
	w.Flush()
	return buf.Bytes()
}

// encodeXML writes the path's elements, the last one repeated once per
// record, which an XML-to-dict decoder (xmltodict) reads back as the list of
// records at the path. A path of one element is the document's root: it
// holds the first record only; `*` segments are not expressible.
func encodeXML(fieldPath []string, records []any) []byte {
	var buf bytes.Buffer
	if len(fieldPath) == 0 || len(records) == 0 {
		return buf.Bytes()
	}
	if len(fieldPath) == 1 {
		records = records[:1]
	}
	last := len(fieldPath) - 1
	for _, seg := range fieldPath[:last] {
		fmt.Fprintf(&buf, "<%s>", seg)
	}
	for _, r := range records {
		writeXML(&buf, fieldPath[last], r)
	}
	for i := last - 1; i >= 0; i-- {
		fmt.Fprintf(&buf, "</%s>", fieldPath[i])
	}
	return buf.Bytes()
}

func writeXML(buf *bytes.Buffer, name string, v any) {
	fmt.Fprintf(buf, "<%s>", name)
	switch x := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(x) {
			writeXML(buf, k, x[k])
		}
	case []any:
		for _, e := range x {
			writeXML(buf, "item", e)
		}
	case nil:
	default:
		xml.EscapeText(buf, []byte(fmt.Sprint(x)))
	}
	fmt.Fprintf(buf, "</%s>", name)
}
