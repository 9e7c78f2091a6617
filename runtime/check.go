package runtime

import (
	"context"
	"errors"
	"fmt"
	"github.com/airbyte-go/source-declarative/runtime/failure"

	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/protocol"
	"github.com/airbyte-go/source-declarative/runtime/incremental"
	"github.com/airbyte-go/source-declarative/runtime/plan"
	"github.com/airbyte-go/source-declarative/runtime/retrieve"
)

// Check reads the first page of each CheckStream stream and prints exactly
// one CONNECTION_STATUS. A failure to connect is FAILED, not an error.
func (r *Runner) Check(ctx context.Context) error {
	r.Client.RateLimited = nil // stream statuses belong to reads
	names, err := r.checkStreams(ctx)
	if err == nil {
		err = r.planStreams()
	}
	if err != nil {
		r.log("ERROR", "Check failed: "+OneLine(err))
		return r.Out.ConnectionStatus(false, OneLine(err))
	}
	if r.Source.CheckSkipsReads {
		// As Airbyte's CheckDynamicStream without availability checks: the
		// streams are made (their resolvers run), none is read.
		if len(r.Source.Streams) == 0 {
			return r.Out.ConnectionStatus(false, "No streams to connect to from the source")
		}
		return r.Out.ConnectionStatus(true, "")
	}
	if len(names) == 0 && len(r.Source.Streams) > 0 {
		names = []string{r.Source.Streams[0].Name}
	}
	for _, name := range names {
		st := r.Source.Stream(name)
		if st == nil {
			return r.Out.ConnectionStatus(false, fmt.Sprintf("check stream %q is not defined in the manifest", name))
		}
		err := r.checkStream(ctx, st)
		if err != nil {
			r.log("ERROR", "Check failed: "+OneLine(err))
			return r.Out.ConnectionStatus(false, OneLine(err))
		}
	}
	return r.Out.ConnectionStatus(true, "")
}

// planStreams makes every stream's cursor as a read from no state would,
// without a request: a config that breaks a cursor (a start date it lacks,
// a lookback that is no duration) fails check and discover, not only the
// read, as in Airbyte's runtime, which builds every stream's cursor first.
func (r *Runner) planStreams() error {
	p := r.planner()
	for _, st := range r.Source.Streams {
		if st.Python != nil {
			continue // the CDK makes its cursor
		}
		if _, err := p.NewRun(st, nil, nil); err != nil {
			return err
		}
	}
	return nil
}

// checkStreams makes the dynamic streams and lists the streams check reads.
func (r *Runner) checkStreams(ctx context.Context) ([]string, error) {
	if err := r.resolveStreams(ctx); err != nil {
		return nil, err
	}
	return r.streams.CheckNames()
}

// checkStream reads the stream's first record, as the CDK's availability
// check reads it: the pages of the first slice (of its first partition,
// reading its parent as far as needed) until one holds a record, and no
// further, so a paginator failing on a page with records is never asked
// (ubidots' cursor, a regex_search of a key the last page lacks). A slice
// without records is available too. A stream with no slice to read (a
// cursor whose start is its end, a parent listing nothing) tested no
// connection: it is not available, as in Airbyte's runtime.
func (r *Runner) checkStream(ctx context.Context, st *manifest.Stream) error {
	if st.Python != nil {
		return r.checkPython(ctx, st)
	}
	run, err := r.planner().NewRun(st, nil, nil)
	if err != nil {
		return err
	}
	run.Probe()
	if err := run.Prepare(); err != nil {
		return err
	}
	slices := 0
	err = run.Sequential(ctx, plan.Hooks{Emit: func([][]byte, []protocol.FileReference) error { return retrieve.ErrStop },
		Before: func(*incremental.Slice) error {
			if slices++; slices > 1 {
				return errSlicesRead
			}
			return nil
		}})
	if errors.Is(err, errSlicesRead) || errors.Is(err, retrieve.ErrStop) {
		return nil
	}
	if err == nil && slices == 0 {
		// The CDK's words, capitals and all.
		return failure.Config("Stream %s is not available: Cannot attempt to connect to stream %s - no stream slices were found (%s: no partition or slice to read for this config)", st.Name, st.Name, st.Path)
	}
	return err
}

// Discover prints exactly one CATALOG, each stream's schema from its schema
// loaders (dynamic streams are made first). An incremental stream supports
// both sync modes, with its cursor field as the default one; a stream with
// a file_uploader is file based (is_file_based), as in the reference.
func (r *Runner) Discover(ctx context.Context) error {
	if err := r.resolveStreams(ctx); err != nil {
		return err
	}
	if err := r.planStreams(); err != nil {
		return err
	}
	cat := &protocol.Catalog{Streams: []protocol.Stream{}}
	for _, st := range r.Source.Streams {
		if st.Python != nil {
			s, err := r.pythonCatalogStream(ctx, st)
			if err != nil {
				return err
			}
			cat.Streams = append(cat.Streams, s)
			continue
		}
		schema, err := r.schemas.Stream(ctx, st)
		if err != nil {
			return err
		}
		s := protocol.Stream{
			Name:                    st.Name,
			JSONSchema:              schema,
			SupportedSyncModes:      []string{"full_refresh"},
			SourceDefinedPrimaryKey: st.PrimaryKey,
			IsResumable:             new(false),
			IsFileBased:             new(st.FileUploader != nil),
		}
		if st.Incremental != nil {
			field, err := incremental.CursorField(st, r.Config)
			if err != nil {
				return ConfigErr("stream %s: %v", st.Name, err)
			}
			s.SupportedSyncModes = append(s.SupportedSyncModes, "incremental")
			s.SourceDefinedCursor = new(!st.Incremental.CatalogCursorField())
			s.DefaultCursorField = []string{field}
			s.IsResumable = new(true)
		}
		cat.Streams = append(cat.Streams, s)
	}
	return r.Out.Write(&protocol.Message{Type: protocol.TypeCatalog, Catalog: cat})
}

// errSlicesRead stops a read that has read the slices it wanted (check,
// test reads).
var errSlicesRead = errors.New("enough slices read")
