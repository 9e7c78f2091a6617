package manifest

import "go.yaml.in/yaml/v3"

// plainFromNode converts a parsed YAML document to plain values, as
// yaml.Unmarshal into an any followed by plain does, for the documents
// manifests are: string keys, none twice in a mapping, no alias, merge key or
// explicit tag. ok is false for any other document, which the caller decodes
// the general way. (It spares a run yaml.v3's reflection-driven decoder and a
// second copy of the tree: a third of the YAML phase.)
func plainFromNode(n *yaml.Node) (v any, ok bool) {
	if n.Style&yaml.TaggedStyle != 0 {
		return nil, false
	}
	switch n.Kind {
	case 0:
		return nil, true // an empty document
	case yaml.DocumentNode:
		if len(n.Content) != 1 {
			return nil, false
		}
		return plainFromNode(n.Content[0])
	case yaml.MappingNode:
		out := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode || k.Style&yaml.TaggedStyle != 0 || k.ShortTag() != "!!str" {
				return nil, false
			}
			if _, dup := out[k.Value]; dup {
				return nil, false
			}
			e, ok := plainFromNode(n.Content[i+1])
			if !ok {
				return nil, false
			}
			out[k.Value] = e
		}
		return out, true
	case yaml.SequenceNode:
		out := make([]any, len(n.Content))
		for i, c := range n.Content {
			e, ok := plainFromNode(c)
			if !ok {
				return nil, false
			}
			out[i] = e
		}
		return out, true
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!str":
			return n.Value, true
		case "!!null":
			return nil, true
		case "!!timestamp":
			return n.Value, true // a date stays as written: 2024-01-01
		case "!!bool":
			switch n.Value {
			case "true", "True", "TRUE":
				return true, true
			case "false", "False", "FALSE":
				return false, true
			}
			return nil, false
		}
		var x any // numbers, timestamps: as yaml.v3 decodes them
		if err := n.Decode(&x); err != nil {
			return nil, false
		}
		return plain(x), true
	}
	return nil, false
}
