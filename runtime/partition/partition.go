// Package partition makes the partitions of a stream from its manifest's
// partition_router. A partition is one run of requests with its own
// pagination; its keys reach templates as stream_partition (and
// stream_slice), and it injects its values into the requests where the
// router's request options say.
//
// A Router yields partitions lazily as an iter.Seq2: the next partition is
// made (and, for a substream, the next parent record read) only when the
// consumer asks for it, so a read loop can hand partitions to workers while
// the parent is still being read, and a child of 100,000 parents never holds
// them all.
package partition

import (
	"context"
	"fmt"
	"iter"
	"strings"

	"github.com/airbyte-go/source-declarative/components"
	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/protocol"
	"github.com/airbyte-go/source-declarative/runtime/failure"
	"github.com/airbyte-go/source-declarative/runtime/request"
)

// Partition is one partition of a stream.
type Partition struct {
	// Keys identify the partition (and its state): the router's keys, with
	// "parent_slice" (the parent's own partition keys) for a substream.
	Keys map[string]any
	// Extra are values carried along that are not part of the identity: a
	// substream's extra_fields (path segments joined by "."), or the keys a
	// union router moved aside. Nil when there are none.
	Extra map[string]any
	// Options are the values the partition injects into every request.
	Options []Option
	// Lazy is, for a parent config with lazy_read_pointer, the JSON at the
	// pointer in the parent record ("[]" when absent): the child's first
	// page, read from the parent instead of requested.
	Lazy []byte
}

// Option is one value a partition injects into requests.
type Option struct {
	Into   string   // manifest.InjectParam, InjectHeader, InjectBodyData or InjectBodyJSON
	Path   []string // the field name, or the JSON body path
	Value  any
	Source string // manifest path of the request option, for errors
}

// Inject puts the partition's values into a request.
func (p Partition) Inject(parts *request.Parts) error {
	for _, o := range p.Options {
		var err error
		switch o.Into {
		case manifest.InjectParam:
			err = parts.SetQuery(o.Path[0], o.Value)
		case manifest.InjectHeader:
			err = parts.SetHeader(o.Path[0], o.Value)
		case manifest.InjectBodyData:
			err = parts.SetBodyData(o.Path[0], o.Value)
		case manifest.InjectBodyJSON:
			err = parts.SetBodyJSON(o.Path, o.Value)
		default:
			err = fmt.Errorf("cannot inject into %s", o.Into)
		}
		if err != nil {
			return fmt.Errorf("%s: %v", o.Source, err)
		}
	}
	return nil
}

// Router yields the partitions of a stream.
type Router interface {
	// Partitions yields the partitions in order. An error is yielded once,
	// with a zero Partition, and ends the sequence. Each call starts over.
	Partitions(ctx context.Context) iter.Seq2[Partition, error]
}

// ParentRecord is one record of a parent stream.
type ParentRecord struct {
	Data []byte // the record's JSON, after the parent's own filter and transformations
	// Partition is the parent partition the record was read in (its Keys);
	// nil when the parent has no partition router.
	Partition map[string]any
}

// ParentReader reads every record of a parent stream in order through the
// parent's own retriever, calling emit for each. It stops at emit's first
// error and returns it. It must stream the records (page by page, never the
// whole parent), since a substream's memory is the reader's.
type ParentReader func(ctx context.Context, parent *manifest.ParentStreamConfig, emit func(ParentRecord) error) error

// Env is what routers need from the read.
type Env struct {
	Stream     string      // the partitioned stream's name, for messages
	Vars       interp.Vars // the variables of the router's templates: config, and the stream's parameters
	ReadParent ParentReader
	Log        func(level, msg string)
	Host       *components.Host // runs a custom router
}

func (e Env) log(level, msg string) {
	if e.Log != nil {
		e.Log(level, msg)
	}
}

// vars are the variables of one router's templates: its own parameters
// replace the stream's.
func (e Env) vars(params map[string]any) interp.Vars {
	v := make(interp.Vars, len(e.Vars)+1)
	for k, x := range e.Vars {
		v[k] = x
	}
	if params != nil {
		v["parameters"] = params
	}
	return v
}

// New makes the router a manifest describes. Templates over the config
// (cursor fields, partition fields, a list's values) are rendered here, so a
// config that does not fit fails before any request.
func New(r *manifest.PartitionRouter, env Env) (Router, error) {
	switch r.Type {
	case manifest.ListRouter:
		return newList(r, env)
	case manifest.SubstreamRouter:
		return newSubstream(r, env)
	case manifest.GroupingRouter:
		return newGrouping(r, env)
	case manifest.UnionRouter:
		return newUnion(r, env)
	case manifest.ProductRouter:
		return newProduct(r, env)
	case manifest.CustomRouter:
		return newCustom(r, env) // custom.go
	}
	return nil, fmt.Errorf("%s: unknown partition router %q", r.Path, r.Type)
}

// KeepsParentState tells whether a router keeps its parents' states, as the
// reference's get_stream_state says: a substream or union router does (an
// object, empty without incremental_dependency parents), a grouping router
// as the router it groups; a list router and a cartesian product do not
// (the product keeps none of its substreams' parents).
func KeepsParentState(r *manifest.PartitionRouter) bool {
	switch r.Type {
	case manifest.SubstreamRouter, manifest.UnionRouter:
		return true
	case manifest.GroupingRouter:
		return KeepsParentState(r.Grouping.Underlying)
	}
	return false
}

// newAll makes each router of rs.
func newAll(rs []*manifest.PartitionRouter, env Env) ([]Router, error) {
	out := make([]Router, 0, len(rs))
	for _, r := range rs {
		router, err := New(r, env)
		if err != nil {
			return nil, err
		}
		out = append(out, router)
	}
	return out, nil
}

func configErr(format string, args ...any) error {
	return &failure.Error{Failure: protocol.ConfigError, Message: fmt.Sprintf(format, args...)}
}

// placement is where a request option puts a value, its names rendered.
type placement struct {
	into   string
	path   []string
	source string
}

// place renders where a router's request option puts its value, with the
// router's variables but its parameters, as the CDK builds the option
// (request.BareOptionVars).
func place(o *manifest.RequestOption, vars interp.Vars) (*placement, error) {
	if o == nil {
		return nil, nil
	}
	vars = request.BareOptionVars(vars)
	p := &placement{into: o.InjectInto, source: o.Path}
	if o.FieldName != nil {
		name, err := o.FieldName.Render(vars)
		if err != nil {
			return nil, configErr("%v", err)
		}
		p.path = []string{name}
	}
	segs, err := interp.RenderEach(o.FieldPath, vars)
	if err != nil {
		return nil, configErr("%v", err)
	}
	p.path = append(p.path, segs...)
	if len(p.path) == 0 || (p.path[len(p.path)-1] == "" && o.InjectInto == manifest.InjectHeader) {
		return nil, configErr("%s: the field name renders empty, and a header needs a name", o.Path)
	}
	return p, nil
}

// options is the option injecting v, if any. Empty values (null, "", [],
// {}) are not injected, as in the reference; 0 and false are.
func (p *placement) options(v any) []Option {
	if p == nil || isEmpty(v) {
		return nil
	}
	return []Option{{Into: p.into, Path: p.path, Value: v, Source: p.source}}
}

// key tells two placements of the same request field apart from others.
func (o Option) key() string {
	k := o.Into + "\x00" + strings.Join(o.Path, "\x00")
	if o.Into == manifest.InjectHeader {
		k = strings.ToLower(k)
	}
	return k
}

func isEmpty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}

// render renders a template that must give a non-empty name.
func render(t *interp.Template, vars interp.Vars, path string) (string, error) {
	s, err := t.Render(vars)
	if err != nil {
		return "", configErr("%v", err)
	}
	if s == "" {
		return "", configErr("%s: renders empty", path)
	}
	return s, nil
}
