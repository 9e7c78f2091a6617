package plan

import "github.com/airbyte-go/source-declarative/runtime/failure"

// applyConditions keeps, of the streams of ConditionalStreams, those whose
// condition holds for the config, in manifest order; a name two of the
// remaining streams share is a config error naming both.
func (ss *Streams) applyConditions(p *Planner) error {
	kept := ss.Source.Streams[:0:0]
	where := map[string]string{}
	for _, st := range ss.Source.Streams {
		if st.Condition != nil {
			ok, err := st.Condition.Bool(p.Env.BuildVars(nil))
			if err != nil {
				return failure.Config("%v", err) // the template error names the condition
			}
			if !ok {
				continue
			}
		}
		if prev, dup := where[st.Name]; dup {
			return failure.Config("%s.name: stream name %q is already used by %s (both their conditions hold for this config)", st.Path, st.Name, prev)
		}
		where[st.Name] = st.Path
		kept = append(kept, st)
	}
	ss.Source.Streams = kept
	return nil
}
