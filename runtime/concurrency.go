package runtime

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/protocol"
	"github.com/airbyte-go/source-declarative/runtime/retrieve"
)

// defaultConcurrency is the number of a sync's workers (slices read at
// once, of every stream) without concurrency_level: the reference's pool of
// two threads.
const defaultConcurrency = 2

// maxConcurrency caps concurrency_level: each request in flight holds a
// connection (a file descriptor: 1,024 is Linux's usual soft limit) and a
// page in memory (1,024 pages of 1 MB are 1 GB), and no API serves one
// client thousands of requests at once (the catalog's largest level is 50).
const maxConcurrency = 1024

// concurrency is concurrency_level over the config: default_concurrency,
// capped by max_concurrency, and by maxConcurrency with a WARN.
func (r *Runner) concurrency() (int, error) {
	cl := r.Source.ConcurrencyLevel
	if cl == nil || cl.Default == nil {
		return defaultConcurrency, nil
	}
	v, err := cl.Default.Eval(retrieve.BuildVars(r.Config, nil))
	if err != nil {
		return 0, ConfigErr("%s.default_concurrency: %v", cl.Path, err)
	}
	var n int64
	switch x := v.(type) {
	case int64:
		n = x
	case float64:
		n = int64(x)
		if float64(n) != x {
			n = 0
		}
	case string:
		n, _ = strconv.ParseInt(strings.TrimSpace(x), 10, 64)
	}
	if n < 1 {
		return 0, ConfigErr("%s.default_concurrency: %s is not a positive integer", cl.Path, interp.String(v))
	}
	if cl.Max > 0 && n > int64(cl.Max) {
		n = int64(cl.Max)
	}
	if n > maxConcurrency {
		r.log(protocol.LevelWarn, fmt.Sprintf("%s: a concurrency level of %d is more than a sync can use: capped at %d requests in flight (each holds a connection and a page in memory)", cl.Path, n, maxConcurrency))
		n = maxConcurrency
	}
	return int(n), nil
}
