package runtime

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/airbyte-go/source-declarative/components"
	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/protocol"
	"github.com/airbyte-go/source-declarative/runtime/request"
)

// UseComponents gives the runner the components host that runs the
// manifest's custom components (package components).
func (r *Runner) UseComponents(h *components.Host) {
	r.components = h
	r.schemas.Python = func(ctx context.Context, st *manifest.Stream) (map[string]any, error) {
		var out struct {
			Schema map[string]any `json:"schema"`
		}
		err := h.Call(ctx, st.PythonSchema, "schema", map[string]any{"stream": st.Name}, nil, &out)
		return out.Schema, err
	}
}

// TakeConfigChanges keeps what the connector's code changed in the config
// in the components host (a refresh token its authenticator rotated): its
// texts become secrets (a number, an expires_in, does not), the runner's
// config takes them, and the whole config is printed as a CONTROL message
// and saved, as for a rotation of Go's own authenticators.
func (r *Runner) TakeConfigChanges(changes []components.ConfigChange) error {
	r.configMu.Lock()
	for _, c := range changes {
		collectTexts(c.Value, r.Masker.Add)
		c.Apply(r.Config)
	}
	snapshot := manifest.DeepCopy(r.Config).(map[string]any)
	r.configMu.Unlock()
	if err := r.Out.ControlConfig(snapshot); err != nil {
		return err
	}
	if r.SaveConfig != nil {
		return r.SaveConfig(snapshot)
	}
	return nil
}

// Log prints a LOG message as the runner does (into a test read's logs).
func (r *Runner) Log(level, msg string) { r.log(level, msg) }

// AuthenticateForPython answers the components host for a stream the CDK
// reads whole: the credentials Go's authenticator of that stream (or of the
// parent that makes the request) puts on the request, so that one process
// holds and refreshes each token. They follow the credentials rule from the
// requester's url_base as Go's own requests do (request.Client.Authenticate),
// and what they put on is a secret as sent. To a host they do not go to, a
// request of the CDK that holds a secret elsewhere than in its query (a
// header, its body) is refused, as the CDK's request cannot be answered
// without a header; its query loses the parameters that hold one.
func (r *Runner) AuthenticateForPython(ctx context.Context, req *components.AuthRequest) (*components.AuthAnswer, error) {
	a := r.pythonAuth(req.Stream)
	if a == nil {
		return &components.AuthAnswer{}, nil
	}
	au, err := r.authenticator(a)
	if err != nil || au == nil {
		return &components.AuthAnswer{}, err
	}
	base, err := a.URLBase.Render(r.vars(a.Parameters, nil))
	if err != nil {
		return nil, err
	}
	p := request.New(req.Method, req.URL)
	for k, v := range req.Headers {
		p.Headers.Set(k, v)
	}
	before := p.Headers.Clone()
	requester := strings.TrimSuffix(a.Path, ".authenticator")
	apply := func(p *request.Parts) error { return au.Apply(ctx, p) }
	if err := r.Client.Authenticate(p, base, requester, apply); err != nil {
		return nil, err
	}
	if why := p.Credentials.Withheld; why != "" {
		for k := range before {
			if _, kept := p.Headers[k]; !kept {
				return nil, request.SecretRefused(requester, req.URL, "header "+k, why)
			}
		}
		if r.Masker.Holds(string(req.Body)) {
			return nil, request.SecretRefused(requester, req.URL, "body", why)
		}
	}
	ans := &components.AuthAnswer{Headers: map[string]string{}}
	for k := range p.Headers {
		if v := p.Headers.Get(k); before.Get(k) != v {
			ans.Headers[http.CanonicalHeaderKey(k)] = v
		}
	}
	if len(p.Query) > 0 || p.URL != req.URL {
		u, err := url.Parse(p.URL)
		if err != nil {
			return nil, err
		}
		q := u.Query()
		for k, vs := range p.Query {
			q[k] = vs
		}
		u.RawQuery = q.Encode()
		ans.URL = u.String()
	}
	return ans, nil
}

// pythonAuth is the authenticator of the requests of stream name in a
// stream the CDK reads whole.
func (r *Runner) pythonAuth(name string) *manifest.Auth {
	for _, st := range r.Source.Streams {
		if a, ok := st.PythonAuth[name]; ok {
			return a
		}
	}
	for _, ds := range r.Source.DynamicStreams {
		if a, ok := ds.PythonAuth[name]; ok {
			return a
		}
	}
	return nil
}

// pythonCatalogStream is a stream the CDK reads whole as discover shows it:
// the CDK's own AirbyteStream.
func (r *Runner) pythonCatalogStream(ctx context.Context, st *manifest.Stream) (protocol.Stream, error) {
	var out struct {
		Stream protocol.Stream `json:"stream"`
	}
	err := r.components.Call(ctx, st.Python, "catalog_stream", map[string]any{"stream": st.Name}, nil, &out)
	return out.Stream, err
}

// pythonMessage is a message of a stream the CDK reads, as the host sends it.
type pythonMessage struct {
	Type   string `json:"type"`
	Record *struct {
		Data json.RawMessage `json:"data"`
		// FileReference is the file the CDK's file_uploader staged for
		// the record; nil: none.
		FileReference *protocol.FileReference `json:"file_reference"`
	} `json:"record"`
	State *struct {
		Stream *struct {
			StreamState map[string]any `json:"stream_state"`
		} `json:"stream"`
	} `json:"state"`
	Log *struct {
		Level   string `json:"level"`
		Message string `json:"message"`
	} `json:"log"`
	Trace *struct {
		Type  string `json:"type"`
		Error *struct {
			Message         string `json:"message"`
			InternalMessage string `json:"internal_message"`
			FailureType     string `json:"failure_type"`
		} `json:"error"`
	} `json:"trace"`
}
