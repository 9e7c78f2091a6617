package request

import (
	"fmt"

	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/runtime/failure"
)

// BareOptionVars are the variables of a request option the CDK builds
// without parameters, a paginator's or a partition router's: vars with
// parameters empty (the stream's $parameters do not reach it there).
func BareOptionVars(vars interp.Vars) interp.Vars {
	return vars.With("parameters", map[string]any{})
}

// Inject puts value where the request option says.
func Inject(p *Parts, o *manifest.RequestOption, value any, vars interp.Vars) error {
	if o == nil {
		return nil
	}
	if o.InjectInto == manifest.InjectBodyJSON && len(o.FieldPath) > 0 {
		path, err := interp.RenderEach(o.FieldPath, vars)
		if err != nil {
			return err
		}
		return wrap(o, p.SetBodyJSON(path, value))
	}
	name, err := o.FieldName.Render(vars)
	if err != nil {
		return err
	}
	if name == "" && o.InjectInto == manifest.InjectHeader {
		// A header needs a name; a parameter or body field may have an
		// empty one, sent as Airbyte sends it (?=value): zendesk-support's
		// article_attachments names its start_time_option by a parameter
		// it never sets, and the API ignores the field.
		return fmt.Errorf("%s.field_name: renders empty, and a header needs a name", o.Path)
	}
	switch o.InjectInto {
	case manifest.InjectParam:
		return wrap(o, p.SetQuery(name, value))
	case manifest.InjectHeader:
		return wrap(o, p.SetHeader(name, value))
	case manifest.InjectBodyData:
		return wrap(o, p.SetBodyData(name, value))
	case manifest.InjectBodyJSON:
		return wrap(o, p.SetBodyJSON([]string{name}, value))
	}
	return fmt.Errorf("%s: cannot inject into %s", o.Path, o.InjectInto)
}

func wrap(o *manifest.RequestOption, err error) error {
	return failure.Within(o.Path, err)
}
