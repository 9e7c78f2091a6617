package retrieve

import (
	"bytes"
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/runtime/auth"
	"github.com/airbyte-go/source-declarative/runtime/incremental"
	"github.com/airbyte-go/source-declarative/runtime/request"
)

// BenchmarkBuildRequest builds one page request: templates, pagination
// options and an API key.
func BenchmarkBuildRequest(b *testing.B) {
	text, err := os.ReadFile("../testdata/bench.yaml") // runtime's BenchmarkRead reads it too
	if err != nil {
		b.Fatal(err)
	}
	raw, err := manifest.Parse(bytes.ReplaceAll(text, []byte("URL_BASE"), []byte("http://127.0.0.1:1")))
	if err != nil {
		b.Fatal(err)
	}
	src, err := manifest.Load(raw)
	if err != nil {
		b.Fatal(err)
	}
	log := func(string, string) {}
	env := &Env{Config: map[string]any{}, Client: request.NewClient(log), Log: log, Now: time.Now}
	env.Auth = func(a *manifest.Auth) (auth.Authenticator, error) {
		return auth.New(a, &auth.Env{Config: env.Config, ConfigMu: &sync.Mutex{}, Now: time.Now, Client: env.Client, AddSecret: func(string) {}, Log: log})
	}
	p, err := newPages(env, src.Streams[0], Options{Cursor: incremental.FullRefresh{}})
	if err != nil {
		b.Fatal(err)
	}
	token := p.b.pag.First()
	for i := 0; i < b.N; i++ {
		parts, err := p.b.build(context.Background(), pageRequest{token: token})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := parts.HTTP(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}
