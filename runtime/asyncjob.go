package runtime

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/protocol"
	"github.com/airbyte-go/source-declarative/runtime/extract"
	"github.com/airbyte-go/source-declarative/runtime/incremental"
	"github.com/airbyte-go/source-declarative/runtime/request"
)

// The reference's job settings: it waits 5 seconds between two rounds of
// polls, starts a failed or timed-out job again until it was tried 3 times
// (once in a test read), and gives a job 60 minutes (15 in a test read)
// without polling_job_timeout.
const (
	jobPollInterval      = 5 * time.Second
	jobAttempts          = 3
	jobDefaultTimeout    = 60
	jobTestReadTimeout   = 15
	jobPollIntervalEnv   = "SOURCE_DECLARATIVE_ASYNC_POLL_INTERVAL"
	jobTimeoutMinuteEnv  = "SOURCE_DECLARATIVE_ASYNC_TIMEOUT_MINUTE"
	jobResponseHeaderKey = "headers"
)

// asyncJob runs an AsyncRetriever's job for each slice of its stream: it
// creates the job, polls its status until status_mapping says it is done,
// reads every download target with the stream's (download) retriever and
// deletes the job. Jobs run one at a time per worker.
type asyncJob struct {
	m                                     *manifest.AsyncJob
	creation, polling, target, abort, del *builder
	statusPath, targetPath                []string
	timeout, interval                     time.Duration
	attempts                              int
}

// jobRun is one attempt of a job: the responses later requests see.
type jobRun struct {
	creation any // creation_response
	polling  any // polling_response, once completed
}

// newAsyncJob prepares the job requests of an AsyncRetriever stream. Tests
// shorten the waits with SOURCE_DECLARATIVE_ASYNC_POLL_INTERVAL (a Go
// duration: the wait between polls) and SOURCE_DECLARATIVE_ASYNC_TIMEOUT_MINUTE
// (what one minute of polling_job_timeout lasts).
func (r *Runner) newAsyncJob(st *manifest.Stream) (*asyncJob, error) {
	m := st.Retriever.Async
	j := &asyncJob{m: m, attempts: jobAttempts, interval: jobPollInterval}
	minutes, minute := int64(jobDefaultTimeout), time.Minute
	if r.Observer != nil {
		j.attempts, minutes = 1, jobTestReadTimeout
	}
	var err error
	if j.interval, err = envDuration(jobPollIntervalEnv, j.interval); err != nil {
		return nil, err
	}
	if minute, err = envDuration(jobTimeoutMinuteEnv, minute); err != nil {
		return nil, err
	}
	vars := r.vars(st.Retriever.Requester.Parameters, nil)
	if m.Timeout != nil {
		v, err := m.Timeout.Eval(vars)
		if err != nil {
			return nil, ConfigErr("%v", err) // the template error names polling_job_timeout
		}
		n, err := strconv.ParseInt(strings.TrimSpace(interp.String(v)), 10, 64)
		if err != nil || n < 0 {
			return nil, ConfigErr("%s.polling_job_timeout: %q is not a whole number of minutes", m.Path, interp.String(v))
		}
		if n > 0 { // 0 is the default, as in the reference
			minutes = n
		}
	}
	j.timeout = time.Duration(minutes) * minute
	for _, b := range []struct {
		req *manifest.Requester
		to  **builder
	}{{m.Creation, &j.creation}, {m.Polling, &j.polling}, {m.Target, &j.target}, {m.Abort, &j.abort}, {m.Delete, &j.del}} {
		if b.req == nil {
			continue
		}
		if *b.to, err = r.newBuilder(b.req, nil); err != nil {
			return nil, err
		}
	}
	if j.statusPath, err = interp.RenderEach(m.StatusPath, vars); err != nil {
		return nil, ConfigErr("%v", err) // the template error names the field_path
	}
	if j.targetPath, err = interp.RenderEach(m.TargetPath, vars); err != nil {
		return nil, ConfigErr("%v", err)
	}
	return j, nil
}

func envDuration(name string, def time.Duration) (time.Duration, error) {
	v := os.Getenv(name)
	if v == "" {
		return def, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, ConfigErr("%s: %q is not a duration", name, v)
	}
	return d, nil
}

// readJob runs the slice's job, starting a failed or timed-out one again
// as the reference does, then reads its downloads.
func (s *streamReader) readJob(ctx context.Context, sl *incremental.Slice, maxPages int, emit func([][]byte) error) error {
	status, run, err := s.settleJob(ctx, sl)
	if err != nil {
		return err
	}
	if status == manifest.JobIgnore {
		s.r.log("WARN", fmt.Sprintf("Stream %s: the job of slice %s said a status mapped to ignore: the slice is skipped", s.st.Name, jsonText(sl.Mapping())))
		return nil
	}
	return s.download(ctx, sl, run, maxPages, emit)
}

// settleJob runs the slice's job until it completes or is ignored, holding
// one of the run's places for jobs (jobPlaces) meanwhile.
func (s *streamReader) settleJob(ctx context.Context, sl *incremental.Slice) (string, *jobRun, error) {
	places := s.r.jobPlaces()
	select {
	case places <- struct{}{}:
		defer func() { <-places }()
	case <-ctx.Done():
		return "", nil, ctx.Err()
	}
	j := s.job
	for attempt := 1; ; attempt++ {
		status, run, err := s.runJob(ctx, sl)
		if err != nil {
			return "", nil, err
		}
		switch status {
		case manifest.JobCompleted, manifest.JobIgnore:
			return status, run, nil
		case manifest.JobTimeout:
			if err := s.jobRequest(ctx, j.abort, stepAbort, s.jobSlice(sl, run), nil); err != nil {
				s.r.log("WARN", fmt.Sprintf("Stream %s: the timed-out job could not be aborted: %v", s.st.Name, err))
			}
		}
		if attempt >= j.attempts {
			return "", nil, &Error{Failure: protocol.ConfigError, Message: fmt.Sprintf("stream %s: the job of slice %s did not complete: %s after %d attempt(s)", s.st.Name, jsonText(sl.Mapping()), status, attempt)}
		}
		s.r.log("WARN", fmt.Sprintf("Stream %s: the job of slice %s ended %s; starting it again (attempt %d of %d)", s.st.Name, jsonText(sl.Mapping()), status, attempt+1, j.attempts))
		if err := j.wait(ctx); err != nil {
			return "", nil, err
		}
	}
}

// jobPlaces are the places of the jobs running at once in the whole run:
// max_concurrent_async_job_count (a number or a template over the config),
// one without it, as Airbyte's JobTracker, which also takes one for a value
// below 1 or one that is not a number, with a WARN. A job holds its place
// from its creation until it completes (its downloads are read after) or
// fails for good.
func (r *Runner) jobPlaces() chan struct{} {
	r.jobsOnce.Do(func() {
		n := int64(1)
		if t := r.Source.AsyncJobLimit; t != nil {
			v, err := t.Eval(r.vars(nil, nil))
			text := strings.TrimSpace(interp.String(v))
			if err == nil {
				n, err = strconv.ParseInt(text, 10, 64)
			}
			switch {
			case err != nil:
				r.log("WARN", fmt.Sprintf("max_concurrent_async_job_count: %q is not a number; one job runs at a time", text))
				n = 1
			case n < 1:
				r.log("WARN", fmt.Sprintf("max_concurrent_async_job_count: %d is less than 1; one job runs at a time", n))
				n = 1
			}
		}
		r.jobs = make(chan struct{}, n)
	})
	return r.jobs
}

// runJob creates the job and polls it until it is no longer running; a job
// that could not be created counts as failed.
func (s *streamReader) runJob(ctx context.Context, sl *incremental.Slice) (string, *jobRun, error) {
	j := s.job
	run := &jobRun{}
	var created *request.Response
	if err := s.jobRequest(ctx, j.creation, stepCreate, sl, &created); err != nil {
		if FailureType(err) == protocol.ConfigError {
			return "", nil, err
		}
		s.r.log("WARN", fmt.Sprintf("Stream %s: the job could not be created: %v", s.st.Name, err))
		return manifest.JobFailed, nil, nil
	}
	var err error
	if run.creation, err = responseContext(created); err != nil {
		s.r.log("WARN", fmt.Sprintf("Stream %s: the job creation response cannot be read: %v", s.st.Name, err))
		return manifest.JobFailed, nil, nil
	}
	started := s.r.Now()
	for {
		if s.r.Now().Sub(started) > j.timeout {
			return manifest.JobTimeout, run, nil
		}
		var polled *request.Response
		if err := s.jobRequest(ctx, j.polling, stepPoll, s.jobSlice(sl, run), &polled); err != nil {
			return "", nil, err
		}
		status, err := j.status(polled)
		if err != nil {
			return "", nil, &Error{Failure: protocol.ConfigError, Message: fmt.Sprintf("stream %s: %v", s.st.Name, err)}
		}
		if status != manifest.JobRunning {
			if status == manifest.JobCompleted {
				if run.polling, err = responseContext(polled); err != nil {
					return "", nil, s.badResponse(polled, err)
				}
			}
			return status, run, nil
		}
		if err := j.wait(ctx); err != nil {
			return "", nil, err
		}
	}
}

// download reads every download target of a completed job, then deletes
// the job.
func (s *streamReader) download(ctx context.Context, sl *incremental.Slice, run *jobRun, maxPages int, emit func([][]byte) error) error {
	j := s.job
	targets := run.polling
	if j.target != nil {
		var resp *request.Response
		if err := s.jobRequest(ctx, j.target, stepTarget, &incremental.Slice{Extra: map[string]any{"polling_response": run.polling}}, &resp); err != nil {
			return err
		}
		targets = extract.DecodeJSON(resp.Body)
	}
	s.downloading = sl
	defer func() { s.downloading = nil }()
	emitted := false
	counted := func(records [][]byte) error {
		emitted = emitted || len(records) > 0
		return emit(records)
	}
	for _, target := range dpathValues(targets, j.targetPath) {
		if emitted && s.probe {
			break // a check needs one record; the job is still deleted
		}
		// The slice's request options go into no request, as in the reference.
		dsl := s.jobSlice(sl, run)
		dsl.Extra["download_target"] = target
		dsl.Extra["polling_response"] = run.polling
		if err := s.readSlice(ctx, dsl, maxPages, counted); err != nil {
			return err
		}
	}
	return s.jobRequest(ctx, j.del, stepDelete, s.jobSlice(sl, run), nil)
}

// jobSlice is the slice the job's requests after its creation see: the
// job's partition and cursor keys, without its request options, with
// creation_response among its extra fields.
func (s *streamReader) jobSlice(sl *incremental.Slice, run *jobRun) *incremental.Slice {
	extra := map[string]any{}
	for k, v := range sl.Extra {
		extra[k] = v
	}
	if run != nil {
		extra["creation_response"] = run.creation
	}
	return &incremental.Slice{Partition: sl.Partition, Cursor: sl.Cursor, Extra: extra}
}

// jobStep says what a job request is, for test reads: the kind and title
// Airbyte's builder shows it with ("" for a request it does not show).
type jobStep struct{ kind, title, description string }

var (
	stepCreate = jobStep{"ASYNC_CREATE", "Async Job -- Create", "Creates the report job on the API."}
	stepPoll   = jobStep{"ASYNC_POLL", "Async Job -- Polling", "Asks the API for the job's status."}
	stepTarget = jobStep{}
	stepAbort  = jobStep{"ASYNC_ABORT", "Async Job -- Abort", "Stops the job that ran out of time."}
	stepDelete = jobStep{"ASYNC_DELETE", "Async Job -- Delete", "Deletes the downloaded job."}
)

// jobRequest sends one request of the job (nothing for a nil builder); a
// response the error handler ignores is an error. With into, the response
// is kept there.
func (s *streamReader) jobRequest(ctx context.Context, b *builder, step jobStep, sl *incremental.Slice, into **request.Response) error {
	if b == nil {
		return nil
	}
	var parts *request.Parts
	resp, err := s.r.Client.SendChecked(ctx, func() (*http.Request, error) {
		p, err := b.build(ctx, pageRequest{token: b.pag.First(), slice: sl})
		if err != nil {
			return nil, err
		}
		parts = p
		return p.HTTP(ctx)
	}, b.policy, nil)
	if s.r.Observer != nil && step.kind != "" && parts != nil && resp != nil {
		s.r.Observer.Auxiliary(step.kind, b.req.Path, step.title, step.description, parts, resp)
	}
	if err != nil {
		return s.requestError(fmt.Errorf("%s: %w", b.req.Path, err))
	}
	if resp.Ignored {
		return &Error{Failure: protocol.SystemError, Message: fmt.Sprintf("stream %s: %s: the response (HTTP %d from %s) was ignored by the error handler; a job cannot go on without it", s.st.Name, b.req.Path, resp.Status, resp.URL)}
	}
	if into != nil {
		*into = resp
	}
	return nil
}

// status maps the status the polling response gives to a job status.
func (j *asyncJob) status(resp *request.Response) (string, error) {
	var api any
	if values := dpathValues(extract.DecodeJSON(resp.Body), j.statusPath); len(values) > 0 {
		api = values[0]
	}
	text := interp.String(api)
	if api == nil {
		text = "None" // as the reference names a missing status
	}
	status, ok := j.m.Statuses[text]
	if !ok {
		return "", fmt.Errorf("%s.status_mapping: the API status %q (from %s) is not in any of its lists; add it where it belongs", j.m.Path, text, resp.URL)
	}
	return status, nil
}

// wait is the pause between two polls, or before a job starts again.
func (j *asyncJob) wait(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(j.interval):
		return nil
	}
}

// responseContext is a job response as templates see it: its JSON object,
// with its headers under "headers" unless the body has that key.
func responseContext(resp *request.Response) (any, error) {
	obj, ok := extract.DecodeJSON(resp.Body).(map[string]any)
	if !ok {
		return nil, fmt.Errorf("HTTP %d from %s is not a JSON object: %s", resp.Status, resp.URL, request.BodyStart(resp.Body))
	}
	if _, taken := obj[jobResponseHeaderKey]; !taken {
		h := map[string]any{}
		for k, v := range resp.Header {
			h[k] = strings.Join(v, ", ")
			h[strings.ToLower(k)] = strings.Join(v, ", ")
		}
		obj[jobResponseHeaderKey] = h
	}
	return obj, nil
}

// dpathValues is what a DpathExtractor extracts from a decoded response:
// the values at the field path (a segment with *, ? or [ matches keys or
// items), a list found giving its items.
func dpathValues(v any, fieldPath []string) []any {
	cur := []any{v}
	for _, seg := range fieldPath {
		var next []any
		for _, c := range cur {
			switch x := c.(type) {
			case map[string]any:
				if !extract.IsGlob(seg) {
					if e, ok := x[seg]; ok {
						next = append(next, e)
					}
					continue
				}
				for _, k := range interp.SortedKeys(x) {
					if ok, _ := path.Match(seg, k); ok {
						next = append(next, x[k])
					}
				}
			case interp.List:
				if extract.IsGlob(seg) {
					next = append(next, x...)
				} else if i, err := strconv.Atoi(seg); err == nil && i >= 0 && i < len(x) {
					next = append(next, x[i])
				}
			}
		}
		cur = next
	}
	var out []any
	for _, c := range cur {
		switch x := c.(type) {
		case nil:
		case interp.List:
			out = append(out, x...)
		default:
			out = append(out, x)
		}
	}
	return out
}
