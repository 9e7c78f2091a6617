package paginate

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/airbyte-go/source-declarative/components"
	"github.com/airbyte-go/source-declarative/manifest"
)

// custom is a custom Python pagination strategy, asked what the CDK's
// DefaultPaginator and SimpleRetriever ask of it: its initial_token and
// get_page_size() once, when the paginator is made, and next_page_token
// after each page, given the response, the number of records the page gave
// (after the filter and transformations) and the last of them, and the
// token of the page.
type custom struct {
	host *components.Host
	c    *manifest.Custom
}

// start asks the strategy for its first token and its page size.
func (s *custom) start(ctx context.Context) (first Token, pageSize int64, err error) {
	var out struct {
		Token    json.RawMessage `json:"token"`
		PageSize any             `json:"page_size"`
	}
	if err := s.host.Call(ctx, s.c, "pagination_start", nil, nil, &out); err != nil {
		return Token{}, 0, err
	}
	v, err := manifest.FromJSON(out.Token)
	if err != nil {
		return Token{}, 0, fmt.Errorf("%s: unreadable initial_token: %v", s.c.Path, err)
	}
	if n, ok := out.PageSize.(float64); ok && n > 0 && n == float64(int64(n)) {
		pageSize = int64(n)
	}
	return Token{Value: v, Set: v != nil}, pageSize, nil
}

// next asks the strategy for the token of the next page; ok is false when
// it gives none (or one Python takes as false, as the CDK's `if` does).
func (s *custom) next(ctx context.Context, prev Token, page Page) (Token, bool, error) {
	if page.HTTP == nil {
		return Token{}, false, fmt.Errorf("%s: no response to give the custom pagination strategy", s.c.Path)
	}
	records := page.LastRecords()
	var last any
	if len(records) > 0 {
		last = records[len(records)-1]
	}
	var token any
	if prev.Set {
		token = prev.Value
	}
	params := components.ResponseParams(page.HTTP.Status, page.HTTP.Header, page.HTTP.URL)
	params["last_page_size"], params["last_record"], params["token"] = len(records), last, token
	var out struct {
		Token json.RawMessage `json:"token"`
		More  bool            `json:"more"`
	}
	if err := s.host.Call(ctx, s.c, "next_page_token", params, page.HTTP.Body, &out); err != nil {
		return Token{}, false, err
	}
	if !out.More {
		return Token{}, false, nil
	}
	v, err := manifest.FromJSON(out.Token)
	if err != nil {
		return Token{}, false, fmt.Errorf("%s: unreadable next_page_token: %v", s.c.Path, err)
	}
	return Token{Value: v, Set: true}, true, nil
}
