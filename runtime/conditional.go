package runtime

// applyConditions keeps, of the streams of ConditionalStreams, those whose
// condition holds for the config, in manifest order; a name two of the
// remaining streams share is a config error naming both.
func (r *Runner) applyConditions() error {
	kept := r.Source.Streams[:0:0]
	where := map[string]string{}
	for _, st := range r.Source.Streams {
		if st.Condition != nil {
			ok, err := st.Condition.Bool(r.vars(st.ConditionParameters, nil))
			if err != nil {
				return ConfigErr("%v", err) // the template error names the condition
			}
			if !ok {
				continue
			}
		}
		if prev, dup := where[st.Name]; dup {
			return ConfigErr("%s.name: stream name %q is already used by %s (both their conditions hold for this config)", st.Path, st.Name, prev)
		}
		where[st.Name] = st.Path
		kept = append(kept, st)
	}
	r.Source.Streams = kept
	return nil
}
