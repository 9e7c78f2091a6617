package manifest

import (
	"fmt"
	"strings"

	"github.com/airbyte-go/source-declarative/lang/interp"
)

// Requester is an HttpRequester.
type Requester struct {
	Path         string
	URLBase      *interp.Template
	URLPath      *interp.Template
	URL          *interp.Template
	Method       string
	Params       *Mapping
	Headers      *Mapping
	BodyJSON     any              // nested maps and lists whose string leaves are *interp.Template, or one *interp.Template
	BodyData     any              // *Mapping or *interp.Template
	BodyText     *interp.Template // RequestBodyPlainText: sent as written
	Auth         *Auth            // nil: no authentication
	ErrorHandler *ErrorHandler
	// Properties, when set, are sent in chunks, one request per chunk
	// (queryproperties.go); nil: none.
	Properties *QueryProperties
	// UseCache is use_cache: nil when the manifest does not say, so that a
	// parent stream's requester caches unless it says false, as in Airbyte.
	UseCache   *bool
	Parameters map[string]any
}

// Injection places of a RequestOption.
const (
	InjectParam    = "request_parameter"
	InjectHeader   = "header"
	InjectBodyData = "body_data"
	InjectBodyJSON = "body_json"
	InjectPath     = "path"
)

// RequestOption says where a value goes in a request.
type RequestOption struct {
	Path       string
	InjectInto string
	FieldName  *interp.Template
	FieldPath  []*interp.Template
}

var allAuth = []string{NoAuth, BasicAuth, BearerAuth, APIKeyAuth, OAuth, JWTAuth, SessionToken, LegacySessionToken, Selective}
var loginAuth = []string{NoAuth, BasicAuth, BearerAuth, APIKeyAuth}

func (d *decoder) requester(v any, path string, auths []string) *Requester {
	m, _, ok := d.component(v, path, "HttpRequester")
	if !ok {
		return nil
	}
	r := &Requester{Path: path, Method: str(m, "http_method", "GET")}
	r.URLBase = d.tpl(m, "url_base", path)
	r.URLPath = d.tpl(m, "path", path)
	r.URL = d.tpl(m, "url", path)
	if r.URLBase == nil && r.URL == nil {
		d.fail(path+".url_base", "is required (or url)")
	}
	r.Params = d.parameters(m, path)
	r.Headers = d.mapping(m, "request_headers", path)
	if b, ok := m["request_body_json"]; ok && b != nil {
		r.BodyJSON = d.nested(b, path+".request_body_json")
	}
	if b, ok := m["request_body_data"]; ok && b != nil {
		if s, ok := b.(string); ok {
			r.BodyData = d.value(s, path+".request_body_data")
		} else {
			r.BodyData = d.mapping(m, "request_body_data", path)
		}
	}
	if b, ok := m["request_body"]; ok && b != nil {
		d.requestBody(r, b, path+".request_body")
	}
	bodies := 0
	for _, set := range []bool{r.BodyJSON != nil, r.BodyData != nil, r.BodyText != nil} {
		if set {
			bodies++
		}
	}
	if bodies > 1 {
		d.fail(path, "request_body, request_body_json and request_body_data set more than one body: keep one")
	}
	r.Properties = d.requesterProperties(m, path)
	if c, ok := m["use_cache"].(bool); ok {
		r.UseCache = &c
	}
	if p, ok := m["$parameters"].(map[string]any); ok {
		r.Parameters = p
	}
	if a, ok := m["authenticator"]; ok && a != nil {
		r.Auth = d.auth(a, path+".authenticator", auths)
		d.withURLBase(r.Auth, m["url_base"], path)
	}
	if eh, ok := m["error_handler"]; ok && eh != nil {
		r.ErrorHandler = d.errorHandler(eh, path+".error_handler")
	}
	return r
}

// requestBody decodes the unified request_body: a JSON object or a GraphQL
// query is a JSON body, a URL-encoded form is form data, plain text is sent as
// written.
func (d *decoder) requestBody(r *Requester, v any, path string) {
	m, typ, ok := d.component(v, path, "RequestBodyJsonObject", "RequestBodyUrlEncodedForm", "RequestBodyPlainText", "RequestBodyGraphQL")
	if !ok {
		return
	}
	switch typ {
	case "RequestBodyJsonObject", "RequestBodyGraphQL":
		r.BodyJSON = d.nested(m["value"], path+".value")
	case "RequestBodyUrlEncodedForm":
		r.BodyData = d.mapping(m, "value", path)
	case "RequestBodyPlainText":
		r.BodyText = d.tpl(m, "value", path)
	}
}

// parameters decodes request_parameters. A QueryProperties value is not a
// template: it is left out here, and each request sets it to its chunk of
// properties (Requester.Properties), as the reference removes it from the
// interpolated parameters.
func (d *decoder) parameters(m map[string]any, path string) *Mapping {
	raw, _ := m["request_parameters"].(map[string]any)
	var props map[string]any
	for k, v := range raw {
		if qp, ok := v.(map[string]any); ok && qp["type"] == "QueryProperties" {
			if props == nil {
				props = make(map[string]any, len(raw))
				for k, v := range raw {
					props[k] = v
				}
				m = map[string]any{"request_parameters": props}
			}
			delete(props, k)
		}
	}
	return d.mapping(m, "request_parameters", path)
}

func (d *decoder) requestOption(v any, path string, allowPath bool) *RequestOption {
	allowed := []string{"RequestOption"}
	if allowPath {
		allowed = append(allowed, "RequestPath")
	}
	if m, ok := v.(map[string]any); ok && m["type"] == nil {
		m["type"] = "RequestOption"
	}
	m, typ, ok := d.component(v, path, allowed...)
	if !ok {
		return nil
	}
	if typ == "RequestPath" {
		return &RequestOption{Path: path, InjectInto: InjectPath}
	}
	o := &RequestOption{Path: path, InjectInto: m["inject_into"].(string)}
	o.FieldName = d.tpl(m, "field_name", path)
	if fp, ok := m["field_path"]; ok {
		for i, seg := range fp.([]any) {
			o.FieldPath = append(o.FieldPath, d.value(seg, fmt.Sprintf("%s.field_path[%d]", path, i)))
		}
	}
	switch {
	case o.FieldName == nil && len(o.FieldPath) == 0:
		d.fail(path+".field_name", "is required")
	case o.FieldName != nil && len(o.FieldPath) > 0 && o.InjectInto != InjectBodyJSON:
		// Resolved manifests exported by the builder carry a stream's field_path
		// parameter here; field_name is what counts outside body_json.
		o.FieldPath = nil
	case o.FieldName != nil && len(o.FieldPath) > 0:
		d.fail(path, "field_name and field_path cannot both be set")
	case len(o.FieldPath) > 0 && o.InjectInto != InjectBodyJSON:
		d.fail(path+".field_path", "is only allowed with inject_into: body_json")
	}
	return o
}

// Key is the static name under which an option injects, for collision checks.
func (o *RequestOption) Key() string {
	if o == nil || o.InjectInto == InjectPath {
		return ""
	}
	if o.FieldName != nil {
		if !o.FieldName.IsStatic() {
			return ""
		}
		return o.FieldName.Source
	}
	var parts []string
	for _, p := range o.FieldPath {
		if p == nil || !p.IsStatic() {
			return "" // nil: a segment that did not compile, an error already
		}
		parts = append(parts, p.Source)
	}
	return strings.Join(parts, ".")
}

// checkCollisions refuses a paginator whose page size and page token go to
// the same key, as Airbyte's DefaultPaginator refuses it when it is made (a
// JSON body path inside the other's counts too: the two values cannot both
// be there). A key also set by the requester, a partition or a cursor is a
// question for each request, as in Airbyte: the first page may go without a
// token (see request.Parts).
func (d *decoder) checkCollisions(p *Paginator) {
	size, token := p.PageSizeOption, p.PageTokenOption
	if size.Key() == "" || token.Key() == "" || size.InjectInto != token.InjectInto {
		return
	}
	a, b := size.Key(), token.Key()
	same := a == b
	if size.InjectInto == InjectBodyJSON {
		same = same || strings.HasPrefix(a, b+".") || strings.HasPrefix(b, a+".")
	}
	if same {
		d.fail(token.Path, "%s %q collides with page_size_option's %q: the page size and the page token cannot go to one key", token.InjectInto, b, a)
	}
}
