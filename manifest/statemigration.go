package manifest

import "fmt"

// stateMigrations decodes a stream's state_migrations and tells whether
// the stream has Airbyte's LegacyToPerPartitionStateMigration, the one that
// runs here (a custom migration is kept in st.CustomStateMigrations, for the components host). It
// applies only to a stream read per partition of one parent with a cursor,
// as in Airbyte, whose factory refuses it on other streams.
func (d *decoder) stateMigrations(v any, st *Stream, path string) bool {
	list, ok := v.([]any)
	if !ok {
		d.fail(path, "must be a list of state migrations, got %s", describe(v))
		return false
	}
	legacy := false
	for i, e := range list {
		p := fmt.Sprintf("%s[%d]", path, i)
		if c := d.custom(e, p); c != nil {
			st.CustomStateMigrations = append(st.CustomStateMigrations, c)
			continue
		}
		if _, _, ok := d.component(e, p, "LegacyToPerPartitionStateMigration"); !ok {
			continue
		}
		switch {
		case st.Retriever == nil || st.Retriever.PartitionRouter == nil || st.Retriever.PartitionRouter.Type != SubstreamRouter:
			d.fail(p, "LegacyToPerPartitionStateMigration applies to a stream whose retriever has a SubstreamPartitionRouter, as in Airbyte")
		case st.Incremental == nil:
			d.fail(p, "LegacyToPerPartitionStateMigration applies to a stream with an incremental_sync, as in Airbyte")
		default:
			legacy = true
		}
	}
	return legacy
}
