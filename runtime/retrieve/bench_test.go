package retrieve

import (
	"context"
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
	raw, _ := manifest.Parse([]byte(`version: 6.0.0
check: {stream_names: [users]}
streams:
  - type: DeclarativeStream
    name: users
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: "http://127.0.0.1:1", path: /v1/users, authenticator: {type: ApiKeyAuthenticator, api_token: k, inject_into: {type: RequestOption, inject_into: header, field_name: X-Api-Key}}}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
      paginator: {type: DefaultPaginator, page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: offset}, page_size_option: {type: RequestOption, inject_into: request_parameter, field_name: limit}, pagination_strategy: {type: OffsetIncrement, page_size: 1000}}
`))
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
