package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/airbyte-go/source-declarative/protocol"
	"github.com/airbyte-go/source-declarative/runtime/incremental"
	"github.com/airbyte-go/source-declarative/runtime/plan"
	"github.com/airbyte-go/source-declarative/runtime/retrieve"
	"github.com/airbyte-go/source-declarative/runtime/schedule"
)

// Read reads every configured stream, each from its state in states when
// its sync mode is incremental, on one pool of concurrency_level workers
// (schedule): the streams start in catalog order, up to half as many as
// workers make their partitions at once, and the slices of every stream's
// partitions are read by the same workers. A sync mode a stream cannot run,
// a state that cannot be read or a cursor the config breaks fails the read
// before anything is requested (but plan.StreamError). A stream that fails
// while reading is INCOMPLETE with a TRACE ERROR and the others still run;
// the returned error then lists the failed streams. Dynamic streams are
// made first.
func (r *Runner) Read(ctx context.Context, catalog *protocol.ConfiguredCatalog, states incremental.States) error {
	if err := r.resolveStreams(ctx); err != nil {
		return err
	}
	r.configuredSchemas = map[string]any{}
	for _, cs := range catalog.Streams {
		r.configuredSchemas[cs.Stream.Name] = cs.Stream.JSONSchema
	}
	level, err := r.concurrency()
	if err != nil {
		return err
	}
	r.cache, r.started = retrieve.StartCache(r.Source.Streams, r.log), r.Now()
	defer func() {
		r.cache.Close()
		r.cache, r.started = nil, time.Time{}
	}()
	streams := make([]readStream, 0, len(catalog.Streams))
	for _, cs := range catalog.Streams {
		s, err := r.plan(cs, states)
		if err != nil {
			return err
		}
		streams = append(streams, s)
	}
	r.Client.InFlight = make(chan struct{}, level)
	defer func() { r.Client.InFlight = nil }()
	scheduled := make([]schedule.Stream, len(streams))
	for i, s := range streams {
		scheduled[i] = s
	}
	schedule.Run(ctx, scheduled, schedule.ForLevel(level))
	var failed []string
	for _, s := range streams {
		if s.hasFailed() {
			failed = append(failed, s.streamName())
		}
	}
	if len(failed) > 0 {
		return &Error{Failure: protocol.ConfigError, Message: fmt.Sprintf("During the sync, the following streams did not sync successfully: %s", strings.Join(failed, ", "))}
	}
	return nil
}

// readStream is a configured stream of a sync: read by Go (syncStream) or
// by the CDK in the components host (pythonStream).
type readStream interface {
	schedule.Stream
	streamName() string
	hasFailed() bool // after Finish
}

// plan prepares a configured stream. A stream missing from the manifest, or
// with a partition router and a cursor whose templates fail on the config
// (plan.StreamError), fails alone, when its turn comes; a wrong sync mode, a
// state that cannot be read or another cursor the config breaks is an error
// of the whole read.
func (r *Runner) plan(cs protocol.ConfiguredStream, states incremental.States) (readStream, error) {
	s := &syncStream{r: r, name: cs.Stream.Name}
	st := r.Source.Stream(cs.Stream.Name)
	if st == nil {
		s.err = ConfigErr("stream %q of the catalog is not defined in the manifest (streams: %s)", s.name, strings.Join(r.streamNames(), ", "))
		return s, nil
	}
	if st.Python != nil {
		// The CDK checks the sync mode and reads the state itself.
		ps := &pythonStream{r: r, st: st, cs: cs}
		if cs.SyncMode == "incremental" {
			ps.state = states[st.Name]
		}
		return ps, nil
	}
	if cs.SyncMode == "incremental" && !plan.SupportsIncremental(st) {
		return nil, ConfigErr("stream %s is configured with sync_mode incremental, but it has no incremental_sync in the manifest: configure it as full_refresh", s.name)
	}
	var state map[string]any
	if cs.SyncMode == "incremental" {
		state = states[s.name]
	}
	var err error
	if s.run, err = r.planner().NewRun(st, cs.CursorField, state); err != nil {
		if se := (*plan.StreamError)(nil); errors.As(err, &se) {
			s.broken = err // it fails when its turn comes; the others are read
			return s, nil
		}
		return nil, err
	}
	return s, nil
}

func (r *Runner) streamNames() []string {
	var names []string
	for _, st := range r.Source.Streams {
		names = append(names, st.Name)
	}
	return names
}
