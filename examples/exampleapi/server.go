// Package exampleapi is a small HTTP API that answers from memory, used by
// the demo, the acceptance tests and the benchmarks. It pages in the three
// ways of the seed: offset (/v1/users), page (/v1/orders) and cursor
// (/v1/events, and /v1/tags through Link headers).
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
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 1; i <= opt.Records; i++ {
		rec := map[string]any{
			"id":         i,
			"name":       fmt.Sprintf("user-%d", i),
			"email":      fmt.Sprintf("user%d@example.com", i),
			"created_at": base.Add(time.Duration(i) * time.Minute).Format(time.RFC3339),
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
