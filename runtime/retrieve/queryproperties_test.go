package retrieve

import (
	"reflect"
	"testing"

	"github.com/airbyte-go/source-declarative/manifest"
)

// The vectors of the reference's property_chunking tests, and ours where
// we do not make its empty chunk.
func TestChunkProperties(t *testing.T) {
	count := func(n int) *manifest.PropertyChunking {
		return &manifest.PropertyChunking{LimitType: manifest.LimitPropertyCount, Limit: n}
	}
	chars := func(n int) *manifest.PropertyChunking {
		return &manifest.PropertyChunking{LimitType: manifest.LimitCharacters, Limit: n}
	}
	nine := []string{"ace", "snake", "santa", "clover", "junpei", "june", "seven", "lotus", "nine"}
	cases := []struct {
		names, always []string
		c             *manifest.PropertyChunking
		want          [][]string
	}{
		{nine, nil, count(3), [][]string{{"ace", "snake", "santa"}, {"clover", "junpei", "june"}, {"seven", "lotus", "nine"}}},
		{nine[:4], []string{"zero"}, count(3), [][]string{{"zero", "ace", "snake", "santa"}, {"zero", "clover"}}},
		{[]string{"rick", "chelsea"}, []string{"id"}, count(0), [][]string{{"rick", "chelsea", "id"}}},
		{[]string{"kate", "laurie", "jaclyn"}, nil, chars(20), [][]string{{"kate", "laurie"}, {"jaclyn"}}},
		{[]string{"laurie", "jaclyn", "kaitlin"}, nil, chars(17), [][]string{{"laurie"}, {"jaclyn"}, {"kaitlin"}}},
		{nil, nil, count(5), [][]string{{}}},
		{nil, []string{"id"}, count(5), [][]string{{"id"}}},
		// The reference would send a first chunk holding only "id".
		{[]string{"a_very_long_name", "b"}, []string{"id"}, chars(5), [][]string{{"id", "a_very_long_name"}, {"id", "b"}}},
	}
	for _, tc := range cases {
		if got := chunkProperties(tc.names, tc.always, tc.c); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%v %v %+v:\n got %q\nwant %q", tc.names, tc.always, tc.c, got, tc.want)
		}
	}
}
