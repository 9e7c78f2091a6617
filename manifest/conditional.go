package manifest

import "fmt"

// isConditionalStreams tells whether an item of the source's streams is a
// ConditionalStreams: streams that are part of the source only when their
// condition holds for the config.
func isConditionalStreams(v any) bool {
	m, ok := v.(map[string]any)
	return ok && m["type"] == "ConditionalStreams"
}

// conditionalStreams decodes a ConditionalStreams: each of its streams
// carries the condition, which the runtime evaluates with the config (the
// stream list of a run is settled there, so two streams of the same name
// may sit under conditions that exclude each other).
func (d *decoder) conditionalStreams(v any, path string) []*Stream {
	m, _, ok := d.component(v, path, "ConditionalStreams")
	if !ok {
		return nil
	}
	cond := d.tpl(m, "condition", path)
	list, _ := m["streams"].([]any)
	var out []*Stream
	for i, s := range list {
		st := d.stream(s, fmt.Sprintf("%s.streams[%d]", path, i))
		if st == nil {
			continue
		}
		st.Condition = cond
		out = append(out, st)
	}
	return out
}
