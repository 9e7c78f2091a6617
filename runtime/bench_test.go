package runtime

import (
	"context"
	"io"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/airbyte-go/source-declarative/examples/exampleapi"
	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/protocol"
)

// benchManifest is testdata/bench.yaml with its API at url.
func benchManifest(b *testing.B, url string) *manifest.Source {
	text, err := os.ReadFile("testdata/bench.yaml")
	if err != nil {
		b.Fatal(err)
	}
	raw, err := manifest.Parse([]byte(strings.ReplaceAll(string(text), "URL_BASE", url)))
	if err != nil {
		b.Fatal(err)
	}
	src, err := manifest.Load(raw)
	if err != nil {
		b.Fatal(err)
	}
	return src
}

func benchRunner(b *testing.B, url string) *Runner {
	src := benchManifest(b, url)
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
