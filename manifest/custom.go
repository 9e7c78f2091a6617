package manifest

import (
	"fmt"
	"strings"

	"github.com/airbyte-go/source-declarative/lang/interp"
)

// Custom is a custom Python component: a Custom* type with the class_name
// of a Python class. Airbyte's CDK builds it, in the components host
// (package components), and Go calls it by its path.
type Custom struct {
	Path      string // where it is in the resolved manifest; the host knows it by the same path
	Type      string // CustomRecordExtractor, CustomTransformation, ...
	ClassName string // e.g. source_declarative_manifest.components.MyExtractor
}

func (c *Custom) String() string {
	return fmt.Sprintf("%s %s at %s", c.Type, c.ClassName, c.Path)
}

// customTypes fills in the type of a component that has a class_name and
// no type, keyed by "<ParentType>.<field>", as the CDK's
// CUSTOM_COMPONENTS_MAPPING does.
var customTypes = map[string]string{
	"CompositeErrorHandler.backoff_strategies": "CustomBackoffStrategy",
	"DeclarativeStream.retriever":              "CustomRetriever",
	"DeclarativeStream.transformations":        "CustomTransformation",
	"DefaultErrorHandler.backoff_strategies":   "CustomBackoffStrategy",
	"DefaultPaginator.pagination_strategy":     "CustomPaginationStrategy",
	"HttpRequester.authenticator":              "CustomAuthenticator",
	"HttpRequester.error_handler":              "CustomErrorHandler",
	"RecordSelector.extractor":                 "CustomRecordExtractor",
	"SimpleRetriever.partition_router":         "CustomPartitionRouter",
}

// isCustom tells whether a component is custom Python code: a Custom* type,
// or a class_name on a component without type. A class_name beside a
// built-in type is not custom code: the CDK builds the typed component.
func isCustom(m map[string]any) bool {
	typ, _ := m["type"].(string)
	if strings.HasPrefix(typ, "Custom") {
		return true
	}
	_, hasClass := m["class_name"].(string)
	return typ == "" && hasClass
}

func customOf(m map[string]any, path string) *Custom {
	typ, _ := m["type"].(string)
	class, _ := m["class_name"].(string)
	return &Custom{Path: path, Type: typ, ClassName: class}
}

// customRefusal says why a custom component cannot run where it is, naming
// its class.
func customRefusal(m map[string]any) string {
	c := customOf(m, "")
	typ := c.Type
	if typ == "" {
		typ = "component"
	}
	class := "no class_name"
	if c.ClassName != "" {
		class = "class_name " + c.ClassName
	}
	return fmt.Sprintf("custom component %s (%s) is not supported here: the components host runs custom components of streams and of the spec's config_normalization_rules", typ, class)
}

// calledParts are the places in a stream where Go calls a custom component
// through its interface (one call per page, per slice or per request), the
// rest of the stream staying Go's; a custom component anywhere else (a
// custom retriever, requester, incremental sync, a router reading its
// parents) makes the CDK read the whole stream. A custom component inside
// the schema_loader makes the CDK give the stream's schema.
var calledParts = map[string]string{
	"retriever.record_selector.extractor":                    "CustomRecordExtractor",
	"retriever.record_selector.record_filter":                "CustomRecordFilter",
	"retriever.record_selector.schema_normalization":         "CustomSchemaNormalization",
	"retriever.requester.authenticator":                      "CustomAuthenticator",
	"retriever.paginator.pagination_strategy":                "CustomPaginationStrategy",
	"retriever.decoder":                                      "CustomDecoder", // of a SimpleRetriever (calledAt)
	"retriever.requester.error_handler":                      "CustomErrorHandler",
	"retriever.requester.error_handler.backoff_strategies[]": "CustomBackoffStrategy",
	"retriever.partition_router":                             "CustomPartitionRouter", // that reads no stream (calledAt)
	"retriever.partition_router[]":                           "CustomPartitionRouter",
	"transformations[]":                                      "CustomTransformation",
	"state_migrations[]":                                     "CustomStateMigration",
}

// calledAt tells whether Go calls the custom component c at rel in the
// stream m: one of calledParts, but a decoder only of a SimpleRetriever (an
// AsyncRetriever's decodes its jobs' answers), and a partition router only
// when it holds no stream (one that reads its parents or other streams in
// Python makes the CDK read the whole stream) and the stream has no
// incremental_sync (the CDK then drops a router that subclasses
// SinglePartitionRouter, which only Python can tell).
func calledAt(m map[string]any, rel string, c map[string]any) bool {
	switch {
	case calledParts[listless(rel)] == "":
		return false
	case rel == "retriever.decoder":
		r, _ := m["retriever"].(map[string]any)
		return r["type"] == "SimpleRetriever"
	case strings.HasPrefix(rel, "retriever.partition_router"):
		return !holdsStream(c) && (m["incremental_sync"] == nil || isFalsy(m["incremental_sync"]))
	}
	return true
}

// holdsStream tells whether a component holds a stream definition, or
// parent_stream_configs.
func holdsStream(v any) bool {
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			if holdsStream(e) {
				return true
			}
		}
	case map[string]any:
		if t, _ := x["type"].(string); t == "DeclarativeStream" || t == "StateDelegatingStream" {
			return true
		}
		if _, ok := x["parent_stream_configs"]; ok {
			return true
		}
		for k, e := range x {
			if k != "$parameters" && holdsStream(e) {
				return true
			}
		}
	}
	return false
}

// customParts is where the custom components of a manifest are and what
// runs them, found before decoding.
type customParts struct {
	d   *decoder
	all []*Custom
	// streams are the streams the CDK reads whole, by path, with the
	// component that makes it so; schemas the streams whose schema it gives;
	// auths the streams Go reads with a custom authenticator, their own or
	// a parent's (Stream.PythonTestRead).
	streams, schemas, auths map[string]*Custom
	// dynamic are the dynamic streams with custom components (in their
	// resolver or template), by path: the CDK makes their streams and reads them.
	dynamic map[string]*Custom
	called  map[string]*Custom // components Go calls, by path
	config  []*Custom          // custom config rules (spec.config_normalization_rules)
}

// findCustom walks the resolved manifest for custom components.
func (d *decoder) findCustom(resolved map[string]any) *customParts {
	cp := &customParts{d: d, streams: map[string]*Custom{}, schemas: map[string]*Custom{}, auths: map[string]*Custom{}, called: map[string]*Custom{}, dynamic: map[string]*Custom{}}
	for _, k := range interp.SortedKeys(resolved) {
		switch k {
		case "definitions", "metadata", "schemas":
			continue
		case "streams":
			streams, _ := resolved[k].([]any)
			for i, s := range streams {
				sm, _ := s.(map[string]any)
				if isConditionalStreams(s) {
					inner, _ := sm["streams"].([]any)
					for j, e := range inner {
						cp.stream(e, fmt.Sprintf("streams[%d].streams[%d]", i, j))
					}
					continue
				}
				cp.stream(s, index("streams", i))
			}
		case "dynamic_streams":
			list, _ := resolved[k].([]any)
			for i, ds := range list {
				path := index("dynamic_streams", i)
				cp.walk(ds, path, func(c *Custom) bool {
					if cp.dynamic[path] == nil {
						cp.dynamic[path] = c
					}
					return true
				})
			}
		case "spec":
			cp.walk(resolved[k], "spec", func(c *Custom) bool {
				if strings.HasPrefix(c.Path, "spec.config_normalization_rules.") {
					cp.config = append(cp.config, c)
					return true
				}
				return false
			})
		default:
			cp.walk(resolved[k], k, func(*Custom) bool { return false })
		}
	}
	return cp
}

// stream classifies the custom components of one stream definition and of
// the parent streams in it; it tells whether the CDK reads it whole.
func (cp *customParts) stream(v any, path string) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	if typ, _ := m["type"].(string); typ == "StateDelegatingStream" {
		whole := cp.stream(m["full_refresh_stream"], path+".full_refresh_stream")
		if cp.stream(m["incremental_stream"], path+".incremental_stream") || whole {
			cp.streams[path] = cp.streams[path+".full_refresh_stream"]
			if cp.streams[path] == nil {
				cp.streams[path] = cp.streams[path+".incremental_stream"]
			}
			return true
		}
		return false
	}
	var whole, auth *Custom
	var visit func(v any, rel string)
	visit = func(v any, rel string) {
		switch x := v.(type) {
		case []any:
			for i, e := range x {
				visit(e, fmt.Sprintf("%s[%d]", rel, i))
			}
		case map[string]any:
			if isSchemaObject(x) {
				return
			}
			abs := path + "." + rel
			if isCustom(x) {
				c := cp.add(x, abs)
				switch {
				case strings.HasPrefix(rel, "schema_loader"):
					if cp.schemas[path] == nil {
						cp.schemas[path] = c
					}
				case calledAt(m, rel, x):
					cp.called[abs] = c
					if strings.HasSuffix(rel, ".authenticator") && auth == nil {
						auth = c
					}
				case whole == nil:
					whole = c
				}
				return
			}
			for _, k := range interp.SortedKeys(x) {
				if k == "$parameters" || k == "schema" || !componentField(x, k) {
					continue
				}
				child := rel + "." + k
				if rel == "" {
					child = k
				}
				if k == "stream" && strings.HasSuffix(rel, "]") && strings.Contains(rel, "parent_stream_configs") {
					// A parent stream is a stream of its own: read whole by the CDK, its
					// children are too (Go's router cannot read its records).
					if cp.stream(x[k], abs+".stream") && whole == nil {
						whole = cp.streams[abs+".stream"]
					}
					if auth == nil {
						auth = cp.auths[abs+".stream"]
					}
					continue
				}
				visit(x[k], child)
			}
		}
	}
	for _, k := range interp.SortedKeys(m) {
		if k != "$parameters" && componentField(m, k) {
			visit(m[k], k)
		}
	}
	if whole != nil {
		cp.streams[path] = whole
	} else if auth != nil {
		cp.auths[path] = auth
	}
	return whole != nil
}

// componentField tells whether key of the component m is one of its type's
// fields: what a built-in component holds under another key is data the
// CDK never builds (a misspelt error_handlers beside error_handler).
func componentField(m map[string]any, key string) bool {
	typ, _ := m["type"].(string)
	if typ == "" || strings.HasPrefix(typ, "Custom") {
		return true
	}
	def := rawDefinition(typ)
	if def == nil {
		return true
	}
	props, _ := def["properties"].(map[string]any)
	_, ok := props[key]
	return ok
}

// listless writes a relative path with its list indexes left out of the
// brackets: transformations[2] is transformations[].
func listless(rel string) string {
	var b strings.Builder
	skip := false
	for _, r := range rel {
		switch {
		case r == '[':
			skip = true
			b.WriteRune(r)
		case r == ']':
			skip = false
			b.WriteRune(r)
		case !skip:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// walk finds the custom components outside streams; those take refuses are
// refused with their path.
func (cp *customParts) walk(v any, path string, take func(*Custom) bool) {
	switch x := v.(type) {
	case []any:
		for i, e := range x {
			cp.walk(e, index(path, i), take)
		}
	case map[string]any:
		if isSchemaObject(x) {
			return
		}
		if isCustom(x) {
			if !take(cp.add(x, path)) {
				cp.d.fail(path, "%s", customRefusal(x))
			}
			return
		}
		for _, k := range interp.SortedKeys(x) {
			if k == "schema" || k == "$parameters" || k == "default_values" || k == "list_of_parameters_for_stream" || !componentField(x, k) {
				continue // data, not components
			}
			cp.walk(x[k], join(path, k), take)
		}
	}
}

// add notes a custom component; one without class_name is refused, as the
// CDK's schema requires it.
func (cp *customParts) add(m map[string]any, path string) *Custom {
	c := customOf(m, path)
	switch {
	case c.ClassName == "":
		cp.d.fail(path+".class_name", "is required: a custom component %s names the Python class that implements it", c.Type)
	case c.Type == "":
		cp.d.fail(path+".type", "is required beside class_name %s: this place has no default custom type", c.ClassName)
	}
	cp.all = append(cp.all, c)
	return c
}

// custom returns the custom component Go calls at path, or nil.
func (d *decoder) custom(v any, path string) *Custom {
	if m, ok := v.(map[string]any); ok && isCustom(m) {
		if d.parts.called[path] != nil {
			return d.parts.called[path]
		}
		d.fail(path, "%s", customRefusal(m))
	}
	return nil
}

// AuthNames are the names of a PythonAuth map (Stream.PythonAuth), sorted:
// the streams whose requests Go authenticates for the CDK.
func AuthNames(auths map[string]*Auth) []string {
	return interp.SortedKeys(auths)
}
