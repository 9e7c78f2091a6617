package paginate

import (
	"crypto/sha256"
	"fmt"

	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/protocol"
	"github.com/airbyte-go/source-declarative/runtime/failure"
	"github.com/airbyte-go/source-declarative/runtime/request"
)

// RequestLog remembers every request of one slice by its fingerprint (32
// bytes a page), so that a pagination coming back to a request it already
// sent, at once or after several pages, stops instead of reading the same
// pages forever.
type RequestLog struct {
	seen map[[sha256.Size]byte]sent
}

type sent struct {
	page  int
	token Token
}

// NewRequestLog returns an empty log, for one slice.
func NewRequestLog() *RequestLog {
	return &RequestLog{seen: map[[sha256.Size]byte]sent{}}
}

// Check records the request of a page, built from token, before it is sent
// and before credentials are added; it fails when an earlier page of the
// slice sent the same request. Checking a page again (a retry) is fine.
func (l *RequestLog) Check(page int, token Token, p *request.Parts) error {
	key := p.Fingerprint()
	first, ok := l.seen[key]
	if !ok {
		l.seen[key] = sent{page: page, token: token}
		return nil
	}
	if first.page == page {
		return nil
	}
	full, _ := p.FullURL()
	why, failureType := "the pagination came back to a request it already sent", protocol.SystemError
	if first.page == page-1 {
		if token.Set && first.token.Set && interp.String(token.Value) == interp.String(first.token.Value) {
			why = fmt.Sprintf("the next page token %q is the one just used", interp.String(token.Value))
		} else {
			why, failureType = "the pagination token changes nothing in the request: it is injected nowhere", protocol.ConfigError
		}
	}
	return &failure.Error{Failure: failureType, Message: fmt.Sprintf("page %d would be requested exactly like page %d (%s %s): %s; stopping instead of reading the same pages forever",
		page, first.page, p.Method, full, why)}
}
