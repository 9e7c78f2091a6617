package manifest

import (
	"errors"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/airbyte-go/source-declarative/lang/interp"
)

// Components resolver types.
const (
	HTTPComponentsResolver         = "HttpComponentsResolver"
	ConfigComponentsResolver       = "ConfigComponentsResolver"
	ParametrizedComponentsResolver = "ParametrizedComponentsResolver"
)

// DynamicStream is a DynamicDeclarativeStream: streams made from a template,
// one per value its resolver finds (API records, config items or listed
// parameters), when the stream list is built for check, discover and read.
type DynamicStream struct {
	Name                string
	Path                string // dynamic_streams[i]
	Template            map[string]any
	UseParentParameters bool
	Resolver            *ComponentsResolver
	// Python, when set, is a custom component of the dynamic stream (in its
	// resolver or template): the CDK makes its streams and reads them whole,
	// and Resolver and Template are not decoded. PythonAuth are the
	// authenticators of its resolver's requester (Stream.PythonAuth), under
	// the dynamic stream's name.
	Python     *Custom
	PythonAuth map[string]*Auth
}

// ComponentsResolver finds the values a dynamic stream's template is filled with.
type ComponentsResolver struct {
	Type          string
	Path          string
	Parameters    map[string]any
	Retriever     *Retriever         // HttpComponentsResolver
	StreamConfigs []*StreamConfig    // ConfigComponentsResolver
	ParameterSets []map[string]any   // ParametrizedComponentsResolver
	Mappings      []ComponentMapping // in manifest order
}

// StreamConfig points at a list (or one item) in the config.
type StreamConfig struct {
	ConfigsPointer []*interp.Template
	DefaultValues  []any
}

// ComponentMapping is a ComponentMappingDefinition: a value written into
// the template at a path.
type ComponentMapping struct {
	Path           string
	FieldPath      []*interp.Template
	Value          *interp.Template
	ValueType      string
	CreateOrUpdate bool
	Condition      *interp.Template // ConfigComponentsResolver only
}

// CheckDynamic is a dynamic_streams_check_configs entry: how many streams
// of a dynamic stream check reads.
type CheckDynamic struct {
	Name  string
	Count int // -1: all of them
}

func (d *decoder) dynamicStreams(v any) []*DynamicStream {
	list, ok := v.([]any)
	if !ok {
		d.fail("dynamic_streams", "must be a list of DynamicDeclarativeStream")
		return nil
	}
	var out []*DynamicStream
	for i, e := range list {
		path := index("dynamic_streams", i)
		m, _, ok := d.component(e, path, "DynamicDeclarativeStream")
		if !ok {
			continue
		}
		ds := &DynamicStream{Path: path, UseParentParameters: true}
		ds.Name, _ = m["name"].(string)
		if ds.Name == "" {
			ds.Name = fmt.Sprintf("dynamic_stream_%d", i)
		}
		if c := d.parts.dynamic[path]; c != nil {
			ds.Python, ds.PythonAuth = c, map[string]*Auth{}
			d.pythonAuths(m["components_resolver"], path+".components_resolver", ds.Name, ds.PythonAuth)
			out = append(out, ds)
			continue
		}
		if b, ok := m["use_parent_parameters"].(bool); ok {
			ds.UseParentParameters = b
		}
		ds.Template, _ = m["stream_template"].(map[string]any)
		ds.Resolver = d.resolver(m["components_resolver"], path+".components_resolver")
		if ds.Template != nil {
			d.checkTemplate(ds.Template, path+".stream_template")
		}
		out = append(out, ds)
	}
	return out
}

// checkTemplate decodes a stream template once, so that components it
// could never run are refused at load. Missing or empty fields are not
// reported: the mappings may fill them in.
func (d *decoder) checkTemplate(t map[string]any, path string) {
	probe := &decoder{parts: &customParts{}}
	probe.stream(DeepCopy(t), path)
	for _, e := range probe.errs {
		if strings.Contains(e, "not supported") || strings.Contains(e, "unknown component type") {
			d.errs = append(d.errs, e)
		}
	}
}

func (d *decoder) resolver(v any, path string) *ComponentsResolver {
	m, typ, ok := d.component(v, path, HTTPComponentsResolver, ConfigComponentsResolver, ParametrizedComponentsResolver)
	if !ok {
		return nil
	}
	r := &ComponentsResolver{Type: typ, Path: path}
	r.Parameters, _ = m["$parameters"].(map[string]any)
	switch typ {
	case HTTPComponentsResolver:
		r.Retriever = d.simpleRetriever(m["retriever"], path+".retriever")
	case ConfigComponentsResolver:
		configs, ok := m["stream_config"].([]any)
		if !ok {
			configs = []any{m["stream_config"]}
		}
		for i, c := range configs {
			cp := path + ".stream_config"
			if _, isList := m["stream_config"].([]any); isList {
				cp = index(cp, i)
			}
			cm, _, ok := d.component(c, cp, "StreamConfig")
			if !ok {
				continue
			}
			sc := &StreamConfig{ConfigsPointer: d.templates(cm["configs_pointer"], cp+".configs_pointer")}
			sc.DefaultValues, _ = cm["default_values"].([]any)
			r.StreamConfigs = append(r.StreamConfigs, sc)
		}
	case ParametrizedComponentsResolver:
		pm, _, ok := d.component(m["stream_parameters"], path+".stream_parameters", "StreamParametersDefinition")
		if ok {
			sets, _ := pm["list_of_parameters_for_stream"].([]any)
			for i, e := range sets {
				set, ok := e.(map[string]any)
				if !ok {
					d.fail(fmt.Sprintf("%s.stream_parameters.list_of_parameters_for_stream[%d]", path, i), "must be a mapping")
					continue
				}
				r.ParameterSets = append(r.ParameterSets, set)
			}
		}
	}
	mappings, _ := m["components_mapping"].([]any)
	for i, e := range mappings {
		mp := fmt.Sprintf("%s.components_mapping[%d]", path, i)
		cm, _, ok := d.component(e, mp, "ComponentMappingDefinition")
		if !ok {
			continue
		}
		c := ComponentMapping{Path: mp, FieldPath: d.templates(cm["field_path"], mp+".field_path"), Value: d.tpl(cm, "value", mp),
			ValueType: str(cm, "value_type", ""), Condition: d.condition(cm, mp)}
		c.CreateOrUpdate, _ = cm["create_or_update"].(bool)
		if c.Condition != nil && typ != ConfigComponentsResolver {
			d.fail(mp+".condition", "is only supported by ConfigComponentsResolver")
		}
		r.Mappings = append(r.Mappings, c)
	}
	return r
}

// DecodeStream decodes one stream made from a dynamic stream's template
// (with its mappings applied): parameters are propagated again, then the
// stream is decoded as if written in streams.
func (ds *DynamicStream) DecodeStream(raw map[string]any, path string) (*Stream, error) {
	if _, ok := raw["type"]; !ok {
		raw["type"] = "DeclarativeStream"
	}
	PropagateStream(raw, ds.UseParentParameters)
	d := &decoder{parts: &customParts{}}
	st := d.stream(raw, path)
	if len(d.errs) > 0 {
		return nil, errors.New(strings.Join(d.errs, "; "))
	}
	return st, nil
}

// DecodePythonStream decodes one stream the CDK made from a dynamic stream
// with custom components (DynamicStream.Python): the CDK reads it whole.
func (ds *DynamicStream) DecodePythonStream(raw map[string]any, path string) *Stream {
	d := &decoder{parts: &customParts{streams: map[string]*Custom{path: ds.Python}}}
	return d.pythonStream(raw, path)
}

// ParseYAMLValue reads text written as YAML ("[1, 2]" is a list, "7" a
// number); text that is not YAML, or a YAML timestamp, stays text.
func ParseYAMLValue(s string) any {
	var v any
	if err := yaml.Unmarshal([]byte(s), &v); err != nil {
		return s
	}
	p := plain(v)
	if _, isText := p.(string); isText {
		return s
	}
	return p
}

func (d *decoder) checkDynamic(v any) []CheckDynamic {
	list, _ := v.([]any)
	var out []CheckDynamic
	for i, e := range list {
		m, _, ok := d.component(e, fmt.Sprintf("check.dynamic_streams_check_configs[%d]", i), "DynamicStreamCheckConfig")
		if !ok {
			continue
		}
		name, _ := m["dynamic_stream_name"].(string)
		out = append(out, CheckDynamic{Name: name, Count: intOr(m["stream_count"], -1)})
	}
	return out
}

// intOr is an integer field's value, or def when it is absent.
func intOr(v any, def int) int {
	switch x := v.(type) {
	case int64:
		return int(x)
	case float64:
		return int(x)
	}
	return def
}
