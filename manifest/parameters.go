package manifest

import (
	"fmt"
	"sort"
)

// defaultTypes fills in the type of a component that has none, keyed by
// "<ParentType>.<field>", as the reference's component transformer does.
var defaultTypes = map[string]string{
	"DeclarativeSource.check":                   "CheckStream",
	"DeclarativeSource.spec":                    "Spec",
	"DeclarativeSource.streams":                 "DeclarativeStream",
	"ConditionalStreams.streams":                "DeclarativeStream",
	"StateDelegatingStream.full_refresh_stream": "DeclarativeStream",
	"StateDelegatingStream.incremental_stream":  "DeclarativeStream",
	"DeclarativeStream.retriever":               "SimpleRetriever",
	"DeclarativeStream.schema_loader":           "JsonFileSchemaLoader", // InlineSchemaLoader when it holds a schema
	"DatetimeBasedCursor.start_datetime":        "MinMaxDatetime",
	"DatetimeBasedCursor.end_datetime":          "MinMaxDatetime",
	"DatetimeBasedCursor.start_time_option":     "RequestOption",
	"DatetimeBasedCursor.end_time_option":       "RequestOption",
	"SimpleRetriever.requester":                 "HttpRequester",
	"SimpleRetriever.record_selector":           "RecordSelector",
	"SimpleRetriever.paginator":                 "NoPagination",
	"RecordSelector.extractor":                  "DpathExtractor",
	"DpathExtractor.record_expander":            "RecordExpander",
	"RecordSelector.record_filter":              "RecordFilter",
	"DefaultPaginator.page_size_option":         "RequestOption",
	"HttpRequester.error_handler":               "DefaultErrorHandler",
	"ApiKeyAuthenticator.inject_into":           "RequestOption",
	"SessionTokenAuthenticator.login_requester": "HttpRequester",
	"OAuthAuthenticator.refresh_token_updater":  "RefreshTokenUpdater",
	"DefaultErrorHandler.response_filters":      "HttpResponseFilter",
	"CompositeErrorHandler.error_handlers":      "DefaultErrorHandler",
	"QueryProperties.property_chunking":         "PropertyChunking",

	"AsyncRetriever.creation_requester":        "HttpRequester",
	"AsyncRetriever.polling_requester":         "HttpRequester",
	"AsyncRetriever.download_requester":        "HttpRequester",
	"AsyncRetriever.download_target_requester": "HttpRequester",
	"AsyncRetriever.url_requester":             "HttpRequester",
	"AsyncRetriever.abort_requester":           "HttpRequester",
	"AsyncRetriever.delete_requester":          "HttpRequester",
	"AsyncRetriever.record_selector":           "RecordSelector",
	"AsyncRetriever.status_extractor":          "DpathExtractor",
	"AsyncRetriever.download_target_extractor": "DpathExtractor",
	"AsyncRetriever.urls_extractor":            "DpathExtractor",
	"AsyncRetriever.download_extractor":        "DpathExtractor",
	"AsyncRetriever.status_mapping":            "AsyncJobStatusMap",
	"AsyncRetriever.download_paginator":        "NoPagination",

	"ListPartitionRouter.request_option":             "RequestOption",
	"SubstreamPartitionRouter.parent_stream_configs": "ParentStreamConfig",
	"ParentStreamConfig.request_option":              "RequestOption",
	"ParentStreamConfig.stream":                      "DeclarativeStream",

	// records lane: transformations, schema loaders, dynamic streams
	"AddFields.fields":                                  "AddedFieldDefinition",
	"DpathFlattenFields.key_transformation":             "KeyTransformation",
	"DynamicSchemaLoader.retriever":                     "SimpleRetriever",
	"DynamicSchemaLoader.schema_filter":                 "RecordFilter",
	"DynamicSchemaLoader.schema_type_identifier":        "SchemaTypeIdentifier",
	"DynamicDeclarativeStream.stream_template":          "DeclarativeStream",
	"DynamicDeclarativeStream.components_resolver":      "ConfigComponentsResolver",
	"HttpComponentsResolver.retriever":                  "SimpleRetriever",
	"HttpComponentsResolver.components_mapping":         "ComponentMappingDefinition",
	"ConfigComponentsResolver.stream_config":            "StreamConfig",
	"ConfigComponentsResolver.components_mapping":       "ComponentMappingDefinition",
	"ParametrizedComponentsResolver.stream_parameters":  "StreamParametersDefinition",
	"ParametrizedComponentsResolver.components_mapping": "ComponentMappingDefinition",
	"CheckStream.dynamic_streams_check_configs":         "DynamicStreamCheckConfig",
}

// noParameters are components that take no $parameters as fields: a
// stream's field_path parameter must not turn a RequestOption's field_name
// into a conflicting field_path.
var noParameters = map[string]bool{"RequestOption": true, "RequestPath": true}

// Propagate fills default types and hands $parameters down the tree: a
// child's own parameters win over its parent's, and a typed component gets
// each parameter as a field when that field is missing or empty.
func Propagate(root map[string]any) {
	propagate(root, "", map[string]any{}, false)
}

// PropagateStream propagates the $parameters of one stream made from a
// dynamic stream's template, again: with parentWins (use_parent_parameters)
// the stream's parameters win over its components' own.
func PropagateStream(stream map[string]any, parentWins bool) {
	propagate(stream, "", map[string]any{}, parentWins)
}

func propagate(v any, parentType string, params map[string]any, parentWins bool) {
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			propagate(e, parentType, params, parentWins)
		}
	case map[string]any:
		if isSchemaObject(x) {
			return
		}
		typ, _ := x["type"].(string)
		current := params
		if own, ok := x["$parameters"].(map[string]any); ok || typ != "" {
			current = make(map[string]any, len(params)+len(own))
			first, second := params, own
			if parentWins {
				first, second = own, params
			}
			for k, e := range first {
				current[k] = e
			}
			for k, e := range second {
				current[k] = e
			}
		}
		if typ != "" && !noParameters[typ] {
			for k, e := range current {
				if f, ok := x[k]; !ok || isFalsy(f) {
					x[k] = DeepCopy(e) // a copy: a parameter that is a component must not be shared, or it could come to hold itself
				}
			}
			if len(current) > 0 {
				x["$parameters"] = current
			}
		}
		for field, child := range x {
			if field == "$parameters" || field == "definitions" || (typ == "" && field == "type") {
				continue
			}
			childParams := current
			if typ == "" {
				childParams = params
			}
			if _, ok := childParams[field]; ok {
				childParams = without(childParams, field)
			}
			fillDefaultType(child, typ+"."+field)
			propagate(child, typOrParent(typ, parentType), childParams, parentWins)
		}
	}
}

func typOrParent(typ, parent string) string {
	if typ != "" {
		return typ
	}
	return parent
}

// fillDefaultType gives a typeless child its default type; one with a
// class_name takes the custom type of its place, or none, as in the CDK.
func fillDefaultType(child any, key string) {
	fill := func(m map[string]any) {
		if _, has := m["type"]; has {
			return
		}
		def, ok := defaultTypes[key]
		if _, custom := m["class_name"]; custom {
			def, ok = customTypes[key]
		}
		if !ok {
			return
		}
		m["type"] = def
		if _, inline := m["schema"]; inline && key == "DeclarativeStream.schema_loader" {
			m["type"] = "InlineSchemaLoader"
		}
	}
	switch c := child.(type) {
	case map[string]any:
		fill(c)
	case []any:
		for _, e := range c {
			if m, ok := e.(map[string]any); ok {
				fill(m)
			}
		}
	}
}

func isSchemaObject(m map[string]any) bool {
	switch t := m["type"].(type) {
	case string:
		return t == "object"
	case []any:
		for _, e := range t {
			if e == "object" {
				return true
			}
		}
	}
	return false
}

func isFalsy(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case bool:
		return !x
	case int64:
		return x == 0
	case float64:
		return x == 0
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}

func without(m map[string]any, key string) map[string]any {
	out := make(map[string]any, len(m))
	for k, e := range m {
		if k != key {
			out[k] = e
		}
	}
	return out
}

// parameterErrors lists every $parameters that is not a mapping, with its
// path: the reference fails on them when it merges parameters, and
// propagation would pass them over without a word.
func parameterErrors(v any, path string) []string {
	var errs []string
	switch x := v.(type) {
	case []any:
		for i, e := range x {
			errs = append(errs, parameterErrors(e, index(path, i))...)
		}
	case map[string]any:
		if isSchemaObject(x) {
			return nil
		}
		for k, e := range x {
			if k == "definitions" && path == "" {
				continue
			}
			if _, ok := e.(map[string]any); !ok && k == "$parameters" {
				errs = append(errs, fmt.Sprintf("%s: expected object, but got %s", join(path, k), describe(e)))
				continue
			}
			errs = append(errs, parameterErrors(e, join(path, k))...)
		}
	}
	sort.Strings(errs)
	return errs
}
