package manifest

import (
	"fmt"
	"strings"

	"github.com/airbyte-go/source-declarative/lang/interp"
)

// Partition router types.
const (
	ListRouter      = "ListPartitionRouter"
	SubstreamRouter = "SubstreamPartitionRouter"
	GroupingRouter  = "GroupingPartitionRouter"
	UnionRouter     = "UnionPartitionRouter"
	// CustomRouter is a custom Python router that reads no stream
	// (PartitionRouter.Custom): Go asks it for its slices and their
	// request options.
	CustomRouter = "CustomPartitionRouter"
	// ProductRouter is a list of routers in partition_router: every
	// combination of their partitions.
	ProductRouter = "CartesianProduct"
)

// PartitionRouter is a retriever's partition_router: one router, or a list
// of them (Type ProductRouter). Exactly the field of its Type is set.
type PartitionRouter struct {
	Type       string
	Path       string
	Parameters map[string]any
	List       *ListPartitionRouter
	Substream  *SubstreamPartitionRouter
	Grouping   *GroupingPartitionRouter
	Union      *UnionPartitionRouter
	Product    []*PartitionRouter
	Custom     *Custom // a CustomRouter's Python class
}

// ListPartitionRouter yields one partition per value.
type ListPartitionRouter struct {
	CursorField *interp.Template
	// Values is the literal list of the manifest; ValuesTemplate, when set
	// instead, renders (over config) to the list.
	Values         []any
	ValuesTemplate *interp.Template
	RequestOption  *RequestOption
}

// SubstreamPartitionRouter yields one partition per record of its parents.
type SubstreamPartitionRouter struct {
	Parents []*ParentStreamConfig
}

// ParentStreamConfig says how a parent stream's records become partitions.
type ParentStreamConfig struct {
	Path                  string
	Stream                *Stream
	ParentKey             *interp.Template // a path into the parent record, segments split on "/"
	PartitionField        *interp.Template
	RequestOption         *RequestOption
	IncrementalDependency bool
	ExtraFields           [][]*interp.Template
	LazyReadPointer       []*interp.Template
	Parameters            map[string]any
}

// GroupingPartitionRouter batches the partitions of another router.
type GroupingPartitionRouter struct {
	GroupSize   int
	Underlying  *PartitionRouter
	Deduplicate bool
}

// UnionPartitionRouter yields each value of its routers' partitions once.
type UnionPartitionRouter struct {
	PartitionField *interp.Template
	Routers        []*PartitionRouter
}

var routerTypes = []string{SubstreamRouter, ListRouter, GroupingRouter, UnionRouter}

// partitionRouter decodes a retriever's partition_router: a router or a
// non-empty list of them.
func (d *decoder) partitionRouter(v any, path string) *PartitionRouter {
	if l, ok := v.([]any); ok {
		pr := &PartitionRouter{Type: ProductRouter, Path: path}
		for i, e := range l {
			if r := d.router(e, index(path, i), routerTypes...); r != nil {
				pr.Product = append(pr.Product, r)
			}
		}
		if len(pr.Product) != len(l) {
			return nil
		}
		return pr
	}
	return d.router(v, path, routerTypes...)
}

func (d *decoder) router(v any, path string, allowed ...string) *PartitionRouter {
	if c := d.custom(v, path); c != nil {
		return &PartitionRouter{Type: CustomRouter, Path: path, Custom: c}
	}
	m, typ, ok := d.component(v, path, allowed...)
	if !ok {
		return nil
	}
	pr := &PartitionRouter{Type: typ, Path: path}
	pr.Parameters, _ = m["$parameters"].(map[string]any)
	switch typ {
	case ListRouter:
		pr.List = d.listRouter(m, path)
	case SubstreamRouter:
		pr.Substream = d.substreamRouter(m, path)
	case GroupingRouter:
		pr.Grouping = d.groupingRouter(m, path)
	case UnionRouter:
		pr.Union = d.unionRouter(m, path)
	}
	return pr
}

func (d *decoder) listRouter(m map[string]any, path string) *ListPartitionRouter {
	l := &ListPartitionRouter{CursorField: d.tpl(m, "cursor_field", path)}
	switch vs := m["values"].(type) {
	case string:
		l.ValuesTemplate = d.value(vs, path+".values")
	case []any:
		l.Values = vs
	}
	if o, ok := m["request_option"]; ok && o != nil {
		l.RequestOption = d.requestOption(o, path+".request_option", false)
	}
	return l
}

func (d *decoder) substreamRouter(m map[string]any, path string) *SubstreamPartitionRouter {
	s := &SubstreamPartitionRouter{}
	for i, e := range m["parent_stream_configs"].([]any) {
		if pc := d.parentConfig(e, index(path+".parent_stream_configs", i)); pc != nil {
			s.Parents = append(s.Parents, pc)
		}
	}
	return s
}

func (d *decoder) parentConfig(v any, path string) *ParentStreamConfig {
	m, _, ok := d.component(v, path, "ParentStreamConfig")
	if !ok {
		return nil
	}
	pc := &ParentStreamConfig{Path: path}
	pc.Parameters, _ = m["$parameters"].(map[string]any)
	pc.ParentKey = d.tpl(m, "parent_key", path)
	pc.PartitionField = d.tpl(m, "partition_field", path)
	pc.IncrementalDependency, _ = m["incremental_dependency"].(bool)
	if o, ok := m["request_option"]; ok && o != nil {
		pc.RequestOption = d.requestOption(o, path+".request_option", false)
	}
	for i, fp := range listOf(m["extra_fields"]) {
		var segs []*interp.Template
		for j, seg := range listOf(fp) {
			segs = append(segs, d.value(seg, fmt.Sprintf("%s.extra_fields[%d][%d]", path, i, j)))
		}
		pc.ExtraFields = append(pc.ExtraFields, segs)
	}
	for i, seg := range listOf(m["lazy_read_pointer"]) {
		p := index(path+".lazy_read_pointer", i)
		if s, _ := seg.(string); strings.Contains(s, "*") {
			d.fail(p, "the '*' wildcard is not supported in lazy_read_pointer: only direct paths are")
			continue
		}
		pc.LazyReadPointer = append(pc.LazyReadPointer, d.value(seg, p))
	}
	pc.Stream = d.stream(m["stream"], path+".stream")
	return pc
}

func (d *decoder) groupingRouter(m map[string]any, path string) *GroupingPartitionRouter {
	g := &GroupingPartitionRouter{Deduplicate: true}
	n, _ := m["group_size"].(int64)
	if n < 1 {
		d.fail(path+".group_size", "must be at least 1, got %d", n)
	}
	g.GroupSize = int(n)
	if b, ok := m["deduplicate"].(bool); ok {
		g.Deduplicate = b
	}
	g.Underlying = d.router(m["underlying_partition_router"], path+".underlying_partition_router", ListRouter, SubstreamRouter, UnionRouter)
	d.refuseRequestOptions(g.Underlying, "a GroupingPartitionRouter", "{{ stream_partition.<field> | join(',') }}")
	if g.Underlying != nil && g.Underlying.Substream != nil {
		for _, pc := range g.Underlying.Substream.Parents {
			if len(pc.LazyReadPointer) > 0 {
				d.fail(pc.Path+".lazy_read_pointer", "is not supported under a GroupingPartitionRouter: a group has no single parent record to read the child records from")
			}
		}
	}
	return g
}

func (d *decoder) unionRouter(m map[string]any, path string) *UnionPartitionRouter {
	u := &UnionPartitionRouter{}
	u.PartitionField = d.tpl(m, "partition_field", path)
	for i, e := range m["partition_routers"].([]any) {
		r := d.router(e, index(path+".partition_routers", i), ListRouter, SubstreamRouter, UnionRouter)
		d.refuseRequestOptions(r, "a UnionPartitionRouter", "{{ stream_partition.<field> }}")
		u.Routers = append(u.Routers, r)
	}
	return u
}

// refuseRequestOptions refuses the request options of routers whose values
// a grouping or union router reshapes: the reference refuses them too, as
// the value they would inject is no longer the partition's.
func (d *decoder) refuseRequestOptions(r *PartitionRouter, under, template string) {
	if r == nil {
		return
	}
	const msg = "request options are not supported under %s: put the partition in the request with a template such as %s"
	switch {
	case r.List != nil && r.List.RequestOption != nil:
		d.fail(r.List.RequestOption.Path, msg, under, template)
	case r.Substream != nil:
		for _, pc := range r.Substream.Parents {
			if pc.RequestOption != nil {
				d.fail(pc.RequestOption.Path, msg, under, template)
			}
		}
	case r.Union != nil:
		for _, c := range r.Union.Routers {
			d.refuseRequestOptions(c, under, template)
		}
	}
}

func listOf(v any) []any {
	l, _ := v.([]any)
	return l
}

// checkCountCursorRouter refuses an IncrementingCountCursor on a stream with a
// partition router, as Airbyte's factory refuses it when it builds the
// stream: there is no per-partition counting cursor there.
func (d *decoder) checkCountCursorRouter(st *Stream) {
	if st.Incremental != nil && st.Incremental.Count != nil && st.Retriever != nil && st.Retriever.PartitionRouter != nil {
		d.fail(st.Incremental.Path, "an IncrementingCountCursor cannot be used with a partition_router (%s.partition_router), as in Airbyte's runtime (\"does not currently support usage of a PartitionRouter and an IncrementingCountCursor at the same time\"): use a DatetimeBasedCursor or read without a router", st.Path+".retriever")
	}
}

// checkLazyRead refuses what Airbyte's runtime refuses with a
// lazy_read_pointer (its LazySimpleRetriever): a decoder other than
// JsonDecoder, an incremental_sync other than a DatetimeBasedCursor read in
// one slice per partition. A pointer is used only by a SubstreamPartitionRouter
// that is the stream's partition_router itself; anywhere else it is refused
// rather than ignored.
func (d *decoder) checkLazyRead(st *Stream) {
	if st.Retriever == nil || st.Retriever.PartitionRouter == nil {
		return
	}
	pr := st.Retriever.PartitionRouter
	for _, inner := range innerRouters(pr) {
		for _, p := range lazyPointers(inner) {
			d.fail(p, "is used by Airbyte's runtime only when its SubstreamPartitionRouter is the stream's partition_router itself, not inside a grouping, list or union of routers")
		}
	}
	if pr.Substream == nil {
		return
	}
	inc := st.Incremental
	for _, pc := range pr.Substream.Parents {
		if len(pc.LazyReadPointer) == 0 {
			continue
		}
		p := pc.Path + ".lazy_read_pointer"
		switch {
		case st.Retriever.Decoder != nil && st.Retriever.Decoder.Type != JSONDecoder:
			d.fail(p, "needs the stream's decoder to be a JsonDecoder (as in Airbyte's runtime), not %s", st.Retriever.Decoder.Name())
		case inc != nil && inc.Datetime == nil:
			d.fail(p, "needs the stream's incremental_sync (%s) to be a DatetimeBasedCursor (as in Airbyte's runtime)", inc.Path)
		case inc != nil && (inc.Datetime.Step != nil || inc.Datetime.Granularity != nil):
			d.fail(p, "needs one slice per parent record: the stream's incremental_sync (%s) may not have step or cursor_granularity (as in Airbyte's runtime)", inc.Path)
		}
	}
}

// innerRouters are the routers a router combines (none for a list or
// substream router).
func innerRouters(pr *PartitionRouter) []*PartitionRouter {
	inner := append([]*PartitionRouter(nil), pr.Product...)
	if pr.Union != nil {
		inner = append(inner, pr.Union.Routers...)
	}
	if pr.Grouping != nil && pr.Grouping.Underlying != nil && pr.Grouping.Underlying.Substream == nil {
		inner = append(inner, pr.Grouping.Underlying) // a substream's pointers are refused with the grouping
	}
	return inner
}

// lazyPointers are the manifest paths of the lazy_read_pointers in a router
// and the routers it combines.
func lazyPointers(pr *PartitionRouter) []string {
	if pr == nil {
		return nil
	}
	var out []string
	if pr.Substream != nil {
		for _, pc := range pr.Substream.Parents {
			if len(pc.LazyReadPointer) > 0 {
				out = append(out, pc.Path+".lazy_read_pointer")
			}
		}
	}
	for _, inner := range innerRouters(pr) {
		out = append(out, lazyPointers(inner)...)
	}
	return out
}
