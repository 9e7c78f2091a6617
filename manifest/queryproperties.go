package manifest

import (
	"github.com/airbyte-go/source-declarative/lang/interp"
)

// QueryProperties is a requester's QueryProperties: the properties a request
// asks for, listed or read from an endpoint, sent in chunks when the API
// takes only so many per request.
type QueryProperties struct {
	Path string
	// Param is the request parameter that carries a chunk, its properties
	// joined with ","; "" when the requester names the properties in its
	// templates instead (query_properties, fetch_properties_from_endpoint).
	Param        string
	List         []string                // the static property_list
	FromEndpoint *PropertiesFromEndpoint // instead of List
	// Always are always_include_properties, added to every chunk.
	Always   []string
	Chunking *PropertyChunking // nil: one chunk, records as they come
	// Selector, when set, keeps only the properties the read's configured
	// catalog selects for the stream.
	Selector *PropertySelector
}

// PropertySelector is a JsonSchemaPropertySelector: the property names are
// those of the configured stream's json_schema properties, after its
// transformations run on them as on a record.
type PropertySelector struct {
	Path            string
	Transformations []*Transformation
}

// PropertiesFromEndpoint reads the property names from another endpoint,
// once per sync: the value at FieldPath of each record.
type PropertiesFromEndpoint struct {
	Path       string
	FieldPath  []*interp.Template // rendered with config and parameters
	Retriever  *Retriever
	Parameters map[string]any
}

// Property limit types of a PropertyChunking.
const (
	LimitCharacters    = "characters"
	LimitPropertyCount = "property_count"
)

// PropertyChunking cuts the properties into chunks, each requested on its
// own, and merges the records of a page's chunks by key.
type PropertyChunking struct {
	Path      string
	LimitType string // LimitCharacters or LimitPropertyCount
	Limit     int    // 0: no limit, one chunk
	// MergeKeys are the record fields whose values group the records of
	// the chunks (GroupByKeyMergeStrategy's key; "id" by default, as in
	// the reference).
	MergeKeys []string
}

// requesterProperties finds the requester's QueryProperties: a
// request_parameters value, or the requester's query_properties or
// fetch_properties_from_endpoint, whose chunk reaches the request only
// through templates (stream_partition.extra_fields.query_properties). More
// than one is refused, as the reference refuses some of these pairs and
// would silently drop the others.
func (d *decoder) requesterProperties(m map[string]any, path string) *QueryProperties {
	var found []*QueryProperties
	var places []string
	if raw, ok := m["request_parameters"].(map[string]any); ok {
		for _, k := range interp.SortedKeys(raw) {
			if qp, ok := raw[k].(map[string]any); ok && qp["type"] == "QueryProperties" {
				p := join(join(path, "request_parameters"), k)
				if q := d.queryProperties(qp, p); q != nil {
					q.Param = k
					found = append(found, q)
				}
				places = append(places, p)
			}
		}
	}
	if x, ok := m["query_properties"]; ok && x != nil {
		p := join(path, "query_properties")
		if q := d.queryProperties(x, p); q != nil {
			found = append(found, q)
		}
		places = append(places, p)
	}
	if x, ok := m["fetch_properties_from_endpoint"]; ok && x != nil {
		p := join(path, "fetch_properties_from_endpoint")
		if fe := d.propertiesFromEndpoint(x, p); fe != nil {
			found = append(found, &QueryProperties{Path: p, FromEndpoint: fe})
		}
		places = append(places, p)
	}
	if len(places) > 1 {
		d.fail(places[1], "is a second QueryProperties of the requester (the first is %s): a stream may define only one, as in Airbyte", places[0])
		return nil
	}
	if len(found) == 0 {
		return nil
	}
	return found[0]
}

func (d *decoder) queryProperties(v any, path string) *QueryProperties {
	m, _, ok := d.component(v, path, "QueryProperties")
	if !ok {
		return nil
	}
	q := &QueryProperties{Path: path, Always: strList(m["always_include_properties"])}
	switch list := m["property_list"].(type) {
	case []any:
		q.List = strList(list)
	default:
		q.FromEndpoint = d.propertiesFromEndpoint(list, path+".property_list")
	}
	if sel, ok := m["property_selector"]; ok && sel != nil {
		if sm, _, ok := d.component(sel, path+".property_selector", "JsonSchemaPropertySelector"); ok {
			q.Selector = &PropertySelector{Path: path + ".property_selector",
				Transformations: d.transformations(sm["transformations"], path+".property_selector.transformations")}
		}
	}
	if ch, ok := m["property_chunking"]; ok && ch != nil {
		q.Chunking = d.propertyChunking(ch, path+".property_chunking")
	} else if len(q.Always) > 0 {
		d.warn(path+".always_include_properties", "does nothing without property_chunking, as in Airbyte: add these to property_list to request them")
	}
	return q
}

func (d *decoder) propertiesFromEndpoint(v any, path string) *PropertiesFromEndpoint {
	m, _, ok := d.component(v, path, "PropertiesFromEndpoint")
	if !ok {
		return nil
	}
	fe := &PropertiesFromEndpoint{Path: path}
	for i, seg := range listOf(m["property_field_path"]) {
		fe.FieldPath = append(fe.FieldPath, d.value(seg, index(path+".property_field_path", i)))
	}
	if len(fe.FieldPath) == 0 {
		d.fail(path+".property_field_path", "must name the field holding each property")
	}
	if p, ok := m["$parameters"].(map[string]any); ok {
		fe.Parameters = p
	}
	rm, _ := m["retriever"].(map[string]any)
	if pr, ok := rm["partition_router"]; ok && pr != nil && !isFalsy(pr) {
		// The reference reads this retriever once, without a partition.
		d.fail(path+".retriever.partition_router", "is not run by Airbyte for the properties endpoint (it is read once, without partitions): remove it")
		return nil
	}
	fe.Retriever = d.simpleRetriever(rm, path+".retriever")
	if fe.Retriever != nil && fe.Retriever.Requester != nil && fe.Retriever.Requester.Properties != nil {
		d.fail(fe.Retriever.Requester.Properties.Path, "properties of the properties endpoint are not supported: list them in its request instead")
	}
	return fe
}

func (d *decoder) propertyChunking(v any, path string) *PropertyChunking {
	m, _, ok := d.component(v, path, "PropertyChunking")
	if !ok {
		return nil
	}
	c := &PropertyChunking{Path: path, LimitType: str(m, "property_limit_type", LimitPropertyCount), MergeKeys: []string{"id"}}
	if n, ok := m["property_limit"]; ok && n != nil {
		limit, _ := n.(int64) // an integer: the schema says so
		c.Limit = int(limit)
		if c.Limit < 0 {
			d.fail(path+".property_limit", "must not be negative")
		}
	}
	if s, ok := m["record_merge_strategy"]; ok && s != nil {
		if sm, _, ok := d.component(s, path+".record_merge_strategy", "GroupByKeyMergeStrategy"); ok {
			switch k := sm["key"].(type) {
			case string:
				c.MergeKeys = []string{k}
			case []any:
				c.MergeKeys = strList(k)
			}
			if len(c.MergeKeys) == 0 {
				d.fail(path+".record_merge_strategy.key", "must name at least one field")
			}
		}
	}
	return c
}
