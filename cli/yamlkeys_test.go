package cli

import (
	"fmt"
	"testing"
)

// A key given twice in one mapping of a manifest file keeps its last value,
// as Airbyte's loader (PyYAML) keeps it, with one WARN naming the key's path
// and lines: the manifest runs, where YAML (and yaml.v3) call it invalid.
func TestDuplicateKeyKeepsTheLastValue(t *testing.T) {
	a := fixedAPI(t, `{"data":[{"id":1}]}`)
	m := stream("s", fmt.Sprintf(`url_base: %s
path: /first
request_parameters:
  absentHost: one
  absentHost: two
path: /items`, a.URL), "[data]", "")
	res := newConnector(t, m, nil, "s").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{"GET /items?absentHost=two"})
	equalLists(t, "records", res.records("s"), ids(1, 2))
	equalLists(t, "warnings", res.warnings(), []string{
		"streams[0].retriever.requester.path: the key is given 2 times in one mapping (lines 13, 17): its last value is kept, as Airbyte's YAML loader keeps it",
		"streams[0].retriever.requester.request_parameters.absentHost: the key is given 2 times in one mapping (lines 15, 16): its last value is kept, as Airbyte's YAML loader keeps it",
	})
}
