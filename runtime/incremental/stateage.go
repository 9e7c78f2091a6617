package incremental

import "time"

// StateTime is how far a state of this cursor has read: its cursor value
// (the flat form) or the end of what its slices cover from the start (the
// concurrent form). ok is false when the state holds no cursor value; a
// value that is not a date is an error naming it.
func (s *DatetimeSpec) StateTime(state map[string]any) (t time.Time, ok bool, err error) {
	if isConcurrentState(state) {
		c, err := s.newCursor(state)
		if err != nil {
			return time.Time{}, false, err
		}
		return time.UnixMicro(c.syncStart).UTC(), true, nil
	}
	_, value := splitState(state, s.field)
	if value == nil {
		return time.Time{}, false, nil
	}
	us, err := s.stateValue(value)
	if err != nil {
		return time.Time{}, false, err
	}
	return time.UnixMicro(us).UTC(), true, nil
}
