package genapi

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"testing"
)

func TestShape(t *testing.T) {
	recs := []any{map[string]any{"id": 1}, map[string]any{"id": 2}}
	for _, c := range []struct {
		path    []string
		records []any
		want    string
	}{
		{nil, recs, `[{"id":1},{"id":2}]`},
		{nil, nil, `[]`},
		{[]string{"data"}, recs, `{"data":[{"id":1},{"id":2}]}`},
		{[]string{"data"}, nil, `{"data":[]}`},
		{[]string{"response", "results"}, recs, `{"response":{"results":[{"id":1},{"id":2}]}}`},
		{[]string{"data", "*"}, recs, `{"data":[{"id":1},{"id":2}]}`},
		{[]string{"data", "*", "item"}, recs, `{"data":[{"item":{"id":1}},{"item":{"id":2}}]}`},
		{[]string{"*", "item"}, recs, `[{"item":{"id":1}},{"item":{"id":2}}]`},
	} {
		b, _ := json.Marshal(Shape(c.path, c.records))
		if string(b) != c.want {
			t.Errorf("%q: got %s, want %s", c.path, b, c.want)
		}
	}
}

func TestEncode(t *testing.T) {
	recs := []any{map[string]any{"id": 1, "name": "a,b"}, map[string]any{"id": 2}}
	path := []string{"data"}
	for _, c := range []struct {
		decoder string
		want    string
		ctype   string
	}{
		{`{"type": "JsonDecoder"}`, `{"data":[{"id":1,"name":"a,b"},{"id":2}]}`, "application/json"},
		{`{"type": "JsonlDecoder"}`, "{\"data\":[{\"id\":1,\"name\":\"a,b\"}]}\n{\"data\":[{\"id\":2}]}\n", "application/jsonl"},
		{`{"type": "CompositeRawDecoder", "parser": {"type": "CsvParser"}}`, "id,name\n1,\"a,b\"\n2,\n", "text/csv"},
		{`{"type": "CompositeRawDecoder", "parser": {"type": "CsvParser", "delimiter": ";"}}`, "id;name\n1;a,b\n2;\n", "text/csv"},
	} {
		var d map[string]any
		json.Unmarshal([]byte(c.decoder), &d)
		dec, ok := DecoderOf(d)
		if !ok {
			t.Fatalf("%s: not ok", c.decoder)
		}
		b, ctype := dec.Encode(path, recs, Shape(path, recs))
		if string(b) != c.want || ctype != c.ctype {
			t.Errorf("%s: got %q %s, want %q %s", c.decoder, b, ctype, c.want, c.ctype)
		}
	}
	dec, _ := DecoderOf(map[string]any{"type": "XmlDecoder"})
	if b, _ := dec.Encode([]string{"root", "item"}, recs, nil); string(b) != "<root><item><id>1</id><name>a,b</name></item><item><id>2</id></item></root>" {
		t.Errorf("xml: got %s", b)
	}
	dec, _ = DecoderOf(map[string]any{"type": "CompositeRawDecoder", "parser": map[string]any{"type": "GzipParser", "inner_parser": map[string]any{"type": "JsonLineParser"}}})
	b, _ := dec.Encode(nil, recs[1:], nil)
	r, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := io.ReadAll(r)
	if string(plain) != "[{\"id\":2}]\n" {
		t.Errorf("gzip jsonl: got %q", plain)
	}
	if _, ok := DecoderOf(map[string]any{"type": "CustomDecoder"}); ok {
		t.Error("a custom decoder must not be encodable")
	}
}
