package extract

import (
	"encoding/json"
	"fmt"
	"testing"
)

func benchPage() []byte {
	var page []byte
	page = append(page, `{"data":[`...)
	for i := 0; i < 1000; i++ {
		if i > 0 {
			page = append(page, ',')
		}
		page = append(page, fmt.Sprintf(`{"id":%d,"name":"user-%d","email":"user%d@example.com","created_at":"2024-01-01T00:00:00Z","padding":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}`, i, i, i)...)
	}
	return append(page, `],"total":1000}`...)
}

func BenchmarkExtractRecords(b *testing.B) {
	page := benchPage()
	b.SetBytes(int64(len(page)))
	for i := 0; i < b.N; i++ {
		recs, err := extractRecords(nil, page, []string{"data"}, true)
		if err != nil || len(recs) != 1000 {
			b.Fatal(err)
		}
	}
}

// BenchmarkExtractRecordsEncodingJSON is the baseline of
// BenchmarkExtractRecords: encoding/json cutting the same page into
// RawMessages.
func BenchmarkExtractRecordsEncodingJSON(b *testing.B) {
	page := benchPage()
	b.SetBytes(int64(len(page)))
	for i := 0; i < b.N; i++ {
		var p struct {
			Data []json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(page, &p); err != nil || len(p.Data) != 1000 {
			b.Fatal(err)
		}
	}
}
