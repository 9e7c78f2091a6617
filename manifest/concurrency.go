package manifest

import "github.com/airbyte-go/source-declarative/lang/interp"

// ConcurrencyLevel is a source's concurrency_level: how many partitions are
// read at the same time.
type ConcurrencyLevel struct {
	Path string
	// Default is default_concurrency: a number, or a template over the
	// config giving one.
	Default *interp.Template
	// Max is max_concurrency (0: none); it caps a templated default.
	Max int
}

// concurrencyLevel decodes concurrency_level; nil when absent. A templated
// default_concurrency needs max_concurrency, as in the reference.
func (d *decoder) concurrencyLevel(v any) *ConcurrencyLevel {
	const path = "concurrency_level"
	m, _, ok := d.component(v, path, "ConcurrencyLevel")
	if !ok {
		return nil
	}
	c := &ConcurrencyLevel{Path: path, Default: d.tpl(m, "default_concurrency", path)}
	if n, ok := m["max_concurrency"].(int64); ok {
		c.Max = int(n)
	}
	if _, templated := m["default_concurrency"].(string); templated && c.Max == 0 {
		d.fail(path+".max_concurrency", "is required when default_concurrency is a template")
	}
	return c
}
