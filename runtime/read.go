package runtime

import (
	"context"
	"fmt"
	"strings"

	"github.com/airbyte-go/source-declarative/protocol"
)

// Read reads every configured stream in catalog order. A stream that fails
// is INCOMPLETE with a TRACE ERROR and the others still run; the returned
// error then lists the failed streams.
func (r *Runner) Read(ctx context.Context, catalog *protocol.ConfiguredCatalog) error {
	if err := r.resolveDynamic(ctx); err != nil { // dynamic.go
		return err
	}
	var failed []string
	for _, cs := range catalog.Streams {
		name := cs.Stream.Name
		if err := r.readOne(ctx, name); err != nil {
			failed = append(failed, name)
			r.Out.Error(FailureType(err), OneLine(err), "", name)
			r.Out.Status(name, protocol.StatusIncomplete)
		}
	}
	if len(failed) > 0 {
		return &Error{Failure: protocol.ConfigError, Message: fmt.Sprintf("During the sync, the following streams did not sync successfully: %s", strings.Join(failed, ", "))}
	}
	return nil
}

func (r *Runner) readOne(ctx context.Context, name string) error {
	st := r.Source.Stream(name)
	if st == nil {
		return ConfigErr("stream %q of the catalog is not defined in the manifest (streams: %s)", name, strings.Join(r.streamNames(), ", "))
	}
	r.Out.Status(name, protocol.StatusStarted)
	sr, err := r.streamReader(st)
	if err != nil {
		return err
	}
	running := false
	var count int64
	err = sr.read(ctx, 0, func(records [][]byte) error {
		if !running {
			running = true
			r.Out.Status(name, protocol.StatusRunning)
		}
		count += int64(len(records))
		return r.Out.WriteRecords(name, records, r.Now().UnixMilli())
	})
	if err != nil {
		return err
	}
	if !running {
		r.Out.Status(name, protocol.StatusRunning)
	}
	r.Out.StreamStateDone(name, count)
	r.log("INFO", fmt.Sprintf("Read %d records from stream %s", count, name))
	return r.Out.Status(name, protocol.StatusComplete)
}

func (r *Runner) streamNames() []string {
	var names []string
	for _, st := range r.Source.Streams {
		names = append(names, st.Name)
	}
	return names
}
