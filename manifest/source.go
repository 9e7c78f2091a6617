package manifest

import (
	"fmt"

	"github.com/airbyte-go/source-declarative/lang/interp"
)

// Source is a decoded DeclarativeSource.
type Source struct {
	Version        string
	Streams        []*Stream
	DynamicStreams []*DynamicStream // streams made when the stream list is built (dynamic.go)
	CheckStreams   []string
	CheckDynamic   []CheckDynamic // streams of dynamic streams that check reads
	CheckCount     int            // CheckDynamicStream: check reads the first streams, this many
	// CheckSkipsReads (CheckDynamicStream's use_check_availability: false):
	// check makes the streams and reads none of them.
	CheckSkipsReads  bool
	Spec             map[string]any    // the manifest's spec block, nil when absent
	ConfigRules      *ConfigRules      // the spec's config_normalization_rules, nil when absent
	ConcurrencyLevel *ConcurrencyLevel // nil: the reference's default
	APIBudget        *APIBudget        // nil: requests are not rate limited
	Resolved         map[string]any    // the manifest after $ref and $parameters resolution
	// AsyncJobLimit is max_concurrent_async_job_count: how many
	// AsyncRetriever jobs run at once in the whole sync (nil: one).
	AsyncJobLimit *interp.Template
	// Warnings name what the manifest says that is ignored (fields Airbyte's
	// schema allows but no component here reads), one line each with its path.
	Warnings []string
	// Custom are the custom Python components of the manifest, in the order
	// found; CustomConfig those of the spec's config_normalization_rules (the
	// CDK then runs the rules, package components).
	Custom, CustomConfig []*Custom
	// Folder is where the manifest file is (see Folder), for the schema files
	// it names; set by the caller of Load.
	Folder string
}

// Stream returns the stream named name, or nil.
func (s *Source) Stream(name string) *Stream {
	for _, st := range s.Streams {
		if st.Name == name {
			return st
		}
	}
	return nil
}

func (d *decoder) source(m map[string]any) *Source {
	src := &Source{}
	m, _, ok := d.component(m, "manifest", "DeclarativeSource")
	if !ok {
		if _, has := d.errsFor("manifest"); !has && len(d.errs) == 0 {
			d.fail("manifest", "not a DeclarativeSource")
		}
		return src
	}
	src.Version, _ = m["version"].(string)
	if src.Version != "" {
		d.version(src.Version)
	}
	if ds, ok := m["dynamic_streams"]; ok {
		src.DynamicStreams = d.dynamicStreams(ds)
	}
	names := map[string]string{}       // unconditional streams
	conditional := map[string]string{} // streams of ConditionalStreams
	streams, _ := m["streams"].([]any)
	for i, s := range streams {
		path := index("streams", i)
		if isConditionalStreams(s) {
			for _, st := range d.conditionalStreams(s, path) {
				conditional[st.Name] = st.Path
				src.Streams = append(src.Streams, st)
			}
			continue
		}
		st := d.stream(s, path)
		if st == nil {
			continue
		}
		if prev, dup := names[st.Name]; dup {
			d.fail(path+".name", "stream name %q is already used by %s", st.Name, prev)
		}
		names[st.Name] = path
		src.Streams = append(src.Streams, st)
	}
	for name, path := range conditional {
		if _, ok := names[name]; !ok {
			names[name] = path
		}
	}
	if check, typ, ok := d.component(m["check"], "check", "CheckStream", "CheckDynamicStream"); ok {
		if typ == "CheckDynamicStream" {
			src.CheckCount = intOr(check["stream_count"], 0)
			src.CheckSkipsReads = check["use_check_availability"] == false
		}
		src.CheckStreams = strList(check["stream_names"])
		src.CheckDynamic = d.checkDynamic(check["dynamic_streams_check_configs"])
		for i, n := range src.CheckStreams {
			if _, ok := names[n]; !ok && len(names) > 0 && len(src.DynamicStreams) == 0 {
				d.fail(fmt.Sprintf("check.stream_names[%d]", i), "stream %q is not defined in streams", n)
			}
		}
	}
	if spec, ok := m["spec"]; ok {
		if sm, _, ok := d.component(spec, "spec", "Spec"); ok {
			src.Spec = sm
			// Custom rules among them: the CDK runs them all (Source.CustomConfig).
			if x, ok := sm["config_normalization_rules"]; ok && x != nil && len(d.parts.config) == 0 {
				src.ConfigRules = d.configRules(x, "spec.config_normalization_rules")
			}
		}
	}
	if cl, ok := m["concurrency_level"]; ok && cl != nil {
		src.ConcurrencyLevel = d.concurrencyLevel(cl)
	}
	if b, ok := m["api_budget"]; ok && b != nil {
		src.APIBudget = d.apiBudget(b, "api_budget")
	}
	src.AsyncJobLimit = d.tpl(m, "max_concurrent_async_job_count", "")
	return src
}
