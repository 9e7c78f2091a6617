package runtime

import (
	"strconv"
	"strings"

	"github.com/airbyte-go/source-declarative/lang/interp"
)

// defaultConcurrency is the number of a sync's workers (slices read at
// once, of every stream) without concurrency_level: the reference's pool of
// two threads.
const defaultConcurrency = 2

// concurrency is concurrency_level over the config: default_concurrency,
// capped by max_concurrency.
func (r *Runner) concurrency() (int, error) {
	cl := r.Source.ConcurrencyLevel
	if cl == nil || cl.Default == nil {
		return defaultConcurrency, nil
	}
	v, err := cl.Default.Eval(r.vars(nil, nil))
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
	if cl.Max > 0 && int(n) > cl.Max {
		n = int64(cl.Max)
	}
	return int(n), nil
}
