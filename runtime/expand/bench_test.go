package expand

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/runtime/transform"
)

// invoicePage is 100 invoices of 10 line items each, as extracted records.
func invoicePage() [][]byte {
	var page [][]byte
	for i := 0; i < 100; i++ {
		var lines []string
		for j := 0; j < 10; j++ {
			lines = append(lines, fmt.Sprintf(`{"id":"il_%d_%d","amount":%d,"currency":"usd","description":"Line item %d","period":{"start":1700000000,"end":1702592000}}`, i, j, j*100, j))
		}
		page = append(page, []byte(fmt.Sprintf(`{"id":"in_%d","customer":"cus_%d","status":"paid","lines":{"object":"list","data":[%s],"has_more":false}}`, i, i, strings.Join(lines, ","))))
	}
	return page
}

// BenchmarkExpand measures expansion against decoding and encoding the same
// page once (what one transformation costs), measured in the same run.
func BenchmarkExpand(b *testing.B) {
	page := invoicePage()
	size := 0
	for _, r := range page {
		size += len(r)
	}
	b.Run("baseline-decode-encode", func(b *testing.B) {
		b.SetBytes(int64(size))
		for i := 0; i < b.N; i++ {
			var buf []byte
			for _, r := range page {
				o, err := transform.Decode(r)
				if err != nil {
					b.Fatal(err)
				}
				buf = transform.AppendJSON(buf[:0], o)
			}
		}
	})
	path := []*interp.Template{interp.MustCompile("lines"), interp.MustCompile("data")}
	for name, m := range map[string]*manifest.RecordExpander{
		"items":           {ExpandPath: path},
		"merge_parent":    {ExpandPath: path, MergeParent: true},
		"parent_fields":   {ExpandPath: path, ParentFields: []manifest.ParentFieldPath{{ParentPath: []*interp.Template{interp.MustCompile("id")}, RecordPath: []*interp.Template{interp.MustCompile("invoice_id")}}}},
		"original_record": {ExpandPath: path, RemainOriginalRecord: true},
	} {
		e, err := New(m, interp.Vars{}, func(string) {})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(size))
			for i := 0; i < b.N; i++ {
				out, err := e.Expand(context.Background(), page)
				if err != nil || len(out) != 1000 {
					b.Fatal(len(out), err)
				}
			}
		})
	}
}
