package genapi

import (
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// dataAnswer serves a stream's pages.
type dataAnswer struct {
	stream    string
	decoder   Decoder
	fieldPath []string
	records   RecordSpec
	paging    paging
	// parent says the stream is read by its children's partition routers.
	parent bool
	// whole says the body is the one record itself (an empty field_path,
	// and pagination templates reading the body's keys), or {} for none.
	whole bool
}

func (d *dataAnswer) answer(req *request) served {
	k := d.paging.page(req)
	n := d.paging.count(k)
	if d.whole {
		n = min(n, 1)
	}
	spec := d.records
	spec.First = req.seed(d.stream, k, d.paging.isToken)
	today := time.Now().UTC().Truncate(24 * time.Hour)
	spec.At, spec.Step = windowOf(req.values()).cursorTimes(n, today)
	records := spec.Records(n)
	body := d.body(records)
	header := http.Header{}
	d.paging.decorate(k, body, header, records, req)
	b, ctype := d.decoder.Encode(d.fieldPath, records, body)
	return served{status: http.StatusOK, body: b, ctype: ctype, header: header, records: records, page: k}
}

// body puts records where the record selector finds them.
func (d *dataAnswer) body(records []any) any {
	if !d.whole {
		return Shape(d.fieldPath, records)
	}
	if len(records) == 0 {
		return map[string]any{}
	}
	return records[0]
}

// stream makes the endpoint of a stream: its route and static parameters,
// its records (from its inline schema, with its primary key, its cursor in
// the cursor's format, the fields its children and its templates read), put
// where its record selector finds them, encoded for its decoder, paginated
// as its paginator expects.
func (b *builder) stream(s map[string]any) {
	name := fmt.Sprint(s["name"])
	retriever := asMap(s["retriever"])
	if t := retriever["type"]; t != nil && t != "SimpleRetriever" {
		b.problem("stream %s: the API cannot serve a %v", name, t)
		return
	}
	req := asMap(retriever["requester"])
	_, parent := b.parentKeys[name]
	d := &dataAnswer{stream: name, paging: single{parent: parent}, parent: parent}
	e := &endpoint{name: name, method: strings.ToUpper(str(req, "http_method", "GET")), answer: d}
	b.routeOf(e, joinTemplate(req), req)
	b.staticParams(e, req)
	b.plan.endpoints = append(b.plan.endpoints, e)
	root := &endpoint{name: name + " (url_base)"}
	b.routeOf(root, str(req, "url_base", ""), req)
	b.roots = append(b.roots, root)

	dec, ok := DecoderOf(asMap(retriever["decoder"]))
	if !ok {
		b.problem("stream %s: the API cannot encode for decoder %v", name, asMap(retriever["decoder"])["type"])
	}
	d.decoder = dec
	reads, patterns := RecordReads(s)
	d.records = RecordSpec{Schema: asMap(asMap(s["schema_loader"])["schema"]), PrimaryKey: primaryKey(s["primary_key"]),
		Paths: append(append([][]string{}, b.parentKeys[name]...), reads...), Patterns: patterns}
	if inc := asMap(s["incremental_sync"]); inc != nil {
		d.records.CursorFormat = str(inc, "datetime_format", "")
		if formats := list(inc["cursor_datetime_formats"]); len(formats) > 0 {
			d.records.CursorFormat = fmt.Sprint(formats[0])
		}
		if inc["type"] == "IncrementingCountCursor" {
			d.records.CursorFormat = ""
		}
		if f, ok := inc["cursor_field"].(string); ok {
			b.jinja.render(f, params(inc), func(out *string) {
				if out != nil && *out != "" {
					d.records.Cursor = []string{*out}
				}
			})
		}
	}
	extractor := asMap(asMap(retriever["record_selector"])["extractor"])
	segments := list(extractor["field_path"])
	d.fieldPath = make([]string, len(segments))
	pending := len(segments)
	paginator := asMap(retriever["paginator"])
	ready := func() { b.paging(e, req, d, paginator) }
	if pending == 0 {
		ready()
	}
	for i, seg := range segments {
		b.jinja.render(fmt.Sprint(seg), params(extractor), func(out *string) {
			if out == nil {
				b.problem("stream %s: field_path %v does not render", name, seg)
			} else {
				d.fieldPath[i] = *out
			}
			if pending--; pending == 0 {
				ready()
			}
		})
	}
}

// paging sets how a stream's pages follow each other, from its paginator.
func (b *builder) paging(e *endpoint, req map[string]any, d *dataAnswer, paginator map[string]any) {
	strategy := asMap(paginator["pagination_strategy"])
	option := asMap(paginator["page_token_option"])
	withPageSize := func(done func(int)) {
		switch v := strategy["page_size"].(type) {
		case nil:
			done(0)
		case string:
			b.jinja.render(v, params(strategy), func(out *string) {
				n := 0
				if out != nil {
					n, _ = strconv.Atoi(strings.TrimSpace(*out))
				}
				done(n)
			})
		default:
			done(int(num(v, 0)))
		}
	}
	switch strategy["type"] {
	case nil, "NoPagination":
	case "OffsetIncrement", "PageIncrement":
		p := increment{parent: d.parent, offset: strategy["type"] == "OffsetIncrement", into: str(option, "inject_into", "")}
		if !p.offset {
			p.start = int(num(strategy["start_from_page"], 0))
		}
		withPageSize(func(n int) {
			p.pageSize = n
			b.optionField(option, func(field []string) {
				p.field = field
				d.paging = p
			})
		})
	case "CursorPagination":
		withPageSize(func(n int) { b.cursorPaging(d, strategy, option, n) })
		if option["type"] == "RequestPath" {
			// A next page's URL may lead anywhere under url_base.
			next := &endpoint{name: d.stream, method: e.method, answer: d}
			b.routeOf(next, strings.TrimRight(str(req, "url_base", ""), "/")+"/{{ next_page_token }}", req)
			b.plan.endpoints = append(b.plan.endpoints, next)
		}
	default:
		b.problem("stream %s: the API cannot paginate for %v", d.stream, strategy["type"])
	}
}

// optionField renders the field a request option injects into: field_path
// (a JSON body) or field_name.
func (b *builder) optionField(option map[string]any, done func([]string)) {
	parts := list(option["field_path"])
	if len(parts) == 0 {
		parts = []any{option["field_name"]}
	}
	field := make([]string, len(parts))
	pending := len(parts)
	for i, p := range parts {
		b.jinja.render(fmt.Sprint(p), params(option), func(out *string) {
			if out != nil {
				field[i] = *out
			}
			if pending--; pending == 0 {
				done(field)
			}
		})
	}
}

// cursorPageCount is how many pages a cursor serves.
const cursorPageCount = 3

// cursorPaging asks Jinja2 what the pages of a CursorPagination hold.
func (b *builder) cursorPaging(d *dataAnswer, strategy, option map[string]any, pageSize int) {
	c := cursorCase{CursorValue: str(strategy, "cursor_value", ""), StopCondition: str(strategy, "stop_condition", ""),
		Parameters: params(strategy), RecordsPath: d.fieldPath, ContinueCount: recordsPerPage, LastCounts: []int{1, 0},
		Pages: cursorPageCount, InjectPath: option["type"] == "RequestPath", Bodies: map[string]any{}}
	if d.parent {
		c.ContinueCount, c.Pages = parentRecords, 2
	}
	if strings.Contains(c.CursorValue+c.StopCondition, "last_page_size") && pageSize > 0 && pageSize <= 200 {
		c.ContinueCount = pageSize
	}
	d.whole = len(d.fieldPath) == 0 && readsBody.MatchString(c.CursorValue+" "+c.StopCondition)
	if d.whole {
		c.ContinueCount = 1
	}
	for _, n := range []int{c.ContinueCount, 1, 0} {
		c.Bodies[strconv.Itoa(n)] = d.body(d.records.Records(n))
	}
	b.jinja.cursor(c, func(res cursorResult) {
		if !res.OK {
			b.problem("stream %s: %s", d.stream, res.Why)
			return
		}
		d.paging = cursorPages{res: res}
	})
}

// readsBody finds a template reading a key of the response body.
var readsBody = regexp.MustCompile(`\bresponse\s*(\.\s*[A-Za-z_]|\[\s*['"])`)

// primaryKey reads a primary_key: a name, a list of names, or a list of
// paths.
func primaryKey(v any) [][]string {
	switch x := v.(type) {
	case string:
		if x == "" {
			return nil
		}
		return [][]string{{x}}
	case []any:
		var out [][]string
		for _, e := range x {
			switch k := e.(type) {
			case string:
				out = append(out, []string{k})
			case []any:
				var path []string
				for _, s := range k {
					path = append(path, fmt.Sprint(s))
				}
				out = append(out, path)
			}
		}
		return out
	}
	return nil
}

// RecordReads lists the key chains a stream's templates (transformations,
// record filters, ...) read from a record, and those they search with a
// regular expression; the parent streams inside its partition routers and
// its schema are not the stream's templates.
func RecordReads(stream map[string]any) (paths [][]string, patterns []PatternRead) {
	visit(stream, "", func(key string, v any) bool {
		if key == "schema" || key == "parent_stream_configs" {
			return false
		}
		if s, ok := v.(string); ok && strings.Contains(s, "{") {
			paths = append(paths, Accesses(s, "record")...)
			patterns = append(patterns, PatternReads(s)...)
		}
		return true
	})
	return paths, patterns
}
