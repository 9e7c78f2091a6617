package runtime

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestExtractRecords(t *testing.T) {
	cases := []struct {
		body string
		path []string
		want string
	}{
		{`{"data":[{"id":1},{"id":2}]}`, []string{"data"}, `{"id":1}|{"id":2}`},
		{`[{"id":1},{"id":2}]`, nil, `{"id":1}|{"id":2}`},
		{`{"id":1}`, nil, `{"id":1}`},
		{`{"data":{"id":1}}`, []string{"data"}, `{"id":1}`},
		{`{"a":[{"b":[{"id":1}]},{"b":[{"id":2},{"id":3}]}]}`, []string{"a", "*", "b"}, `{"id":1}|{"id":2}|{"id":3}`},
		{`{"m":{"x":{"id":1},"y":{"id":2}}}`, []string{"m", "*"}, `{"id":1}|{"id":2}`},
		{`{"a":[{"id":0},{"id":1}]}`, []string{"a", "1"}, `{"id":1}`},
		{`{"data":null}`, []string{"data"}, ``},
		{`{"data":[]}`, []string{"data"}, ``},
		{"{\"data\":[{\n  \"id\": 1\n}]}", []string{"data"}, `{"id":1}`},
		{``, []string{"data"}, ``},
		{`{}`, nil, ``},
		{` { } `, []string{"data"}, ``},
	}
	for _, c := range cases {
		recs, err := extractRecords([]byte(c.body), c.path)
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
	if _, err := extractRecords([]byte(`{"items":[]}`), []string{"data"}); err == nil || err.Error() != "record path [data] is not in the response" {
		t.Errorf("missing path: %v", err)
	}
	if _, err := extractRecords([]byte(`{"data":[`), []string{"data"}); err != errNotJSON {
		t.Errorf("truncated: %v", err)
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
		_, err := extractRecords(body, segs)
		if (err == errNotJSON) == json.Valid(body) && len(bytes.TrimSpace(body)) > 0 {
			t.Fatalf("scanner and encoding/json disagree on %q: %v", body, err)
		}
	})
}

func TestDecodeJSONMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{`{"a":[1,-2.5,"x\u00e9\n",true,false,null,{"b":{}}],"c":9007199254740993}`, `[]`, `"s"`, `{"k\"q":1}`} {
		got, _ := json.Marshal(decodeJSON([]byte(s)))
		var v any
		d := json.NewDecoder(strings.NewReader(s))
		d.UseNumber()
		d.Decode(&v)
		want, _ := json.Marshal(v)
		if string(got) != string(want) {
			t.Errorf("%s: got %s want %s", s, got, want)
		}
	}
	if _, ok := decodeJSON([]byte(`{"a":`)).(map[string]any); !ok {
		t.Error("a truncated body decodes to an empty object")
	}
}
