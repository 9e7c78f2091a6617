// Package retrieve requests the pages of a stream's slices: one Retriever
// per kind of retriever (a SimpleRetriever's pages, an AsyncRetriever's
// jobs), the requests they build, pagination and its resets, query
// properties, nested retrievers and the sync's cache of parent streams'
// answers. Records come out of the pages through extract.
package retrieve

import (
	"context"
	"time"

	"github.com/airbyte-go/source-declarative/components"
	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/runtime/auth"
	"github.com/airbyte-go/source-declarative/runtime/incremental"
	"github.com/airbyte-go/source-declarative/runtime/request"
)

// Env is what retrievers take from the command that runs them.
type Env struct {
	Config map[string]any
	Client *request.Client
	// Observer, when set, sees every exchange (test reads).
	Observer Observer
	Log      func(level, msg string)
	Now      func() time.Time
	// Auth returns the authenticator of a requester (nil: none), shared
	// as the command decides.
	Auth func(*manifest.Auth) (auth.Authenticator, error)
	// Schema returns a stream's JSON schema (for schema normalization).
	Schema func(ctx context.Context, st *manifest.Stream) (map[string]any, error)
	// Catalog holds the json_schema of each stream of a read's configured
	// catalog, by name, for property selectors; nil outside a read.
	Catalog map[string]any
	// Jobs are the places of the AsyncRetriever jobs of the whole run.
	Jobs *JobPlaces
	// Components runs the custom components of the manifest; nil without any.
	Components *components.Host
	// Builder tells that the command runs for the Connector Builder (a test
	// read, a manifest server's request): as in Airbyte's builder, a
	// file_uploader downloads each file without writing it, and the record
	// shows the file's relative path.
	Builder bool
}

// componentSlice is a slice as the CDK's components take it (nil: none).
func componentSlice(sl *incremental.Slice) *components.Slice {
	if sl == nil {
		return nil
	}
	return &components.Slice{Partition: orEmpty(sl.Partition), CursorSlice: orEmpty(sl.Cursor), ExtraFields: orEmpty(sl.Extra)}
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
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

// Vars are the template variables of requests and records, the one place
// they come from: config, a component's parameters, and the slice being read
// (nil: none) under stream_slice, stream_partition and stream_interval.
func (e *Env) Vars(params map[string]any, sl *incremental.Slice) interp.Vars {
	return Vars(e.Config, params, sl)
}

// BuildVars are the variables of a template Airbyte renders when it builds
// a component, before any slice (a record selector's field_path, a
// paginator's request options, a list router's values): config and the
// component's parameters. A slice variable there is undeclared, as in the
// CDK.
func (e *Env) BuildVars(params map[string]any) interp.Vars {
	return BuildVars(e.Config, params)
}

// BuildVars are Env.BuildVars for a command that has no Env at hand.
func BuildVars(config, params map[string]any) interp.Vars {
	if params == nil {
		params = map[string]any{}
	}
	return interp.Vars{"config": config, "parameters": params}
}

// Vars are the template variables of config, a component's parameters and
// a slice (Env.Vars), for a command that has no Env at hand.
func Vars(config, params map[string]any, sl *incremental.Slice) interp.Vars {
	if params == nil {
		params = map[string]any{}
	}
	m := sl.Template()
	return interp.Vars{"config": config, "parameters": params, "stream_slice": m, "stream_partition": m, "stream_interval": m}
}
