package differential

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Difference is one way our output differs from the reference's.
type Difference struct {
	Stream string // "" for the whole command
	What   string // spec, check, catalog, requests, records, state, states, status, errors, exit, test read
	Detail string
}

func (d Difference) String() string {
	if d.Stream == "" {
		return d.What + ": " + d.Detail
	}
	return "stream " + d.Stream + ": " + d.What + ": " + d.Detail
}

// ofType lists the messages of one type.
func (o output) ofType(t string) []map[string]any {
	var out []map[string]any
	for _, m := range o.msgs {
		if m["type"] == t {
			out = append(out, m)
		}
	}
	return out
}

func compareSpec(outs [2]output) []Difference {
	var ds []Difference
	a, b := outs[0].ofType("SPEC"), outs[1].ofType("SPEC")
	if len(a) != len(b) {
		return []Difference{{What: "spec", Detail: fmt.Sprintf("%d SPEC messages, the reference %d", len(a), len(b))}}
	}
	for i := range a {
		if d := firstDifference(a[i]["spec"], b[i]["spec"], "spec"); d != "" {
			ds = append(ds, Difference{What: "spec", Detail: d})
		}
	}
	return append(ds, compareEnd("spec", outs)...)
}

// compareEnd compares how a command ended: its exit code and the failure
// types of its error traces, per stream.
func compareEnd(command string, outs [2]output) []Difference {
	var ds []Difference
	if outs[0].code != outs[1].code {
		ds = append(ds, Difference{What: "exit", Detail: fmt.Sprintf("%s exits %d, the reference %d%s", command, outs[0].code, outs[1].code, firstError(outs))})
	}
	if outs[0].bad != "" {
		ds = append(ds, Difference{What: "stdout", Detail: "a line that is not an Airbyte message: " + outs[0].bad})
	}
	a, b := errorTypes(outs[0]), errorTypes(outs[1])
	for _, stream := range unionKeys(a, b) {
		if !slices.Equal(a[stream], b[stream]) {
			ds = append(ds, Difference{Stream: stream, What: "errors", Detail: fmt.Sprintf("%s: failure types %v, the reference %v%s", command, a[stream], b[stream], firstError(outs))})
		}
	}
	return ds
}

// firstError quotes each side's first error trace, for a difference's
// detail.
func firstError(outs [2]output) string {
	var parts []string
	for i, o := range outs {
		for _, t := range o.ofType("TRACE") {
			if e := asMap(asMap(t["trace"])["error"]); e != nil {
				parts = append(parts, fmt.Sprintf("%s: %q", []string{"ours", "reference"}[i], clip(fmt.Sprint(e["message"]), 200)))
				break
			}
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

// errorTypes are the failure types of the error traces, by stream ("" for
// the whole command), sorted.
func errorTypes(o output) map[string][]string {
	out := map[string][]string{}
	for _, t := range o.ofType("TRACE") {
		e := asMap(asMap(t["trace"])["error"])
		if e == nil {
			continue
		}
		stream := fmt.Sprint(asMap(e["stream_descriptor"])["name"])
		if e["stream_descriptor"] == nil {
			stream = ""
		}
		out[stream] = append(out[stream], fmt.Sprint(e["failure_type"]))
	}
	for k := range out {
		sort.Strings(out[k])
	}
	return out
}

func compareCheck(outs [2]output) []Difference {
	var ds []Difference
	status := func(o output) string {
		for _, m := range o.ofType("CONNECTION_STATUS") {
			return fmt.Sprint(asMap(m["connectionStatus"])["status"])
		}
		return "none"
	}
	if a, b := status(outs[0]), status(outs[1]); a != b {
		ds = append(ds, Difference{What: "check", Detail: fmt.Sprintf("CONNECTION_STATUS %s, the reference %s%s", a, b, firstError(outs))})
	}
	return append(ds, compareEnd("check", outs)...)
}

func compareCatalogs(outs [2]output) []Difference {
	ds := compareEnd("discover", outs)
	a, b := byName(catalogStreams(outs[0])), byName(catalogStreams(outs[1]))
	for _, name := range unionKeys(a, b) {
		switch {
		case a[name] == nil:
			ds = append(ds, Difference{Stream: name, What: "catalog", Detail: "missing from our catalog"})
		case b[name] == nil:
			ds = append(ds, Difference{Stream: name, What: "catalog", Detail: "missing from the reference's catalog"})
		default:
			if d := firstDifference(a[name], b[name], "stream"); d != "" {
				ds = append(ds, Difference{Stream: name, What: "catalog", Detail: d})
			}
		}
	}
	return ds
}

func byName(streams []map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, s := range streams {
		out[fmt.Sprint(s["name"])] = s
	}
	return out
}

// catalogStreams are the streams of a discover's CATALOG.
func catalogStreams(o output) []map[string]any {
	catalogs := o.ofType("CATALOG")
	if len(catalogs) == 0 {
		return nil
	}
	var out []map[string]any
	for _, s := range list(asMap(catalogs[0]["catalog"])["streams"]) {
		out = append(out, asMap(s))
	}
	return out
}

// connectionSpec is a spec's connectionSpecification.
func connectionSpec(o output) map[string]any {
	if specs := o.ofType("SPEC"); len(specs) > 0 {
		return asMap(asMap(specs[0]["spec"])["connectionSpecification"])
	}
	return nil
}

// refusal names the custom components our check refuses to run (the
// environment does not permit custom code, or the manifest names one the
// components host cannot run), "" when it does not refuse any; ok tells that the reference does not succeed either (it
// refuses custom code unless told to run it).
func refusal(outs [2]output) (refused string, ok bool) {
	var msgs []string
	for _, m := range outs[0].msgs {
		if e := asMap(asMap(m["trace"])["error"]); e != nil {
			msgs = append(msgs, fmt.Sprint(e["message"]))
		}
		if cs := asMap(m["connectionStatus"]); cs != nil {
			msgs = append(msgs, fmt.Sprint(cs["message"]))
		}
	}
	for _, msg := range msgs {
		// A refusal, not what a component that runs raised ("custom
		// component X (class) at path: ValueError ...").
		if strings.Contains(msg, "Custom connector code is not permitted") || strings.Contains(msg, "is not supported here") ||
			strings.HasPrefix(msg, "invalid manifest: ") && (strings.Contains(msg, "custom component") || strings.Contains(msg, "class_name")) {
			refused = clip(msg, 160)
			break
		}
	}
	succeeded := false
	for _, m := range outs[1].ofType("CONNECTION_STATUS") {
		succeeded = asMap(m["connectionStatus"])["status"] == "SUCCEEDED"
	}
	return refused, refused != "" && !succeeded
}

// configuredCatalog configures every stream: incremental where it can be,
// with its default cursor, else full refresh.
func configuredCatalog(streams []map[string]any) map[string]any {
	var cs []any
	for _, s := range streams {
		c := map[string]any{"stream": s, "sync_mode": "full_refresh", "destination_sync_mode": "overwrite"}
		if slices.Contains(list(s["supported_sync_modes"]), any("incremental")) {
			c["sync_mode"], c["destination_sync_mode"] = "incremental", "append"
			if f := s["default_cursor_field"]; f != nil {
				c["cursor_field"] = f
			}
		}
		if pk := s["source_defined_primary_key"]; pk != nil {
			c["primary_key"] = pk
		}
		cs = append(cs, c)
	}
	return map[string]any{"streams": cs}
}

func hasIncremental(catalog map[string]any) bool {
	for _, c := range list(catalog["streams"]) {
		if asMap(c)["sync_mode"] == "incremental" {
			return true
		}
	}
	return false
}

// finalStates are the last state of each stream a read printed, as a state
// file.
func finalStates(o output) []any {
	last := map[string]any{}
	var order []string
	for _, m := range o.ofType("STATE") {
		st := asMap(m["state"])
		name := fmt.Sprint(asMap(asMap(asMap(st["stream"]))["stream_descriptor"])["name"])
		if _, seen := last[name]; !seen {
			order = append(order, name)
		}
		last[name] = map[string]any{"type": "STREAM", "stream": st["stream"]}
	}
	out := make([]any, 0, len(order))
	for _, n := range order {
		out = append(out, last[n])
	}
	return out
}

// firstDifference describes where a and b first differ ("" when equal),
// walking objects by sorted key and lists by index.
func firstDifference(a, b any, path string) string {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			break
		}
		for _, k := range unionKeys(x, y) {
			av, ina := x[k]
			bv, inb := y[k]
			switch {
			case !ina:
				return fmt.Sprintf("%s.%s: absent here, the reference has %s", path, k, clip(jsonText(bv), 160))
			case !inb:
				return fmt.Sprintf("%s.%s: %s here, absent in the reference", path, k, clip(jsonText(av), 160))
			}
			if d := firstDifference(av, bv, path+"."+k); d != "" {
				return d
			}
		}
		return ""
	case []any:
		y, ok := b.([]any)
		if !ok {
			break
		}
		for i := 0; i < len(x) && i < len(y); i++ {
			if d := firstDifference(x[i], y[i], fmt.Sprintf("%s[%d]", path, i)); d != "" {
				return d
			}
		}
		if len(x) != len(y) {
			return fmt.Sprintf("%s: %d items, the reference %d", path, len(x), len(y))
		}
		return ""
	}
	if jsonText(a) == jsonText(b) {
		return ""
	}
	return fmt.Sprintf("%s: %s here, the reference %s", path, clip(jsonText(a), 160), clip(jsonText(b), 160))
}

// jsonText is v as compact JSON with sorted keys (encoding/json sorts map
// keys).
func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

func unionKeys[V any](a, b map[string]V) []string {
	seen := map[string]bool{}
	for k := range a {
		seen[k] = true
	}
	for k := range b {
		seen[k] = true
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}
