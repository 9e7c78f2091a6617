package interp

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// TestDifferential renders every template of the curated manifests and of
// Airbyte's catalog (../shared/catalog), the
// reference's interpolation test vectors and our own edge cases with this
// engine and with real Jinja2 set up as the CDK sets it up
// (testdata/cdk_jinja.py), in one fixed context, and compares each result:
// Eval's and EvalOrNil's typed values, Render's text, Param's value and
// Bool's answer. A difference fails unless testdata/allowed.yaml lists it
// with its reason. Where Jinja2's rendering raised a TypeError, which the
// CDK answers with the template's own text, ours must fail with a TypeError.
func TestDifferential(t *testing.T) {
	python := "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		t.Skip("differential test skipped: /usr/bin/python3 is missing")
	}
	if err := exec.Command(python, "-c", "import jinja2, dateutil, isodate, pytz").Run(); err != nil {
		t.Skip("differential test skipped: python3-jinja2, -dateutil, -isodate or -tz is missing")
	}
	cases := loadCases(t)
	ctxJSON, err := os.ReadFile("testdata/context.json")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2021, 9, 1, 0, 0, 0, 0, time.UTC)
	input, _ := json.Marshal(map[string]any{"now": now.Format(time.RFC3339), "context": json.RawMessage(ctxJSON), "cases": cases})
	cmd := exec.Command(python, "testdata/cdk_jinja.py")
	cmd.Stdin = bytes.NewReader(input)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the Jinja2 harness failed: %v\n%s", err, stderr.String())
	}
	var want []map[string]json.RawMessage
	if err := json.Unmarshal(out, &want); err != nil || len(want) != len(cases) {
		t.Fatalf("the Jinja2 harness answered %d results for %d cases: %v", len(want), len(cases), err)
	}

	allowed := loadAllowed(t)
	used := map[int]bool{}
	defer func(saved func() time.Time) { Now = saved }(Now)
	Now = func() time.Time { return now }
	differences, differing, fellBack := 0, 0, 0
	for i, src := range cases {
		got := evalModes(t, src, ctxJSON)
		differs, onlyFallback := false, true
		for _, mode := range modes {
			g, w := got[mode], normalizeResult(want[i][mode])
			if g == w || g == ourTypeError && w == `{"err":true}` {
				continue
			}
			differs = true
			if n := allowed.findType(want[i][mode], g); n >= 0 {
				used[n] = true
				differences++
				onlyFallback = false
				continue
			}
			if n := allowed.findFallback(want[i][mode]); n >= 0 && g == ourTypeError {
				used[n] = true
				differences++
				continue
			}
			onlyFallback = false
			if n := allowed.find(src, mode); n >= 0 {
				used[n] = true
				differences++
				continue
			}
			t.Errorf("%s %q:\n  ours:   %s\n  Jinja2: %s", mode, src, g, want[i][mode])
		}
		if differs {
			differing++
			if onlyFallback {
				fellBack++
			}
		}
	}
	for n, a := range allowed {
		if !used[n] {
			t.Errorf("testdata/allowed.yaml lists %q, which no longer differs: remove it", a.Expr+a.Fallback+a.Type)
		}
	}
	t.Logf("compared %d expressions in %d modes with Jinja2: %d differ, %d of them only where Jinja2 fell back to the template's text on a TypeError (%d allowed differences, %d entries)",
		len(cases), len(modes), differing, fellBack, differences, len(allowed))
}

// loadCases gathers the templates: the catalog manifests' (when ../shared is
// there) and testdata/cases.yaml's.
func loadCases(t *testing.T) []string {
	seen := map[string]bool{}
	var cases []string
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			cases = append(cases, s)
		}
	}
	files, _ := filepath.Glob("../../../shared/manifests/*.yaml")
	catalog, _ := filepath.Glob("../../../shared/catalog/*/manifest.yaml")
	files = append(files, catalog...)
	if len(files) == 0 {
		t.Log("../shared/manifests and ../shared/catalog are absent: the catalog manifests' templates are not compared")
	}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for _, k := range SortedKeys(x) {
				walk(k)
				walk(x[k])
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case string:
			if strings.Contains(x, "{{") || strings.Contains(x, "{%") {
				add(x)
			}
		}
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc any
		if err := yaml.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		walk(doc)
	}
	b, err := os.ReadFile("testdata/cases.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var sections map[string][]string
	if err := yaml.Unmarshal(b, &sections); err != nil {
		t.Fatalf("testdata/cases.yaml: %v", err)
	}
	for _, name := range SortedKeys(sections) {
		for _, s := range sections[name] {
			add(s)
		}
	}
	return cases
}

type allowedDifference struct {
	Expr  string   `yaml:"expr"`
	Modes []string `yaml:"modes"`
	Why   string   `yaml:"why"`
	// Fallback, set to TypeError, matches every expression whose rendering
	// fell back to its own text on that error in Jinja2 and failed with it
	// here.
	Fallback string `yaml:"fallback"`
	// Type matches every result of that Python type in Jinja2 that is a
	// string of the same text here.
	Type string `yaml:"type"`
}

type allowList []allowedDifference

func loadAllowed(t *testing.T) allowList {
	b, err := os.ReadFile("testdata/allowed.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var l allowList
	if err := yaml.Unmarshal(b, &l); err != nil {
		t.Fatalf("testdata/allowed.yaml: %v", err)
	}
	for _, a := range l {
		if a.Why == "" {
			t.Errorf("testdata/allowed.yaml: %q has no reason", a.Expr)
		}
	}
	return l
}

// findFallback is the entry that allows a Jinja2 result that fell back to
// the template's own text, or -1.
func (l allowList) findFallback(raw json.RawMessage) int {
	var r struct {
		Fallback string `json:"fallback"`
	}
	if json.Unmarshal(raw, &r) != nil || r.Fallback == "" {
		return -1
	}
	for n, a := range l {
		if a.Fallback == r.Fallback {
			return n
		}
	}
	return -1
}

// findType is the entry that allows a Jinja2 result of a Python type that
// is the same text here, or -1.
func (l allowList) findType(raw json.RawMessage, ours string) int {
	var w, g struct {
		T string `json:"t"`
		V any    `json:"v"`
	}
	if json.Unmarshal(raw, &w) != nil || json.Unmarshal([]byte(ours), &g) != nil || g.T != "str" || g.V != w.V {
		return -1
	}
	for n, a := range l {
		if a.Type != "" && a.Type == w.T {
			return n
		}
	}
	return -1
}

func (l allowList) find(src, mode string) int {
	for n, a := range l {
		if a.Expr != src || a.Fallback != "" || a.Type != "" {
			continue
		}
		if len(a.Modes) == 0 {
			return n
		}
		for _, m := range a.Modes {
			if m == mode {
				return n
			}
		}
	}
	return -1
}

// ourTypeError is the result of an evaluation that failed with a TypeError.
const ourTypeError = `{"err":"TypeError"}`

// modes are the ways a template is evaluated: Eval, EvalOrNil, Render,
// Param and Bool.
var modes = []string{"eval", "body", "render", "param", "bool"}

// evalModes evaluates src in every mode, each on a fresh copy of the context.
func evalModes(t *testing.T, src string, ctxJSON []byte) map[string]string {
	out := map[string]string{}
	tpl, err := Compile(src, "case")
	for _, mode := range modes {
		if err != nil {
			out[mode] = `{"err":true}`
			continue
		}
		ctx, jerr := FromJSON(ctxJSON)
		if jerr != nil {
			t.Fatal(jerr)
		}
		vars := withObjects(Vars(ctx.(map[string]any)))
		var v any
		var e error
		switch mode {
		case "eval":
			v, e = tpl.Eval(vars)
		case "body":
			v, e = tpl.EvalOrNil(vars)
		case "render":
			v, e = tpl.Render(vars)
		case "param":
			v, e = tpl.Param(vars)
			if l, ok := v.([]any); ok {
				v = sentTexts(l)
			}
		case "bool":
			v, e = tpl.Bool(vars)
		}
		if e != nil {
			out[mode] = `{"err":true}`
			if strings.Contains(e.Error(), ": TypeError: ") {
				out[mode] = ourTypeError
			}
			continue
		}
		b, _ := json.Marshal(encodeResult(v))
		out[mode] = string(b)
	}
	return out
}

// sentTexts are the texts a list parameter is sent as (runtime/request).
func sentTexts(l []any) []any {
	out := make([]any, len(l))
	for i, e := range l {
		out[i] = String(e)
	}
	return out
}

// withObjects makes the slice and the last record of the context the
// objects the runtime passes (context.json writes the slice as its parts).
func withObjects(vars Vars) Vars {
	parts := vars["stream_slice"].(map[string]any)
	part := func(k string) map[string]any { return parts[k].(map[string]any) }
	sl := StreamSlice(part("partition"), part("cursor_slice"), part("extra_fields"))
	vars["stream_slice"], vars["stream_interval"], vars["stream_partition"] = sl, sl, sl
	vars["last_record"] = Record(vars["last_record"].(map[string]any))
	return vars
}

// encodeResult writes a value with its Python type, as the harness does.
func encodeResult(v any) map[string]any {
	switch x := v.(type) {
	case nil:
		return map[string]any{"t": "NoneType"}
	case bool:
		return map[string]any{"t": "bool", "v": x}
	case int64:
		return map[string]any{"t": "int", "v": strconv.FormatInt(x, 10)}
	case json.Number:
		return map[string]any{"t": "int", "v": string(x)}
	case float64:
		return map[string]any{"t": "float", "v": FormatFloat(x)}
	case string:
		return map[string]any{"t": "str", "v": x}
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = encodeResult(e)
		}
		return map[string]any{"t": "list", "v": l}
	case map[string]any:
		m := map[string]any{}
		for k, e := range x {
			m[k] = encodeResult(e)
		}
		return map[string]any{"t": "dict", "v": m}
	}
	return map[string]any{"t": "go:" + typeName(v), "v": pyStr(v)}
}

// normalizeResult re-encodes a harness result the way encodeResult's are
// (sorted keys; any failure is a failure).
func normalizeResult(raw json.RawMessage) string {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return string(raw)
	}
	if _, failed := m["err"]; failed {
		return `{"err":true}`
	}
	if _, fellBack := m["fallback"]; fellBack {
		return string(raw)
	}
	b, _ := json.Marshal(m)
	return string(b)
}
