// Package exampleapi is a small HTTP API that answers from memory, used by
// the demo, the acceptance tests and the benchmarks. It pages in the three
// ways of the seed: offset (/v1/users), page (/v1/orders) and cursor
// (/v1/events, and /v1/tags through Link headers); /v1/activities filters
// by updated_at for incremental reads.
package exampleapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Options shape the data set.
type Options struct {
	APIKey     string // required in the X-Api-Key header; empty: no auth
	Records    int    // records per collection
	RecordSize int    // approximate bytes per record (padding field)
	MaxPage    int    // largest page the API serves
}

// Base is the time the data set starts from.
var Base = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// UpdateEvery is the time between the updated_at of two records.
const UpdateEvery = 6 * time.Hour

// UpdatedAt is when record i (from 1) was last updated (in seconds, so that
// millions of records run past the 292 years a time.Duration holds).
func UpdatedAt(i int) time.Time {
	return time.Unix(Base.Unix()+int64(i)*int64(UpdateEvery/time.Second), 0).UTC()
}

// Server serves the example collections.
type Server struct {
	opt      Options
	pages    [][]byte // cached encoded records
	Requests atomic.Int64
}

// New builds the data set.
func New(opt Options) *Server {
	if opt.Records <= 0 {
		opt.Records = 25
	}
	if opt.MaxPage <= 0 {
		opt.MaxPage = 1000
	}
	s := &Server{opt: opt}
	for i := 1; i <= opt.Records; i++ {
		rec := map[string]any{
			"id":         i,
			"name":       fmt.Sprintf("user-%d", i),
			"email":      fmt.Sprintf("user%d@example.com", i),
			"created_at": Base.Add(time.Duration(i) * time.Minute).Format(time.RFC3339),
			"updated_at": UpdatedAt(i).Format(time.RFC3339),
		}
		b, _ := json.Marshal(rec)
		if pad := opt.RecordSize - len(b) - 12; pad > 0 {
			rec["padding"] = strings.Repeat("x", pad)
			b, _ = json.Marshal(rec)
		}
		s.pages = append(s.pages, b)
	}
	return s
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.Requests.Add(1)
	if s.opt.APIKey != "" && r.Header.Get("X-Api-Key") != s.opt.APIKey {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"error":"invalid or missing X-Api-Key"}`))
		return
	}
	q := r.URL.Query()
	size := intParam(q.Get("limit"), intParam(q.Get("per_page"), intParam(q.Get("page_size"), 10)))
	if size > s.opt.MaxPage {
		size = s.opt.MaxPage
	}
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/v1/users":
		from := intParam(q.Get("offset"), 0)
		s.write(w, `{"data":`, from, size, `,"total":`+strconv.Itoa(len(s.pages))+`}`)
	case "/v1/orders":
		page := intParam(q.Get("page"), 1)
		s.write(w, `{"orders":`, (page-1)*size, size, `}`)
	case "/v1/events":
		from := intParam(q.Get("cursor"), 0)
		next := "null"
		if from+size < len(s.pages) {
			next = strconv.Itoa(from + size)
		}
		s.write(w, `{"events":`, from, size, `,"next_cursor":`+next+`}`)
	case "/v1/activities":
		// Records updated in [updated_since, updated_until], both included,
		// in pages of page_size from the cursor on.
		from, to, err := s.updatedRange(q.Get("updated_since"), q.Get("updated_until"))
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"error":%q}`, err.Error())
			return
		}
		at := from + intParam(q.Get("cursor"), 0)
		end := min(at+size, to)
		next := "null"
		if end < to {
			next = strconv.Itoa(end - from)
		}
		s.write(w, `{"activities":`, at, end-at, `,"next_cursor":`+next+`}`)
	case "/v1/tags":
		page := intParam(q.Get("page"), 1)
		if page*size < len(s.pages) {
			w.Header().Set("Link", fmt.Sprintf(`<http://%s/v1/tags?page=%d&per_page=%d>; rel="next"`, r.Host, page+1, size))
		}
		s.write(w, ``, (page-1)*size, size, ``)
	default:
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"error":"not found"}`))
	}
}

// updatedRange is the index range [from, to) of the records updated between
// two RFC 3339 times, both included (either may be empty).
func (s *Server) updatedRange(since, until string) (int, int, error) {
	from, to := 0, len(s.pages)
	every := int64(UpdateEvery / time.Second)
	if since != "" {
		t, err := time.Parse(time.RFC3339, since)
		if err != nil {
			return 0, 0, fmt.Errorf("updated_since: %v", err)
		}
		// the first i with UpdatedAt(i) >= t, as an index (i-1)
		from = max(0, min(len(s.pages), int(ceilDiv(t.Unix()-Base.Unix(), every))-1))
	}
	if until != "" {
		t, err := time.Parse(time.RFC3339, until)
		if err != nil {
			return 0, 0, fmt.Errorf("updated_until: %v", err)
		}
		// the last i with UpdatedAt(i) <= t, as an end index (i)
		to = max(0, min(len(s.pages), int(floorDiv(t.Unix()-Base.Unix(), every))))
	}
	return from, max(from, to), nil
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

func ceilDiv(a, b int64) int64 { return -floorDiv(-a, b) }

// write answers prefix + the records [from, from+size) as a JSON array + suffix.
func (s *Server) write(w http.ResponseWriter, prefix string, from, size int, suffix string) {
	if from < 0 {
		from = 0
	}
	to := from + size
	if to > len(s.pages) {
		to = len(s.pages)
	}
	buf := make([]byte, 0, 64+(to-from)*(s.opt.RecordSize+2))
	buf = append(buf, prefix...)
	buf = append(buf, '[')
	for i := from; i < to; i++ {
		if i > from {
			buf = append(buf, ',')
		}
		buf = append(buf, s.pages[i]...)
	}
	buf = append(buf, ']')
	buf = append(buf, suffix...)
	w.Write(buf)
}

func intParam(s string, def int) int {
	if n, err := strconv.Atoi(s); err == nil && n >= 0 {
		return n
	}
	return def
}
