package decode

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"errors"
	"strings"
	"testing"

	"github.com/airbyte-go/source-declarative/manifest"
)

// docs decodes body and lists its documents as text, "|"-separated.
func docs(t *testing.T, m *manifest.Decoder, body []byte) (string, error) {
	t.Helper()
	var out []string
	err := New(m, 1<<20).Decode(bytes.NewReader(body), func(d Doc) error {
		s := string(d.JSON)
		if d.Line > 0 {
			s = strings.Repeat("#", d.Line) + s
		}
		out = append(out, s)
		return nil
	})
	return strings.Join(out, "|"), err
}

func csvDecoder(delim rune, enc string, nulls ...string) *manifest.Decoder {
	return &manifest.Decoder{Type: manifest.CSVDecoder, Delimiter: delim, Encoding: enc, Nulls: nulls}
}

func TestCSVRowsAreObjectsOfText(t *testing.T) {
	cases := []struct {
		m    *manifest.Decoder
		body string
		want string
	}{
		{csvDecoder(',', "utf-8"), "id,name\n1,Ann\n2,\"Bo, \"\"B\"\"\nb\"\n", `{"id":"1","name":"Ann"}|{"id":"2","name":"Bo, \"B\"\nb"}`},
		{csvDecoder(',', "utf-8"), "id,name\r\n\r\n1\r\n2,x\ry,z\r", `{"id":"1","name":null}|{"id":"2","name":"x"}|{"id":"y","name":"z"}`},
		{csvDecoder('\t', "utf-8"), "a\tb\n\tNA\n", `{"a":"","b":"NA"}`},
		{csvDecoder(';', "utf-8", "NA", ""), "a;b;c\nNA;;x\n", `{"a":null,"b":null,"c":"x"}`},
		{csvDecoder(',', "utf-8"), "\ufeffid,id,v\n1,2,3\n", `{"id":"2","v":"3"}`},
		{csvDecoder(',', "latin-1"), "name\ncaf\xe9\n", `{"name":"café"}`},
		{csvDecoder(',', "cp1252"), "name\n\x80 5\n", `{"name":"€ 5"}`},
		{csvDecoder(',', "utf-16"), "\xff\xfeh\x00\n\x00\xe9\x00\n\x00", `{"h":"é"}`},
		{csvDecoder(',', "utf-8"), "", ``},
		{csvDecoder(',', "utf-8"), "a,b\n", ``},
		{csvDecoder(',', "utf-8"), "a\nx\"y\n", `{"a":"x\"y"}`},
		// Malformed quoting is read as Python's csv module reads it.
		{csvDecoder(',', "utf-8"), "a,b,c\n\"x\"y,\"4\" ,q\n  \"z\",\"open\nrow", `{"a":"xy","b":"4 ","c":"q"}|{"a":"  \"z\"","b":"open\nrow","c":null}`},
		{csvDecoder('§', "utf-8"), "a§b\n\"1§\"§é\n", `{"a":"1§","b":"é"}`},
	}
	for _, c := range cases {
		got, err := docs(t, c.m, []byte(c.body))
		if err != nil || got != c.want {
			t.Errorf("%q: got %s (%v), want %s", c.body, got, err, c.want)
		}
	}
	for _, c := range []struct {
		m    *manifest.Decoder
		body string
		want string
	}{
		{csvDecoder(',', "utf-8"), "name\ncaf\xe9\n", "CsvDecoder: encoding: invalid UTF-8"},
		{csvDecoder(',', "ascii"), "name\ncaf\xe9\n", "CsvDecoder: bytes that the encoding cannot decode"},
		{csvDecoder(',', "utf-8"), "a,b\n1,2,3\n", "CsvDecoder: the row on line 2 has 3 cells, the header has 2"},
	} {
		if _, err := docs(t, c.m, []byte(c.body)); err == nil || err.Error() != c.want {
			t.Errorf("%q: got %v, want %s", c.body, err, c.want)
		}
	}
}

func TestRowsAndLinesAreBounded(t *testing.T) {
	long := "a\n\"" + strings.Repeat("x", 100_000) + "\n"
	err := New(csvDecoder(',', "utf-8"), 1000).Decode(strings.NewReader(long), func(Doc) error { return nil })
	if err == nil || err.Error() != "CsvDecoder: a row is longer than 1000 bytes" {
		t.Errorf("csv: %v", err)
	}
	err = New(&manifest.Decoder{Type: manifest.JSONLinesDecoder}, 1000).Decode(strings.NewReader("{}\n"+strings.Repeat("x", 100_000)), func(Doc) error { return nil })
	if err == nil || err.Error() != "JsonlDecoder: line 2 is longer than 1000 bytes" {
		t.Errorf("jsonl: %v", err)
	}
}

func TestXMLIsOneObjectAsXmltodictMakesIt(t *testing.T) {
	xmlDec := &manifest.Decoder{Type: manifest.XMLDecoder}
	cases := []struct{ body, want string }{
		{`<?xml version="1.0"?>
<root>
  <location id="123">
    San Francisco
  </location>
  <item id="1" category="books"><name>Book</name><price>10.99</price></item>
  <note/>
  <item id="2"><name>Gadget</name><description>A &amp; B</description></item>
  <!-- a comment -->
  <solo>x</solo>
</root>`, `{"root":{"location":{"@id":"123","#text":"San Francisco"},"item":[{"@id":"1","@category":"books","name":"Book","price":"10.99"},{"@id":"2","name":"Gadget","description":"A & B"}],"note":null,"solo":"x"}}`},
		{`<a xmlns:ns="urn:x" xmlns="urn:d"><ns:b>1</ns:b><ns:b>2</ns:b>tail</a>`, `{"a":{"@xmlns:ns":"urn:x","@xmlns":"urn:d","ns:b":["1","2"],"#text":"tail"}}`},
		{`<a><b><![CDATA[<x>]]></b><c/><b>2</b></a>`, `{"a":{"b":["<x>","2"],"c":null}}`},
		{`<?xml version="1.0" encoding="ISO-8859-1"?><a>caf` + "\xe9" + `</a>`, `{"a":"café"}`},
		{"  \n", ``},
	}
	for _, c := range cases {
		got, err := docs(t, xmlDec, []byte(c.body))
		if err != nil || got != c.want {
			t.Errorf("%q:\n got %s (%v)\nwant %s", c.body, got, err, c.want)
		}
	}
	deep := strings.Repeat("<a>", 1001) + strings.Repeat("</a>", 1001)
	if _, err := docs(t, xmlDec, []byte(deep)); err == nil || err.Error() != "XmlDecoder: the body is nested deeper than 1000 elements" {
		t.Errorf("deep: %v", err)
	}
	for _, body := range []string{`<a><b></a>`, `{"json":1}`, `<a>`, `<a>&nope;</a>`, `text<a/>`} {
		if _, err := docs(t, xmlDec, []byte(body)); err == nil || !strings.HasPrefix(err.Error(), "XmlDecoder: the body is not valid XML") {
			t.Errorf("%q: got %v", body, err)
		}
	}
}

// What follows an XML document's root element (text, a second element),
// where xmltodict stops with "junk after document element", is left out of
// the document, said in Doc.Ignored; white space, comments and processing
// instructions after it are not worth saying.
func TestXMLAfterTheRootElement(t *testing.T) {
	xmlDec := New(&manifest.Decoder{Type: manifest.XMLDecoder}, 0)
	for body, ignored := range map[string]string{
		"<a><b>1</b></a>trailing text\n":        `text "trailing text" after the root element`,
		"<a><b>1</b></a><b>2</b>":               "a second element <b> after the root element",
		"<a><b>1</b></a>\n<!-- c --><?pi x?>\n": "",
	} {
		var got []Doc
		err := xmlDec.Decode(strings.NewReader(body), func(d Doc) error {
			d.JSON = append([]byte(nil), d.JSON...)
			got = append(got, d)
			return nil
		})
		if err != nil || len(got) != 1 || string(got[0].JSON) != `{"a":{"b":"1"}}` || got[0].Ignored != ignored {
			t.Errorf("%q: %v, %+v; want one document ignoring %q", body, err, got, ignored)
		}
	}
}

func TestLinesJSONItemsAndArchives(t *testing.T) {
	jsonl := &manifest.Decoder{Type: manifest.JSONLinesDecoder}
	gzipOf := func(inner *manifest.Decoder) *manifest.Decoder {
		return &manifest.Decoder{Type: manifest.GzipDecoder, Inner: inner}
	}
	zipOf := func(inner *manifest.Decoder) *manifest.Decoder {
		return &manifest.Decoder{Type: manifest.ZipfileDecoder, Inner: inner}
	}
	json := &manifest.Decoder{Type: manifest.JSONDecoder}
	cases := []struct {
		m    *manifest.Decoder
		body []byte
		want string
	}{
		{jsonl, []byte("{\"a\":1}\r\n\n  \nnot json\n[1]"), `#{"a":1}|####not json|#####[1]`},
		{&manifest.Decoder{Type: manifest.IterableDecoder}, []byte("a \"q\"\n\nb\rc\r\nd"), `{"record":"a \"q\""}|{"record":""}|{"record":"b"}|{"record":"c"}|{"record":"d"}`},
		{&manifest.Decoder{Type: manifest.JSONItemsDecoder, ItemsPath: []string{"data", "item"}, Encoding: "utf-8"},
			[]byte(`{"meta":{"skip":[1,{"x":[2]}]},"data":[{"id":1},{"id":2,"n":{"m":[3]}}],"after":true}`), `{"id":1}|{"id":2,"n":{"m":[3]}}`},
		{&manifest.Decoder{Type: manifest.JSONItemsDecoder, ItemsPath: []string{"data"}, Encoding: "utf-8"},
			[]byte(`{"data":[{"id":1}]}`), `[{"id":1}]`},
		{&manifest.Decoder{Type: manifest.JSONItemsDecoder, ItemsPath: nil, Encoding: "utf-8"}, []byte(`{"id":1}`), `{"id":1}`},
		{&manifest.Decoder{Type: manifest.JSONItemsDecoder, ItemsPath: []string{"none"}, Encoding: "utf-8"}, []byte(`{"id":1}`), ``},
		{gzipOf(jsonl), gzipped("{\"a\":1}\n{\"a\":2}\n"), `#{"a":1}|##{"a":2}`},
		{gzipOf(jsonl), []byte("{\"a\":1}\n"), `#{"a":1}`},
		{gzipOf(gzipOf(json)), gzipped(string(gzipped(`[{"a":1}]`))), `[{"a":1}]`},
		{gzipOf(json), nil, ``},
		{zipOf(csvDecoder(',', "utf-8")), zipped(t, "a.csv", "id\n1\n", "dir/", "", "b.csv", "id\n2\n3\n"), `{"id":"1"}|{"id":"2"}|{"id":"3"}`},
		{zipOf(gzipOf(jsonl)), zipped(t, "a.jsonl.gz", string(gzipped("{\"a\":1}\n"))), `#{"a":1}`},
	}
	for i, c := range cases {
		got, err := docs(t, c.m, c.body)
		if err != nil || got != c.want {
			t.Errorf("case %d (%s): got %s (%v), want %s", i, c.m.Name(), got, err, c.want)
		}
	}
	for _, c := range []struct {
		m    *manifest.Decoder
		body []byte
		want string
	}{
		{jsonl, []byte("{\"a\":1}\n{\"a\":\"\xff\"}\n"), "JsonlDecoder: line 2 is not valid UTF-8 text"},
		{gzipOf(jsonl), gzipped("{\"a\":1}\n")[:15], "GzipDecoder(JsonlDecoder): unexpected EOF"},
		{zipOf(json), []byte("PK not a zip"), "ZipfileDecoder(JsonDecoder): the body is not a valid zip archive: zip: not a valid zip file"},
		{zipOf(csvDecoder(',', "utf-8")), zipped(t, "bad.csv", "id\n\xff\n"), "ZipfileDecoder(CsvDecoder): file bad.csv of the archive: encoding: invalid UTF-8"},
		{&manifest.Decoder{Type: manifest.JSONItemsDecoder, ItemsPath: []string{"data", "item"}, Encoding: "utf-8"}, []byte(`{"data":[{"id":1},`), "JsonItemsDecoder: the body is not valid JSON: it ends too early"},
	} {
		if _, err := docs(t, c.m, c.body); err == nil || err.Error() != c.want {
			t.Errorf("%s %q: got %v, want %s", c.m.Name(), c.body, err, c.want)
		}
		var de *Error
		if _, err := docs(t, c.m, c.body); !errors.As(err, &de) {
			t.Errorf("%s: %T is not a decode error", c.m.Name(), err)
		}
	}
}

func TestValueOfALoginResponse(t *testing.T) {
	v, err := Value(&manifest.Decoder{Type: manifest.XMLDecoder}, []byte(`<r><token>abc</token></r>`), 1<<20)
	if err != nil || v.(map[string]any)["r"].(map[string]any)["token"] != "abc" {
		t.Errorf("xml: %v %v", v, err)
	}
	v, err = Value(nil, []byte(`{"token":"abc","n":12345678901234567890}`), 1<<20)
	if err != nil || v.(map[string]any)["token"] != "abc" {
		t.Errorf("json: %v %v", v, err)
	}
	if _, err := Value(nil, []byte(`{"token":`), 1<<20); err == nil || err.Error() != "JsonDecoder: the body is not valid JSON" {
		t.Errorf("garbled: %v", err)
	}
}

func gzipped(s string) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	w.Close()
	return b.Bytes()
}

// zipped makes an archive of name, content pairs; a name ending in / is a folder.
func zipped(t *testing.T, files ...string) []byte {
	var b bytes.Buffer
	w := zip.NewWriter(&b)
	for i := 0; i < len(files); i += 2 {
		f, err := w.Create(files[i])
		if err != nil {
			t.Fatal(err)
		}
		f.Write([]byte(files[i+1]))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
