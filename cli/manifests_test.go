package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/airbyte-go/source-declarative/manifest"
)

// Every catalog manifest without custom code loads, and discover lists its
// streams, with a config made from its spec (every property it lists, as a
// user filling the form would: a cursor's start date the spec leaves
// optional is needed by discover, as by Airbyte's).
func TestCatalogManifestsDiscover(t *testing.T) {
	files, _ := filepath.Glob("../../shared/manifests/*.yaml")
	if len(files) == 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("no ../shared/manifests beside the repository")
		}
		t.Skip("no ../shared/manifests beside the repository")
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".yaml"), func(t *testing.T) {
			raw, err := manifest.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			resolved, err := manifest.ResolveOnly(raw)
			if err != nil {
				t.Fatal(err)
			}
			spec, _ := manifest.Spec(resolved)
			config := sample(spec["connectionSpecification"]).(map[string]any)
			if err := manifest.ValidateConfig(spec["connectionSpecification"].(map[string]any), config); err != nil {
				t.Fatalf("made a config the spec refuses: %v", err)
			}
			b, _ := json.Marshal(config)
			res := runCLI(t, "discover", "--manifest", f, "--config", writeFile(t, t.TempDir(), "config.json", string(b)))
			if res.code != 0 {
				refused(t, res)
				return
			}
			var want []string
			for _, s := range resolved["streams"].([]any) {
				want = append(want, s.(map[string]any)["name"].(string)+" <nil>")
			}
			var got []string
			for _, n := range catalogNames(t, res) {
				got = append(got, n[:strings.Index(n, " ")]+" <nil>")
			}
			equalLists(t, "streams", got, want)
		})
	}
}

// refused checks a refusal: it must be Airbyte's refusal of custom Python
// code (no AIRBYTE_ENABLE_UNSAFE_CODE here), naming the component's path;
// any other refusal fails.
func refused(t *testing.T, res result) {
	t.Helper()
	errs := res.errors()
	if len(errs) != 1 {
		t.Fatalf("want one error, got %v", errs)
	}
	if msg := errs[0]["message"].(string); !regexp.MustCompile(`^streams\[\d+\][^:]*: ` + regexp.QuoteMeta(notPermittedText) + `$`).MatchString(msg) {
		t.Errorf("refused for a component that is not custom Python code, or without a path: %s", msg)
	}
}

// sample makes a value a JSON schema accepts: the first option of a oneOf,
// an enum's first value, the default or examples given, or a plain value of
// the type (a date where a pattern asks for one); only the required
// properties of an object.
func sample(s any) any {
	m, _ := s.(map[string]any)
	if c, ok := m["const"]; ok {
		return c
	}
	if opts, ok := m["oneOf"].([]any); ok && len(opts) > 0 {
		return merge(sample(map[string]any{"type": "object", "properties": m["properties"]}), sample(opts[0]))
	}
	if e, ok := m["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	typ := m["type"]
	if l, ok := typ.([]any); ok {
		for _, x := range l {
			if x != "null" {
				typ = x
			}
		}
	}
	switch typ {
	case "object":
		out := map[string]any{}
		props, _ := m["properties"].(map[string]any)
		for k, p := range props {
			if v := sample(p); v != nil {
				out[k] = v
			}
		}
		return out
	case "array":
		items := sample(m["items"])
		if items == nil {
			items = "x"
		}
		return []any{items}
	case "integer", "number":
		return 1
	case "boolean":
		return true
	}
	candidates := []any{m["default"]}
	if ex, ok := m["examples"].([]any); ok {
		candidates = append(candidates, ex...)
	}
	for _, v := range []string{"2024-01-01T00:00:00Z", "2024-01-01", "2024-01-01T00:00:00.000Z", "01-01-2024", "US", "x1", "1"} {
		candidates = append(candidates, v)
	}
	for _, c := range candidates {
		v, ok := c.(string)
		if !ok {
			continue
		}
		if p, ok := m["pattern"].(string); ok {
			if re, err := regexp.Compile(p); err != nil || !re.MatchString(v) {
				continue
			}
		}
		return v
	}
	return "x"
}

func merge(a, b any) any {
	am, _ := a.(map[string]any)
	bm, _ := b.(map[string]any)
	if am == nil {
		return b
	}
	for k, v := range bm {
		am[k] = v
	}
	return am
}
