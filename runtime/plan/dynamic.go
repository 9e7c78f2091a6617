package plan

import (
	"context"
	"fmt"
	"sync"

	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/protocol"
	"github.com/airbyte-go/source-declarative/runtime/failure"
	"github.com/airbyte-go/source-declarative/runtime/incremental"
	"github.com/airbyte-go/source-declarative/runtime/transform"
)

// Streams settles a source's streams once per run, for check, discover and
// read alike: the streams of ConditionalStreams stay only when their
// condition holds (conditional.go), then the streams of dynamic_streams are
// made and added.
type Streams struct {
	// Source is the manifest whose streams are settled.
	Source *manifest.Source
	// ConfigMu guards the config, which rotated tokens change.
	ConfigMu *sync.Mutex
	once     sync.Once
	err      error
	made     map[string][]*manifest.Stream // dynamic stream name -> its streams, in order
	// Made are the definitions of the streams dynamic streams made, in
	// order (after Resolve).
	Made []MadeStream
}

// MadeStream is the definition of a stream a dynamic stream made: its
// template with the mappings applied and parameters propagated.
type MadeStream struct {
	DynamicName string
	Definition  map[string]any
}

// Resolve settles the streams, the first time it is called; p reads the
// resolvers' retrievers.
func (ss *Streams) Resolve(ctx context.Context, p *Planner) error {
	ss.once.Do(func() {
		if ss.err = ss.applyConditions(p); ss.err == nil {
			ss.err = ss.makeDynamic(ctx, p)
		}
	})
	return ss.err
}

// componentsValue is one value a resolver found, with the slice it came from.
type componentsValue struct {
	values any
	slice  *interp.Object
}

func (ss *Streams) makeDynamic(ctx context.Context, p *Planner) error {
	ss.made = map[string][]*manifest.Stream{}
	taken := map[string]bool{}
	for _, st := range ss.Source.Streams {
		taken[st.Name] = true
	}
	for _, ds := range ss.Source.DynamicStreams {
		if ds.Python != nil {
			if err := ss.makePython(ctx, p, ds, taken); err != nil {
				return err
			}
			continue
		}
		res := ds.Resolver
		if res == nil || ds.Template == nil {
			continue
		}
		values, err := ss.componentsValues(ctx, p, ds)
		if err != nil {
			return err
		}
		for i, cv := range values {
			raw, err := fillTemplate(p, ds, cv)
			if err != nil {
				return err
			}
			st, err := ds.DecodeStream(raw, fmt.Sprintf("%s.stream_template (stream %d)", ds.Path, i))
			if err != nil {
				return failure.Config("%v", err)
			}
			if taken[st.Name] {
				failureType := protocol.SystemError
				if res.Type == manifest.ConfigComponentsResolver {
					failureType = protocol.ConfigError
				}
				return &failure.Error{Failure: failureType, Message: fmt.Sprintf("%s made a stream named %q, a name another stream already has; stream names must be unique", ds.Path, st.Name)}
			}
			taken[st.Name] = true
			ss.Source.Streams = append(ss.Source.Streams, st)
			ss.made[ds.Name] = append(ss.made[ds.Name], st)
			ss.Made = append(ss.Made, MadeStream{ds.Name, raw})
		}
	}
	return nil
}

// makePython adds the streams the CDK makes from a dynamic stream with
// custom components, as the components host gives them.
func (ss *Streams) makePython(ctx context.Context, p *Planner, ds *manifest.DynamicStream, taken map[string]bool) error {
	var out struct {
		Streams []map[string]any `json:"streams"`
	}
	if err := p.Env.Components.Call(ctx, ds.Python, "dynamic_streams", map[string]any{"dynamic": ds.Path, "name": ds.Name, "go_auth": manifest.AuthNames(ds.PythonAuth)}, nil, &out); err != nil {
		return err
	}
	for i, raw := range out.Streams {
		st := ds.DecodePythonStream(raw, fmt.Sprintf("%s.stream_template (stream %d)", ds.Path, i))
		if taken[st.Name] {
			return failure.Config("%s made a stream named %q, a name another stream already has; stream names must be unique", ds.Path, st.Name)
		}
		taken[st.Name] = true
		ss.Source.Streams = append(ss.Source.Streams, st)
		ss.made[ds.Name] = append(ss.made[ds.Name], st)
		delete(raw, "dynamic_stream_name")
		ss.Made = append(ss.Made, MadeStream{ds.Name, raw})
	}
	return nil
}

// componentsValues lists the values a dynamic stream's resolver finds: the
// records its retriever reads, the items its config pointers lead to
// (their cartesian product, with the default values), or its listed
// parameters.
func (ss *Streams) componentsValues(ctx context.Context, p *Planner, ds *manifest.DynamicStream) ([]componentsValue, error) {
	res := ds.Resolver
	switch res.Type {
	case manifest.HTTPComponentsResolver:
		// Every partition of the retriever's own router is read, in order;
		// its slice is the mappings' stream_slice.
		run, err := p.NewRun(&manifest.Stream{Name: ds.Name, Path: res.Path, Retriever: res.Retriever}, nil, nil)
		if err != nil {
			return nil, err
		}
		if err := run.Prepare(); err != nil {
			return nil, err
		}
		var out []componentsValue
		var slice *interp.Object
		err = run.Sequential(ctx, Hooks{
			Before: func(sl *incremental.Slice) error { slice = sl.Template(); return nil },
			Emit: func(records [][]byte, _ []protocol.FileReference) error {
				for _, b := range records {
					v, err := transform.DecodeValue(b)
					if err != nil {
						return err
					}
					out = append(out, componentsValue{values: transform.TemplateValue(v), slice: slice})
				}
				return nil
			}})
		return out, err
	case manifest.ConfigComponentsResolver:
		return ss.configValues(p, res)
	}
	out := make([]componentsValue, len(res.ParameterSets))
	for i, set := range res.ParameterSets {
		out[i] = componentsValue{values: set}
	}
	return out, nil
}

// configValues is the cartesian product of the stream configs' items; the
// objects of one combination are merged, another item is kept under
// source_config_<i> as [index, item].
func (ss *Streams) configValues(p *Planner, res *manifest.ComponentsResolver) ([]componentsValue, error) {
	vars := p.Env.BuildVars(res.Parameters)
	var axes [][]any
	for i, sc := range res.StreamConfigs {
		keys := make([]string, len(sc.ConfigsPointer))
		for j, t := range sc.ConfigsPointer {
			s, err := t.Render(vars)
			if err != nil {
				return nil, failure.Config("%v", err)
			}
			keys[j] = s
		}
		ss.ConfigMu.Lock()
		found, ok := transform.Get(transform.FromPlain(p.Env.Config), keys)
		ss.ConfigMu.Unlock()
		var items []any
		switch x := transform.ToPlain(found).(type) {
		case []any:
			items = x
		default:
			if ok && x != nil {
				items = []any{x}
			}
		}
		items = append(items, sc.DefaultValues...)
		if len(items) == 0 {
			p.Env.Log("INFO", fmt.Sprintf("%s.stream_config[%d]: nothing at config path %v, no stream made from it", res.Path, i, keys))
		}
		axes = append(axes, items)
	}
	var out []componentsValue
	var combine func(axis int, picked []int)
	combine = func(axis int, picked []int) {
		if axis == len(axes) {
			merged := map[string]any{}
			for i, j := range picked {
				switch item := axes[i][j].(type) {
				case map[string]any:
					for k, v := range item {
						merged[k] = v
					}
				default:
					key := fmt.Sprintf("source_config_%d", i)
					if _, taken := merged[key]; !taken {
						merged[key] = interp.List{int64(j), item}
					}
				}
			}
			out = append(out, componentsValue{values: merged})
			return
		}
		for j := range axes[axis] {
			combine(axis+1, append(picked, j))
		}
	}
	if len(axes) > 0 {
		combine(0, nil)
	}
	return out, nil
}

// fillTemplate writes a components value into a copy of the template, as
// the mappings say.
func fillTemplate(p *Planner, ds *manifest.DynamicStream, cv componentsValue) (map[string]any, error) {
	res := ds.Resolver
	tpl := transform.FromPlain(manifest.DeepCopy(ds.Template)).(*transform.Object)
	// The CDK's resolvers give config, parameters, the components value
	// and the template; only the HTTP resolver's have a stream_slice.
	vars := p.Env.BuildVars(res.Parameters)
	vars["components_values"] = cv.values
	vars["stream_template_config"] = ds.Template
	if cv.slice != nil {
		vars["stream_slice"], vars["stream_partition"], vars["stream_interval"] = cv.slice, cv.slice, cv.slice
	}
	fromConfig := res.Type != manifest.HTTPComponentsResolver
	for _, m := range res.Mappings {
		if m.Condition != nil {
			ok, err := m.Condition.Bool(vars)
			if err != nil {
				return nil, failure.Config("%v", err)
			}
			if !ok {
				continue
			}
		}
		v, err := m.Value.Eval(vars)
		if err != nil {
			return nil, failure.Config("%v", err)
		}
		v = transform.Typed(v, m.ValueType)
		if s, ok := v.(string); ok && fromConfig && m.ValueType != "string" {
			v = manifest.ParseYAMLValue(s)
		}
		path, err := interp.RenderEach(m.FieldPath, vars)
		if err != nil {
			return nil, failure.Config("%v", err)
		}
		g, err := transform.CompileGlob(path)
		if err != nil {
			return nil, failure.Config("%s.field_path: %v", m.Path, err)
		}
		if n := g.SetExisting(tpl, transform.FromPlain(v)); n == 0 && fromConfig && m.CreateOrUpdate && interp.Truthy(v) {
			transform.Create(tpl, path, transform.FromPlain(v))
		}
	}
	return transform.ToPlain(tpl).(map[string]any), nil
}

// CheckNames lists the streams check reads: the check's stream names, then
// those of the dynamic streams it names (all, or the first ones).
func (ss *Streams) CheckNames() ([]string, error) {
	names := append([]string(nil), ss.Source.CheckStreams...)
	if n := ss.Source.CheckCount; n > 0 {
		for i, st := range ss.Source.Streams {
			if i < n {
				names = append(names, st.Name)
			}
		}
	}
	for _, c := range ss.Source.CheckDynamic {
		made, ok := ss.made[c.Name]
		if !ok && !ss.hasDynamic(c.Name) {
			return nil, fmt.Errorf("dynamic stream %s is not defined in the manifest's dynamic_streams", c.Name)
		}
		if c.Count >= 0 && c.Count < len(made) {
			made = made[:c.Count]
		}
		for _, st := range made {
			names = append(names, st.Name)
		}
	}
	return names, nil
}

func (ss *Streams) hasDynamic(name string) bool {
	for _, ds := range ss.Source.DynamicStreams {
		if ds.Name == name {
			return true
		}
	}
	return false
}
