package auth

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	"github.com/airbyte-go/source-declarative/components"
	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/runtime/request"
)

// custom is a custom Python authenticator, run in the components host and
// asked for each request what the CDK asks of it: its header, query
// parameters and body fields, merged with the request's (a key set twice
// is refused, as the CDK's combine_mappings refuses it), then, when it has
// a __call__ of its own (a signature of the request, zoom's headers), that,
// on the request as it is sent.
type custom struct {
	a   *manifest.Auth
	env *Env
}

// customOptions are the authenticator's header, query parameters and body
// fields, as the host answers them.
type customOptions struct {
	Headers  map[string]string `json:"headers"`
	Params   map[string]any    `json:"params"`
	BodyData any               `json:"body_data"` // an object, or a text
	BodyJSON map[string]any    `json:"body_json"`
	OwnCall  bool              `json:"own_call"`
}

// customCall is what the authenticator's own __call__ left of a request:
// its URL, the headers it set and its body when it changed it.
type customCall struct {
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
	Body    *string           `json:"body"`
}

func (c *custom) Apply(ctx context.Context, p *request.Parts) error {
	host := c.env.Components
	if host == nil {
		return errors.New(c.a.Path + ": no components host runs the custom authenticator")
	}
	var opts customOptions
	if err := host.Call(ctx, c.a.Custom, "authenticate", nil, nil, &opts); err != nil {
		return err
	}
	if err := merge(p, &opts); err != nil || !opts.OwnCall {
		return err
	}
	full, err := p.FullURL()
	if err != nil {
		return err
	}
	body, ctype, err := p.Body()
	if err != nil {
		return err
	}
	headers := components.Headers(p.Headers)
	if ctype != "" && headers["Content-Type"] == "" {
		headers["Content-Type"] = ctype
	}
	var call customCall
	params := map[string]any{"method": p.Method, "url": full, "headers": headers}
	if err := host.Call(ctx, c.a.Custom, "authenticate_call", params, body, &call); err != nil {
		return err
	}
	for k, v := range call.Headers {
		p.Headers.Set(k, v)
	}
	// The URL as the authenticator saw it, which it may have signed.
	p.URL, p.Query = call.URL, url.Values{}
	if call.Body != nil {
		p.BodyRaw, p.BodyData, p.BodyJSON = call.Body, url.Values{}, nil
	}
	return nil
}

// merge puts the authenticator's options into the request.
func merge(p *request.Parts, got *customOptions) error {
	for _, k := range interp.SortedKeys(got.Headers) {
		if err := p.SetHeader(http.CanonicalHeaderKey(k), got.Headers[k]); err != nil {
			return err
		}
	}
	for _, k := range interp.SortedKeys(got.Params) {
		if err := p.SetQuery(k, got.Params[k]); err != nil {
			return err
		}
	}
	switch data := got.BodyData.(type) {
	case string:
		if data != "" {
			if p.BodyRaw != nil || len(p.BodyData) > 0 {
				return errors.New("the authenticator's body text cannot be added to a request that has a body")
			}
			p.BodyRaw = &data
		}
	case map[string]any:
		for _, k := range interp.SortedKeys(data) {
			if err := p.SetBodyData(k, data[k]); err != nil {
				return err
			}
		}
	}
	for _, k := range interp.SortedKeys(got.BodyJSON) {
		if err := p.SetBodyJSON([]string{k}, got.BodyJSON[k]); err != nil {
			return err
		}
	}
	return nil
}
