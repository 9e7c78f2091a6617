package auth

import (
	"context"
	"fmt"

	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/runtime/interp"
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
	if err := p.SetHeader("Authorization", "Bearer "+token); err != nil {
		return fmt.Errorf("%s: %w", b.a.Path, err)
	}
	return nil
}
