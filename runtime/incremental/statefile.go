package incremental

import (
	"bytes"
	"fmt"

	"github.com/airbyte-go/source-declarative/manifest"
)

// States are the states a read starts from, by stream name; a stream absent
// (or with a nil state) starts from the beginning.
type States map[string]map[string]any

// ParseStates reads the --state file of a read in any of the protocol's
// forms: a JSON array of STREAM state messages, a one-element array holding a
// GLOBAL state, LEGACY messages ({"type": "LEGACY", "data": {stream: state}}),
// or the legacy object {stream: state} itself. A stream state is matched by
// name and namespace, so one with a namespace is no declarative stream's.
// Every mistake is an error naming the element or the stream.
func ParseStates(b []byte) (States, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, fmt.Errorf("the state file is empty: it must hold a JSON array of state messages ([] for none)")
	}
	v, err := manifest.FromJSON(b)
	if err != nil {
		return nil, fmt.Errorf("the state file is not valid JSON: %v", err)
	}
	out := States{}
	switch x := v.(type) {
	case []any:
		for i, e := range x {
			if err := out.message(e, i, len(x)); err != nil {
				return nil, err
			}
		}
	case map[string]any:
		if _, ok := x["type"].(string); ok {
			return nil, fmt.Errorf("the state file holds one state message: write it inside a JSON array, [{...}]")
		}
		if err := out.legacy(x, "the state file"); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("the state file must hold a JSON array of state messages, got %s", describe(v))
	}
	return out, nil
}

// message reads element i of the array.
func (s States) message(e any, i, n int) error {
	where := fmt.Sprintf("state file element [%d]", i)
	m, ok := e.(map[string]any)
	if !ok {
		return fmt.Errorf("%s must be a state message object, got %s", where, describe(e))
	}
	typ, _ := m["type"].(string)
	switch {
	case typ == "STREAM" || (typ == "" && m["stream"] != nil):
		return s.stream(m["stream"], where+".stream")
	case typ == "GLOBAL" || (typ == "" && m["global"] != nil):
		if n != 1 {
			return fmt.Errorf("%s is a GLOBAL state: a GLOBAL state must be the only element of the state file", where)
		}
		g, ok := m["global"].(map[string]any)
		if !ok {
			return fmt.Errorf("%s.global must be an object with stream_states", where)
		}
		if shared, ok := g["shared_state"].(map[string]any); ok && len(shared) > 0 {
			return fmt.Errorf("%s.global.shared_state is not empty: the streams of a declarative source share no state", where)
		}
		list, ok := g["stream_states"].([]any)
		if !ok {
			return fmt.Errorf("%s.global.stream_states must be a list of stream states", where)
		}
		for j, st := range list {
			if err := s.stream(st, fmt.Sprintf("%s.global.stream_states[%d]", where, j)); err != nil {
				return err
			}
		}
		return nil
	case typ == "LEGACY" || (typ == "" && m["data"] != nil):
		data, ok := m["data"].(map[string]any)
		if !ok {
			return fmt.Errorf("%s.data must be an object mapping stream names to their states", where)
		}
		return s.legacy(data, where+".data")
	case typ != "":
		return fmt.Errorf("%s has type %q: expected STREAM, GLOBAL or LEGACY", where, typ)
	}
	return fmt.Errorf("%s has none of stream, global or data", where)
}

// stream reads an AirbyteStreamState.
func (s States) stream(v any, where string) error {
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("%s must be an object with stream_descriptor and stream_state", where)
	}
	desc, _ := m["stream_descriptor"].(map[string]any)
	name, _ := desc["name"].(string)
	if name == "" {
		return fmt.Errorf("%s.stream_descriptor.name is required", where)
	}
	if ns, _ := desc["namespace"].(string); ns != "" {
		// A state is matched by name and namespace, and a declarative
		// stream has no namespace: this one is another source's.
		return nil
	}
	return s.set(name, m["stream_state"])
}

// legacy reads {stream: state}.
func (s States) legacy(m map[string]any, where string) error {
	for name, st := range m {
		if err := s.set(name, st); err != nil {
			return fmt.Errorf("%s: %v", where, err)
		}
	}
	return nil
}

func (s States) set(name string, v any) error {
	if _, dup := s[name]; dup {
		return fmt.Errorf("the state of stream %s is given twice", name)
	}
	switch x := v.(type) {
	case nil:
		s[name] = nil
	case map[string]any:
		s[name] = x
	default:
		return fmt.Errorf("the state of stream %s must be an object, got %s", name, describe(v))
	}
	return nil
}

// splitState parts a flat state into the cursor's value (nil: none) and the
// other keys, which are written back as they came.
func splitState(state map[string]any, field string) (others map[string]any, value any) {
	others = make(map[string]any, len(state))
	for k, v := range state {
		if k == field {
			value = v
		} else {
			others[k] = v
		}
	}
	return others, value
}

// flatState is the state {field: value} with the other keys of the incoming one.
func flatState(others map[string]any, field string, value any) map[string]any {
	out := make(map[string]any, len(others)+1)
	for k, v := range others {
		out[k] = v
	}
	out[field] = value
	return out
}
