package retrieve

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/runtime/extract"
	"github.com/airbyte-go/source-declarative/runtime/failure"
	"github.com/airbyte-go/source-declarative/runtime/incremental"
	"github.com/airbyte-go/source-declarative/runtime/transform"
)

// queryProperties runs a requester's QueryProperties for one stream: the
// property names, read from their endpoint once for all of the stream's
// slices and workers, cut into the chunks each page is requested with.
type queryProperties struct {
	m      *manifest.QueryProperties
	once   sync.Once
	chunks [][]string
	err    error
}

// propertyChunks are the chunks of properties each page is requested with,
// in order; the first call reads the properties endpoint.
func (q *queryProperties) propertyChunks(ctx context.Context, s *pages) ([][]string, error) {
	q.once.Do(func() {
		names := q.m.List
		if q.m.FromEndpoint != nil {
			names, q.err = propertiesFromEndpoint(ctx, s.env, s.st.Name, q.m.FromEndpoint)
		}
		if sel := q.m.Selector; sel != nil && q.err == nil {
			var selected map[string]bool
			var ok bool
			if selected, ok, q.err = selectedProperties(s.env, s.st.Name, sel); ok {
				names = slices.DeleteFunc(slices.Clone(names), func(n string) bool { return !selected[n] })
			}
		}
		if q.m.Chunking != nil {
			q.chunks = chunkProperties(names, q.m.Always, q.m.Chunking)
		} else {
			q.chunks = [][]string{names} // always_include_properties only go with chunking, as in the reference
		}
	})
	return q.chunks, q.err
}

// propertiesFromEndpoint reads the property names: the value at
// property_field_path of each record of the endpoint's retriever, in order.
// A record without a text or number there is skipped, with a warning (the
// reference would request a property named "[]" or "None").
func propertiesFromEndpoint(ctx context.Context, env *Env, stream string, fe *manifest.PropertiesFromEndpoint) ([]string, error) {
	vars := env.BuildVars(fe.Parameters)
	path, err := interp.RenderEach(fe.FieldPath, vars)
	if err != nil {
		return nil, failure.Config("%v", err)
	}
	var names []string
	skipped := 0
	err = readNested(ctx, env, stream, fe.Path, fe.Retriever, nil, "reading the property names of", func(obj *transform.Object) {
		v, _ := transform.Get(obj, path)
		switch x := v.(type) {
		case string:
			names = append(names, strings.Clone(x))
		case transform.Number:
			names = append(names, strings.Clone(string(x)))
		default:
			skipped++
		}
	})
	if err != nil {
		return nil, err
	}
	if skipped > 0 {
		env.Log("WARN", fmt.Sprintf("Stream %s: %d record(s) of %s have no text at property_field_path %q; they name no property", stream, skipped, fe.Path, strings.Join(path, "/")))
	}
	return names, nil
}

// chunkProperties cuts the names into chunks as the reference does. Without
// a limit there is one chunk, always_include_properties at its end. With
// one, each chunk starts with always_include_properties, which do not count,
// and takes names while their size stays within the limit: 1 per name, or
// with characters its length plus 3 (an encoded comma, "%2C"). A name larger
// than the limit gets a chunk of its own; unlike the reference, no chunk is
// made without a name of the list, except for an empty list.
func chunkProperties(names, always []string, c *manifest.PropertyChunking) [][]string {
	if c.Limit == 0 {
		return [][]string{append(append([]string{}, names...), always...)}
	}
	var chunks [][]string
	current := append([]string{}, always...)
	size := 0
	for _, name := range names {
		n := 1
		if c.LimitType == manifest.LimitCharacters {
			n = utf8.RuneCountInString(name) + 3
		}
		if size+n > c.Limit && size > 0 {
			chunks = append(chunks, current)
			current, size = append([]string{}, always...), 0
		}
		current = append(current, name)
		size += n
	}
	return append(chunks, current)
}

// mergeKey is the group of a record under GroupByKeyMergeStrategy: the
// values of its key fields. A record with a key field missing or falsy
// (null, false, 0, "", {} or []) has none and is emitted as it is, as in the
// reference. Values are compared as JSON, so a number key groups too (the
// reference fails on a key that is not text).
func mergeKey(rec *transform.Object, keys []string) (string, bool) {
	var b []byte
	for i, k := range keys {
		v, _ := rec.Get(k)
		if keyFalsy(v) {
			return "", false
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = transform.AppendJSON(b, v)
	}
	return string(b), true
}

func keyFalsy(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case bool:
		return !x
	case string:
		return x == ""
	case transform.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		return err == nil && f == 0
	case int64:
		return x == 0
	case float64:
		return x == 0
	case *transform.Object:
		return x.Len() == 0
	case []any:
		return len(x) == 0
	}
	return false
}

// deepMerge merges src into dst: objects under the same key merge, any other
// value replaces dst's, new keys go at the end.
func deepMerge(dst, src *transform.Object) {
	var at map[string]int
	if dst.Len() > 16 {
		at = make(map[string]int, dst.Len())
		for i, f := range dst.Fields {
			at[f.Key] = i
		}
	}
	for _, f := range src.Fields {
		i := -1
		if at != nil {
			if j, ok := at[f.Key]; ok {
				i = j
			}
		} else {
			for j := range dst.Fields {
				if dst.Fields[j].Key == f.Key {
					i = j
					break
				}
			}
		}
		if i < 0 {
			if at != nil {
				at[f.Key] = len(dst.Fields)
			}
			dst.Fields = append(dst.Fields, f)
			continue
		}
		cur, curObj := dst.Fields[i].Value.(*transform.Object)
		add, addObj := f.Value.(*transform.Object)
		if curObj && addObj {
			deepMerge(cur, add)
		} else {
			dst.Fields[i].Value = f.Value
		}
	}
}

// recordMerger gathers the records of a page's chunks: those with a merge
// key are merged by it and come out at the end, in the order their key was
// first seen; the others come out as they arrive, as in the reference.
type recordMerger struct {
	keys   []string
	out    [][]byte
	groups map[string]*transform.Object
	order  []*transform.Object
}

func (m *recordMerger) add(records [][]byte) error {
	for _, rec := range records {
		own := bytes.Clone(rec) // the body it was cut from is read into again
		obj, err := transform.Decode(own)
		if err != nil {
			return err
		}
		key, ok := mergeKey(obj, m.keys)
		if !ok {
			m.out = append(m.out, own)
			continue
		}
		if m.groups == nil {
			m.groups = map[string]*transform.Object{}
		}
		g := m.groups[key]
		if g == nil {
			g = &transform.Object{}
			m.groups[key] = g
			m.order = append(m.order, g)
		}
		deepMerge(g, obj)
	}
	return nil
}

// records are the page's records in the order they are emitted.
func (m *recordMerger) records() [][]byte {
	for _, g := range m.order {
		m.out = append(m.out, transform.AppendJSON(nil, g))
	}
	return m.out
}

// page requests one page once per chunk of properties, with the same
// token, and merges the chunks' records by key (with property_chunking).
// The page's response, for the paginator, is the last chunk's, as in the
// reference; a chunk whose response is ignored adds no records.
func (q *queryProperties) page(ctx context.Context, s *pages, pr pageRequest, sl *incremental.Slice, _ int) (*pageResult, extract.Page, [][]byte, error) {
	chunks, err := q.propertyChunks(ctx, s)
	if err != nil {
		return nil, extract.Page{}, nil, err
	}
	var merger *recordMerger
	if c := q.m.Chunking; c != nil {
		merger = &recordMerger{keys: c.MergeKeys}
	}
	base := pr.slice
	var res *pageResult
	var body extract.Page
	var all [][]byte
	for i, chunk := range chunks {
		list := make([]any, len(chunk))
		for j, p := range chunk {
			list[j] = p
		}
		pr.slice, pr.properties = base.WithExtra("query_properties", list), chunk
		var records [][]byte
		res, body, records, err = s.fetchPage(ctx, pr, sl, false)
		if err != nil {
			return nil, body, nil, err
		}
		shown := records
		if merger != nil {
			// Merged records come out with the last chunk, those without
			// a key as they come: a test read shows each with its page,
			// as the reference's does.
			before := len(merger.out)
			if err := merger.add(records); err != nil {
				return nil, body, nil, failure.System("stream %s: %v", s.st.Name, err)
			}
			shown = merger.out[before:]
		} else {
			all = append(all, records...)
		}
		if i < len(chunks)-1 && s.env.Observer != nil && !res.resp.Ignored {
			s.env.Observer.Page(s.st.Name, res.parts, res.resp, shown, fmt.Sprintf("next: chunk %d of %d of the properties", i+2, len(chunks)))
		}
	}
	if merger != nil {
		all = merger.records()
	}
	return res, body, all, nil
}

// streams is false: each page is requested once per chunk, read whole.
func (q *queryProperties) streams() bool { return false }
