package manifest

import "github.com/airbyte-go/source-declarative/lang/interp"

// StateDelegation is a StateDelegatingStream: two streams of one name, one
// read when the stream has no state, the other when it has one.
type StateDelegation struct {
	Path string
	// FullRefresh (full_refresh_stream) is read without state; it is also
	// the stream check and discover see, as in Airbyte, where neither has a
	// state.
	FullRefresh *Stream
	// Incremental (incremental_stream) is read from the stream's state.
	Incremental *Stream
	// RetentionPeriod (api_retention_period) is an ISO 8601 duration, a
	// template over the config: a state whose cursor value is older than
	// now minus it is dropped and FullRefresh read instead. nil, or empty
	// once rendered: no limit.
	RetentionPeriod *interp.Template
	Parameters      map[string]any // its $parameters, for RetentionPeriod
}

// stateDelegatingStream decodes a StateDelegatingStream as its
// full_refresh_stream carrying the delegation: where no state is known
// (check, discover) it is that stream; a read picks one of the two by the
// state. The three names must be equal, as Airbyte's factory requires.
func (d *decoder) stateDelegatingStream(m map[string]any, path string) *Stream {
	sd := &StateDelegation{Path: path}
	sd.FullRefresh = d.streamOf(m["full_refresh_stream"], join(path, "full_refresh_stream"), "DeclarativeStream")
	sd.Incremental = d.streamOf(m["incremental_stream"], join(path, "incremental_stream"), "DeclarativeStream")
	sd.RetentionPeriod = d.tpl(m, "api_retention_period", path)
	sd.Parameters, _ = m["$parameters"].(map[string]any)
	if sd.FullRefresh == nil || sd.Incremental == nil {
		return nil
	}
	name, _ := m["name"].(string)
	for _, st := range []*Stream{sd.FullRefresh, sd.Incremental} {
		if st.Name != name {
			d.fail(join(st.Path, "name"), "must equal the StateDelegatingStream's name %q, got %q: full_refresh_stream and incremental_stream are two ways to read the one stream %s", name, st.Name, path)
		}
	}
	if sd.RetentionPeriod != nil && (sd.Incremental.Incremental == nil || sd.Incremental.Incremental.Datetime == nil) {
		d.fail(join(path, "api_retention_period"), "needs a DatetimeBasedCursor in incremental_stream.incremental_sync to tell the state's age (Airbyte refuses it at the first sync with a state)")
	}
	sd.FullRefresh.Delegation = sd
	return sd.FullRefresh
}
