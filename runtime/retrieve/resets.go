package retrieve

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/protocol"
	"github.com/airbyte-go/source-declarative/runtime/failure"
	"github.com/airbyte-go/source-declarative/runtime/incremental"
	"github.com/airbyte-go/source-declarative/runtime/request"
)

// errRestartPages ends a run of a slice's pages that must start again from
// the first page (pagination_reset, or an error handler's RESET_PAGINATION).
var errRestartPages = errors.New("pagination reset")

// pageResets follows the runs of one slice's pages, as the CDK's
// PaginationTracker: the records read in the current run (for
// limits.number_of_records), the slice requested (narrowed with
// SPLIT_USING_CURSOR) and how often a run started with the same slice.
type pageResets struct {
	s *pages
	// original is the slice read: records are observed into it and it is
	// the one closed. current is the slice requested in this run.
	original, current *incremental.Slice
	// observed is the slice the records count for: original, or the
	// job's slice while its downloads are read.
	observed *incremental.Slice
	narrower incremental.Narrower // nil: restart the same slice
	limit    int                  // records per run; 0: none
	count    int                  // records read in this run
	reason   string               // why the run ended, for the log
	same     int                  // runs restarted with the same slice
}

func (s *pages) pageResets(sl *incremental.Slice) *pageResets {
	pr := &pageResets{s: s, original: sl, current: sl, observed: sl}
	cfg := s.st.Retriever.PaginationReset
	if cfg == nil {
		return pr
	}
	if !s.probe {
		pr.limit = cfg.MaxRecords
	}
	if n, ok := s.cursor.(incremental.Narrower); ok && cfg.Action == manifest.ResetSplitUsingCursor && sl != nil {
		pr.narrower = n
	}
	return pr
}

// counted adds the records of a page to the run and tells whether they
// reach limits.number_of_records: the pages then start again.
func (pr *pageResets) counted(n int) bool {
	pr.count += n
	if pr.limit == 0 || pr.count < pr.limit {
		return false
	}
	pr.reason = fmt.Sprintf("%d records read in this run of the slice, %s.limits.number_of_records is %d", pr.count, pr.s.st.Retriever.PaginationReset.Path, pr.limit)
	return true
}

// asked tells whether err is a response the error handler answers with
// RESET_PAGINATION: the pages then start again.
func (pr *pageResets) asked(err error) bool {
	var reset *request.PaginationReset
	if !errors.As(err, &reset) {
		return false
	}
	pr.reason = "the error handler's RESET_PAGINATION matched " + strings.Join(strings.Fields(reset.Matched), " ")
	return true
}

// restart prepares the next run: from the first page, with the slice
// narrowed to start at the newest cursor value read (SPLIT_USING_CURSOR). As
// in the CDK, a slice with a cursor may not be read twice the same, and one
// without is read at most twice; past that the stream fails.
func (pr *pageResets) restart() error {
	s := pr.s
	next, ascending := pr.current, true
	if pr.narrower != nil {
		if n, asc, ok := pr.narrower.Narrowed(pr.original); ok {
			next, ascending = n, asc
		}
	}
	if !ascending {
		s.env.Log("WARN", fmt.Sprintf("Stream %s: records of the slice did not come in ascending %s order; narrowing the slice may skip records", s.st.Name, s.field))
	}
	allowed := 2
	if pr.narrower != nil {
		allowed = 1
	}
	if sameSlice(next, pr.current) {
		pr.same++
		if pr.same >= allowed {
			return &failure.Error{Failure: protocol.SystemError, Message: pr.exhausted()}
		}
	} else {
		pr.same = 0
	}
	msg := fmt.Sprintf("Stream %s: pagination reset (%s); reading from the first page again", s.st.Name, pr.reason)
	if next != pr.current {
		msg += fmt.Sprintf(", the slice going from %s to %s", mappingText(pr.current), mappingText(next))
	} else if d := describeSlice(next); d != "" {
		msg += ", with the same slice " + d
	}
	s.env.Log("INFO", msg)
	pr.current, pr.count = next, 0
	return nil
}

// exhausted is the error of a slice that may not be restarted again.
func (pr *pageResets) exhausted() string {
	s := pr.s
	where := ""
	if d := describeSlice(pr.current); d != "" {
		where = " " + d
	}
	if pr.narrower != nil {
		return fmt.Sprintf("stream %s: pagination reset (%s) but the slice%s cannot be narrowed: no record read since the previous start has a newer %s (SPLIT_USING_CURSOR needs records in ascending %s order)",
			s.st.Name, pr.reason, where, s.field, s.field)
	}
	return fmt.Sprintf("stream %s: pagination reset (%s) a second time on the same slice%s; a slice's pages are restarted at most once",
		s.st.Name, pr.reason, where)
}

// sameSlice tells whether two slices request the same thing.
func sameSlice(a, b *incremental.Slice) bool {
	return a == b || mappingText(a) == mappingText(b)
}

func describeSlice(sl *incremental.Slice) string {
	if sl == nil || sl.Descriptor() == nil {
		return ""
	}
	return mappingText(sl)
}

// mappingText is a slice's mapping as JSON, as logs and errors show it.
func mappingText(sl *incremental.Slice) string {
	b, _ := json.Marshal(sl.Mapping())
	return string(b)
}
