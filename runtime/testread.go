package runtime

import (
	"context"
	"errors"
	"iter"
	"strings"

	"github.com/airbyte-go/source-declarative/lang/datetime"
	"github.com/airbyte-go/source-declarative/runtime/extract"
	"github.com/airbyte-go/source-declarative/runtime/schema"
)

// TestLimits bound a Connector Builder test read.
type TestLimits struct {
	MaxRecords       int `json:"max_records"`
	MaxPagesPerSlice int `json:"max_pages_per_slice"`
	MaxSlices        int `json:"max_slices"`
	// MaxStreams bounds the streams each dynamic stream shows in a full
	// resolve of the manifest (FullResolvedManifest).
	MaxStreams int `json:"max_streams"`
}

// DefaultTestLimits are the builder's defaults.
var DefaultTestLimits = TestLimits{MaxRecords: 100, MaxPagesPerSlice: 5, MaxSlices: 5, MaxStreams: 100}

var errLimit = errors.New("record limit reached")

// TestRead reads the first pages of one stream, from state (nil: from the
// start) as a read does, within the limits and returns what the builder
// shows: pages with their requests and responses, token and login requests,
// logs and an inferred schema.
func (r *Runner) TestRead(ctx context.Context, stream string, limits TestLimits, state map[string]any) *StreamRead {
	if limits.MaxRecords <= 0 {
		limits.MaxRecords = DefaultTestLimits.MaxRecords
	}
	if limits.MaxPagesPerSlice <= 0 {
		limits.MaxPagesPerSlice = DefaultTestLimits.MaxPagesPerSlice
	}
	if limits.MaxSlices <= 0 {
		limits.MaxSlices = DefaultTestLimits.MaxSlices
	}
	read := &StreamRead{Logs: []TestLog{}, Slices: []TestSlice{}, AuxiliaryRequests: []AuxiliaryRequest{}, InferredDatetimeFormats: map[string]string{}}
	tr := &testReader{r: r, read: read}
	r.Observer, r.logSink = tr, tr.log
	defer func() { r.Observer, r.logSink = nil, nil }()
	// As the builder's test reads, retries are off, even a manifest's max_retries.
	prevNoRetries := r.Client.NoRetries
	r.Client.NoRetries = true
	defer func() { r.Client.NoRetries = prevNoRetries }()
	var control map[string]any
	prevSave := r.SaveConfig
	r.SaveConfig = func(cfg map[string]any) error {
		control = cfg
		if prevSave != nil {
			return prevSave(cfg)
		}
		return nil
	}
	err := r.resolveStreams(ctx)
	st := r.Source.Stream(stream)
	if err != nil {
		st = nil
	} else if st == nil {
		err = ConfigErr("stream %q is not defined in the manifest (streams: %s)", stream, strings.Join(r.streamNames(), ", "))
	} else if st.Python != nil || st.PythonTestRead != nil {
		return r.pythonTestRead(ctx, tr, st, limits, state)
	} else {
		err = tr.slices(ctx, st, limits, state)
	}
	if err != nil && !errors.Is(err, errLimit) {
		tr.fail(err)
	}
	if tr.current != nil { // the slice that failed or met a limit
		tr.show(tr.current)
	}
	tr.mask()
	// Trim the records past the limit from the last pages.
	left := limits.MaxRecords
	var pages []TestPage
	for i := range read.Slices {
		for j := range read.Slices[i].Pages {
			pg := &read.Slices[i].Pages[j]
			if len(pg.Records) > left {
				pg.Records = pg.Records[:left]
			}
			left -= len(pg.Records)
			pages = append(pages, *pg)
		}
	}
	read.TestReadLimitReached = limitReached(read.Slices, limits)
	read.InferredDatetimeFormats = inferDatetimeFormats(pageRecords(pages))
	var pk [][]string
	if st != nil {
		pk = st.PrimaryKey
	}
	var schemaErrs []string
	read.InferredSchema, schemaErrs = schema.Infer(pageRecords(pages), pk, tr.field)
	for _, e := range schemaErrs {
		read.Logs = append(read.Logs, TestLog{Message: e, Level: "ERROR"})
	}
	if control != nil {
		read.LatestConfigUpdate = map[string]any{}
		for k, v := range control {
			if !strings.HasPrefix(k, "__") {
				read.LatestConfigUpdate[k] = v
			}
		}
	}
	return read
}

// limitReached tells whether the slices shown reach a limit, as Airbyte's
// builder tells it from them: max_slices slices (whether or not another
// would follow; failed ones count), a slice of max_pages_per_slice pages, or
// max_records records.
func limitReached(slices []TestSlice, limits TestLimits) bool {
	if len(slices) >= limits.MaxSlices {
		return true
	}
	records := 0
	for _, sl := range slices {
		if len(sl.Pages) >= limits.MaxPagesPerSlice {
			return true
		}
		for _, pg := range sl.Pages {
			records += len(pg.Records)
		}
	}
	return records >= limits.MaxRecords
}

// inferDatetimeFormats finds the top-level fields holding dates in one format.
func inferDatetimeFormats(records iter.Seq[[]byte]) map[string]string {
	var in datetime.Inferrer
	for rec := range records {
		if m, ok := extract.DecodeJSON(rec).(map[string]any); ok {
			in.Add(m)
		}
	}
	return in.Formats()
}

// pageRecords yields the records of pages, in order.
func pageRecords(pages []TestPage) iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		for _, p := range pages {
			for _, rec := range p.Records {
				if !yield(rec) {
					return
				}
			}
		}
	}
}
