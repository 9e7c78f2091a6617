package jsonschema

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
)

// Source gives the value at a JSON pointer ("" for the root, "/definitions/x"
// for a definition; segments escaped with ~0 and ~1) of a schema document.
type Source func(pointer string) (any, bool)

// Tree is the Source of a document already decoded whole.
func Tree(root any) Source {
	return func(pointer string) (any, bool) {
		v := root
		if pointer == "" {
			return v, true
		}
		for _, seg := range strings.Split(strings.TrimPrefix(pointer, "/"), "/") {
			seg = Unescape(seg)
			switch x := v.(type) {
			case map[string]any:
				e, ok := x[seg]
				if !ok {
					return nil, false
				}
				v = e
			case []any:
				i, err := strconv.Atoi(seg)
				if err != nil || i < 0 || i >= len(x) {
					return nil, false
				}
				v = x[i]
			default:
				return nil, false
			}
		}
		return v, true
	}
}

// Document is one schema document whose schemas are compiled when first
// asked for: a $ref is resolved when a value first reaches it, so a document
// of many definitions costs only the ones used.
type Document struct {
	source  Source
	eager   bool // compile definitions too, to refuse a broken one
	mu      sync.Mutex
	schemas map[string]*Schema // by JSON pointer
}

// NewDocument is the document read from source.
func NewDocument(source Source) *Document {
	return &Document{source: source, schemas: map[string]*Schema{}}
}

// Schema compiles the schema a local reference names: "#" (the root) or
// "#/definitions/x"; $refs inside it are resolved on first use.
func (d *Document) Schema(reference string) (*Schema, error) {
	pointer, err := fragmentPointer(reference)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if s, ok := d.schemas[pointer]; ok {
		return s, nil
	}
	v, ok := d.source(pointer)
	if !ok {
		return nil, fmt.Errorf("$ref %q: the schema has nothing there", reference)
	}
	s, err := d.compile(v, pointer)
	if err != nil {
		return nil, err
	}
	d.schemas[pointer] = s
	return s, nil
}

// fragmentPointer is the JSON pointer of a local reference.
func fragmentPointer(reference string) (string, error) {
	if !strings.HasPrefix(reference, "#") {
		return "", fmt.Errorf("$ref %q: only references inside the schema (#/...) are supported", reference)
	}
	pointer, err := url.PathUnescape(reference[1:])
	if err != nil || (pointer != "" && !strings.HasPrefix(pointer, "/")) {
		return "", fmt.Errorf("$ref %q: not a JSON pointer (#/definitions/...)", reference)
	}
	return pointer, nil
}

// Compile compiles a whole schema document, such as a user's specification:
// every $ref is resolved and every definition compiled now, so that a broken
// schema is refused before any value is validated.
func Compile(root any) (*Schema, error) {
	d := NewDocument(Tree(root))
	d.eager = true
	s, err := d.Schema("#")
	if err != nil {
		return nil, err
	}
	seen := map[*Schema]bool{}
	var walk func(s *Schema) error
	walk = func(s *Schema) error {
		if seen[s] {
			return nil
		}
		seen[s] = true
		if s.ref != nil {
			target, err := s.ref.resolve()
			if err != nil {
				return err
			}
			return walk(target)
		}
		var err error
		s.subschemas(func(sub *Schema) {
			if err == nil {
				err = walk(sub)
			}
		})
		return err
	}
	return s, walk(s)
}

// Escape escapes one JSON pointer segment.
func Escape(segment string) string {
	if !strings.ContainsAny(segment, "~/") {
		return segment
	}
	return strings.ReplaceAll(strings.ReplaceAll(segment, "~", "~0"), "/", "~1")
}

// Unescape reads one JSON pointer segment.
func Unescape(segment string) string {
	if !strings.Contains(segment, "~") {
		return segment
	}
	return strings.ReplaceAll(strings.ReplaceAll(segment, "~1", "/"), "~0", "~")
}
