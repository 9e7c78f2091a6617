package manifest

import (
	"fmt"

	"github.com/airbyte-go/source-declarative/lang/interp"
)

// Stream is a DeclarativeStream.
type Stream struct {
	Name string
	Path string // manifest path, e.g. streams[0]
	// Condition, for a stream of a ConditionalStreams, must hold for the
	// config (and no parameters: the CDK gives it none, not even the
	// ConditionalStreams' own) for the stream to be part of the source;
	// nil for every other stream.
	Condition  *interp.Template
	PrimaryKey [][]string
	// SchemaLoaders give the stream's schema, merged when there are several;
	// none: the JSON file named after the stream, if there is one.
	SchemaLoaders   []*SchemaLoader
	Retriever       *Retriever
	Transformations []*Transformation // in manifest order
	// Incremental is the incremental_sync; nil for a full-refresh-only stream.
	Incremental *Incremental
	// FileUploader downloads the file of each record the stream emits; nil:
	// the stream transfers no files.
	FileUploader *FileUploader
	// MigrateLegacyState reads an incoming state in the legacy
	// per-partition form, {"<partition value>": {"<cursor field>": value}},
	// as the per-partition form (LegacyToPerPartitionStateMigration).
	MigrateLegacyState bool
	// Python, when set, is the custom component (a custom retriever,
	// requester, incremental sync, a router reading its parents, or one
	// inside a parent stream read so) that makes Airbyte's CDK read the whole
	// stream, in the components host; the stream then has only its name,
	// path and primary key here. PythonSchema, when set, is a custom
	// component in the schema_loader: the CDK gives the stream's schema.
	Python, PythonSchema *Custom
	// PythonAuth, for a stream the CDK reads whole, are the built-in
	// authenticators of its requesters and its parents', by stream name: a
	// request the CDK makes is authenticated by Go, so that a token is
	// refreshed by one process (nil: no authenticator). One Go cannot run
	// (a flow it does not implement) is not there: the CDK keeps its own.
	PythonAuth map[string]*Auth
	// PythonTestRead, on a stream Go reads with a custom authenticator (its
	// own or a parent's), is that authenticator: its token requests are
	// Python's, which only the CDK's builder shows among a test read's
	// auxiliary requests, so a test read of the stream is the CDK's.
	PythonTestRead *Custom
	// CustomStateMigrations are the stream's custom state_migrations, in
	// order, run by the CDK on the incoming state.
	CustomStateMigrations []*Custom
	// Delegation is set on the full_refresh_stream of a StateDelegatingStream
	// (statedelegating.go), the stream that stands for it; nil otherwise.
	Delegation *StateDelegation
}

// Retriever is a SimpleRetriever, or the download retriever of an
// AsyncRetriever (with Async set).
type Retriever struct {
	Requester *Requester
	Selector  *Selector
	Paginator *Paginator // nil: one request
	// PartitionRouter is nil for a stream read as one partition.
	PartitionRouter *PartitionRouter
	// IgnoreSlicerOnPages leaves the partition and cursor request options off
	// the requests after a slice's first page.
	IgnoreSlicerOnPages bool
	Decoder             *Decoder // nil: JsonDecoder
	// PaginationReset says how a slice's pages start again when the API
	// caps how deep pagination goes; nil: an error handler's
	// RESET_PAGINATION restarts them once, as RESET does.
	PaginationReset *PaginationReset
	// Async, for an AsyncRetriever, is the job each slice runs before its
	// downloads are read with the rest of the retriever; nil: a SimpleRetriever.
	Async *AsyncJob
}

// Pagination reset actions.
const (
	// ResetRestart reads the slice again from its first page, once.
	ResetRestart = "RESET"
	// ResetSplitUsingCursor starts the slice again at the newest cursor value
	// read in it (records must come in ascending cursor order).
	ResetSplitUsingCursor = "SPLIT_USING_CURSOR"
)

// PaginationReset is a SimpleRetriever's pagination_reset.
type PaginationReset struct {
	Path   string
	Action string // ResetRestart or ResetSplitUsingCursor
	// MaxRecords (limits.number_of_records) restarts the pages once this
	// many records were read in the current run of the slice; 0: no limit.
	MaxRecords int
}

// Selector is a RecordSelector with a DpathExtractor, or with custom
// components run by the components host.
type Selector struct {
	FieldPath []*interp.Template
	// CustomExtractor, CustomFilter and CustomNormalization, when set, are
	// custom components in place of the DpathExtractor, the RecordFilter and
	// the schema normalization.
	CustomExtractor, CustomFilter, CustomNormalization *Custom
	Filter                                             *interp.Template // nil: every record is kept
	FilterParams                                       map[string]any   // the record filter's $parameters
	// Normalize casts record values to the stream schema's types
	// (schema_normalization: Default).
	Normalize bool
	// TransformBeforeFiltering runs the transformations before the record
	// filter; true by default for client-side incremental streams.
	TransformBeforeFiltering bool
	// Expander splits each extracted record into the items of its nested
	// lists, before the filter; nil: records are taken as extracted.
	Expander *RecordExpander
}

// stream decodes a stream wherever Airbyte takes a DeclarativeStream or a
// StateDelegatingStream: in streams, a ParentStreamConfig's stream and a
// dynamic stream's template.
func (d *decoder) stream(v any, path string) *Stream {
	return d.streamOf(v, path, "DeclarativeStream", "StateDelegatingStream")
}

// streamOf decodes a stream of one of the allowed types.
func (d *decoder) streamOf(v any, path string, allowed ...string) *Stream {
	if d.parts.streams[path] != nil {
		return d.pythonStream(v, path)
	}
	m, typ, ok := d.component(v, path, allowed...)
	if !ok {
		return nil
	}
	if typ == "StateDelegatingStream" {
		return d.stateDelegatingStream(m, path)
	}
	st := &Stream{Path: path, PythonTestRead: d.parts.auths[path]}
	st.Name, _ = m["name"].(string)
	if st.Name == "" {
		d.fail(path+".name", "is required")
	}
	st.PrimaryKey = primaryKey(m["primary_key"])
	if c := d.parts.schemas[path]; c != nil {
		st.PythonSchema = c
	} else {
		st.SchemaLoaders = d.schemaLoaders(m["schema_loader"], path+".schema_loader")
	}
	st.Transformations = d.transformations(m["transformations"], path+".transformations")
	st.Retriever = d.retriever(m["retriever"], path+".retriever")
	if x, ok := m["file_uploader"]; ok && x != nil && !isFalsy(x) {
		st.FileUploader = d.fileUploader(x, st, path+".file_uploader")
	}
	if inc, ok := m["incremental_sync"]; ok && inc != nil && !isFalsy(inc) {
		st.Incremental = d.incremental(inc, path+".incremental_sync")
	}
	d.checkLazyRead(st)
	d.checkCountCursorRouter(st)
	d.checkAsync(st)
	d.checkPaginationReset(st, m)
	if x, ok := m["state_migrations"]; ok && x != nil && !isFalsy(x) {
		st.MigrateLegacyState = d.stateMigrations(x, st, path+".state_migrations")
	}
	if st.Incremental.ClientSideIncremental() && st.Retriever != nil && st.Retriever.Selector != nil {
		rs, _ := m["retriever"].(map[string]any)
		sel, _ := rs["record_selector"].(map[string]any)
		if _, explicit := sel["transform_before_filtering"]; !explicit {
			st.Retriever.Selector.TransformBeforeFiltering = true
		}
	}
	return st
}

// pythonStream is a stream Airbyte's CDK reads whole (Stream.Python).
func (d *decoder) pythonStream(v any, path string) *Stream {
	m, _ := v.(map[string]any)
	st := &Stream{Path: path, Python: d.parts.streams[path], PythonSchema: d.parts.streams[path]}
	st.Name, _ = m["name"].(string)
	if st.Name == "" {
		d.fail(path+".name", "is required")
	}
	st.PrimaryKey = primaryKey(m["primary_key"])
	st.PythonAuth = map[string]*Auth{}
	d.pythonAuths(m, path, st.Name, st.PythonAuth)
	return st
}

// pythonAuths decodes the built-in authenticators of a stream the CDK reads
// whole, by the name of the stream (it or a parent) whose requester has it:
// Go's authenticator serves them (the CDK asks it per request). A
// file_uploader's is not the stream's: its requests get the retriever's,
// as every request the CDK makes for the stream does.
func (d *decoder) pythonAuths(v any, path, stream string, into map[string]*Auth) {
	switch x := v.(type) {
	case []any:
		for i, e := range x {
			d.pythonAuths(e, index(path, i), stream, into)
		}
	case map[string]any:
		if isSchemaObject(x) {
			return
		}
		if x["type"] == "DeclarativeStream" {
			stream, _ = x["name"].(string)
		}
		for _, k := range interp.SortedKeys(x) {
			if k == "$parameters" || k == "schema" || k == "schema_loader" || k == "file_uploader" {
				continue
			}
			if am, ok := x[k].(map[string]any); ok && k == "authenticator" && !isCustom(am) {
				// One Go cannot run stays the CDK's.
				sub := &decoder{parts: d.parts}
				a := sub.auth(am, join(path, k), allAuth)
				sub.withURLBase(a, x["url_base"], path) // a legacy session's paths are under it
				if a != nil {
					if a.URLBase = sub.tpl(x, "url_base", path); a.URLBase == nil {
						a.URLBase = sub.tpl(x, "url", path)
					}
				}
				if len(sub.errs) == 0 {
					if _, seen := into[stream]; !seen {
						into[stream] = a
					}
				}
				continue
			}
			d.pythonAuths(x[k], join(path, k), stream, into)
		}
	}
}

// primaryKey reads a stream's primary_key: a field, a list of fields, or a
// list of field paths.
func primaryKey(v any) [][]string {
	var out [][]string
	switch pk := v.(type) {
	case string:
		if pk != "" {
			out = [][]string{{pk}}
		}
	case []any:
		for _, e := range pk {
			if l, ok := e.([]any); ok {
				out = append(out, strList(l))
			} else {
				out = append(out, []string{interp.String(e)})
			}
		}
	}
	return out
}

func (d *decoder) retriever(v any, path string) *Retriever {
	m, typ, ok := d.component(v, path, "SimpleRetriever", "AsyncRetriever")
	if !ok {
		return nil
	}
	if typ == "AsyncRetriever" {
		return d.asyncRetriever(m, path)
	}
	r := &Retriever{}
	if pr, ok := m["partition_router"]; ok && pr != nil && !isFalsy(pr) {
		r.PartitionRouter = d.partitionRouter(pr, path+".partition_router")
	}
	if x, ok := m["pagination_reset"]; ok && x != nil {
		r.PaginationReset = d.paginationReset(x, path+".pagination_reset")
	}
	r.IgnoreSlicerOnPages, _ = m["ignore_stream_slicer_parameters_on_paginated_requests"].(bool)
	r.Decoder = d.responseDecoder(m["decoder"], path+".decoder", retrieverDecoders)
	r.Requester = d.requester(m["requester"], path+".requester", allAuth)
	r.Selector = d.selector(m["record_selector"], path+".record_selector")
	if p, ok := m["paginator"]; ok && p != nil {
		r.Paginator = d.paginator(p, path+".paginator")
	}
	if r.Paginator != nil && r.Requester != nil {
		d.checkCollisions(r.Paginator)
	}
	if r.Requester != nil && r.Requester.Properties != nil && r.PartitionRouter != nil && r.PartitionRouter.Substream != nil {
		for _, pc := range r.PartitionRouter.Substream.Parents {
			if len(pc.LazyReadPointer) > 0 {
				d.fail(pc.Path+".lazy_read_pointer", "cannot be used with the QueryProperties at %s: a first page taken from the parent record was not requested per chunk of properties (Airbyte fails such a stream when it runs)", r.Requester.Properties.Path)
			}
		}
	}
	if r.Paginator != nil && !r.Decoder.Paginates() {
		d.fail(path+".decoder", "%s cannot read pages of a DefaultPaginator (with pagination: JsonDecoder, XmlDecoder or GzipDecoder of JsonDecoder, as in Airbyte's runtime)", r.Decoder.Name())
	}
	return r
}

func (d *decoder) selector(v any, path string) *Selector {
	m, _, ok := d.component(v, path, "RecordSelector")
	if !ok {
		return nil
	}
	s := &Selector{}
	s.TransformBeforeFiltering, _ = m["transform_before_filtering"].(bool)
	s.CustomNormalization = d.custom(m["schema_normalization"], path+".schema_normalization")
	if sn, ok := m["schema_normalization"].(string); ok && sn != "None" && sn != "Default" {
		d.fail(path+".schema_normalization", "%q is not a schema normalization (None or Default)", sn)
	}
	if s.CustomExtractor = d.custom(m["extractor"], path+".extractor"); s.CustomExtractor == nil {
		d.dpathExtractor(s, m["extractor"], path+".extractor")
	}
	if f, ok := m["record_filter"]; ok && f != nil {
		if s.CustomFilter = d.custom(f, path+".record_filter"); s.CustomFilter == nil {
			d.recordFilter(s, f, path+".record_filter")
		}
	}
	s.Normalize = m["schema_normalization"] == "Default"
	return s
}

func (d *decoder) dpathExtractor(s *Selector, v any, path string) {
	ex, _, ok := d.component(v, path, "DpathExtractor")
	if !ok {
		return
	}
	if x, ok := ex["record_expander"]; ok && x != nil {
		s.Expander = d.recordExpander(x, path+".record_expander")
	}
	for i, seg := range ex["field_path"].([]any) {
		s.FieldPath = append(s.FieldPath, d.value(seg, fmt.Sprintf("%s.field_path[%d]", path, i)))
	}
}

func (d *decoder) recordFilter(s *Selector, v any, path string) {
	if fm, _, ok := d.component(v, path, "RecordFilter"); ok {
		// No condition: no filter. (The reference drops every record.)
		s.Filter = d.condition(fm, path)
		s.FilterParams, _ = fm["$parameters"].(map[string]any)
	}
}

func (d *decoder) paginationReset(v any, path string) *PaginationReset {
	m, _, ok := d.component(v, path, "PaginationReset")
	if !ok {
		return nil
	}
	pr := &PaginationReset{Path: path, Action: str(m, "action", "")}
	if x, ok := m["limits"]; ok && x != nil {
		if lm, _, ok := d.component(x, path+".limits", "PaginationResetLimits"); ok {
			n, _ := lm["number_of_records"].(int64)
			pr.MaxRecords = int(n)
		}
	}
	return pr
}

// checkPaginationReset refuses what Airbyte refuses with a pagination_reset
// (limits with a record filter, whose dropped records would not count) and
// what we cannot run the same way: a counting cursor's slice to narrow, a
// lazily read partition. A SPLIT_USING_CURSOR without cursor restarts as
// RESET does, as in Airbyte, with a warning.
func (d *decoder) checkPaginationReset(st *Stream, raw map[string]any) {
	if st.Retriever == nil || st.Retriever.PaginationReset == nil {
		return
	}
	pr := st.Retriever.PaginationReset
	rs, _ := raw["retriever"].(map[string]any)
	sel, _ := rs["record_selector"].(map[string]any)
	reset, _ := rs["pagination_reset"].(map[string]any)
	if f, ok := sel["record_filter"]; ok && f != nil && reset["limits"] != nil {
		d.fail(pr.Path+".limits", "cannot be used with a record_selector.record_filter: records the filter drops would not count towards number_of_records (Airbyte refuses it too)")
	}
	if pr.Action == ResetSplitUsingCursor {
		switch inc := st.Incremental; {
		case inc == nil:
			d.warn(pr.Path+".action", "SPLIT_USING_CURSOR on a stream without incremental_sync restarts the slice from its first page, as RESET does")
		case inc.Datetime == nil:
			d.fail(pr.Path+".action", "SPLIT_USING_CURSOR needs a DatetimeBasedCursor to narrow the slice with; the stream's incremental_sync (%s) is not one: use RESET", inc.Path)
		}
	}
	if pr := st.Retriever.PartitionRouter; pr != nil && pr.Substream != nil {
		for _, pc := range pr.Substream.Parents {
			if len(pc.LazyReadPointer) > 0 {
				d.fail(st.Retriever.PaginationReset.Path, "cannot be used with %s.lazy_read_pointer: Airbyte's LazySimpleRetriever does not reset pagination", pc.Path)
			}
		}
	}
}
