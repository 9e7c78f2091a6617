package runtime

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/airbyte-go/source-declarative/components"
	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/protocol"
	"github.com/airbyte-go/source-declarative/runtime/auth"
	"github.com/airbyte-go/source-declarative/runtime/incremental"
	"github.com/airbyte-go/source-declarative/runtime/plan"
	"github.com/airbyte-go/source-declarative/runtime/request"
	"github.com/airbyte-go/source-declarative/runtime/retrieve"
	"github.com/airbyte-go/source-declarative/runtime/schema"
)

// Runner runs the streams of one manifest with one config.
type Runner struct {
	Source   *manifest.Source
	Config   map[string]any
	configMu sync.Mutex
	// refreshMu makes the authenticators sharing the config's token (a
	// refresh token updater) refresh it one at a time.
	refreshMu sync.Mutex
	Out       *protocol.Writer
	Masker    *Masker
	Client    *request.Client
	Now       func() time.Time
	// SaveConfig, when set, also writes a rotated config back (to the --config file).
	SaveConfig func(map[string]any) error
	// Observer, when set, sees every exchange (for test reads).
	Observer retrieve.Observer
	// Builder tells that the commands run for the Connector Builder (a
	// manifest server's requests), as a test read does: see retrieve.Env.
	Builder bool

	authMu  sync.Mutex
	auths   map[string]auth.Authenticator
	schemas *schema.Loader
	// configuredSchemas are the json_schema of each stream of the read's
	// configured catalog, by name, for property selectors (retrieve.Env.Catalog).
	configuredSchemas map[string]any
	streams           *plan.Streams // the source's streams, settled once
	// logSink, during a test read, takes the WARN and ERROR logs: they are
	// part of the StreamRead the builder shows (testread.go).
	logSink func(level, msg string)
	// cache keeps answers for reuse during a sync; nil outside one.
	cache *retrieve.ParentCache
	// started is when the sync began (zero outside one): plan.Planner.Start.
	started time.Time
	jobs    *retrieve.JobPlaces
	// components runs the manifest's custom components; nil without any.
	components *components.Host
}

// New prepares a runner. The writer's masker hides the spec's secrets.
func New(src *manifest.Source, config map[string]any, out *protocol.Writer, masker *Masker) *Runner {
	r := &Runner{Source: src, Config: config, Out: out, Masker: masker, Now: time.Now, auths: map[string]auth.Authenticator{}}
	r.Client = request.NewClient(r.log)
	r.Client.Debug = out.Debugging
	r.Client.HoldsSecret, r.Client.AddSecret = masker.Holds, masker.Add
	r.Client.RateLimited = func(stream string) { out.RateLimited(stream) }
	r.Client.Budget = request.NewBudget(src.APIBudget, r.vars(nil, nil), r.log)
	r.jobs = &retrieve.JobPlaces{Limit: src.AsyncJobLimit}
	r.streams = &plan.Streams{Source: src, ConfigMu: &r.configMu}
	r.schemas = &schema.Loader{Files: src.Files, Log: r.log,
		FirstRecord: func(ctx context.Context, st *manifest.Stream) ([]byte, error) {
			return retrieve.FirstRecord(ctx, r.env(), st)
		},
		Vars: func(params map[string]any) interp.Vars { return retrieve.BuildVars(r.Config, params) }}
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
	// In a test read each requester has its own authenticator, as in
	// Airbyte's builder: a parent stream's token request is its own. A
	// custom authenticator is the host's component at its path.
	key := a.Path
	if r.Observer == nil && a.Custom == nil {
		key = authKey(a)
	}
	r.authMu.Lock()
	defer r.authMu.Unlock()
	if existing, ok := r.auths[key]; ok {
		return existing, nil
	}
	env := &auth.Env{
		Config:    r.Config,
		ConfigMu:  &r.configMu,
		RefreshMu: &r.refreshMu,
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
		Login: func(ctx context.Context, req *manifest.Requester) (*request.Response, error) {
			return retrieve.Login(ctx, r.env(), req)
		},
		Components: r.components,
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

// env is what the retrievers of a stream take from the runner now.
func (r *Runner) env() *retrieve.Env {
	return &retrieve.Env{Config: r.Config, Client: r.Client, Observer: r.Observer, Log: r.log, Now: r.Now,
		Auth: r.authenticator, Schema: r.schemas.Stream, Catalog: r.configuredSchemas, Jobs: r.jobs, Components: r.components,
		Builder: r.Builder || r.Observer != nil}
}

// vars are the template variables (retrieve.Vars) over the runner's config.
func (r *Runner) vars(params map[string]any, sl *incremental.Slice) interp.Vars {
	return retrieve.Vars(r.Config, params, sl)
}

// ConfigJSON is the config as JSON, for writing it back.
func ConfigJSON(cfg map[string]any) ([]byte, error) {
	return json.MarshalIndent(cfg, "", "  ")
}

// planner makes the runs of streams, their retrievers taking what the
// runner holds now.
func (r *Runner) planner() *plan.Planner {
	return &plan.Planner{Env: r.env(), Cache: r.cache, Start: r.started}
}

// resolveStreams settles the source's streams once: conditions, then
// dynamic streams.
func (r *Runner) resolveStreams(ctx context.Context) error {
	return r.streams.Resolve(ctx, r.planner())
}
