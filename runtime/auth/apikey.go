package auth

import (
	"context"

	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/runtime/request"
)

// apiKey places the key, exactly as configured, in a header, query
// parameter, form field or JSON body field.
type apiKey struct {
	a    *manifest.Auth
	vars interp.Vars
}

func (k *apiKey) Apply(_ context.Context, p *request.Parts) error {
	token, err := render(k.a.Token, k.vars)
	if err != nil {
		return err
	}
	return request.Inject(p, k.a.Inject, token, k.vars)
}
