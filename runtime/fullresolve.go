package runtime

import "context"

// FullResolvedManifest is the manifest as the Connector Builder's full
// resolve shows it: resolved, each of its streams marked with a null
// dynamic_stream_name, then the streams its dynamic streams make (at most
// maxStreams of each), marked with the dynamic stream's name.
func (r *Runner) FullResolvedManifest(ctx context.Context, maxStreams int) (map[string]any, error) {
	if err := r.resolveStreams(ctx); err != nil {
		return nil, err
	}
	out := make(map[string]any, len(r.Source.Resolved))
	for k, v := range r.Source.Resolved {
		out[k] = v
	}
	streams := []any{}
	list, _ := r.Source.Resolved["streams"].([]any)
	for _, s := range list {
		streams = append(streams, withDynamicName(s, nil))
	}
	groups := map[string][]any{}
	var order []string
	for _, m := range r.streams.Made {
		g, seen := groups[m.DynamicName]
		if !seen {
			order = append(order, m.DynamicName)
		}
		if len(g) < maxStreams {
			groups[m.DynamicName] = append(g, withDynamicName(m.Definition, m.DynamicName))
		}
	}
	for _, name := range order {
		streams = append(streams, groups[name]...)
	}
	out["streams"] = streams
	return out, nil
}

// withDynamicName is a copy of a stream definition with its
// dynamic_stream_name set.
func withDynamicName(stream any, name any) any {
	m, ok := stream.(map[string]any)
	if !ok {
		return stream
	}
	c := make(map[string]any, len(m)+1)
	for k, v := range m {
		c[k] = v
	}
	c["dynamic_stream_name"] = name
	return c
}
