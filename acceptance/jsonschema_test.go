package acceptance

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/airbyte-go/source-declarative/manifest"
	v5 "github.com/santhosh-tekuri/jsonschema/v5"
	"go.yaml.in/yaml/v3"
)

// The connector's config validation (manifest.ValidateConfig: jsonschema/v5
// compiled with formats as annotations and no $ref outside the spec, the
// choices of a oneOf narrowed, the errors worded per config key) accepts and
// refuses what jsonschema/v5 on its own does, for every catalog manifest's
// connection specification: the spec compiles with both or neither, and
// each config, sampled and then broken in several ways, passes with both or
// neither, with the message made of v5's errors.
func TestValidatorAgreesWithV5OnCatalogSpecs(t *testing.T) {
	files, _ := filepath.Glob("../../shared/manifests/*.yaml")
	if len(files) == 0 {
		t.Skip("no ../shared/manifests beside the repository")
	}
	configs, refused := 0, 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := yaml.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		spec, _ := m["spec"].(map[string]any)
		conn, _ := spec["connection_specification"].(map[string]any)
		if conn == nil {
			continue
		}
		conn = normalize(conn).(map[string]any)
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		theirs, theirErr := compile(conn, false)
		_, ourErr := manifest.CompileJSONSchema(conn)
		if (theirErr == nil) != (ourErr == nil) {
			t.Errorf("%s: v5 compiles: %v; ours: %v", name, theirErr, ourErr)
			continue
		}
		if ourErr != nil {
			continue
		}
		for _, config := range brokenConfigs(normalize(sample(conn)).(map[string]any)) {
			configs++
			theirVerdict, ourVerdict := theirs.Validate(config), manifest.ValidateConfig(conn, config)
			if ourVerdict != nil {
				refused++
			}
			if (theirVerdict == nil) != (ourVerdict == nil) {
				t.Errorf("%s: config %v: v5 says %v; ours %v", name, config, theirVerdict, ourVerdict)
				continue
			}
			if theirVerdict == nil {
				continue
			}
			// The message a user reads is the one v5's errors make, unless a
			// choice was narrowed.
			if before := configMessage(theirVerdict); ourVerdict.Error() != before && !strings.Contains(ourVerdict.Error(), "(one of:") && !strings.Contains(ourVerdict.Error(), ", not one of:") {
				t.Errorf("%s: config %v:\n now %v\nwas %s", name, config, ourVerdict, before)
			}
		}
	}
	if refused == 0 || refused == configs {
		t.Errorf("%d configs, %d refused: the comparison shows nothing", configs, refused)
	}
	t.Logf("%d manifests, %d configs, %d refused", len(files), configs, refused)
}

// configMessage is the message ValidateConfig made from v5's errors.
func configMessage(err error) string {
	var lines []string
	var walk func(e *v5.ValidationError)
	walk = func(e *v5.ValidationError) {
		if len(e.Causes) == 0 {
			msg := e.Message
			loc := ""
			for _, seg := range strings.Split(strings.TrimPrefix(e.InstanceLocation, "/"), "/") {
				if _, err := strconv.Atoi(seg); err == nil {
					loc += "[" + seg + "]"
				} else if seg != "" {
					loc = strings.TrimPrefix(loc+"."+seg, ".")
				}
			}
			if strings.HasPrefix(msg, "missing properties: ") {
				for _, p := range strings.Split(strings.TrimPrefix(msg, "missing properties: "), ", ") {
					lines = append(lines, fmt.Sprintf("config key %s is required", strings.Trim(loc+"."+strings.Trim(p, "'"), ".")))
				}
				return
			}
			if loc == "" {
				lines = append(lines, msg)
			} else {
				lines = append(lines, fmt.Sprintf("config key %s: %s", loc, msg))
			}
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(err.(*v5.ValidationError))
	sort.Strings(lines)
	return strings.Join(lines, "; ")
}

// sample fills every property of an object schema with its const, default,
// first example or enum value, or a value of its type.
func sample(schema map[string]any) map[string]any {
	out := map[string]any{}
	props, _ := schema["properties"].(map[string]any)
	for k, p := range props {
		pm, _ := p.(map[string]any)
		out[k] = sampleValue(pm)
	}
	return out
}

func sampleValue(p map[string]any) any {
	if v, ok := p["const"]; ok {
		return v
	}
	if v, ok := p["default"]; ok {
		return v
	}
	if list, ok := p["examples"].([]any); ok && len(list) > 0 {
		return list[0]
	}
	if list, ok := p["enum"].([]any); ok && len(list) > 0 {
		return list[0]
	}
	if options, ok := p["oneOf"].([]any); ok && len(options) > 0 {
		om, _ := options[0].(map[string]any)
		return sample(om)
	}
	typ, _ := p["type"].(string)
	if list, ok := p["type"].([]any); ok && len(list) > 0 {
		typ, _ = list[0].(string)
	}
	switch typ {
	case "integer", "number":
		return 1.0
	case "boolean":
		return true
	case "array":
		return []any{"a"}
	case "object":
		return sample(p)
	}
	return "2024-01-01"
}

// brokenConfigs is config, the empty config, and config with each key
// removed and with each key set to values of each JSON type.
func brokenConfigs(config map[string]any) []map[string]any {
	out := []map[string]any{config, {}}
	for k := range config {
		without := copyConfig(config)
		delete(without, k)
		out = append(out, without)
		for _, v := range []any{"2024-01-01", "x", 3.0, -1.5, 0.0, true, nil, []any{}, []any{"a", "a"}, map[string]any{}, strings.Repeat("y", 300)} {
			changed := copyConfig(config)
			changed[k] = v
			out = append(out, changed)
		}
	}
	return out
}

func copyConfig(config map[string]any) map[string]any {
	out := make(map[string]any, len(config))
	for k, v := range config {
		out[k] = v
	}
	return out
}
