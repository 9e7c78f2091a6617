package runtime

import (
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"testing"

	"github.com/airbyte-go/source-declarative/examples/exampleapi"
	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/protocol"
)

func benchRunner(b *testing.B, url string) *Runner {
	raw, _ := manifest.Parse([]byte(fmt.Sprintf(`version: 6.0.0
check: {stream_names: [users]}
streams:
  - type: DeclarativeStream
    name: users
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: %q, path: /v1/users, authenticator: {type: ApiKeyAuthenticator, api_token: k, inject_into: {type: RequestOption, inject_into: header, field_name: X-Api-Key}}}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
      paginator: {type: DefaultPaginator, page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: offset}, page_size_option: {type: RequestOption, inject_into: request_parameter, field_name: limit}, pagination_strategy: {type: OffsetIncrement, page_size: 1000}}
`, url)))
	src, err := manifest.Load(raw)
	if err != nil {
		b.Fatal(err)
	}
	w := protocol.NewWriter(io.Discard)
	return New(src, map[string]any{}, w, NewMasker())
}

// BenchmarkRead reads 100,000 records of ~200 bytes in pages of 1,000 from a
// local API; b.N counts whole reads.
func BenchmarkRead(b *testing.B) {
	srv := httptest.NewServer(exampleapi.New(exampleapi.Options{APIKey: "k", Records: 100000, RecordSize: 200, MaxPage: 1000}))
	defer srv.Close()
	cat := &protocol.ConfiguredCatalog{Streams: []protocol.ConfiguredStream{{Stream: protocol.Stream{Name: "users"}, SyncMode: "full_refresh"}}}
	b.SetBytes(100000 * 200)
	for i := 0; i < b.N; i++ {
		r := benchRunner(b, srv.URL)
		if err := r.Read(context.Background(), cat, nil); err != nil {
			b.Fatal(err)
		}
	}
}
