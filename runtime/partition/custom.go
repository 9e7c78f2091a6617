package partition

import (
	"context"
	"fmt"
	"iter"

	"github.com/airbyte-go/source-declarative/components"
	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/manifest"
)

// custom is a custom Python router that reads no stream, run by the
// components host: asked for its stream_slices() each time the partitions
// are read, with the request options it gives for each slice (its
// get_request_params, headers, body data and body JSON, as the CDK's
// requester asks them for the slice's first page).
type custom struct {
	r    *manifest.PartitionRouter
	host *components.Host
}

func newCustom(r *manifest.PartitionRouter, env Env) (Router, error) {
	if env.Host == nil {
		return nil, fmt.Errorf("%s: no components host runs the custom partition router", r.Path)
	}
	return &custom{r: r, host: env.Host}, nil
}

// customInto is where each kind of the options of a slice goes.
var customInto = []struct{ kind, into string }{
	{"params", manifest.InjectParam}, {"headers", manifest.InjectHeader},
	{"body_data", manifest.InjectBodyData}, {"body_json", manifest.InjectBodyJSON},
}

func (c *custom) Partitions(ctx context.Context) iter.Seq2[Partition, error] {
	return func(yield func(Partition, error) bool) {
		out, err := c.host.CallBlob(ctx, c.r.Custom, "partitions", nil, nil, nil)
		if err != nil {
			yield(Partition{}, err)
			return
		}
		for _, line := range components.SplitLines(out) {
			part, err := c.partition(line)
			if !yield(part, err) || err != nil {
				return
			}
		}
	}
}

// partition reads one slice as the host answers it: its partition, extra
// fields and options by kind (numbers read as a config's are: a whole
// number an int64, so that a template writes 2, not 2.0).
func (c *custom) partition(line []byte) (Partition, error) {
	v, err := manifest.FromJSON(line)
	if err != nil {
		return Partition{}, fmt.Errorf("%s: unreadable slice: %v", c.r.Path, err)
	}
	m, _ := v.(map[string]any)
	keys, _ := m["partition"].(map[string]any)
	extra, _ := m["extra_fields"].(map[string]any)
	opts, _ := m["options"].(map[string]any)
	part := Partition{Keys: keys}
	if part.Keys == nil {
		part.Keys = map[string]any{}
	}
	if len(extra) > 0 {
		part.Extra = extra
	}
	for _, k := range customInto {
		kind, _ := opts[k.kind].(map[string]any)
		for _, name := range interp.SortedKeys(kind) {
			part.Options = append(part.Options, Option{Into: k.into, Path: []string{name}, Value: kind[name], Source: c.r.Path})
		}
	}
	return part, nil
}
