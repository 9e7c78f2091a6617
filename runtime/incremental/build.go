package incremental

import (
	"time"

	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/manifest"
)

// Spec is a stream's incremental_sync rendered over the config; it makes
// the cursor of the stream, or one per partition.
type Spec interface {
	// Field is the record key holding the cursor value.
	Field() string
	// Cursor makes a cursor starting from a state (nil: none).
	Cursor(state map[string]any) (Cursor, error)
}

// NewSpec renders a stream's incremental_sync over the config; nil when it
// has none. catalogField is the configured catalog's cursor_field, used when
// the manifest allows a catalog-defined cursor field.
func NewSpec(st *manifest.Stream, config map[string]any, now func() time.Time, catalogField []string) (Spec, error) {
	switch {
	case st.Incremental == nil:
		return nil, nil
	case st.Incremental.Datetime != nil:
		m := st.Incremental.Datetime
		s, err := NewDatetimeSpec(st.Name, m, templateVars(config, m.Parameters), now, catalogField)
		if err != nil {
			return nil, err
		}
		return s, nil
	}
	m := st.Incremental.Count
	s, err := NewCountSpec(st.Name, m, templateVars(config, m.Parameters), catalogField)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// templateVars are what the cursor's templates see: the config and the
// component's parameters.
func templateVars(config, params map[string]any) interp.Vars {
	if params == nil {
		params = map[string]any{}
	}
	return interp.Vars{"config": config, "parameters": params}
}

// CursorField renders the cursor field of a stream's incremental_sync, for
// discover; "" when the stream has none.
func CursorField(st *manifest.Stream, config map[string]any) (string, error) {
	switch {
	case st.Incremental == nil:
		return "", nil
	case st.Incremental.Datetime != nil:
		m := st.Incremental.Datetime
		return cursorField(m.Path, m.CursorField, templateVars(config, m.Parameters), false, nil)
	}
	m := st.Incremental.Count
	return cursorField(m.Path, m.CursorField, templateVars(config, m.Parameters), false, nil)
}

// Cursor makes a datetime cursor.
func (s *DatetimeSpec) Cursor(state map[string]any) (Cursor, error) {
	c, err := s.newCursor(state)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// Cursor makes a counting cursor.
func (s *CountSpec) Cursor(state map[string]any) (Cursor, error) {
	c, err := s.newCursor(state)
	if err != nil {
		return nil, err
	}
	return c, nil
}
