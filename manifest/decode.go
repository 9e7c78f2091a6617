package manifest

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/airbyte-go/source-declarative/runtime/interp"
)

//go:embed schema.json
var schemaJSON []byte

var (
	schemaOnce sync.Once
	schemas    map[string]*jsonschema.Schema
)

// componentSchema returns the compiled schema of one component type.
func componentSchema(typ string) *jsonschema.Schema {
	schemaOnce.Do(func() {
		c := jsonschema.NewCompiler()
		if err := c.AddResource("manifest.json", bytes.NewReader(schemaJSON)); err != nil {
			panic(err)
		}
		var doc struct {
			Definitions map[string]any `json:"definitions"`
		}
		if err := json.Unmarshal(schemaJSON, &doc); err != nil {
			panic(err)
		}
		schemas = map[string]*jsonschema.Schema{}
		for name := range doc.Definitions {
			schemas[name] = c.MustCompile("manifest.json#/definitions/" + name)
		}
	})
	return schemas[typ]
}

// Load finds nothing itself: it resolves, validates and decodes raw.
func Load(raw map[string]any) (*Source, error) {
	resolved, err := Resolve(raw)
	if err != nil {
		return nil, err
	}
	Propagate(resolved)
	d := &decoder{}
	src := d.source(resolved)
	if len(d.errs) > 0 {
		return nil, errors.New(strings.Join(d.errs, "; "))
	}
	src.Resolved = resolved
	return src, nil
}

// ResolveOnly resolves references and parameters without decoding, for the
// parts (spec, resolve_manifest) that need no runtime components.
func ResolveOnly(raw map[string]any) (map[string]any, error) {
	resolved, err := Resolve(raw)
	if err != nil {
		return nil, err
	}
	Propagate(resolved)
	return resolved, nil
}

type decoder struct {
	errs []string
}

func (d *decoder) fail(path, format string, args ...any) {
	d.errs = append(d.errs, path+": "+fmt.Sprintf(format, args...))
}

// component checks that v is a mapping whose type is one of allowed and that
// it matches that type's schema.
func (d *decoder) component(v any, path string, allowed ...string) (map[string]any, string, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		d.fail(path, "must be a mapping (a component with a type), got %s", describe(v))
		return nil, "", false
	}
	typ, _ := m["type"].(string)
	if typ == "" {
		d.fail(path, "component has no type (expected one of %s)", strings.Join(allowed, ", "))
		return nil, "", false
	}
	found := false
	for _, a := range allowed {
		if a == typ {
			found = true
		}
	}
	if !found {
		if strings.HasPrefix(typ, "Custom") {
			d.fail(path, "%s is not supported: custom Python components cannot run here (supported: %s)", typ, strings.Join(allowed, ", "))
		} else if componentSchema(typ) != nil || knownCDKTypes[typ] {
			d.fail(path, "%s is not supported here (supported: %s)", typ, strings.Join(allowed, ", "))
		} else {
			d.fail(path+".type", "unknown component type %q (supported: %s)", typ, strings.Join(allowed, ", "))
		}
		return nil, "", false
	}
	if s := componentSchema(typ); s != nil {
		if err := s.Validate(m); err != nil {
			d.schemaErrors(path, err)
			return nil, "", false
		}
	}
	return m, typ, true
}

var knownCDKTypes = map[string]bool{
	"DatetimeBasedCursor": true, "SubstreamPartitionRouter": true, "ListPartitionRouter": true, "SelectiveAuthenticator": true,
	"JwtAuthenticator": true, "AddFields": true, "RemoveFields": true, "XmlDecoder": true, "CsvDecoder": true, "GzipDecoder": true,
	"JsonlDecoder": true, "IterableDecoder": true, "CompositeRawDecoder": true, "AsyncRetriever": true, "DynamicDeclarativeStream": true,
	"JsonFileSchemaLoader": true, "DynamicSchemaLoader": true, "LegacySessionTokenAuthenticator": true, "StateDelegatingStream": true,
	"GroupingPartitionRouter": true, "DeclarativeOAuthAuthenticator": true,
}

func (d *decoder) schemaErrors(path string, err error) {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		d.fail(path, "%v", err)
		return
	}
	var leaves []*jsonschema.ValidationError
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			leaves = append(leaves, e)
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	seen := map[string]bool{}
	for _, l := range leaves {
		msg := l.Message
		if strings.HasSuffix(l.KeywordLocation, "/enum") {
			msg = "must be " + enumList(l.Message)
		}
		if strings.HasPrefix(msg, "missing properties: ") {
			for _, p := range strings.Split(strings.TrimPrefix(msg, "missing properties: "), ", ") {
				line := instancePath(path, l.InstanceLocation) + "." + strings.Trim(p, "'") + ": is required"
				if !seen[line] {
					seen[line] = true
					d.errs = append(d.errs, line)
				}
			}
			continue
		}
		line := instancePath(path, l.InstanceLocation) + ": " + msg
		if !seen[line] {
			seen[line] = true
			d.errs = append(d.errs, line)
		}
	}
}

var quoted = regexp.MustCompile(`"([^"]*)"`)

// enumList turns `value must be one of "GET", "POST"` into `GET or POST`.
func enumList(msg string) string {
	var vals []string
	for _, m := range quoted.FindAllStringSubmatch(msg, -1) {
		vals = append(vals, m[1])
	}
	switch len(vals) {
	case 0:
		return msg
	case 1:
		return vals[0]
	}
	return strings.Join(vals[:len(vals)-1], ", ") + " or " + vals[len(vals)-1]
}

// instancePath turns a JSON pointer into a manifest path under base.
func instancePath(base, pointer string) string {
	out := base
	for _, seg := range strings.Split(strings.TrimPrefix(pointer, "/"), "/") {
		if seg == "" {
			continue
		}
		seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
		if _, err := strconv.Atoi(seg); err == nil {
			out += "[" + seg + "]"
		} else {
			out = join(out, seg)
		}
	}
	return out
}

func describe(v any) string {
	switch v.(type) {
	case nil:
		return "nothing"
	case string:
		return "a string"
	case []any:
		return "a list"
	case bool:
		return "a boolean"
	case int64, float64:
		return "a number"
	}
	return fmt.Sprintf("%T", v)
}

// tpl compiles the template at m[key]; absent gives nil. Numbers and
// booleans become constants.
func (d *decoder) tpl(m map[string]any, key, path string) *interp.Template {
	v, ok := m[key]
	if !ok || v == nil {
		return nil
	}
	return d.value(v, join(path, key))
}

func (d *decoder) value(v any, path string) *interp.Template {
	s, ok := v.(string)
	if !ok {
		return interp.Constant(v, path)
	}
	t, err := interp.Compile(s, path)
	if err != nil {
		d.errs = append(d.errs, err.Error())
		return nil
	}
	return t
}

func str(m map[string]any, key, def string) string {
	if s, ok := m[key].(string); ok && s != "" {
		return s
	}
	return def
}

func strList(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, e := range l {
		out = append(out, interp.String(e))
	}
	return out
}

// mapping compiles a string-keyed map of templates, or one template string.
func (d *decoder) mapping(m map[string]any, key, path string) *Mapping {
	v, ok := m[key]
	if !ok || v == nil {
		return nil
	}
	p := join(path, key)
	if s, ok := v.(string); ok {
		return &Mapping{Whole: d.value(s, p)}
	}
	mm, ok := v.(map[string]any)
	if !ok {
		d.fail(p, "must be a mapping of names to values")
		return nil
	}
	out := &Mapping{Values: map[string]*interp.Template{}}
	out.Keys = interp.SortedKeys(mm)
	for _, k := range out.Keys {
		out.Values[k] = d.value(mm[k], join(p, k))
	}
	return out
}

// nested compiles every string leaf of a JSON body into a template.
func (d *decoder) nested(v any, path string) any {
	switch x := v.(type) {
	case string:
		return d.value(x, path)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = d.nested(e, join(path, k))
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = d.nested(e, index(path, i))
		}
		return out
	}
	return v
}

func (d *decoder) source(m map[string]any) *Source {
	src := &Source{}
	m, _, ok := d.component(m, "manifest", "DeclarativeSource")
	if !ok {
		if _, has := d.errsFor("manifest"); !has && len(d.errs) == 0 {
			d.fail("manifest", "not a DeclarativeSource")
		}
		return src
	}
	src.Version, _ = m["version"].(string)
	if _, ok := m["dynamic_streams"]; ok {
		d.fail("dynamic_streams", "DynamicDeclarativeStream is not supported")
	}
	names := map[string]string{}
	for i, s := range m["streams"].([]any) {
		path := index("streams", i)
		st := d.stream(s, path)
		if st == nil {
			continue
		}
		if prev, dup := names[st.Name]; dup {
			d.fail(path+".name", "stream name %q is already used by %s", st.Name, prev)
		}
		names[st.Name] = path
		src.Streams = append(src.Streams, st)
	}
	if check, _, ok := d.component(m["check"], "check", "CheckStream"); ok {
		src.CheckStreams = strList(check["stream_names"])
		for i, n := range src.CheckStreams {
			if _, ok := names[n]; !ok && len(names) > 0 {
				d.fail(fmt.Sprintf("check.stream_names[%d]", i), "stream %q is not defined in streams", n)
			}
		}
	}
	if spec, ok := m["spec"]; ok {
		if sm, _, ok := d.component(spec, "spec", "Spec"); ok {
			src.Spec = sm
		}
	}
	if cl, ok := m["concurrency_level"]; ok {
		if clm, _, ok := d.component(cl, "concurrency_level", "ConcurrencyLevel"); ok {
			if n, ok := clm["default_concurrency"].(int64); ok && n > 0 {
				src.ConcurrencyLevel = int(n)
			}
		}
	}
	return src
}

func (d *decoder) errsFor(prefix string) (string, bool) {
	for _, e := range d.errs {
		if strings.HasPrefix(e, prefix) {
			return e, true
		}
	}
	return "", false
}

func (d *decoder) stream(v any, path string) *Stream {
	m, _, ok := d.component(v, path, "DeclarativeStream")
	if !ok {
		return nil
	}
	st := &Stream{Path: path}
	st.Name, _ = m["name"].(string)
	if st.Name == "" {
		d.fail(path+".name", "is required")
	}
	for _, f := range []string{"incremental_sync", "transformations", "state_migrations", "file_uploader"} {
		if x, ok := m[f]; ok && x != nil && !isFalsy(x) {
			d.unsupported(x, join(path, f))
		}
	}
	switch pk := m["primary_key"].(type) {
	case string:
		if pk != "" {
			st.PrimaryKey = [][]string{{pk}}
		}
	case []any:
		for _, e := range pk {
			if l, ok := e.([]any); ok {
				st.PrimaryKey = append(st.PrimaryKey, strList(l))
			} else {
				st.PrimaryKey = append(st.PrimaryKey, []string{interp.String(e)})
			}
		}
	}
	if sl, ok := m["schema_loader"]; ok && sl != nil {
		if slm, _, ok := d.component(sl, path+".schema_loader", "InlineSchemaLoader"); ok {
			st.Schema, _ = slm["schema"].(map[string]any)
		}
	}
	st.Retriever = d.retriever(m["retriever"], path+".retriever")
	return st
}

// unsupported reports each component at v (a component or a list of them).
func (d *decoder) unsupported(v any, path string) {
	switch x := v.(type) {
	case []any:
		for i, e := range x {
			d.unsupported(e, index(path, i))
		}
	case map[string]any:
		typ, _ := x["type"].(string)
		if typ == "" {
			typ = "component"
		}
		d.fail(path, "%s is not supported yet", typ)
	}
}

func (d *decoder) retriever(v any, path string) *Retriever {
	m, _, ok := d.component(v, path, "SimpleRetriever")
	if !ok {
		return nil
	}
	r := &Retriever{}
	if pr, ok := m["partition_router"]; ok && pr != nil && !isFalsy(pr) {
		d.unsupported(pr, path+".partition_router")
	}
	if dec, ok := m["decoder"]; ok && dec != nil {
		d.component(dec, path+".decoder", "JsonDecoder")
	}
	r.Requester = d.requester(m["requester"], path+".requester", allAuth)
	r.Selector = d.selector(m["record_selector"], path+".record_selector")
	if p, ok := m["paginator"]; ok && p != nil {
		r.Paginator = d.paginator(p, path+".paginator")
	}
	if r.Paginator != nil && r.Requester != nil {
		d.checkCollisions(r.Requester, r.Paginator)
	}
	return r
}

var allAuth = []string{NoAuth, BasicAuth, BearerAuth, APIKeyAuth, OAuth, SessionToken}
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
	r.Params = d.mapping(m, "request_parameters", path)
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
	if r.BodyJSON != nil && r.BodyData != nil {
		d.fail(path, "request_body_json and request_body_data cannot both be set")
	}
	if p, ok := m["$parameters"].(map[string]any); ok {
		r.Parameters = p
	}
	r.AllowedHosts = strList(m["allowed_hosts"])
	if a, ok := m["authenticator"]; ok && a != nil {
		r.Auth = d.auth(a, path+".authenticator", auths)
	}
	if eh, ok := m["error_handler"]; ok && eh != nil {
		r.ErrorHandler = d.errorHandler(eh, path+".error_handler")
	}
	return r
}

func (d *decoder) selector(v any, path string) *Selector {
	m, _, ok := d.component(v, path, "RecordSelector")
	if !ok {
		return nil
	}
	s := &Selector{}
	if ex, _, ok := d.component(m["extractor"], path+".extractor", "DpathExtractor"); ok {
		for i, seg := range ex["field_path"].([]any) {
			s.FieldPath = append(s.FieldPath, d.value(seg, fmt.Sprintf("%s.extractor.field_path[%d]", path, i)))
		}
	}
	if f, ok := m["record_filter"]; ok && f != nil {
		if fm, _, ok := d.component(f, path+".record_filter", "RecordFilter"); ok {
			s.Filter = d.tpl(fm, "condition", path+".record_filter")
			if s.Filter == nil {
				s.Filter = interp.Constant(false, path+".record_filter.condition")
			}
		}
	}
	return s
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
		if !p.IsStatic() {
			return ""
		}
		parts = append(parts, p.Source)
	}
	return strings.Join(parts, ".")
}

func (d *decoder) paginator(v any, path string) *Paginator {
	m, typ, ok := d.component(v, path, "DefaultPaginator", "NoPagination")
	if !ok || typ == "NoPagination" {
		return nil
	}
	p := &Paginator{Path: path}
	sp := path + ".pagination_strategy"
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
		if p.PageSize == nil {
			d.fail(sp+".page_size", "is required for PageIncrement")
		}
		if n, ok := sm["start_from_page"].(int64); ok {
			p.StartFromPage = n
		}
	case CursorPagination:
		p.CursorValue = d.tpl(sm, "cursor_value", sp)
		p.StopCondition = d.tpl(sm, "stop_condition", sp)
	}
	if o, ok := m["page_size_option"]; ok && o != nil {
		p.PageSizeOption = d.requestOption(o, path+".page_size_option", false)
		if p.PageSize == nil && p.PageSizeOption != nil {
			d.fail(path+".page_size_option", "needs pagination_strategy.page_size to be set")
		}
	}
	if o, ok := m["page_token_option"]; ok && o != nil {
		p.PageTokenOption = d.requestOption(o, path+".page_token_option", true)
	}
	return p
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

// checkCollisions refuses a key injected twice into the same place.
func (d *decoder) checkCollisions(r *Requester, p *Paginator) {
	type place struct{ where, key, path string }
	var places []place
	add := func(where string, m *Mapping, path string) {
		if m == nil {
			return
		}
		for _, k := range m.Keys {
			places = append(places, place{where, k, join(path, k)})
		}
	}
	add(InjectParam, r.Params, r.Path+".request_parameters")
	add(InjectHeader, r.Headers, r.Path+".request_headers")
	if bd, ok := r.BodyData.(*Mapping); ok {
		add(InjectBodyData, bd, r.Path+".request_body_data")
	}
	if bj, ok := r.BodyJSON.(map[string]any); ok {
		for _, k := range interp.SortedKeys(bj) {
			places = append(places, place{InjectBodyJSON, k, r.Path + ".request_body_json." + k})
		}
	}
	for _, o := range []*RequestOption{p.PageSizeOption, p.PageTokenOption} {
		if k := o.Key(); k != "" {
			for _, pl := range places {
				same := pl.key == k
				if o.InjectInto == InjectHeader {
					same = strings.EqualFold(pl.key, k)
				}
				if pl.where == o.InjectInto && same {
					d.fail(o.Path, "%s %q is also set at %s: a key may be injected only once", o.InjectInto, k, pl.path)
				}
			}
			places = append(places, place{o.InjectInto, k, o.Path})
		}
	}
}

func (d *decoder) auth(v any, path string, allowed []string) *Auth {
	m, typ, ok := d.component(v, path, allowed...)
	if !ok {
		return nil
	}
	a := &Auth{Type: typ, Path: path, Raw: m}
	a.Parameters, _ = m["$parameters"].(map[string]any)
	switch typ {
	case NoAuth:
		return nil
	case BasicAuth:
		a.Username = d.tpl(m, "username", path)
		a.Password = d.tpl(m, "password", path)
	case BearerAuth:
		a.Token = d.tpl(m, "api_token", path)
	case APIKeyAuth:
		a.Token = d.tpl(m, "api_token", path)
		header, hasHeader := m["header"].(string)
		inject, hasInject := m["inject_into"]
		switch {
		case hasHeader && hasInject:
			d.fail(path, "header and inject_into cannot both be set")
		case hasHeader:
			a.Inject = &RequestOption{Path: path + ".header", InjectInto: InjectHeader, FieldName: d.value(header, path+".header")}
		case hasInject:
			a.Inject = d.requestOption(inject, path+".inject_into", false)
		default:
			d.fail(path+".inject_into", "is required")
		}
	case OAuth:
		a.OAuth = d.oauth(m, path)
	case SessionToken:
		a.Session = d.session(m, path)
	}
	return a
}

func (d *decoder) oauth(m map[string]any, path string) *OAuthConfig {
	o := &OAuthConfig{
		Endpoint:         d.tpl(m, "token_refresh_endpoint", path),
		ClientID:         d.tpl(m, "client_id", path),
		ClientSecret:     d.tpl(m, "client_secret", path),
		RefreshToken:     d.tpl(m, "refresh_token", path),
		ClientIDName:     str(m, "client_id_name", "client_id"),
		ClientSecretName: str(m, "client_secret_name", "client_secret"),
		RefreshTokenName: str(m, "refresh_token_name", "refresh_token"),
		GrantTypeName:    str(m, "grant_type_name", "grant_type"),
		GrantType:        str(m, "grant_type", "refresh_token"),
		Scopes:           strList(m["scopes"]),
		AccessTokenName:  str(m, "access_token_name", "access_token"),
		AccessTokenValue: d.tpl(m, "access_token_value", path),
		ExpiresInName:    str(m, "expires_in_name", "expires_in"),
		TokenExpiryDate:  d.tpl(m, "token_expiry_date", path),
		ExpiryDateFormat: str(m, "token_expiry_date_format", ""),
		ExtraBody:        d.mapping(m, "refresh_request_body", path),
		Headers:          d.mapping(m, "refresh_request_headers", path),
		FormEncoded:      m["refresh_request_body_encoding"] == "form",
	}
	if o.GrantType != "refresh_token" && o.GrantType != "client_credentials" {
		d.fail(path+".grant_type", "grant type %q is not supported: only refresh_token and client_credentials are (PKCE, authorization code and other flows need custom code)", o.GrantType)
	}
	if u, ok := m["refresh_token_updater"]; ok && u != nil {
		um, _, ok := d.component(u, path+".refresh_token_updater", "RefreshTokenUpdater")
		if ok {
			o.Updater = &TokenUpdater{
				RefreshTokenName: str(um, "refresh_token_name", "refresh_token"),
				AccessTokenPath:  pathOr(um["access_token_config_path"], "credentials", "access_token"),
				RefreshTokenPath: pathOr(um["refresh_token_config_path"], "credentials", "refresh_token"),
				ExpiryDatePath:   pathOr(um["token_expiry_date_config_path"], "credentials", "token_expiry_date"),
			}
		}
	}
	if o.ClientID == nil && o.Updater == nil {
		d.fail(path+".client_id", "is required")
	}
	if o.ClientSecret == nil && o.Updater == nil {
		d.fail(path+".client_secret", "is required")
	}
	if o.GrantType == "refresh_token" && o.RefreshToken == nil && o.Updater == nil {
		d.fail(path+".refresh_token", "is required with grant_type refresh_token")
	}
	return o
}

func pathOr(v any, def ...string) []string {
	if l := strList(v); len(l) > 0 {
		return l
	}
	return def
}

func (d *decoder) session(m map[string]any, path string) *SessionConfig {
	s := &SessionConfig{TokenPath: strList(m["session_token_path"])}
	s.Login = d.requester(m["login_requester"], path+".login_requester", loginAuth)
	if e, ok := m["expiration_duration"].(string); ok && e != "" {
		dur, err := interp.ParseDuration(e)
		if err != nil {
			d.fail(path+".expiration_duration", "%v", err)
		} else {
			s.Expiration = &dur
		}
	}
	if dec, ok := m["decoder"]; ok && dec != nil {
		d.component(dec, path+".decoder", "JsonDecoder")
	}
	ra, typ, ok := d.component(m["request_authentication"], path+".request_authentication", "ApiKey", "Bearer")
	if !ok {
		return s
	}
	if typ == "Bearer" {
		s.Bearer = true
		return s
	}
	s.Inject = d.requestOption(ra["inject_into"], path+".request_authentication.inject_into", false)
	if s.Inject != nil && s.Inject.InjectInto != InjectHeader && s.Inject.InjectInto != InjectParam {
		d.fail(path+".request_authentication.inject_into.inject_into", "must be header or request_parameter")
	}
	s.APIToken = d.tpl(ra, "api_token", path+".request_authentication")
	return s
}

func (d *decoder) errorHandler(v any, path string) *ErrorHandler {
	m, typ, ok := d.component(v, path, "DefaultErrorHandler", "CompositeErrorHandler")
	if !ok {
		return nil
	}
	h := &ErrorHandler{}
	if typ == "CompositeErrorHandler" {
		for i, e := range m["error_handlers"].([]any) {
			if sub := d.errorHandler(e, index(path+".error_handlers", i)); sub != nil {
				h.Handlers = append(h.Handlers, sub)
			}
		}
		return h
	}
	if n, ok := m["max_retries"].(int64); ok {
		nn := int(n)
		h.MaxRetries = &nn
	}
	if bs, ok := m["backoff_strategies"].([]any); ok {
		for i, b := range bs {
			bp := index(path+".backoff_strategies", i)
			bm, btyp, ok := d.component(b, bp, "ExponentialBackoffStrategy", "ConstantBackoffStrategy", "WaitTimeFromHeader", "WaitUntilTimeFromHeader")
			if !ok {
				continue
			}
			h.Backoff = append(h.Backoff, Backoff{Type: btyp, Factor: num(bm["factor"], 5), Seconds: num(bm["backoff_time_in_seconds"], 0),
				Header: str(bm, "header", ""), Regex: str(bm, "regex", ""), MaxWait: num(bm["max_waiting_time_in_seconds"], 0), MinWait: num(bm["min_wait"], 0)})
		}
	}
	if fs, ok := m["response_filters"].([]any); ok {
		for i, f := range fs {
			fp := index(path+".response_filters", i)
			fm, _, ok := d.component(f, fp, "HttpResponseFilter")
			if !ok {
				continue
			}
			rf := ResponseFilter{Action: str(fm, "action", ""), MessageContains: str(fm, "error_message_contains", ""),
				Predicate: d.tpl(fm, "predicate", fp), ErrorMessage: d.tpl(fm, "error_message", fp), FailureType: str(fm, "failure_type", "")}
			codes, _ := fm["http_codes"].([]any)
			for _, c := range codes {
				rf.HTTPCodes = append(rf.HTTPCodes, int(c.(int64)))
			}
			sort.Ints(rf.HTTPCodes)
			h.Filters = append(h.Filters, rf)
		}
	}
	return h
}

func num(v any, def float64) float64 {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case float64:
		return x
	case string:
		if f, err := strconv.ParseFloat(x, 64); err == nil {
			return f
		}
	}
	return def
}
