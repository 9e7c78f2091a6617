package extract

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/airbyte-go/source-declarative/lang/interp"
)

// TestExtractRecords pins DpathExtractor's choices: what a path leads to,
// and which values are records, none, or errors.
func TestExtractRecords(t *testing.T) {
	cases := []struct {
		body     string
		path     []string
		elements bool // the body is read by a JSON decoder
		want     string
	}{
		{`{"data":[{"id":1},{"id":2}]}`, []string{"data"}, true, `{"id":1}|{"id":2}`},
		{`[{"id":1},{"id":2}]`, nil, true, `{"id":1}|{"id":2}`},
		{`{"id":1}`, nil, true, `{"id":1}`},
		{`{"data":{"id":1}}`, []string{"data"}, true, `{"id":1}`},
		{`{"a":[{"b":[{"id":1}]},{"b":[{"id":2},{"id":3}]}]}`, []string{"a", "*", "b"}, true, `{"id":1}|{"id":2}|{"id":3}`},
		{`{"m":{"x":{"id":1},"y":{"id":2}}}`, []string{"m", "*"}, true, `{"id":1}|{"id":2}`},
		{`{"m":{"item_1":{"id":1},"other":{"id":9},"item_2":{"id":2}}}`, []string{"m", "item_*"}, true, `{"id":1}|{"id":2}`},
		{`{"a":[{"id":0},{"id":1}]}`, []string{"a", "1"}, true, `{"id":1}`},
		{`{"a":[{"id":0},{"id":1}]}`, []string{"a", "01"}, true, ``},
		{"{\"data\":[{\n  \"id\": 1\n}, {\"id\":2}]}", []string{"data"}, true, `{"id":1}|{"id":2}`},
		{`{"data":[{"id":1},null,{}]}`, []string{"data"}, true, `{"id":1}|{}`},
		// A repeated key: the last one, as a decoded object holds.
		{`{"data":[{"id":1}],"data":[{"id":2}]}`, []string{"data"}, true, `{"id":2}`},
		// A JSON decoder reads a top-level array as bodies, each searched.
		{`[{"data":[{"id":1}]},{"data":[{"id":2}]},{"other":1}]`, []string{"data"}, true, `{"id":1}|{"id":2}`},
		{`[[{"id":1},{"id":2}],{"id":3},{}]`, nil, true, `{"id":1}|{"id":2}|{"id":3}`},
		{`[{"id":1}]`, []string{"0"}, true, ``},
		// Other decoders' documents are one body each.
		{`[{"id":1}]`, []string{"0"}, false, `{"id":1}`},
		{`[{"data":[{"id":1}]}]`, []string{"data"}, false, ``},
		// Nothing there: no records, no error.
		{`{"meta":{"count":0}}`, []string{"data"}, true, ``},
		{`{"data":null}`, []string{"data"}, true, ``},
		{`{"data":{"items":null}}`, []string{"data", "items"}, true, ``},
		{`{"data":{}}`, []string{"data", "items"}, true, ``},
		{`{"data":"text"}`, []string{"data", "items"}, true, ``},
		{`{"data":[]}`, []string{"data"}, true, ``},
		{`{"data":{}}`, []string{"data"}, true, ``},
		{`{"data":false}`, []string{"data"}, true, ``},
		{`{"data":0}`, []string{"data"}, true, ``},
		{`{"data":-0.0e5}`, []string{"data"}, true, ``},
		{`{"data":""}`, []string{"data"}, true, ``},
		{`{"data":[]}`, []string{"data", "*"}, true, ``},
		{``, []string{"data"}, true, ``},
		{`{}`, nil, true, ``},
		{` { } `, []string{"data"}, true, ``},
		{`null`, nil, true, ``},
		{`[]`, nil, true, ``},
		// A wildcard keeps every match, an empty object too.
		{`{"m":{"x":{},"y":{"id":2}}}`, []string{"m", "*"}, true, `{}|{"id":2}`},
	}
	for _, c := range cases {
		recs, err := extractRecords(nil, []byte(c.body), c.path, c.elements)
		if err != nil {
			t.Errorf("%s %v: %v", c.body, c.path, err)
			continue
		}
		var parts []string
		for _, r := range recs {
			parts = append(parts, string(r))
		}
		if got := strings.Join(parts, "|"); got != c.want {
			t.Errorf("%s %v: got %s want %s", c.body, c.path, got, c.want)
		}
	}
	for _, c := range []struct {
		body string
		path []string
		want string
	}{
		{`{"data":[1,2]}`, []string{"data"}, "a record must be a JSON object, got 1"},
		{`{"data":"abc"}`, []string{"data"}, `a record must be a JSON object, got "abc"`},
		{`{"data":true}`, []string{"data"}, "a record must be a JSON object, got true"},
		{`{"m":{"x":0}}`, []string{"m", "*"}, "a record must be a JSON object, got 0"},
		{`{"data":[`, []string{"data"}, "the response body is not valid JSON"},
		{`{"data":[{"id":1}]} x`, []string{"data"}, "the response body is not valid JSON"},
		{`{"data":[1,2]`, []string{"data"}, "the response body is not valid JSON"},
	} {
		if _, err := extractRecords(nil, []byte(c.body), c.path, true); err == nil || err.Error() != c.want {
			t.Errorf("%s %v: got %v, want %s", c.body, c.path, err, c.want)
		}
	}
}

func FuzzExtractRecords(f *testing.F) {
	f.Add([]byte(`{"data":[{"id":1}]}`), "data")
	f.Add([]byte(`[{"a":{"b":[1,{"c":2}]}}]`), "*/a/b/*")
	f.Fuzz(func(t *testing.T, body []byte, path string) {
		var segs []string
		if path != "" {
			segs = strings.Split(path, "/")
		}
		_, err := extractRecords(nil, body, segs, true)
		if err == errTooDeep {
			return // not read past maxDepth, valid JSON or not (encoding/json reads 10,000 levels)
		}
		if (err == errNotJSON) == json.Valid(body) && len(bytes.TrimSpace(body)) > 0 {
			t.Fatalf("scanner and encoding/json disagree on %q: %v", body, err)
		}
	})
}

func TestDecodeJSONMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{`{"a":[1,-2.5,"x\u00e9\n",true,false,null,{"b":{}}],"c":9007199254740993}`, `[]`, `"s"`, `{"k\"q":1}`} {
		got, _ := json.Marshal(DecodeJSON([]byte(s)))
		var v any
		d := json.NewDecoder(strings.NewReader(s))
		d.UseNumber()
		d.Decode(&v)
		want, _ := json.Marshal(v)
		if string(got) != string(want) {
			t.Errorf("%s: got %s want %s", s, got, want)
		}
	}
	if _, ok := DecodeJSON([]byte(`{"a":`)).(map[string]any); !ok {
		t.Error("a truncated body decodes to an empty object")
	}
}

// TestScannerStringsAgreeWithEncodingJSON puts each byte that matters to a
// string (quote, backslash, control bytes, and bytes that are none) at every
// offset of a long string, where the scanner tests eight bytes at a time.
func TestScannerStringsAgreeWithEncodingJSON(t *testing.T) {
	for _, c := range []string{`"`, `\`, `\"`, `\\`, `\u00e9`, `\x`, "\x00", "\x01", "\x1f", " ", "\x7f", "\xc3\xa9", "\xff", "!", "#", "[", "\\n"} {
		for at := 0; at < 20; at++ {
			body := []byte(`{"data":[{"s":"` + strings.Repeat("x", at) + c + strings.Repeat("y", 20-at) + `"}]}`)
			_, err := extractRecords(nil, body, []string{"data"}, true)
			if valid := json.Valid(body); (err == nil) != valid {
				t.Errorf("%q: scanner error %v, encoding/json valid %v", body, err, valid)
			}
		}
	}
}

// TestTopKeysNotedWhileCuttingDecodeAsARescanWould compares the response a
// cursor template sees when the page's top-level members are noted while
// its records are cut with the one decoded by scanning the page again.
func TestTopKeysNotedWhileCuttingDecodeAsARescanWould(t *testing.T) {
	usage := interp.Usage{Keys: map[string]bool{"next": true, "meta": true, "k\"q": true}}
	for _, c := range []struct {
		doc  string
		path []string
	}{
		{`{"data":[{"id":1}],"next":"abc","other":[1,2]}`, []string{"data"}},
		{` { "meta" : {"page": {"next": 2}} , "data" : [ ] , "next" : null } `, []string{"data"}},
		{`{"next":1,"data":[{"id":1}],"next":2}`, []string{"data"}},
		{`{"k\"q":"escaped key","data":{"items":[{"id":1}]}}`, []string{"data", "items"}},
		{`{"results":{"a":{"id":1},"b":{"id":2}},"next":"x"}`, []string{"results", "*"}},
		{`{"next":"no records here"}`, []string{"data"}},
	} {
		_, top, err := cutRecords(nil, []byte(c.doc), c.path, true)
		if err != nil || top == nil {
			t.Fatalf("%s: top %v, error %v", c.doc, top, err)
		}
		got, _ := json.Marshal(decodeTopKeys([]byte(c.doc), top, usage))
		want, _ := json.Marshal(decodeJSONKeys([]byte(c.doc), usage))
		if string(got) != string(want) {
			t.Errorf("%s: got %s, want %s", c.doc, got, want)
		}
	}
	if _, top, _ := cutRecords(nil, []byte(`[{"id":1}]`), nil, true); top != nil {
		t.Errorf("a document that is a list has no top-level members, got %v", top)
	}
}
