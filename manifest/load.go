// Package manifest loads a declarative connector manifest (YAML or JSON),
// resolves its references and parameters, validates it against an embedded
// JSON Schema and decodes it into typed components.
package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"go.yaml.in/yaml/v3"
)

// ImagePath is where a manifest baked into a connector image lives.
const ImagePath = "/airbyte/integration_code/source_declarative_manifest/manifest.yaml"

// InjectedKey is the config key that carries a manifest injected by the platform.
const InjectedKey = "__injected_declarative_manifest"

// ErrNoManifest means no manifest was found in any of the places looked at.
var ErrNoManifest = errors.New("no manifest: pass --manifest, bake one at " + ImagePath + ", or put it in the config under " + InjectedKey)

// Find returns the raw manifest, first match wins: the --manifest path, the
// image path, then the config key (config may be nil); the files it may
// read (see Files): those of its folder for a manifest file, none for one
// that came in the config; and the warnings of reading a manifest file (keys
// given twice, see ParseWarn).
func Find(flagPath string, config map[string]any) (map[string]any, Files, []string, error) {
	if flagPath != "" {
		m, warnings, err := readFile(flagPath)
		return m, FilesIn(filepath.Dir(flagPath)), warnings, err
	}
	if _, err := os.Stat(ImagePath); err == nil {
		m, warnings, err := readFile(ImagePath)
		return m, FilesIn(filepath.Dir(ImagePath)), warnings, err
	}
	m, err := FromConfig(config)
	return m, Files{}, nil, err
}

// FromConfig returns the manifest injected in the config under InjectedKey
// (ErrNoManifest without one), as the platform and the manifest server pass
// it: a manifest that comes with no folder of its own, which reads no file
// (Files{}). config may be nil.
func FromConfig(config map[string]any) (map[string]any, error) {
	v, ok := config[InjectedKey]
	if !ok {
		return nil, ErrNoManifest
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("config key %s must be an object holding the manifest", InjectedKey)
	}
	return m, nil
}

// ReadFile reads a YAML or JSON manifest file.
func ReadFile(path string) (map[string]any, error) {
	m, _, err := readFile(path)
	return m, err
}

func readFile(path string) (map[string]any, []string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot read manifest: %v", err)
	}
	return ParseWarn(b)
}

// Parse reads YAML or JSON bytes into plain values (maps, lists, strings,
// int64, float64, bool, nil).
func Parse(b []byte) (map[string]any, error) {
	m, _, err := ParseWarn(b)
	return m, err
}

// ParseWarn is Parse, with a warning for each key given more than once in
// one mapping: its last value is kept, as Airbyte's loader (PyYAML) keeps
// it, where YAML says a key is unique.
func ParseWarn(b []byte) (map[string]any, []string, error) {
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '{' {
		// A JSON manifest is read as JSON, as Airbyte's json.load reads
		// it: YAML refuses characters JSON strings may hold raw, such as a
		// C1 control (tmdb's "Lietuvi\u009akai").
		if doc, err := FromJSON(t); err == nil {
			if m, ok := doc.(map[string]any); ok {
				return m, nil, nil
			}
		}
	}
	var node yaml.Node
	if err := yaml.Unmarshal(b, &node); err != nil {
		return nil, nil, fmt.Errorf("manifest is not valid YAML or JSON: %v", oneLine(err.Error()))
	}
	warnings := keepLastKeys(&node, "", map[*yaml.Node]bool{})
	doc, ok := plainFromNode(&node)
	if !ok {
		if err := node.Decode(&doc); err != nil {
			return nil, nil, fmt.Errorf("manifest is not valid YAML or JSON: %v", oneLine(err.Error()))
		}
		doc = plain(doc)
	}
	m, ok := doc.(map[string]any)
	if !ok {
		return nil, nil, errors.New("manifest must be a mapping at its top level")
	}
	return m, warnings, nil
}

// plain normalises decoded YAML into JSON-like values.
func plain(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = plain(e)
		}
		return out
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[fmt.Sprint(k)] = plain(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = plain(e)
		}
		return out
	case int:
		return int64(x)
	case uint64:
		return float64(x)
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case nil, string, bool, int64, float64:
		return x
	case time.Time:
		// A YAML timestamp (in a document read the general way) as text, a
		// date without its clock.
		if x.Location() == time.UTC && x.Equal(x.Truncate(24*time.Hour)) {
			return x.Format(time.DateOnly)
		}
		return x.Format(time.RFC3339Nano)
	}
	return fmt.Sprint(v)
}

// FromJSON decodes JSON config or manifest bytes into plain values, integers as int64.
func FromJSON(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, errors.New("unexpected data after the JSON value")
	}
	return numbers(v), nil
}

// Numbers turns the json.Numbers of a value decoded with UseNumber into
// int64 (a whole number that fits) or float64, in place, as FromJSON does.
func Numbers(v any) any { return numbers(v) }

func numbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = numbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = numbers(e)
		}
	}
	return v
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func index(path string, i int) string {
	return path + "[" + strconv.Itoa(i) + "]"
}

func oneLine(s string) string {
	return string(bytes.ReplaceAll([]byte(s), []byte("\n"), []byte("; ")))
}
