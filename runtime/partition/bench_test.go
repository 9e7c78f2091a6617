package partition

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/airbyte-go/source-declarative/manifest"
)

// parentRecord is a typical parent record of about 300 bytes.
func parentRecord(i int) []byte {
	return []byte(`{"id":` + strconv.Itoa(i) + `,"name":"Board ` + strconv.Itoa(i) + `","owner":{"id":42,"login":"someone","url":"https://api.example.com/users/someone"},` +
		`"created_at":"2024-01-01T00:00:00Z","updated_at":"2024-06-01T12:34:56Z","tags":["a","b","c"],"description":"A board with a description of a reasonable length."}`)
}

// BenchmarkSubstream makes partitions from parent records (extracting a
// nested key and an extra field); the baseline only decodes the records,
// which any reader of them must do.
func BenchmarkSubstream(b *testing.B) {
	records := make([][]byte, 1000)
	for i := range records {
		records[i] = parentRecord(i)
	}
	b.Run("baseline-decode", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			var v any
			d := json.NewDecoder(bytes.NewReader(records[i%len(records)]))
			d.UseNumber()
			if err := d.Decode(&v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("partitions", func(b *testing.B) {
		b.ReportAllocs()
		read := func(ctx context.Context, _ *manifest.ParentStreamConfig, emit func(ParentRecord) error) error {
			for i := 0; b.Loop(); i++ {
				if err := emit(ParentRecord{Data: records[i%len(records)]}); err != nil {
					return err
				}
			}
			return nil
		}
		r := mustRouter(b, `{type: SubstreamPartitionRouter, parent_stream_configs: [{stream: {$ref: "#/definitions/boards"}, parent_key: owner/login, partition_field: login, extra_fields: [[name]], request_option: {inject_into: request_parameter, field_name: owner}}]}`, nil, read, nil)
		for _, err := range r.Partitions(context.Background()) {
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}
