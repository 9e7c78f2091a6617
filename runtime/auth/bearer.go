package auth

import (
	"context"

	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/runtime/request"
)

// bearer sends Authorization: Bearer <token>.
type bearer struct {
	a    *manifest.Auth
	vars interp.Vars
}

func (b *bearer) Apply(_ context.Context, p *request.Parts) error {
	token, err := render(b.a.Token, b.vars)
	if err != nil {
		return err
	}
	return p.SetHeader("Authorization", "Bearer "+token)
}
