package manifest

import (
	"strconv"
	"strings"

	"github.com/airbyte-go/source-declarative/lang/interp"
)

// Pagination strategies.
const (
	OffsetIncrement  = "OffsetIncrement"
	PageIncrement    = "PageIncrement"
	CursorPagination = "CursorPagination"
	// CustomPagination is a custom Python strategy (Paginator.Custom), asked
	// by Go for the first token, the page size and each next token.
	CustomPagination = "CustomPaginationStrategy"
)

// Paginator is a DefaultPaginator with its strategy.
type Paginator struct {
	Path            string
	Strategy        string
	PageSize        *interp.Template // nil when unset
	PageSizePath    string
	PageSizeOption  *RequestOption
	PageTokenOption *RequestOption // InjectInto "path" for RequestPath
	StartFromPage   int64
	InjectOnFirst   bool
	CursorValue     *interp.Template
	StopCondition   *interp.Template
	Custom          *Custom // a CustomPagination's Python class
}

func (d *decoder) paginator(v any, path string) *Paginator {
	m, typ, ok := d.component(v, path, "DefaultPaginator", "NoPagination")
	if !ok || typ == "NoPagination" {
		return nil
	}
	p := &Paginator{Path: path}
	sp := path + ".pagination_strategy"
	if c := d.custom(m["pagination_strategy"], sp); c != nil {
		p.Strategy, p.Custom = CustomPagination, c
		d.pageOptions(m, p)
		return p
	}
	sm, styp, ok := d.component(m["pagination_strategy"], sp, OffsetIncrement, PageIncrement, CursorPagination)
	if !ok {
		return nil
	}
	p.Strategy = styp
	if ps, ok := sm["page_size"]; ok && ps != nil {
		p.PageSizePath = sp + ".page_size"
		p.PageSize = d.pageSize(ps, p.PageSizePath)
	}
	p.InjectOnFirst = true
	if b, ok := sm["inject_on_first_request"].(bool); ok {
		p.InjectOnFirst = b
	}
	switch styp {
	case PageIncrement:
		// Without page_size, pages are read until one is empty, as the reference does.
		if n, ok := sm["start_from_page"].(int64); ok {
			p.StartFromPage = n
		}
	case CursorPagination:
		p.CursorValue = d.tpl(sm, "cursor_value", sp)
		p.StopCondition = d.tpl(sm, "stop_condition", sp)
	}
	d.pageOptions(m, p)
	if p.PageSize == nil && p.PageSizeOption != nil {
		d.fail(path+".page_size_option", "needs pagination_strategy.page_size to be set")
	}
	return p
}

// pageOptions decodes where a DefaultPaginator puts the page size and the token.
func (d *decoder) pageOptions(m map[string]any, p *Paginator) {
	if o, ok := m["page_size_option"]; ok && o != nil {
		p.PageSizeOption = d.requestOption(o, p.Path+".page_size_option", false)
	}
	if o, ok := m["page_token_option"]; ok && o != nil {
		p.PageTokenOption = d.requestOption(o, p.Path+".page_token_option", true)
	}
}

// pageSize accepts a positive integer, a digit string or a template.
func (d *decoder) pageSize(v any, path string) *interp.Template {
	switch x := v.(type) {
	case int64:
		if x <= 0 {
			d.fail(path, "must be a positive integer, got %d", x)
			return nil
		}
		return interp.Constant(x, path)
	case string:
		if strings.Contains(x, "{{") {
			return d.value(x, path)
		}
		n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		if err != nil || n <= 0 {
			d.fail(path, "must be a positive integer, got %q", x)
			return nil
		}
		return interp.Constant(n, path)
	}
	d.fail(path, "must be a positive integer, got %s", describe(v))
	return nil
}
