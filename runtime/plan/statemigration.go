package plan

import (
	"context"
	"sort"

	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/runtime/failure"
)

// migrateCustomState runs a stream's custom state_migrations on its
// incoming state (none: an empty one) in the components host, as the CDK's
// factory does when it makes the stream: each whose should_migrate holds
// migrates the state in turn.
func (p *Planner) migrateCustomState(st *manifest.Stream, state map[string]any) (map[string]any, error) {
	if len(st.CustomStateMigrations) == 0 || p.Env.Components == nil {
		return state, nil
	}
	paths := make([]string, len(st.CustomStateMigrations))
	for i, c := range st.CustomStateMigrations {
		paths[i] = c.Path
	}
	in := state
	if in == nil {
		in = map[string]any{}
	}
	var out struct {
		Migrated bool           `json:"migrated"`
		State    map[string]any `json:"state"`
	}
	if err := p.Env.Components.Call(context.Background(), st.CustomStateMigrations[0], "migrate_state", map[string]any{"paths": paths, "state": in}, nil, &out); err != nil {
		return nil, err
	}
	if !out.Migrated {
		return state, nil
	}
	return out.State, nil
}

// migrateLegacyState reads a stream's incoming state in the legacy
// per-partition form, {"<partition value>": {"<cursor field>": value}}, as
// the per-partition form, as Airbyte's LegacyToPerPartitionStateMigration
// does: only when the router has one parent, the state is not already in the
// per-partition form and each member holds exactly the cursor field; any
// other state is left as it is. It returns the state and the partition field
// its partitions are keyed by ("": not migrated). Each partition gets an
// empty parent_slice, as the partitions of a parent read whole have.
func (p *Planner) migrateLegacyState(st *manifest.Stream, cursorField string, state map[string]any) (map[string]any, string, error) {
	sub := st.Retriever.PartitionRouter.Substream
	if !st.MigrateLegacyState || len(state) == 0 || sub == nil || len(sub.Parents) != 1 {
		return state, "", nil
	}
	if _, migrated := state["states"]; migrated {
		return state, "", nil
	}
	for _, v := range state {
		m, ok := v.(map[string]any)
		if _, has := m[cursorField]; !ok || len(m) != 1 || !has {
			return state, "", nil
		}
	}
	parent := sub.Parents[0]
	field, err := parent.PartitionField.Render(p.Env.BuildVars(parent.Parameters))
	if err != nil {
		return nil, "", failure.Config("%s.partition_field: %v", parent.Path, err)
	}
	values := make([]string, 0, len(state))
	for v := range state {
		values = append(values, v)
	}
	sort.Strings(values)
	states := make([]any, len(values))
	for i, v := range values {
		states[i] = map[string]any{"partition": map[string]any{field: v, "parent_slice": map[string]any{}}, "cursor": state[v]}
	}
	return map[string]any{"states": states}, field, nil
}
