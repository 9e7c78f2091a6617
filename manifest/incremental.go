package manifest

import (
	"slices"
	"strings"

	"github.com/airbyte-go/source-declarative/lang/datetime"
	"github.com/airbyte-go/source-declarative/lang/interp"
)

// Incremental cursor types.
const (
	DatetimeBasedCursor     = "DatetimeBasedCursor"
	IncrementingCountCursor = "IncrementingCountCursor"
)

// Incremental is a stream's incremental_sync: exactly one of Datetime and
// Count is set.
type Incremental struct {
	Path     string
	Datetime *DatetimeCursor
	Count    *CountCursor
}

// DatetimeCursor is a DatetimeBasedCursor. Its templates see config and
// parameters and are rendered once, when a read starts.
type DatetimeCursor struct {
	Path                  string
	CursorField           *interp.Template
	DatetimeFormat        *datetime.Layout
	CursorDatetimeFormats []*datetime.Layout
	Start                 *MinMaxDatetime
	End                   *MinMaxDatetime // nil: the time the slices are made
	Step                  *interp.Template
	Granularity           *interp.Template
	Lookback              *interp.Template
	StartOption           *RequestOption
	EndOption             *RequestOption
	PartitionFieldStart   *interp.Template // nil: start_time
	PartitionFieldEnd     *interp.Template // nil: end_time
	DataFeed              bool
	ClientSide            bool
	CompareStrictly       bool
	GlobalSubstreamCursor bool
	CatalogCursorField    bool
	Clamping              *Clamping
	Parameters            map[string]any
}

// MinMaxDatetime is a date (a template) held between optional bounds.
type MinMaxDatetime struct {
	Path     string
	Datetime *interp.Template
	Format   *datetime.Layout // nil: the cursor's datetime_format
	Min, Max *interp.Template
}

// Clamping rounds slice bounds to days, weeks or months.
type Clamping struct {
	Path    string
	Target  *interp.Template // DAY, WEEK or MONTH once rendered
	Weekday string           // for WEEK: MONDAY..SUNDAY (default MONDAY)
}

// CountCursor is an IncrementingCountCursor.
type CountCursor struct {
	Path               string
	CursorField        *interp.Template
	StartValue         *interp.Template // nil: 0
	StartOption        *RequestOption
	CatalogCursorField bool
	Parameters         map[string]any
}

// ClampTargets are the periods slices may be clamped to.
var ClampTargets = []string{"DAY", "WEEK", "MONTH"}

// Weekdays are the names clamping to weeks accepts.
var Weekdays = []string{"MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY", "SUNDAY"}

// ClientSideIncremental tells whether records outside the sync window are
// dropped after extraction; the record selector then transforms before it
// filters unless transform_before_filtering says otherwise.
func (i *Incremental) ClientSideIncremental() bool {
	return i != nil && i.Datetime != nil && i.Datetime.ClientSide
}

// CatalogCursorField tells whether the configured catalog may choose the
// cursor field (allow_catalog_defined_cursor_field).
func (i *Incremental) CatalogCursorField() bool {
	if i.Datetime != nil {
		return i.Datetime.CatalogCursorField
	}
	return i.Count.CatalogCursorField
}

func (d *decoder) incremental(v any, path string) *Incremental {
	m, typ, ok := d.component(v, path, DatetimeBasedCursor, IncrementingCountCursor)
	if !ok {
		return nil
	}
	inc := &Incremental{Path: path}
	params, _ := m["$parameters"].(map[string]any)
	if typ == IncrementingCountCursor {
		c := &CountCursor{Path: path, Parameters: params}
		c.CursorField = d.tpl(m, "cursor_field", path)
		c.StartValue = d.tpl(m, "start_value", path)
		if o, ok := m["start_value_option"]; ok && o != nil {
			c.StartOption = d.requestOption(o, path+".start_value_option", false)
		}
		c.CatalogCursorField, _ = m["allow_catalog_defined_cursor_field"].(bool)
		inc.Count = c
		return inc
	}
	c := &DatetimeCursor{Path: path, Parameters: params}
	c.CursorField = d.tpl(m, "cursor_field", path)
	c.DatetimeFormat = d.layout(m["datetime_format"], path+".datetime_format")
	for i, f := range strList(m["cursor_datetime_formats"]) {
		if l := d.layout(f, index(path+".cursor_datetime_formats", i)); l != nil {
			c.CursorDatetimeFormats = append(c.CursorDatetimeFormats, l)
		}
	}
	c.Start = d.minMaxDatetime(m["start_datetime"], path+".start_datetime")
	if e, ok := m["end_datetime"]; ok && e != nil && e != "" {
		c.End = d.minMaxDatetime(e, path+".end_datetime")
	}
	c.Step = d.duration(m, "step", path)
	c.Granularity = d.duration(m, "cursor_granularity", path)
	if c.Granularity != nil && !c.Granularity.IsStatic() {
		// Airbyte parses it as written: a template there fails its build.
		d.fail(path+".cursor_granularity", "%q: Airbyte reads cursor_granularity as an ISO 8601 duration as written, without rendering a template; write the duration (PT1S, P1D, ...)", c.Granularity.Source)
	}
	c.Lookback = d.duration(m, "lookback_window", path)
	if (c.Step == nil) != (c.Granularity == nil) {
		d.fail(path, "step and cursor_granularity must be given together (or neither)")
	}
	if o, ok := m["start_time_option"]; ok && o != nil {
		c.StartOption = d.requestOption(o, path+".start_time_option", false)
	}
	if o, ok := m["end_time_option"]; ok && o != nil {
		c.EndOption = d.requestOption(o, path+".end_time_option", false)
	}
	c.PartitionFieldStart = d.tpl(m, "partition_field_start", path)
	c.PartitionFieldEnd = d.tpl(m, "partition_field_end", path)
	c.DataFeed, _ = m["is_data_feed"].(bool)
	c.ClientSide, _ = m["is_client_side_incremental"].(bool)
	c.CompareStrictly, _ = m["is_compare_strictly"].(bool)
	c.GlobalSubstreamCursor, _ = m["global_substream_cursor"].(bool)
	c.CatalogCursorField, _ = m["allow_catalog_defined_cursor_field"].(bool)
	if cl, ok := m["clamping"].(map[string]any); ok {
		c.Clamping = d.clamping(cl, path+".clamping")
	}
	inc.Datetime = c
	return inc
}

// layout compiles a datetime format written in the manifest.
func (d *decoder) layout(v any, path string) *datetime.Layout {
	s, _ := v.(string)
	if s == "" {
		d.fail(path, "must be a datetime format such as %%Y-%%m-%%dT%%H:%%M:%%SZ")
		return nil
	}
	l, err := datetime.Compile(s)
	if err != nil {
		d.fail(path, "%v", err)
		return nil
	}
	return l
}

// minMaxDatetime decodes a date given as a template string or a MinMaxDatetime.
func (d *decoder) minMaxDatetime(v any, path string) *MinMaxDatetime {
	if s, ok := v.(string); ok {
		return &MinMaxDatetime{Path: path, Datetime: d.value(s, path)}
	}
	m, _, ok := d.component(v, path, "MinMaxDatetime")
	if !ok {
		return nil
	}
	mm := &MinMaxDatetime{Path: path}
	mm.Datetime = d.tpl(m, "datetime", path)
	if f, ok := m["datetime_format"].(string); ok && f != "" {
		mm.Format = d.layout(f, path+".datetime_format")
	}
	if s, ok := m["min_datetime"].(string); ok && s != "" {
		mm.Min = d.value(s, path+".min_datetime")
	}
	if s, ok := m["max_datetime"].(string); ok && s != "" {
		mm.Max = d.value(s, path+".max_datetime")
	}
	return mm
}

// duration compiles an ISO 8601 duration that may be a template; a plain one
// is checked now.
func (d *decoder) duration(m map[string]any, key, path string) *interp.Template {
	s, ok := m[key].(string)
	if !ok || s == "" {
		return nil
	}
	t := d.value(s, join(path, key))
	if t != nil && t.IsStatic() {
		if _, err := datetime.ParseDuration(s); err != nil {
			d.fail(join(path, key), "%v", err)
		}
	}
	return t
}

func (d *decoder) clamping(m map[string]any, path string) *Clamping {
	c := &Clamping{Path: path, Target: d.tpl(m, "target", path), Weekday: "MONDAY"}
	if c.Target != nil && c.Target.IsStatic() && !slices.Contains(ClampTargets, c.Target.Source) {
		d.fail(path+".target", "must be DAY, WEEK or MONTH, got %q", c.Target.Source)
	}
	if details, ok := m["target_details"].(map[string]any); ok {
		if w, ok := details["weekday"]; ok {
			s, _ := w.(string)
			if !slices.Contains(Weekdays, strings.ToUpper(s)) {
				d.fail(path+".target_details.weekday", "must be one of %s, got %q", strings.Join(Weekdays, ", "), interp.String(w))
			}
			c.Weekday = strings.ToUpper(s)
		}
	}
	return c
}
