package retrieve

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/runtime/auth"
	"github.com/airbyte-go/source-declarative/runtime/failure"
	"github.com/airbyte-go/source-declarative/runtime/incremental"
	"github.com/airbyte-go/source-declarative/runtime/paginate"
	"github.com/airbyte-go/source-declarative/runtime/request"
)

// builder builds the requests of one requester.
type builder struct {
	env    *Env
	req    *manifest.Requester
	auth   auth.Authenticator
	pag    *paginate.Paginator
	policy *request.Policy // the requester's error handler, evaluated
}

// newBuilder prepares the requests of a requester: its authenticator and its
// error handler, evaluated against the config before any request is sent.
func newBuilder(env *Env, req *manifest.Requester, pag *paginate.Paginator) (*builder, error) {
	au, err := env.Auth(req.Auth)
	if err != nil {
		return nil, err
	}
	policy, err := request.NewPolicy(req.ErrorHandler, env.Config, env.Components)
	if err != nil {
		return nil, err
	}
	if refresher, ok := au.(auth.Refresher); ok && policy != nil {
		policy.Refresh = refresher.Invalidate
	}
	if policy != nil {
		policy.Warn = func(msg string) { env.Log("WARN", msg) }
	}
	return &builder{env: env, req: req, auth: au, pag: pag, policy: policy}, nil
}

// baseURL joins url_base and path (or url and path) as the reference does.
func (b *builder) baseURL(vars interp.Vars) (string, string, error) {
	base, err := b.req.URLBase.Render(vars)
	if err != nil {
		return "", "", err
	}
	if base == "" {
		if base, err = b.req.URL.Render(vars); err != nil {
			return "", "", err
		}
	}
	path, err := b.req.URLPath.Render(vars)
	if err != nil {
		return "", "", err
	}
	if base == "" {
		return "", "", fmt.Errorf("%s.url_base: renders empty; check the config", b.req.Path)
	}
	if path == "" {
		return base, base, nil
	}
	return request.JoinURL(base, path), base, nil
}

// pageRequest is what one request is built for: a pagination token in a
// slice, with the slice's own request options when withSlice, and a check of
// the request before credentials go in (nil: none).
type pageRequest struct {
	token     paginate.Token
	slice     *incremental.Slice
	withSlice bool
	// sliceless is a request Airbyte sends with no slice at all (a session
	// login): stream_slice and its aliases are None, not an empty slice.
	sliceless bool
	check     func(*request.Parts) error
	// properties is the chunk of query properties the request asks for
	// (only with a requester's QueryProperties).
	properties []string
}

// build makes the parts of one request.
func (b *builder) build(ctx context.Context, pr pageRequest) (*request.Parts, error) {
	token := pr.token
	vars := b.env.Vars(b.req.Parameters, pr.slice)
	if pr.sliceless {
		vars.SliceNone()
	}
	vars["next_page_token"] = token.Vars()
	if pr.slice != nil {
		// A partition's extra fields are also variables of their own in
		// request templates, as in the reference.
		for k, v := range pr.slice.Extra {
			if _, taken := vars[k]; !taken {
				vars[k] = v
			}
		}
	}
	full, base, err := b.baseURL(vars)
	if err != nil {
		return nil, err
	}
	next, replaced, err := b.pag.NextURL(base, token)
	if err != nil {
		return nil, err
	}
	if replaced {
		full = next
	}
	p := request.New(b.req.Method, full)
	if err := b.mapping(b.req.Params, vars, b.req.Path+".request_parameters", p.SetQuery); err != nil {
		return nil, err
	}
	if q := b.req.Properties; q != nil && q.Param != "" {
		if err := p.SetQuery(q.Param, dropEmpty(strings.Join(pr.properties, ","))); err != nil {
			return nil, failure.Within(q.Path, err)
		}
	}
	if err := b.mapping(b.req.Headers, vars, b.req.Path+".request_headers", p.SetHeader); err != nil {
		return nil, err
	}
	switch body := b.req.BodyData.(type) {
	case *manifest.Mapping:
		if err := b.mapping(body, vars, b.req.Path+".request_body_data", p.SetBodyData); err != nil {
			return nil, err
		}
	case *interp.Template:
		v, err := body.Eval(vars)
		if err != nil {
			return nil, err
		}
		if m, ok := v.(map[string]any); ok {
			for _, k := range interp.SortedKeys(m) {
				if err := p.SetBodyData(k, m[k]); err != nil {
					return nil, err
				}
			}
		} else if s := interp.String(v); s != "" {
			p.BodyRaw = &s
		}
	}
	if b.req.BodyText != nil {
		if err := b.plainText(p, vars); err != nil {
			return nil, err
		}
	}
	if b.req.BodyJSON != nil {
		v, err := renderNested(b.req.BodyJSON, vars)
		if err != nil {
			return nil, err
		}
		if m, ok := v.(map[string]any); ok {
			for _, k := range interp.SortedKeys(m) {
				if err := p.SetBodyJSON([]string{k}, m[k]); err != nil {
					return nil, failure.Within(b.req.Path+".request_body_json", err)
				}
			}
		} else if v != nil {
			return nil, fmt.Errorf("%s.request_body_json: must render to an object", b.req.Path)
		}
	}
	if err := b.pag.Inject(p, token); err != nil {
		return nil, err
	}
	if pr.slice != nil && pr.withSlice {
		// A cursor's request options are rendered as the CDK renders them,
		// with config and parameters only.
		optionVars := b.env.BuildVars(b.req.Parameters)
		for _, o := range pr.slice.Options {
			if err := request.Inject(p, o.Where, o.Value, optionVars); err != nil {
				return nil, err
			}
		}
		if pr.slice.Inject != nil {
			if err := pr.slice.Inject(p); err != nil {
				return nil, err
			}
		}
	}
	if pr.check != nil {
		if err := pr.check(p); err != nil {
			return nil, err
		}
	}
	var apply func(*request.Parts) error
	if b.auth != nil {
		apply = func(p *request.Parts) error { return b.auth.Apply(ctx, p) }
	}
	if err := b.env.Client.Authenticate(p, base, b.req.Path, apply); err != nil {
		return nil, err
	}
	return p, nil
}

// plainText sets a RequestBodyPlainText body, sent as written: as JSON when
// it is a JSON object (the reference sends it as a JSON body then), else as
// text/plain, unless request_headers name a Content-Type.
func (b *builder) plainText(p *request.Parts, vars interp.Vars) error {
	text, err := b.req.BodyText.Render(vars)
	if err != nil {
		return err
	}
	if text == "" {
		return nil
	}
	p.BodyRaw = &text
	if p.Headers.Get("Content-Type") == "" {
		var obj map[string]any
		if json.Unmarshal([]byte(text), &obj) == nil {
			p.Headers.Set("Content-Type", "application/json")
		} else {
			p.Headers.Set("Content-Type", "text/plain; charset=utf-8")
		}
	}
	return nil
}

// mapping renders a mapping of templates; an empty or null value is dropped.
func (b *builder) mapping(m *manifest.Mapping, vars interp.Vars, path string, set func(string, any) error) error {
	if m == nil {
		return nil
	}
	if m.Whole != nil {
		v, err := m.Whole.Eval(vars)
		if err != nil {
			return err
		}
		obj, ok := v.(map[string]any)
		if !ok {
			if v == nil || interp.String(v) == "" {
				return nil
			}
			return fmt.Errorf("%s: must render to a mapping", path)
		}
		for _, k := range interp.SortedKeys(obj) {
			if err := set(k, dropEmpty(obj[k])); err != nil {
				return failure.Within(path, err)
			}
		}
		return nil
	}
	for _, k := range m.Keys {
		v, err := m.Values[k].Param(vars)
		if err != nil {
			return err
		}
		if err := set(k, dropEmpty(v)); err != nil {
			return failure.Within(path+"."+k, err)
		}
	}
	return nil
}

func dropEmpty(v any) any {
	if s, ok := v.(string); ok && s == "" {
		return nil
	}
	return v
}

// renderNested renders the templates of a JSON body; object entries that
// render null are left out.
func renderNested(v any, vars interp.Vars) (any, error) {
	switch x := v.(type) {
	case *interp.Template:
		return x.EvalOrNil(vars)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			r, err := renderNested(e, vars)
			if err != nil {
				return nil, err
			}
			if r != nil {
				out[k] = r
			}
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			r, err := renderNested(e, vars)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	}
	return v, nil
}
