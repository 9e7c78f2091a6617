package corpus

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/airbyte-go/source-declarative/runtime/interp"
)

// End is how the mock answers a request no route matches under a stream's
// url_base when the stream's error handler declares a client error a fine
// end (action SUCCESS or IGNORE on an http_codes filter): with that status,
// as the manifest expects of the real API. A manifest may build such a
// request on purpose to end a stream (one that walks a list by page number
// and points past its end at the bare url_base).
type End struct {
	Prefix string // the url_base's path on the mock
	Status int
}

// end notes the End of a stream's requester, if its error handler has one.
func (p *planner) end(req map[string]any, vars interp.Vars) {
	status := endStatus(req["error_handler"])
	base := render(str(req, "url_base", ""), vars)
	if status == 0 || !strings.HasPrefix(base, p.mock+"/") {
		return
	}
	prefix := strings.TrimSuffix(CleanPath(strings.TrimPrefix(base, p.mock)), "/")
	p.plan.Ends = append(p.plan.Ends, End{Prefix: prefix, Status: status})
}

// endStatus is the lowest 4xx status an error handler's unconditional
// filters (http_codes only) answer with SUCCESS or IGNORE; 0 if none.
func endStatus(handler any) int {
	lowest := 0
	for _, f := range components(handler, "HttpResponseFilter") {
		if f["action"] != "SUCCESS" && f["action"] != "IGNORE" || f["predicate"] != nil || f["error_message_contains"] != nil {
			continue
		}
		for _, c := range list(f["http_codes"]) {
			code := int(num(c, 0))
			if code >= 400 && code < 500 && (lowest == 0 || code < lowest) {
				lowest = code
			}
		}
	}
	return lowest
}

// endFor is the End whose url_base holds the path (the longest), nil if
// none does.
func endFor(ends []End, path string) *End {
	path = strings.TrimSuffix(CleanPath(path), "/")
	var best *End
	for i, e := range ends {
		if (path == e.Prefix || strings.HasPrefix(path, e.Prefix+"/")) && (best == nil || len(e.Prefix) > len(best.Prefix)) {
			best = &ends[i]
		}
	}
	return best
}

// serve answers with the End's status and an error body.
func (e *End) serve(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.Status)
	fmt.Fprintf(w, `{"error":"%s"}`, http.StatusText(e.Status))
}
