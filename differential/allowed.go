package differential

import (
	"fmt"
	"os"
	"path"
	"strings"

	"github.com/airbyte-go/source-declarative/manifest"
)

// Entry is one deliberate difference: what differs and why. An entry with
// a match pattern (manifest, stream, what, contains; any of them) allows the
// differences it matches; one without names a normalizer of deliberate.go.
type Entry struct {
	ID       string
	Why      string
	Manifest string // a path.Match pattern of manifest names; "" any
	Stream   string // likewise, of stream names
	What     string // the difference's kind; "" any
	Contains string // a text the difference's detail holds
	// ReferenceError, when set, allows every difference of a command (of a
	// stream, for a stream's difference) where the reference failed with an
	// error holding this text (its message, internal message or the last
	// line of its stack trace): what it refuses on purpose we run, and
	// there is nothing of its to compare.
	ReferenceError string
}

// normalizers are the entries deliberate.go applies by name.
var normalizers = []string{"first-page-token", "oauth-json-body", "record-nulls", "test-read-record-limit", "running-without-records", "server-test-read-secrets", "state-at-slice-end", "network-error-transient", "null-sent-as-none", "test-read-session-logins"}

// LoadAllowed reads the allow-list; every normalizer must have its entry.
func LoadAllowed(file string) ([]Entry, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	doc, err := manifest.Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	var out []Entry
	ids := map[string]bool{}
	for i, e := range list(doc["allowed"]) {
		m := asMap(e)
		get := func(k string) string { s, _ := m[k].(string); return s }
		entry := Entry{ID: get("id"), Why: get("why"), Manifest: get("manifest"), Stream: get("stream"), What: get("what"), Contains: get("contains"), ReferenceError: get("reference_error")}
		if entry.ID == "" || entry.Why == "" {
			return nil, fmt.Errorf("%s: allowed[%d] needs an id and a why", file, i)
		}
		ids[entry.ID] = true
		out = append(out, entry)
	}
	for _, n := range normalizers {
		if !ids[n] {
			return nil, fmt.Errorf("%s: the normalizer %q has no entry saying why", file, n)
		}
	}
	return out, nil
}

// allowedBy names the entry allowing a difference of a manifest, "" when
// none does; refErrors are the reference's errors in the command compared.
func allowedBy(entries []Entry, name string, d Difference, refErrors []refError) string {
	for _, e := range entries {
		if e.ReferenceError != "" {
			if (e.Manifest == "" || match(e.Manifest, name)) && failedWith(refErrors, d.Stream, e.ReferenceError) {
				return e.ID
			}
			continue
		}
		if e.Manifest == "" && e.Stream == "" && e.What == "" && e.Contains == "" {
			continue // a normalizer's entry
		}
		if e.Manifest != "" && !match(e.Manifest, name) || e.Stream != "" && !match(e.Stream, d.Stream) ||
			e.What != "" && e.What != d.What || !strings.Contains(d.Detail, e.Contains) {
			continue
		}
		return e.ID
	}
	return ""
}

func match(pattern, name string) bool {
	ok, _ := path.Match(pattern, name)
	return ok
}
