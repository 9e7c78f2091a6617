package partition

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"strings"

	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/manifest"
)

// list is a ListPartitionRouter: one partition per value, in order, not
// de-duplicated.
type list struct {
	field  string
	values []any
	option *placement
}

func newList(r *manifest.PartitionRouter, env Env) (*list, error) {
	vars := env.vars(r.Parameters)
	field, err := render(r.List.CursorField, vars, r.Path+".cursor_field")
	if err != nil {
		return nil, err
	}
	l := &list{field: field}
	if l.option, err = place(r.List.RequestOption, vars); err != nil {
		return nil, err
	}
	if r.List.ValuesTemplate == nil {
		for _, v := range r.List.Values {
			l.values = append(l.values, interp.String(v))
		}
		return l, nil
	}
	v, err := r.List.ValuesTemplate.Eval(vars)
	if err != nil {
		return nil, configErr("%v", err)
	}
	if l.values, err = listValues(v, r.Path+".values", r.List.ValuesTemplate.Source); err != nil {
		return nil, err
	}
	return l, nil
}

// listValues reads what a values template gave: a list; a string holding a
// JSON array; or a comma-separated string ("a, b" gives a and b, "" gives
// nothing). The reference iterates a plain string character by character,
// which no user means.
func listValues(v any, path, src string) ([]any, error) {
	switch x := v.(type) {
	case []any:
		return x, nil
	case interp.List:
		return x, nil
	case string:
		s := strings.TrimSpace(x)
		if strings.HasPrefix(s, "[") {
			var l []any
			if err := json.Unmarshal([]byte(s), &l); err == nil {
				return l, nil
			}
		}
		var out []any
		for _, part := range strings.Split(s, ",") {
			if part = strings.TrimSpace(part); part != "" {
				out = append(out, part)
			}
		}
		return out, nil
	}
	return nil, configErr("%s: %q must give a list of values (or a comma-separated string), got %s", path, src, describeValue(v))
}

func describeValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "nothing (is the config key set?)"
	case bool:
		return "a boolean"
	case map[string]any:
		return "an object"
	case int64, float64, json.Number:
		return "the number " + interp.String(x)
	}
	return fmt.Sprintf("a %T", v)
}

func (l *list) Partitions(ctx context.Context) iter.Seq2[Partition, error] {
	return func(yield func(Partition, error) bool) {
		for _, v := range l.values {
			if err := ctx.Err(); err != nil {
				yield(Partition{}, err)
				return
			}
			if !yield(Partition{Keys: map[string]any{l.field: v}, Options: l.option.options(v)}, nil) {
				return
			}
		}
	}
}
