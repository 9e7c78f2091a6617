package auth

import (
	"context"
	"encoding/base64"

	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/runtime/request"
)

// basic sends Authorization: Basic base64("<username>:<password>"); an empty
// password keeps the colon.
type basic struct {
	a    *manifest.Auth
	vars interp.Vars
}

func (b *basic) Apply(_ context.Context, p *request.Parts) error {
	user, err := render(b.a.Username, b.vars)
	if err != nil {
		return err
	}
	pass, err := render(b.a.Password, b.vars)
	if err != nil {
		return err
	}
	// The header, as every authenticator's credentials, becomes a secret
	// as sent (request.Client.Authenticate): an API may echo it.
	return p.SetHeader("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(user+":"+pass)))
}
