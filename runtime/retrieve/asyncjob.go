package retrieve

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/protocol"
	"github.com/airbyte-go/source-declarative/runtime/extract"
	"github.com/airbyte-go/source-declarative/runtime/failure"
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

// asyncJob is the Retriever of an AsyncRetriever: for each slice it creates
// the job, polls its status until status_mapping says it is done, reads
// every download target with the stream's (download) retriever, p, and
// deletes the job. Jobs run one at a time per worker.
type asyncJob struct {
	*jobSpec
	p *pages
}

// jobSpec is an AsyncRetriever's job requests, shared by its workers.
type jobSpec struct {
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
func newAsyncJob(p *pages) (*asyncJob, error) {
	env, st := p.env, p.st
	m := st.Retriever.Async
	j := &jobSpec{m: m, attempts: jobAttempts, interval: jobPollInterval}
	minutes, minute := int64(jobDefaultTimeout), time.Minute
	if env.Observer != nil {
		j.attempts, minutes = 1, jobTestReadTimeout
	}
	var err error
	if j.interval, err = envDuration(jobPollIntervalEnv, j.interval); err != nil {
		return nil, err
	}
	if minute, err = envDuration(jobTimeoutMinuteEnv, minute); err != nil {
		return nil, err
	}
	vars := env.BuildVars(st.Retriever.Requester.Parameters)
	if m.Timeout != nil {
		v, err := m.Timeout.Eval(env.BuildVars(nil)) // the CDK gives it no parameters
		if err != nil {
			return nil, failure.Config("%v", err) // the template error names polling_job_timeout
		}
		n, err := strconv.ParseInt(strings.TrimSpace(interp.String(v)), 10, 64)
		if err != nil || n < 0 {
			return nil, failure.Config("%s.polling_job_timeout: %q is not a whole number of minutes", m.Path, interp.String(v))
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
		if *b.to, err = newBuilder(env, b.req, nil); err != nil {
			return nil, err
		}
	}
	if j.statusPath, err = interp.RenderEach(m.StatusPath, vars); err != nil {
		return nil, failure.Config("%v", err) // the template error names the field_path
	}
	if j.targetPath, err = interp.RenderEach(m.TargetPath, vars); err != nil {
		return nil, failure.Config("%v", err)
	}
	return &asyncJob{jobSpec: j, p: p}, nil
}

func envDuration(name string, def time.Duration) (time.Duration, error) {
	v := os.Getenv(name)
	if v == "" {
		return def, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, failure.Config("%s: %q is not a duration", name, v)
	}
	return d, nil
}

// Read runs the slice's job, starting a failed or timed-out one again
// as the reference does, then reads its downloads.
func (a *asyncJob) Read(ctx context.Context, sl *incremental.Slice, maxPages int, emit Emit) error {
	status, run, err := a.settleJob(ctx, sl)
	if err != nil {
		return err
	}
	if status == manifest.JobIgnore {
		a.p.env.Log("WARN", fmt.Sprintf("Stream %s: the job of slice %s said a status mapped to ignore: the slice is skipped", a.p.st.Name, mappingText(sl)))
		return nil
	}
	return a.download(ctx, sl, run, maxPages, emit)
}

// settleJob runs the slice's job until it completes or is ignored, holding
// one of the run's places for jobs (jobPlaces) meanwhile.
func (a *asyncJob) settleJob(ctx context.Context, sl *incremental.Slice) (string, *jobRun, error) {
	places := a.p.env.Jobs.places(a.p.env)
	select {
	case places <- struct{}{}:
		defer func() { <-places }()
	case <-ctx.Done():
		return "", nil, ctx.Err()
	}
	j := a.jobSpec
	for attempt := 1; ; attempt++ {
		status, run, err := a.runJob(ctx, sl)
		if err != nil {
			return "", nil, err
		}
		switch status {
		case manifest.JobCompleted, manifest.JobIgnore:
			return status, run, nil
		case manifest.JobTimeout:
			if err := a.jobRequest(ctx, j.abort, stepAbort, a.jobSlice(sl, run), nil); err != nil {
				a.p.env.Log("WARN", fmt.Sprintf("Stream %s: the timed-out job could not be aborted: %v", a.p.st.Name, err))
			}
		}
		if attempt >= j.attempts {
			return "", nil, &failure.Error{Failure: protocol.ConfigError, Message: fmt.Sprintf("stream %s: the job of slice %s did not complete: %s after %d attempt(s)", a.p.st.Name, mappingText(sl), status, attempt)}
		}
		a.p.env.Log("WARN", fmt.Sprintf("Stream %s: the job of slice %s ended %s; starting it again (attempt %d of %d)", a.p.st.Name, mappingText(sl), status, attempt+1, j.attempts))
		if err := j.wait(ctx); err != nil {
			return "", nil, err
		}
	}
}

// JobPlaces are the places of the jobs running at once in the whole run:
// max_concurrent_async_job_count (a number or a template over the config),
// one without it, as Airbyte's JobTracker, which also takes one for a value
// below 1 or one that is not a number, with a WARN. A job holds its place
// from its creation until it completes (its downloads are read after) or
// fails for good.
type JobPlaces struct {
	Limit *interp.Template // max_concurrent_async_job_count (nil: none)
	once  sync.Once
	ch    chan struct{}
}

// places makes the places on first use.
func (jp *JobPlaces) places(env *Env) chan struct{} {
	jp.once.Do(func() {
		n := int64(1)
		if t := jp.Limit; t != nil {
			v, err := t.Eval(env.BuildVars(nil))
			text := strings.TrimSpace(interp.String(v))
			if err == nil {
				n, err = strconv.ParseInt(text, 10, 64)
			}
			switch {
			case err != nil:
				env.Log("WARN", fmt.Sprintf("max_concurrent_async_job_count: %q is not a number; one job runs at a time", text))
				n = 1
			case n < 1:
				env.Log("WARN", fmt.Sprintf("max_concurrent_async_job_count: %d is less than 1; one job runs at a time", n))
				n = 1
			}
		}
		jp.ch = make(chan struct{}, n)
	})
	return jp.ch
}

// runJob creates the job and polls it until it is no longer running; a job
// that could not be created counts as failed.
func (a *asyncJob) runJob(ctx context.Context, sl *incremental.Slice) (string, *jobRun, error) {
	j := a.jobSpec
	run := &jobRun{}
	var created *request.Response
	if err := a.jobRequest(ctx, j.creation, stepCreate, sl, &created); err != nil {
		if failure.Type(err) == protocol.ConfigError {
			return "", nil, err
		}
		a.p.env.Log("WARN", fmt.Sprintf("Stream %s: the job could not be created: %v", a.p.st.Name, err))
		return manifest.JobFailed, nil, nil
	}
	var err error
	if run.creation, err = responseContext(created); err != nil {
		a.p.env.Log("WARN", fmt.Sprintf("Stream %s: the job creation response cannot be read: %v", a.p.st.Name, err))
		return manifest.JobFailed, nil, nil
	}
	started := a.p.env.Now()
	for {
		if a.p.env.Now().Sub(started) > j.timeout {
			return manifest.JobTimeout, run, nil
		}
		var polled *request.Response
		if err := a.jobRequest(ctx, j.polling, stepPoll, a.jobSlice(sl, run), &polled); err != nil {
			return "", nil, err
		}
		status, err := j.status(polled)
		if err != nil {
			return "", nil, &failure.Error{Failure: protocol.ConfigError, Message: fmt.Sprintf("stream %s: %v", a.p.st.Name, err)}
		}
		if status != manifest.JobRunning {
			if status == manifest.JobCompleted {
				if run.polling, err = responseContext(polled); err != nil {
					return "", nil, a.p.badResponse(polled, err)
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
func (a *asyncJob) download(ctx context.Context, sl *incremental.Slice, run *jobRun, maxPages int, emit Emit) error {
	j := a.jobSpec
	targets := run.polling
	if j.target != nil {
		var resp *request.Response
		if err := a.jobRequest(ctx, j.target, stepTarget, &incremental.Slice{Extra: map[string]any{"polling_response": run.polling}}, &resp); err != nil {
			return err
		}
		targets = extract.DecodeJSON(resp.Body)
	}
	var stop error
	for _, target := range dpathValues(targets, j.targetPath) {
		// The slice's request options go into no request, as in the reference.
		dsl := a.jobSlice(sl, run)
		dsl.Extra["download_target"] = target
		dsl.Extra["polling_response"] = run.polling
		err := a.p.readSlice(ctx, dsl, sl, maxPages, emit)
		if errors.Is(err, ErrStop) {
			stop = err // a check has its record; the job is still deleted
			break
		}
		if err != nil {
			return err
		}
	}
	if err := a.jobRequest(ctx, j.del, stepDelete, a.jobSlice(sl, run), nil); err != nil {
		return err
	}
	return stop
}

// jobSlice is the slice the job's requests after its creation see: the
// job's partition and cursor keys, without its request options, with
// creation_response among its extra fields.
func (a *asyncJob) jobSlice(sl *incremental.Slice, run *jobRun) *incremental.Slice {
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
func (a *asyncJob) jobRequest(ctx context.Context, b *builder, step jobStep, sl *incremental.Slice, into **request.Response) error {
	if b == nil {
		return nil
	}
	var parts *request.Parts
	resp, err := a.p.env.Client.SendChecked(ctx, func() (*http.Request, error) {
		p, err := b.build(ctx, pageRequest{token: b.pag.First(), slice: sl})
		if err != nil {
			return nil, err
		}
		parts = p
		return p.HTTP(ctx)
	}, b.policy, nil)
	if a.p.env.Observer != nil && step.kind != "" && parts != nil && resp != nil {
		a.p.env.Observer.Auxiliary(step.kind, b.req.Path, step.title, step.description, parts, resp)
	}
	if err != nil {
		return a.p.requestError(fmt.Errorf("%s: %w", b.req.Path, err))
	}
	if resp.Ignored {
		return failure.System("stream %s: %s: the response (HTTP %d from %s) was ignored by the error handler; a job cannot go on without it", a.p.st.Name, b.req.Path, resp.Status, resp.URL)
	}
	if into != nil {
		*into = resp
	}
	return nil
}

// status maps the status the polling response gives to a job status.
func (j *jobSpec) status(resp *request.Response) (string, error) {
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
func (j *jobSpec) wait(ctx context.Context) error {
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

// Worker is Retriever.Worker.
func (a *asyncJob) Worker(c incremental.Cursor, recycle bool) Retriever {
	return &asyncJob{jobSpec: a.jobSpec, p: a.p.worker(c, recycle)}
}

// Rebind is Retriever.Rebind.
func (a *asyncJob) Rebind(c incremental.Cursor, lazy []byte) { a.p.Rebind(c, lazy) }

// Field is Retriever.Field.
func (a *asyncJob) Field() string { return a.p.field }
