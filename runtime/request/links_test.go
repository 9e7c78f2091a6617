package request

import (
	"encoding/json"
	"testing"
)

func TestParseLinks(t *testing.T) {
	cases := map[string]string{
		`<https://a/x?page=2>; rel="next", <https://a/x?page=9>; rel="last"`: `{"last":{"rel":"last","url":"https://a/x?page=9"},"next":{"rel":"next","url":"https://a/x?page=2"}}`,
		`<https://a/x?a=1,2>;rel=next`:                                       `{"next":{"rel":"next","url":"https://a/x?a=1,2"}}`,
		`  <https://a/y> ; rel = "prev" ,<https://a/z>`:                      `{"https://a/z":{"url":"https://a/z"},"prev":{"rel":"prev","url":"https://a/y"}}`,
		`<https://a/n>; rel="next prev"; title="a, b"`:                       `{"next prev":{"rel":"next prev","title":"a, b","url":"https://a/n"}}`,
		`garbage`: `{}`,
	}
	for in, want := range cases {
		got, _ := json.Marshal(ParseLinks([]string{in}))
		if string(got) != want {
			t.Errorf("%s\n got %s\nwant %s", in, got, want)
		}
	}
}

func FuzzParseLinks(f *testing.F) {
	f.Add(`<https://a/x?page=2>; rel="next", <https://a/x?page=9>; rel="last"`)
	f.Add(`<,>;;,<"`)
	f.Fuzz(func(t *testing.T, h string) {
		ParseLinks([]string{h})
	})
}
