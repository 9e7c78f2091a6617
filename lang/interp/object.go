package interp

// Object is a mapping with attributes of its own, as templates see the CDK's
// StreamSlice and Record objects: its keys read as a dict's (x['k'], x.k,
// x.get('k'), iteration, rendering, filters), and its attributes by name,
// an attribute first for x.name and a key first for x['name'], as Jinja
// reads them. The attributes are reached through the variable that holds
// the object (stream_slice.partition); a copy of it ({% set s =
// stream_slice %}) is its mapping.
type Object struct {
	Map   map[string]any
	attrs map[string]any
}

// StreamSlice is a slice as the CDK's StreamSlice: the partition's and the
// cursor's keys merged, with the attributes partition and _partition (the
// partition's keys), cursor_slice and extra_fields. Nil mappings are empty.
func StreamSlice(partition, cursor, extra map[string]any) *Object {
	partition, cursor, extra = orEmpty(partition), orEmpty(cursor), orEmpty(extra)
	merged := make(map[string]any, len(partition)+len(cursor))
	for k, v := range partition {
		merged[k] = v
	}
	for k, v := range cursor {
		merged[k] = v
	}
	return &Object{Map: merged, attrs: map[string]any{
		"partition": partition, "_partition": partition, "cursor_slice": cursor, "extra_fields": extra}}
}

// Record is a record as the paginator's last_record sees it, the CDK's
// Record: its fields, with the attribute data (the fields as a mapping).
func Record(data map[string]any) *Object {
	data = orEmpty(data)
	return &Object{Map: data, attrs: map[string]any{"data": data}}
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// attr is x.name: the attribute, else what the mapping gives.
func (o *Object) attr(name string) (any, error) {
	if v, ok := o.attrs[name]; ok {
		return v, nil
	}
	return getattr(o.Map, name)
}

// item is x[key]: the mapping's item (or method), else the attribute.
func (o *Object) item(key any) (any, error) {
	v, err := getitem(o.Map, key)
	if _, missing := v.(*undefined); missing && err == nil {
		if name, ok := key.(string); ok {
			if a, ok := o.attrs[name]; ok {
				return a, nil
			}
		}
	}
	return v, err
}

// operand evaluates the object of an attribute or item access, keeping an
// Object that a variable holds.
func (s *state) operand(x expr) (any, error) {
	if n, ok := x.(*nameExpr); ok {
		return s.lookupRaw(n.name), nil
	}
	return x.eval(s)
}
