package incremental

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/airbyte-go/source-declarative/lang/datetime"
	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/manifest"
)

// clamper aligns windows on days, weeks or months, for APIs that only answer
// for whole periods: window starts are rounded up to a period's start, and
// the sync ends before the period still running.
type clamper struct {
	target  string
	weekday time.Weekday
	gap     datetime.Duration // subtracted from the end: cursor_granularity, else 1 s (DAY) or 1 day
}

func newClamper(m *manifest.Clamping, vars interp.Vars, granularity datetime.Duration) (*clamper, error) {
	target, err := m.Target.Render(vars)
	if err != nil {
		return nil, err
	}
	target = strings.ToUpper(strings.TrimSpace(target))
	if !slices.Contains(manifest.ClampTargets, target) {
		return nil, fmt.Errorf("%s.target: must be DAY, WEEK or MONTH, got %q", m.Path, target)
	}
	c := &clamper{target: target, gap: granularity}
	c.weekday = time.Weekday((slices.Index(manifest.Weekdays, m.Weekday) + 1) % 7)
	if c.gap.IsZero() {
		c.gap = datetime.Duration{Fixed: 24 * time.Hour}
		if target == "DAY" {
			c.gap = datetime.Duration{Fixed: time.Second}
		}
	}
	return c, nil
}

func midnight(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}

// ceil rounds a window start up to the start of a period. A value on the
// period's first day (a midnight for DAY) keeps that day.
func (c *clamper) ceil(us int64) int64 {
	t := time.UnixMicro(us).UTC()
	day := midnight(t)
	switch c.target {
	case "DAY":
		if day.Equal(t) {
			return us
		}
		return day.AddDate(0, 0, 1).UnixMicro()
	case "WEEK":
		ahead := (int(c.weekday) - int(t.Weekday()) + 7) % 7
		return day.AddDate(0, 0, ahead).UnixMicro()
	}
	if t.Day() == 1 {
		return day.UnixMicro()
	}
	return time.Date(t.Year(), t.Month()+1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
}

// floor rounds down to the start of the period holding the value.
func (c *clamper) floor(us int64) int64 {
	t := time.UnixMicro(us).UTC()
	day := midnight(t)
	switch c.target {
	case "DAY":
		return day.UnixMicro()
	case "WEEK":
		back := (int(t.Weekday()) - int(c.weekday) + 7) % 7
		return day.AddDate(0, 0, -back).UnixMicro()
	}
	return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC).UnixMicro()
}

// end is the last value of the last whole period before the given end.
func (c *clamper) end(us int64) int64 {
	return c.gap.SubMicros(c.floor(us))
}
