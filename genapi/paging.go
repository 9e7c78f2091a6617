package genapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// paging is how an endpoint's pages follow each other.
type paging interface {
	// page is the page a request asks for, from 0.
	page(req *request) int
	// count is how many records page k holds.
	count(k int) int
	// decorate adds to page k what leads to the next page or ends them.
	decorate(k int, body any, header http.Header, records []any, req *request)
	// isToken tells whether a request value (under a query or body key, ""
	// for others) is the page token.
	isToken(key, v string) bool
}

// recordsPerPage is how many records a page holds when the paginator says
// nothing of a page size; parentRecords of a parent stream's page, whose
// every record is a partition of its children (of theirs in turn).
const (
	recordsPerPage = 3
	parentRecords  = 2
)

// single is an endpoint without pagination: one page.
type single struct{ parent bool }

func (single) page(*request) int { return 0 }

func (p single) count(int) int {
	if p.parent {
		return parentRecords
	}
	return recordsPerPage
}

func (single) decorate(int, any, http.Header, []any, *request) {}
func (single) isToken(string, string) bool                     { return false }

// increment is OffsetIncrement or PageIncrement: the request names its page
// (an offset or a page number) where page_token_option says; pages stop
// short of the page size, or empty without one.
type increment struct {
	parent   bool // a parent stream's: fewer records (parentRecords a page, one short page of a page size)
	offset   bool
	into     string
	field    []string
	pageSize int
	start    int // the first page's number (PageIncrement)
}

// pages is how many pages an increment serves: three of a small page size,
// two up to 200 records a page, one beyond (a short page).
func (p increment) pages() int {
	switch {
	case p.parent && p.pageSize > parentRecords:
		return 1
	case p.pageSize == 0 || p.pageSize <= 25:
		return 3
	case p.pageSize <= 200:
		return 2
	}
	return 1
}

func (p increment) page(req *request) int {
	v, ok := req.injected(p.into, p.field)
	if !ok {
		return 0
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return 0
	}
	k := n - p.start
	if p.offset {
		per := p.pageSize
		if per == 0 {
			per = p.perPage()
		}
		k = n / per
	}
	return max(k, 0)
}

// perPage is how many records a page holds without a page size.
func (p increment) perPage() int {
	if p.parent {
		return parentRecords
	}
	return recordsPerPage
}

func (p increment) count(k int) int {
	last := p.pages() - 1
	switch {
	case p.pageSize == 0 && k < last:
		return p.perPage()
	case p.pageSize == 0:
		return 0
	case k < last:
		return p.pageSize
	case k == last && p.parent:
		return min(parentRecords, p.pageSize-1)
	case k == last:
		return 1
	}
	return 0
}

func (increment) decorate(int, any, http.Header, []any, *request) {}

func (p increment) isToken(key, _ string) bool {
	switch p.into {
	case "request_parameter", "body_json", "body_data":
		return len(p.field) > 0 && key == p.field[len(p.field)-1]
	}
	return false
}

// cursorPages is CursorPagination: what each page holds to lead to the
// next one was found by Jinja2 (testdata/genapi.py) from the manifest's
// cursor_value and stop_condition; a request names its page by a marker
// token, or by the text the cursor value made of it.
type cursorPages struct {
	res cursorResult
}

func marker(k int) string { return fmt.Sprintf("mockcursor%dz", k) }

func (p cursorPages) pages() int { return len(p.res.Pages) + 1 }

func (p cursorPages) page(req *request) int {
	for k := p.pages() - 1; k >= 1; k-- {
		if req.contains(marker(k)) {
			return k
		}
		token := strings.NewReplacer("{MOCK}", "", "{REQPATH}", "").Replace(p.res.Pages[k-1].Token)
		if len(token) >= 4 && req.contains(token) {
			return k
		}
	}
	return 0
}

func (p cursorPages) count(k int) int {
	if k < p.pages()-1 {
		return p.res.ContinueCount
	}
	return p.res.Last.Count
}

func (p cursorPages) isToken(_, v string) bool {
	if strings.Contains(v, "mockcursor") {
		return true
	}
	for _, pg := range p.res.Pages {
		if t := strings.NewReplacer("{MOCK}", "", "{REQPATH}", "").Replace(pg.Token); len(t) >= 4 && strings.Contains(v, t) {
			return true
		}
	}
	return false
}

func (p cursorPages) decorate(k int, body any, header http.Header, records []any, req *request) {
	placements := p.res.Last.Placements
	if k < p.pages()-1 {
		placements = p.res.Pages[k].Placements
	}
	links := map[string]map[string]any{}
	var linkOrder []string
	for _, pl := range placements {
		root, _ := pl.Chain[0].(string)
		keys := pl.Chain[1:]
		value := withAddress(pl.Value, req)
		switch root {
		case "response":
			placeAt(body, keys, value, pl.ParentOnly)
		case "last_record":
			if len(records) > 0 {
				placeAt(records[len(records)-1], keys, value, pl.ParentOnly)
			}
		case "headers":
			name := fmt.Sprint(keys[0])
			if !strings.EqualFold(name, "link") {
				if len(keys) == 1 && value != nil && !pl.ParentOnly {
					header[name] = []string{text(value)}
				}
				continue
			}
			if len(keys) < 3 || pl.ParentOnly || value == nil {
				continue
			}
			rel := fmt.Sprint(keys[1])
			if links[rel] == nil {
				links[rel] = map[string]any{}
				linkOrder = append(linkOrder, rel)
			}
			links[rel][fmt.Sprint(keys[2])] = value
		}
	}
	for _, rel := range linkOrder {
		params := links[rel]
		u, _ := params["url"].(string)
		if u == "" {
			u = "http://" + req.host + req.path
		}
		link := fmt.Sprintf("<%s>; rel=%q", u, rel)
		for _, k := range sortedKeys(params) {
			if k != "url" && k != "rel" {
				link += fmt.Sprintf("; %s=%q", k, text(params[k]))
			}
		}
		header.Add("Link", link)
	}
}

// withAddress writes the request's API address and path into a token that names
// a URL.
func withAddress(v any, req *request) any {
	s, ok := v.(string)
	if !ok {
		return v
	}
	return strings.NewReplacer("{MOCK}", "http://"+req.host, "{REQPATH}", req.path).Replace(s)
}

func text(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// placeAt writes v at keys (texts, or list indexes as numbers) in tree,
// making objects on the way; parentOnly writes only the objects.
func placeAt(tree any, keys []any, v any, parentOnly bool) {
	cur := tree
	for i, k := range keys {
		lastKey := i == len(keys)-1
		switch key := k.(type) {
		case float64:
			l, ok := cur.([]any)
			idx := int(key)
			if idx < 0 {
				idx += len(l)
			}
			if !ok || idx < 0 || idx >= len(l) {
				return
			}
			if lastKey {
				if !parentOnly {
					l[idx] = deepCopy(v)
				}
				return
			}
			cur = l[idx]
		case string:
			m, ok := cur.(map[string]any)
			if !ok {
				return
			}
			if lastKey {
				if !parentOnly {
					m[key] = deepCopy(v)
				}
				return
			}
			if _, isTree := m[key].(map[string]any); !isTree {
				if _, isList := m[key].([]any); !isList {
					m[key] = map[string]any{}
				}
			}
			cur = m[key]
		}
	}
}
