// Command floor is the benchmark's baseline: the least work a correct
// program can do to read the example API and print its records as Airbyte
// RECORD lines. It fetches each page, cuts the records out of the body in one
// pass without validating it (cut.go), prints them and follows the mode's
// pagination itself: offset, page or cursor. No manifest, no templates.
//
// -reader encoding-json is a second, named baseline instead: the idiomatic
// encoding/json reader, which decodes each page into []json.RawMessage
// (it validates the page, and does more work than the floor).
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"time"
)

// page is what one response gives: its records and, in cursor mode, the
// next cursor (nil at the end).
type page struct {
	records [][]byte
	next    []byte
}

func main() {
	base := flag.String("url", "", "example API URL")
	key := flag.String("api-key", "demo-key", "API key (empty: none)")
	pageSize := flag.Int("page-size", 1000, "records per page")
	mode := flag.String("mode", "offset", "pagination: offset, page or cursor")
	reader := flag.String("reader", "one-pass", "one-pass (the floor) or encoding-json (the idiomatic reader)")
	flag.Parse()

	path, field := "/v1/users", "data"
	switch *mode {
	case "page":
		path, field = "/v1/orders", "orders"
	case "cursor":
		path, field = "/v1/events", "events"
	}
	read := cutPage
	if *reader == "encoding-json" {
		read = decodePage
	}
	out := bufio.NewWriterSize(os.Stdout, 256<<10)
	defer out.Flush()
	client := &http.Client{}
	var body bytes.Buffer
	var p page
	prefix := []byte(`{"type":"RECORD","record":{"stream":"users","data":`)
	for offset, pageNumber, cursor := 0, 1, "0"; ; {
		url := fmt.Sprintf("%s%s?limit=%d&offset=%d", *base, path, *pageSize, offset)
		switch *mode {
		case "page":
			url = fmt.Sprintf("%s%s?per_page=%d&page=%d", *base, path, *pageSize, pageNumber)
		case "cursor":
			url = fmt.Sprintf("%s%s?page_size=%d&cursor=%s", *base, path, *pageSize, cursor)
		}
		req, _ := http.NewRequest("GET", url, nil)
		if *key != "" {
			req.Header.Set("X-Api-Key", *key)
		}
		resp, err := client.Do(req)
		if err != nil {
			fail(err)
		}
		body.Reset()
		_, err = body.ReadFrom(resp.Body)
		resp.Body.Close()
		if err != nil {
			fail(err)
		}
		if err := read(body.Bytes(), field, &p); err != nil {
			fail(err)
		}
		suffix := []byte(`,"emitted_at":` + strconv.FormatInt(time.Now().UnixMilli(), 10) + "}}\n")
		for _, rec := range p.records {
			out.Write(prefix)
			out.Write(rec)
			out.Write(suffix)
		}
		switch *mode {
		case "cursor":
			if p.next == nil {
				return
			}
			cursor = string(p.next)
		default:
			if len(p.records) < *pageSize {
				return
			}
			offset += len(p.records)
			pageNumber++
		}
	}
}

// decodePage is the idiomatic reader: encoding/json into raw messages.
func decodePage(body []byte, field string, p *page) error {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(body, &doc); err != nil {
		return err
	}
	var records []json.RawMessage
	if err := json.Unmarshal(doc[field], &records); err != nil {
		return err
	}
	p.records, p.next = p.records[:0], nil
	for _, r := range records {
		p.records = append(p.records, r)
	}
	if next := doc["next_cursor"]; next != nil && string(next) != "null" {
		p.next = next
	}
	return nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}
