package retrieve

import (
	"context"
	"net/http"

	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/runtime/request"
)

// Login sends a session-token login request (a SessionTokenAuthenticator's
// login_requester); a test read's observer sees it.
func Login(ctx context.Context, env *Env, req *manifest.Requester) (*request.Response, error) {
	b, err := newBuilder(env, req, nil)
	if err != nil {
		return nil, err
	}
	var parts *request.Parts
	resp, err := env.Client.Send(ctx, func() (*http.Request, error) {
		p, err := b.build(ctx, pageRequest{sliceless: true})
		if err != nil {
			return nil, err
		}
		parts = p
		return p.HTTP(ctx)
	}, b.policy)
	if env.Observer != nil && parts != nil {
		env.Observer.Auxiliary("AUTH", req.Path, "Login request", "Obtains session token", parts, resp)
	}
	return resp, err
}
