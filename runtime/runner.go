package runtime

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/protocol"
	"github.com/airbyte-go/source-declarative/runtime/auth"
	"github.com/airbyte-go/source-declarative/runtime/incremental"
	"github.com/airbyte-go/source-declarative/runtime/request"
	"github.com/airbyte-go/source-declarative/runtime/schema"
)

// Runner runs the streams of one manifest with one config.
type Runner struct {
	Source   *manifest.Source
	Config   map[string]any
	configMu sync.Mutex
	Out      *protocol.Writer
	Masker   *Masker
	Client   *request.Client
	Now      func() time.Time
	// SaveConfig, when set, also writes a rotated config back (to the --config file).
	SaveConfig func(map[string]any) error
	// Observer, when set, sees every exchange (for test reads).
	Observer Observer

	authMu  sync.Mutex
	auths   map[string]auth.Authenticator
	schemas *schema.Loader
	// configuredSchemas are the json_schema of each stream of the read's
	// configured catalog, by name, for property selectors (propertyselector.go).
	configuredSchemas map[string]any
	dynamic           dynamicStreams // the streams dynamic_streams made (dynamic.go)
	// logSink, during a test read, takes the WARN and ERROR logs: they are
	// part of the StreamRead the builder shows (testread.go).
	logSink func(level, msg string)
	// cache keeps answers for reuse during a sync (cache.go); nil outside
	// one. parentNames are the streams some stream reads as a parent.
	cache       *request.Cache
	parentNames map[string]bool
	// jobs holds a place per AsyncRetriever job running (asyncjob.go).
	jobs     chan struct{}
	jobsOnce sync.Once
}

// Observer is told of each data request and of each token or login request.
type Observer interface {
	Page(stream string, req *request.Parts, resp *request.Response, records [][]byte, decision string)
	// Auxiliary sees a request made for the read but not for a page: kind
	// is AUTH for token and login requests, ASYNC_CREATE, ASYNC_POLL,
	// ASYNC_ABORT or ASYNC_DELETE for an AsyncRetriever's job; path is the
	// manifest path of the component that made it.
	Auxiliary(kind, path, title, description string, req *request.Parts, resp *request.Response)
}

// New prepares a runner. The writer's masker hides the spec's secrets.
func New(src *manifest.Source, config map[string]any, out *protocol.Writer, masker *Masker) *Runner {
	r := &Runner{Source: src, Config: config, Out: out, Masker: masker, Now: time.Now, auths: map[string]auth.Authenticator{}}
	r.Client = request.NewClient(r.log)
	r.Client.Debug = out.Debugging
	r.Client.RateLimited = func(stream string) { out.RateLimited(stream) }
	r.Client.Budget = request.NewBudget(src.APIBudget, r.vars(nil, nil), r.log)
	r.schemas = &schema.Loader{Folder: src.Folder, Log: r.log, FirstRecord: r.firstRecord,
		Vars: func(params map[string]any) interp.Vars { return r.vars(params, nil) }}
	return r
}

// log prints a LOG message straight through the protocol writer, or hands a
// warning or error to the test read being run.
func (r *Runner) log(level, msg string) {
	if r.logSink != nil && (level == protocol.LevelWarn || level == protocol.LevelError) {
		r.logSink(level, msg)
		return
	}
	r.Out.Log(level, msg)
}

// authenticator returns the authenticator of a requester, shared by every
// stream whose authenticator is the same component.
func (r *Runner) authenticator(a *manifest.Auth) (auth.Authenticator, error) {
	if a == nil {
		return nil, nil
	}
	key := authKey(a)
	if r.Observer != nil {
		// In a test read each requester has its own authenticator, as in
		// Airbyte's builder: a parent stream's token request is its own.
		key = a.Path
	}
	r.authMu.Lock()
	defer r.authMu.Unlock()
	if existing, ok := r.auths[key]; ok {
		return existing, nil
	}
	env := &auth.Env{
		Config:    r.Config,
		ConfigMu:  &r.configMu,
		Now:       r.Now,
		Client:    r.Client,
		AddSecret: r.Masker.Add,
		Log:       r.log,
		ConfigUpdated: func(cfg map[string]any) error {
			if err := r.Out.ControlConfig(cfg); err != nil {
				return err
			}
			if r.SaveConfig != nil {
				return r.SaveConfig(cfg)
			}
			return nil
		},
		Login: r.login,
	}
	if r.Observer != nil {
		obs := r.Observer
		env.Exchange = func(title, description string, req *request.Parts, resp *request.Response) {
			obs.Auxiliary("AUTH", a.Path, title, description, req, resp)
		}
	}
	au, err := auth.New(a, env)
	if err != nil {
		return nil, err
	}
	r.auths[key] = au
	return au, nil
}

// authKey identifies an authenticator component, leaving out the fields its
// stream's $parameters wrote into it.
func authKey(a *manifest.Auth) string {
	params := a.Parameters
	m := map[string]any{}
	for k, v := range a.Raw {
		if k == "$parameters" {
			continue
		}
		if pv, ok := params[k]; ok && jsonText(pv) == jsonText(v) {
			continue
		}
		m[k] = v
	}
	return jsonText(m)
}

// login sends a session-token login request.
func (r *Runner) login(ctx context.Context, req *manifest.Requester) (*request.Response, error) {
	b, err := r.newBuilder(req, nil)
	if err != nil {
		return nil, err
	}
	var parts *request.Parts
	resp, err := r.Client.Send(ctx, func() (*http.Request, error) {
		p, err := b.build(ctx, pageRequest{})
		if err != nil {
			return nil, err
		}
		parts = p
		return p.HTTP(ctx)
	}, b.policy)
	if r.Observer != nil && parts != nil {
		r.Observer.Auxiliary("AUTH", req.Path, "Login request", "Obtains session token", parts, resp)
	}
	return resp, err
}

// vars are the template variables of requests and records, the one place
// they come from: config, a component's parameters, and the slice being read
// (nil: none) under stream_slice, stream_partition and stream_interval.
func (r *Runner) vars(params map[string]any, sl *incremental.Slice) interp.Vars {
	if params == nil {
		params = map[string]any{}
	}
	m := sl.Template()
	return interp.Vars{"config": r.Config, "parameters": params, "stream_slice": m, "stream_partition": m, "stream_interval": m}
}

// ConfigJSON is the config as JSON, for writing it back.
func ConfigJSON(cfg map[string]any) ([]byte, error) {
	return json.MarshalIndent(cfg, "", "  ")
}
