package cli

import (
	"fmt"
	"net/http"
	"testing"
)

// A record that is an empty object is a record like any other: it is
// emitted, and the sync goes on with the stream's next records and the
// other streams. (Airbyte's runtime ends its whole read at such a record,
// exit 0, dropping what was not read yet: referralhero's leaderboard, whose
// schema has no properties.)
func TestEmptyRecordIsEmittedAndTheSyncGoesOn(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		if r.URL.Path == "/a" {
			fmt.Fprint(w, `{"data":[{},{"id":1}]}`)
			return
		}
		fmt.Fprint(w, `{"data":[{"id":2}]}`)
	})
	res := newConnector(t, twoStreams(a.URL), map[string]any{"api_key": "k"}, "a", "b").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %v", res.code, res.errors())
	}
	equalLists(t, "records of a", res.records("a"), []string{`{}`, `{"id":1}`})
	equalLists(t, "records of b", res.records("b"), []string{`{"id":2}`})
	equalLists(t, "statuses of a", res.statuses("a"), []string{"STARTED", "RUNNING", "COMPLETE"})
	equalLists(t, "statuses of b", res.statuses("b"), []string{"STARTED", "RUNNING", "COMPLETE"})
}
