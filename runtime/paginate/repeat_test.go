package paginate

import (
	"context"
	"fmt"
	"testing"

	"github.com/airbyte-go/source-declarative/runtime/failure"
	"github.com/airbyte-go/source-declarative/runtime/request"
)

func page(cursor string) *request.Parts {
	p := request.New("GET", "https://api.example.com/v1/items")
	p.SetQuery("limit", int64(100))
	if cursor != "" {
		p.SetQuery("cursor", cursor)
	}
	p.SetHeader("Accept", "application/json")
	return p
}

func TestRequestLogRemembersEveryPageOfASlice(t *testing.T) {
	log := NewRequestLog()
	for i, c := range []string{"", "a", "b", "c"} {
		if err := log.Check(i+1, Token{Value: c, Set: c != ""}, page(c)); err != nil {
			t.Fatalf("page %d: %v", i+1, err)
		}
	}
	if err := log.Check(4, Token{Value: "c", Set: true}, page("c")); err != nil {
		t.Errorf("a retry of the same page must pass: %v", err)
	}
	err := log.Check(5, Token{Value: "a", Set: true}, page("a"))
	want := "page 5 would be requested exactly like page 2 (GET https://api.example.com/v1/items?cursor=a&limit=100): the pagination came back to a request it already sent; stopping instead of reading the same pages forever"
	if f := failure.As(err); f == nil || f.Message != want || f.Failure != "system_error" {
		t.Errorf("got %v", err)
	}
	err = log.Check(5, Token{Value: "c", Set: true}, page("c"))
	if err == nil || err.Error() != `page 5 would be requested exactly like page 4 (GET https://api.example.com/v1/items?cursor=c&limit=100): the next page token "c" is the one just used; stopping instead of reading the same pages forever` {
		t.Errorf("got %v", err)
	}
}

// BenchmarkRequestLog is the guard's cost a page, against building the
// http.Request of that page, which every page pays anyway (the baseline).
func BenchmarkRequestLog(b *testing.B) {
	pages := make([]*request.Parts, 1000)
	for i := range pages {
		pages[i] = page(fmt.Sprintf("cursor-%06d", i))
	}
	b.Run("guard", func(b *testing.B) {
		log := NewRequestLog()
		for i := 0; i < b.N; i++ {
			if i%len(pages) == 0 {
				log = NewRequestLog()
			}
			log.Check(i%len(pages), Token{}, pages[i%len(pages)])
		}
	})
	b.Run("baseline-build-request", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			pages[i%len(pages)].HTTP(context.Background())
		}
	})
}
