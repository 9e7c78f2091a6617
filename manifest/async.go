package manifest

import (
	"fmt"

	"github.com/airbyte-go/source-declarative/lang/interp"
)

// AsyncJob is what an AsyncRetriever adds to the download retriever it
// becomes: the report job run for each slice (create it, poll its status
// until it is done, download every target, delete it).
type AsyncJob struct {
	Path     string // the AsyncRetriever's manifest path
	Creation *Requester
	Polling  *Requester
	// Target, when set, is requested (with polling_response) for the
	// response the download targets are extracted from; nil: the polling
	// response is.
	Target *Requester
	Abort  *Requester // nil: a timed-out job is not aborted
	Delete *Requester // nil: a downloaded job is not deleted
	// StatusPath and TargetPath are the field paths of status_extractor
	// and download_target_extractor.
	StatusPath, TargetPath []*interp.Template
	// Statuses maps each API status to JobRunning, JobCompleted,
	// JobFailed, JobTimeout or JobIgnore.
	Statuses map[string]string
	// Timeout is polling_job_timeout, in minutes (a template over the
	// config); nil: the reference's default.
	Timeout *interp.Template
}

// The job statuses a status_mapping maps API statuses to.
const (
	JobRunning   = "running"
	JobCompleted = "completed"
	JobFailed    = "failed"
	JobTimeout   = "timeout"
	JobIgnore    = "ignore"
)

// asyncRetriever decodes an AsyncRetriever into the retriever of its
// downloads (download_requester, download_paginator, download_decoder, and
// a record selector extracting with download_extractor and filtering and
// transforming as record_selector says), with the job in Async.
func (d *decoder) asyncRetriever(m map[string]any, path string) *Retriever {
	r := &Retriever{}
	job := &AsyncJob{Path: path}
	r.Async = job
	if pr, ok := m["partition_router"]; ok && pr != nil && !isFalsy(pr) {
		r.PartitionRouter = d.partitionRouter(pr, path+".partition_router")
	}
	if v, ok := m["decoder"]; ok && v != nil {
		if dec := d.responseDecoder(v, path+".decoder", retrieverDecoders); dec != nil && dec.Type != JSONDecoder {
			d.fail(path+".decoder", "%s is not supported for the job's responses: creation_response and polling_response are read as JSON (as Airbyte reads them); use JsonDecoder", dec.Name())
		}
	}
	job.Creation = d.requester(m["creation_requester"], path+".creation_requester", allAuth)
	job.Polling = d.requester(m["polling_requester"], path+".polling_requester", allAuth)
	targetKey, extractorKey := "download_target_requester", "download_target_extractor"
	if _, ok := m[targetKey]; !ok {
		if _, old := m["url_requester"]; old {
			targetKey = "url_requester" // the name older CDKs gave it
		}
	}
	if _, ok := m[extractorKey]; !ok {
		if _, old := m["urls_extractor"]; old {
			extractorKey = "urls_extractor"
		}
	}
	if v, ok := m[targetKey]; ok && v != nil {
		job.Target = d.requester(v, join(path, targetKey), allAuth)
	}
	if v, ok := m["abort_requester"]; ok && v != nil {
		job.Abort = d.requester(v, path+".abort_requester", allAuth)
	}
	if v, ok := m["delete_requester"]; ok && v != nil {
		job.Delete = d.requester(v, path+".delete_requester", allAuth)
	}
	job.StatusPath = d.dpath(m["status_extractor"], path+".status_extractor")
	if v, ok := m[extractorKey]; ok && v != nil {
		job.TargetPath = d.dpath(v, join(path, extractorKey))
	} else {
		d.fail(path+".download_target_extractor", "is required: it gives the URLs (or ids) to download from the polling response (or download_target_requester's); Airbyte fails without it")
	}
	job.Statuses = d.statusMapping(m["status_mapping"], path+".status_mapping")
	job.Timeout = d.tpl(m, "polling_job_timeout", path)

	r.Requester = d.requester(m["download_requester"], path+".download_requester", allAuth)
	r.Decoder = d.responseDecoder(m["download_decoder"], path+".download_decoder", retrieverDecoders)
	if p, ok := m["download_paginator"]; ok && p != nil {
		r.Paginator = d.paginator(p, path+".download_paginator")
	}
	if r.Paginator != nil && !r.Decoder.Paginates() {
		d.fail(path+".download_decoder", "%s cannot read pages of a DefaultPaginator (with pagination: JsonDecoder, XmlDecoder or GzipDecoder of JsonDecoder, as in Airbyte's runtime)", r.Decoder.Name())
	}
	r.Selector = d.selector(m["record_selector"], path+".record_selector")
	if r.Selector != nil {
		// Airbyte only filters and transforms with record_selector: the
		// records come from download_extractor (all of the body without it).
		if len(r.Selector.FieldPath) > 0 || r.Selector.Expander != nil {
			d.warn(path+".record_selector.extractor", "is not used by an AsyncRetriever (as in Airbyte): records are extracted by download_extractor")
		}
		r.Selector.FieldPath, r.Selector.Expander = nil, nil
		if v, ok := m["download_extractor"]; ok && v != nil {
			if ex, _, ok := d.component(v, path+".download_extractor", "DpathExtractor"); ok {
				if x, ok := ex["record_expander"]; ok && x != nil {
					r.Selector.Expander = d.recordExpander(x, path+".download_extractor.record_expander")
				}
				r.Selector.FieldPath = d.dpathSegments(ex, path+".download_extractor")
			}
		}
	}
	for _, p := range requestOptionPaths(r.PartitionRouter) {
		d.warn(p, "is not sent by an AsyncRetriever (Airbyte does not send it either): put the partition in the job's requests with a template such as {{ stream_partition.<field> }}")
	}
	return r
}

// dpath decodes a DpathExtractor's field path.
func (d *decoder) dpath(v any, path string) []*interp.Template {
	ex, _, ok := d.component(v, path, "DpathExtractor")
	if !ok {
		return nil
	}
	if x, ok := ex["record_expander"]; ok && x != nil {
		d.fail(path+".record_expander", "is not supported on this extractor (it extracts values, not records)")
	}
	return d.dpathSegments(ex, path)
}

func (d *decoder) dpathSegments(ex map[string]any, path string) []*interp.Template {
	var out []*interp.Template
	for i, seg := range listOf(ex["field_path"]) {
		out = append(out, d.value(seg, fmt.Sprintf("%s.field_path[%d]", path, i)))
	}
	return out
}

// statusMapping decodes an AsyncJobStatusMap: each API status maps to one
// job status.
func (d *decoder) statusMapping(v any, path string) map[string]string {
	m, _, ok := d.component(v, path, "AsyncJobStatusMap")
	if !ok {
		return nil
	}
	out := map[string]string{}
	for _, status := range []string{JobRunning, JobCompleted, JobFailed, JobTimeout, JobIgnore} {
		for i, api := range listOf(m[status]) {
			s := interp.String(api)
			if prev, dup := out[s]; dup {
				d.fail(fmt.Sprintf("%s.%s[%d]", path, status, i), "API status %q is already mapped to %s: each API status goes in one list (Airbyte refuses it too)", s, prev)
			}
			out[s] = status
		}
	}
	return out
}

// requestOptionPaths lists the manifest paths of a router's request options.
func requestOptionPaths(r *PartitionRouter) []string {
	if r == nil {
		return nil
	}
	var out []string
	if r.List != nil && r.List.RequestOption != nil {
		out = append(out, r.List.RequestOption.Path)
	}
	if r.Substream != nil {
		for _, pc := range r.Substream.Parents {
			if pc.RequestOption != nil {
				out = append(out, pc.RequestOption.Path)
			}
		}
	}
	if r.Union != nil {
		for _, c := range r.Union.Routers {
			out = append(out, requestOptionPaths(c)...)
		}
	}
	for _, c := range r.Product {
		out = append(out, requestOptionPaths(c)...)
	}
	return out
}

// checkAsync refuses what an AsyncRetriever stream cannot run (a parent's
// lazy_read_pointer, query properties, which only a SimpleRetriever reads
// in Airbyte) and warns that its cursor request options are not sent:
// Airbyte puts neither the cursor's nor the partition's values into the
// job's requests, only into templates.
func (d *decoder) checkAsync(st *Stream) {
	r := st.Retriever
	if r == nil || r.Async == nil {
		return
	}
	if pr := r.PartitionRouter; pr != nil && pr.Substream != nil {
		for _, pc := range pr.Substream.Parents {
			if len(pc.LazyReadPointer) > 0 {
				d.fail(pc.Path+".lazy_read_pointer", "is not supported with an AsyncRetriever (Airbyte reads lazily only with a SimpleRetriever): remove it")
			}
		}
	}
	for _, req := range []*Requester{r.Requester, r.Async.Creation, r.Async.Polling, r.Async.Target, r.Async.Abort, r.Async.Delete} {
		if req != nil && req.Properties != nil {
			d.fail(req.Properties.Path, "QueryProperties are not supported in an AsyncRetriever's requests (Airbyte reads them only with a SimpleRetriever)")
		}
	}
	if st.Incremental == nil {
		return
	}
	var opts []*RequestOption
	if c := st.Incremental.Datetime; c != nil {
		opts = append(opts, c.StartOption, c.EndOption)
	}
	if c := st.Incremental.Count; c != nil {
		opts = append(opts, c.StartOption)
	}
	for _, o := range opts {
		if o != nil {
			d.warn(o.Path, "is not sent by an AsyncRetriever (Airbyte does not send it either): put the slice in the job's requests with a template such as {{ stream_interval.start_time }}")
		}
	}
}

// simpleRetriever decodes a retriever where only a SimpleRetriever runs
// here (a schema loader's, a components resolver's, a properties
// endpoint's): an AsyncRetriever there is refused with its path.
func (d *decoder) simpleRetriever(v any, path string) *Retriever {
	if m, ok := v.(map[string]any); ok && m["type"] == "AsyncRetriever" {
		d.fail(path, "AsyncRetriever is not supported here (supported: SimpleRetriever)")
		return nil
	}
	return d.retriever(v, path)
}
