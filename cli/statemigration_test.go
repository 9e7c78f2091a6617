package cli

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// legacyChild is a stream items read per record of projects (ids 1 and 2,
// numbers), with LegacyToPerPartitionStateMigration.
func legacyChild(t *testing.T) (*api, string) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		if r.URL.Path == "/projects" {
			fmt.Fprint(w, `{"data":[{"id":1},{"id":2}]}`)
			return
		}
		fmt.Fprintf(w, `{"data":[{"id":%q,"updated_at":"2024-01-02T12:00:00Z"}]}`, r.URL.Path)
	})
	router := `type: SubstreamPartitionRouter
parent_stream_configs:
  - type: ParentStreamConfig
    parent_key: id
    partition_field: pid
    stream:
` + indent(projectsParent(a.URL, ""), 6)
	return a, routed(a.URL, "/items/{{ stream_partition.pid }}", router, "", stepless+"\nstate_migrations: [{type: LegacyToPerPartitionStateMigration}]", 1)
}

// Airbyte's LegacyToPerPartitionStateMigration: a state kept in the legacy
// form, {"<parent id>": {"<cursor field>": value}}, resumes each partition
// from its value; the state written is the per-partition form, keyed by the
// partition as the router makes it (the id stays a number).
func TestLegacyPerPartitionStateIsMigrated(t *testing.T) {
	a, m := legacyChild(t)
	c := incrementalConnector(t, m, nil, "items")
	stateFile := writeFile(t, c.dir, "state.json", `[{"type":"STREAM","stream":{"stream_descriptor":{"name":"items"},"stream_state":{"1":{"updated_at":"2024-01-02T06:00:00Z"}}}}]`)
	res := c.read(t, "--state", stateFile)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{
		"GET /projects",
		"GET /items/1?since=" + q("2024-01-02T06:00:00Z"),
		"GET /items/2?since=" + q("2024-01-01T00:00:00Z"),
	})
	p1 := `{"cursor":{"updated_at":"2024-01-02T12:00:00Z"},"partition":{"parent_slice":{},"pid":1}}`
	p2 := `{"cursor":{"updated_at":"2024-01-02T12:00:00Z"},"partition":{"parent_slice":{},"pid":2}}`
	// parent_state is {}: a SubstreamPartitionRouter's get_stream_state
	// without incremental_dependency parents. pid 2 is opened before pid 1
	// is read, and is written with its start.
	start2 := `{"cursor":{"updated_at":"2024-01-01T00:00:00Z"},"partition":{"parent_slice":{},"pid":2}}`
	equalLists(t, "states", res.states(), []string{
		itemState(`{"lookback_window":0,"parent_state":{},"states":[`+p1+`,`+start2+`],"use_global_cursor":false}`, 1),
		itemState(`{"lookback_window":1,"parent_state":{},"state":{"updated_at":"2024-01-02T12:00:00Z"},"states":[`+p1+`,`+p2+`],"use_global_cursor":false}`, 1),
	})
}

// A state the migration does not recognise (a member with another key than
// the cursor field) is read as it is: here a flat state for every partition.
func TestStateThatIsNotLegacyIsNotMigrated(t *testing.T) {
	a, m := legacyChild(t)
	c := incrementalConnector(t, m, nil, "items")
	stateFile := writeFile(t, c.dir, "state.json", `[{"type":"STREAM","stream":{"stream_descriptor":{"name":"items"},"stream_state":{"updated_at":"2024-01-02T03:00:00Z"}}}]`)
	res := c.read(t, "--state", stateFile)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{
		"GET /projects",
		"GET /items/1?since=" + q("2024-01-02T03:00:00Z"),
		"GET /items/2?since=" + q("2024-01-02T03:00:00Z"),
	})
}

// Where Airbyte's factory refuses the migration, it is refused at load with
// its path.
func TestLegacyStateMigrationRefusedWhereAirbyteRefusesIt(t *testing.T) {
	a := echoAPI(t)
	list := "type: ListPartitionRouter\ncursor_field: p\nvalues: [a]"
	for _, tc := range []struct{ router, extra, want string }{
		{list, stepless + "\nstate_migrations: [{type: LegacyToPerPartitionStateMigration}]",
			"streams[0].state_migrations[0]: LegacyToPerPartitionStateMigration applies to a stream whose retriever has a SubstreamPartitionRouter, as in Airbyte"},
		{"type: SubstreamPartitionRouter\nparent_stream_configs:\n  - type: ParentStreamConfig\n    parent_key: id\n    partition_field: pid\n    stream:\n" + indent(projectsParent(a.URL, ""), 6),
			"state_migrations: [{type: LegacyToPerPartitionStateMigration}]",
			"streams[0].state_migrations[0]: LegacyToPerPartitionStateMigration applies to a stream with an incremental_sync, as in Airbyte"},
	} {
		res := newConnector(t, routed(a.URL, "/items", tc.router, "", tc.extra, 1), nil, "items").read(t)
		errs := res.errors()
		if res.code == 0 || len(errs) != 1 || !strings.Contains(errs[0]["message"].(string), tc.want) || errs[0]["failure_type"] != "config_error" {
			t.Errorf("exit %d, errors %v; want %q", res.code, errs, tc.want)
		}
	}
	if n := len(a.requests()); n != 0 {
		t.Errorf("%d requests sent by manifests that do not load", n)
	}
}
