package manifest

import (
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

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

// keepLastKeys removes from every mapping of the document the earlier
// entries of a key given more than once, as PyYAML keeps the last value
// (merge keys aside, which YAML merges itself), and names each such key by
// its path. An anchored node is visited once.
func keepLastKeys(n *yaml.Node, path string, seen map[*yaml.Node]bool) []string {
	if seen[n] {
		return nil
	}
	seen[n] = true
	var warnings []string
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			warnings = append(warnings, keepLastKeys(c, path, seen)...)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			warnings = append(warnings, keepLastKeys(c, index(path, i), seen)...)
		}
	case yaml.MappingNode:
		last, times := map[string]int{}, map[string]int{}
		var order []string
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode || k.Value == "<<" && k.ShortTag() == "!!merge" {
				continue
			}
			id := k.ShortTag() + " " + k.Value
			if times[id] == 0 {
				order = append(order, id)
			}
			last[id], times[id] = i, times[id]+1
		}
		kept := n.Content[:0:0]
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind == yaml.ScalarNode && !(k.Value == "<<" && k.ShortTag() == "!!merge") && last[k.ShortTag()+" "+k.Value] != i {
				continue
			}
			kept = append(kept, k, n.Content[i+1])
		}
		for _, id := range order {
			if times[id] > 1 {
				key := n.Content[last[id]]
				warnings = append(warnings, fmt.Sprintf("%s: the key is given %d times in one mapping (lines %s): its last value is kept, as Airbyte's YAML loader keeps it", join(path, key.Value), times[id], keyLines(n, id)))
			}
		}
		n.Content = kept
		for i := 0; i+1 < len(n.Content); i += 2 {
			warnings = append(warnings, keepLastKeys(n.Content[i+1], join(path, n.Content[i].Value), seen)...)
		}
	case yaml.AliasNode:
		if n.Alias != nil {
			warnings = append(warnings, keepLastKeys(n.Alias, path, seen)...)
		}
	}
	return warnings
}

// keyLines lists the lines where a mapping gives the key id.
func keyLines(n *yaml.Node, id string) string {
	var lines []string
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i]; k.Kind == yaml.ScalarNode && k.ShortTag()+" "+k.Value == id {
			lines = append(lines, strconv.Itoa(k.Line))
		}
	}
	return strings.Join(lines, ", ")
}
