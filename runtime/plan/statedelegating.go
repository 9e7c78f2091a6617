package plan

import (
	"fmt"
	"strings"

	"github.com/airbyte-go/source-declarative/lang/datetime"
	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/runtime/failure"
	"github.com/airbyte-go/source-declarative/runtime/incremental"
)

// delegate picks the stream a StateDelegatingStream reads from a state
// (nil or empty: none), as Airbyte's factory does: its full_refresh_stream
// without state, its incremental_stream with one. With api_retention_period,
// a state whose cursor value is older than now minus the period is dropped
// (cleared is true: the read writes an empty state first, as Airbyte does)
// and the full refresh stream read from the start, with a WARN. Any other
// stream is returned as it is.
func (p *Planner) delegate(st *manifest.Stream, state map[string]any) (chosen *manifest.Stream, from map[string]any, cleared bool, err error) {
	sd := st.Delegation
	switch {
	case sd == nil:
		return st, state, false, nil
	case len(state) == 0:
		return sd.FullRefresh, nil, false, nil
	}
	expired, err := p.expired(sd, state)
	if err != nil || !expired {
		return sd.Incremental, state, false, err
	}
	return sd.FullRefresh, nil, true, nil
}

// expired tells whether a state is older than the stream's
// api_retention_period: its cursor value (the global one for a stream with
// a partition router), read with incremental_stream's cursor formats, is
// before now minus the period. A state without cursor value is expired (it
// cannot be read from); a value that is not a date is a config error.
func (p *Planner) expired(sd *manifest.StateDelegation, state map[string]any) (bool, error) {
	if sd.RetentionPeriod == nil {
		return false, nil
	}
	where := sd.Path + ".api_retention_period"
	text, err := sd.RetentionPeriod.Render(p.Env.BuildVars(sd.Parameters))
	if err != nil {
		return false, failure.Config("%v", err) // the template error names api_retention_period
	}
	if text = strings.TrimSpace(text); text == "" {
		return false, nil
	}
	period, err := datetime.ParseDuration(text)
	if err != nil {
		return false, failure.Config("%s: %v", where, err)
	}
	inc := sd.Incremental
	spec, err := incremental.NewSpec(inc, p.Env.Config, p.cursorClock(), nil)
	if err != nil {
		return false, failure.Config("stream %s: %v", inc.Name, err)
	}
	ds, ok := spec.(*incremental.DatetimeSpec)
	if !ok { // refused at load
		return false, failure.Config("%s: needs a DatetimeBasedCursor", where)
	}
	if inc.Retriever != nil && inc.Retriever.PartitionRouter != nil {
		state, _ = state["state"].(map[string]any)
	}
	at, ok, err := ds.StateTime(state)
	if err != nil {
		return false, failure.Config("%v (%s cannot tell its age)", err, where)
	}
	limit := period.SubFrom(p.Env.Now().UTC())
	if ok && !at.Before(limit) {
		return false, nil
	}
	why := "holds no cursor value"
	if ok {
		why = fmt.Sprintf("was read up to %s, older than %s ago", at.Format("2006-01-02T15:04:05Z"), text)
	}
	p.Env.Log("WARN", fmt.Sprintf("Stream %s: its state %s (api_retention_period at %s): the state is dropped and full_refresh_stream read from the start", inc.Name, why, where))
	return true, nil
}

// SupportsIncremental tells whether a stream can be configured incremental:
// it has an incremental_sync, or, for a StateDelegatingStream, one of its two
// streams has.
func SupportsIncremental(st *manifest.Stream) bool {
	if sd := st.Delegation; sd != nil {
		return sd.FullRefresh.Incremental != nil || sd.Incremental.Incremental != nil
	}
	return st.Incremental != nil
}
