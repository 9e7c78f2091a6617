package jsonschema

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"
)

// maxInPlace bounds how many schemas may apply to one value through $ref,
// allOf, anyOf, oneOf, not and if without going into it: a $ref that comes
// back to itself on the same value fails instead of recursing for ever.
const maxInPlace = 100

// Validate checks v against the schema: nil when v is valid, else a
// *ValidationError with every keyword v fails.
func (s *Schema) Validate(v any) error {
	if s.valid(v, nil, 0, nil) {
		return nil
	}
	var errs []Error
	s.valid(v, nil, 0, &errs)
	return &ValidationError{Errors: errs}
}

// report records one failed keyword.
func report(errs *[]Error, at *location, keyword, message string) {
	*errs = append(*errs, Error{Instance: at.pointer(), Keyword: keyword, Message: message})
}

// valid tells whether v at location at is valid; depth counts the schemas
// applied in place to v. With errs nil it stops at the first failure and
// allocates nothing; else it goes on and records every failure in errs.
func (s *Schema) valid(v any, at *location, depth int, errs *[]Error) bool {
	if s.always != nil {
		if !*s.always && errs != nil {
			report(errs, at, "false", "not allowed")
		}
		return *s.always
	}
	if depth > maxInPlace {
		if errs != nil {
			report(errs, at, "$ref", "the schema refers to itself in a loop without going into the value")
		}
		return false
	}
	if s.ref != nil {
		target, err := s.ref.resolve()
		if err != nil {
			if errs != nil {
				report(errs, at, "$ref", err.Error())
			}
			return false
		}
		return target.valid(v, at, depth+1, errs)
	}
	k := kindOf(v)
	if k == notJSON || (s.types != 0 && !s.types.allows(k, v)) {
		if errs != nil {
			if k == notJSON {
				report(errs, at, "type", fmt.Sprintf("%T is not a JSON value", v))
			} else {
				report(errs, at, "type", fmt.Sprintf("expected %s, but got %s", s.typeNames, k))
			}
		}
		return false
	}
	ok := true
	if s.hasConst && !equal(v, s.constant) {
		if errs == nil {
			return false
		}
		ok = false
		report(errs, at, "const", constMessage(s.constant))
	}
	if len(s.enum) > 0 && !s.inEnum(v) {
		if errs == nil {
			return false
		}
		ok = false
		*errs = append(*errs, Error{Instance: at.pointer(), Keyword: "enum", Message: enumMessage(s.enum), Enum: s.enum})
	}
	var typed bool
	switch k {
	case objectKind:
		typed = s.validObject(v.(map[string]any), at, depth, errs)
	case arrayKind:
		typed = s.validArray(v.([]any), at, errs)
	case stringKind:
		typed = s.validString(v.(string), at, errs)
	case numberKind:
		typed = s.validNumber(v, at, errs)
	default:
		typed = true
	}
	if !typed {
		if errs == nil {
			return false
		}
		ok = false
	}
	return s.validApplied(v, at, depth, errs) && ok
}

func (s *Schema) inEnum(v any) bool {
	for _, e := range s.enum {
		if equal(v, e) {
			return true
		}
	}
	return false
}

func constMessage(c any) string {
	switch kindOf(c) {
	case objectKind, arrayKind:
		return "const failed"
	}
	return "value must be " + goSyntax(c)
}

func enumMessage(enum []any) string {
	values := make([]string, len(enum))
	for i, e := range enum {
		switch kindOf(e) {
		case objectKind, arrayKind:
			return "enum failed"
		}
		values[i] = goSyntax(e)
	}
	if len(values) == 1 {
		return "value must be " + values[0]
	}
	return "value must be one of " + strings.Join(values, ", ")
}

func (s *Schema) validObject(x map[string]any, at *location, depth int, errs *[]Error) bool {
	ok := true
	if s.minProperties >= 0 && len(x) < s.minProperties {
		if errs == nil {
			return false
		}
		ok = false
		report(errs, at, "minProperties", fmt.Sprintf("minimum %d properties allowed, but found %d properties", s.minProperties, len(x)))
	}
	if s.maxProperties >= 0 && len(x) > s.maxProperties {
		if errs == nil {
			return false
		}
		ok = false
		report(errs, at, "maxProperties", fmt.Sprintf("maximum %d properties allowed, but found %d properties", s.maxProperties, len(x)))
	}
	for _, name := range s.required {
		if _, has := x[name]; !has {
			if errs == nil {
				return false
			}
			ok = false
			report(errs, member(at, name, errs), "required", "is required")
		}
	}
	for i := range s.properties {
		p := &s.properties[i]
		e, has := x[p.name]
		if !has {
			continue
		}
		sch, err := p.schema()
		if err != nil {
			if errs == nil {
				return false
			}
			ok = false
			report(errs, member(at, p.name, errs), "properties", err.Error())
			continue
		}
		if !sch.valid(e, member(at, p.name, errs), 0, errs) {
			if errs == nil {
				return false
			}
			ok = false
		}
	}
	if s.propertyNames != nil || len(s.patternProperties) > 0 || s.additionalProperties != nil || s.noAdditionalProperties {
		if errs == nil {
			for k, e := range x {
				if good, extra := s.validMember(k, e, at, nil); !good || extra {
					return false
				}
			}
		} else {
			var extras []string
			for _, k := range slices.Sorted(maps.Keys(x)) {
				good, extra := s.validMember(k, x[k], at, errs)
				ok = ok && good
				if extra {
					extras = append(extras, quote(k))
				}
			}
			if len(extras) > 0 {
				ok = false
				report(errs, at, "additionalProperties", "additionalProperties "+strings.Join(extras, ", ")+" not allowed")
			}
		}
	}
	for i := range s.dependencies {
		dep := &s.dependencies[i]
		if _, has := x[dep.name]; !has {
			continue
		}
		for _, name := range dep.required {
			if _, has := x[name]; !has {
				if errs == nil {
					return false
				}
				ok = false
				report(errs, at, "dependencies", fmt.Sprintf("property %s is required, if %s property exists", quote(name), quote(dep.name)))
			}
		}
		if dep.schema != nil && !dep.schema.valid(x, at, depth+1, errs) {
			if errs == nil {
				return false
			}
			ok = false
		}
	}
	return ok
}

// validMember checks one member of an object against propertyNames,
// patternProperties and additionalProperties; extra tells that
// additionalProperties false refuses it.
func (s *Schema) validMember(name string, e any, at *location, errs *[]Error) (ok, extra bool) {
	ok = true
	here := member(at, name, errs)
	if s.propertyNames != nil && !s.propertyNames.valid(name, here, 0, errs) {
		if errs == nil {
			return false, false
		}
		ok = false
	}
	listed := s.hasProperty(name)
	for i := range s.patternProperties {
		p := &s.patternProperties[i]
		if !p.pattern.MatchString(name) {
			continue
		}
		listed = true
		if !p.schema.valid(e, here, 0, errs) {
			if errs == nil {
				return false, false
			}
			ok = false
		}
	}
	if listed {
		return ok, false
	}
	if s.noAdditionalProperties {
		return ok, true
	}
	if s.additionalProperties != nil && !s.additionalProperties.valid(e, here, 0, errs) {
		ok = false
	}
	return ok, false
}

// hasProperty tells whether "properties" lists name (a binary search).
func (s *Schema) hasProperty(name string) bool {
	lo, hi := 0, len(s.properties)
	for lo < hi {
		mid := (lo + hi) / 2
		switch n := s.properties[mid].name; {
		case n == name:
			return true
		case n < name:
			lo = mid + 1
		default:
			hi = mid
		}
	}
	return false
}

func (s *Schema) validArray(x []any, at *location, errs *[]Error) bool {
	ok := true
	if s.minItems >= 0 && len(x) < s.minItems {
		if errs == nil {
			return false
		}
		ok = false
		report(errs, at, "minItems", fmt.Sprintf("minimum %d items required, but found %d items", s.minItems, len(x)))
	}
	if s.maxItems >= 0 && len(x) > s.maxItems {
		if errs == nil {
			return false
		}
		ok = false
		report(errs, at, "maxItems", fmt.Sprintf("maximum %d items required, but found %d items", s.maxItems, len(x)))
	}
	if s.uniqueItems {
		if i, j, dup := firstDuplicate(x); dup {
			if errs == nil {
				return false
			}
			ok = false
			report(errs, at, "uniqueItems", fmt.Sprintf("items at index %d and %d are equal", i, j))
		}
	}
	for i, e := range x {
		var schema *Schema
		switch {
		case s.items != nil:
			schema = s.items
		case i < len(s.itemList):
			schema = s.itemList[i]
		case s.itemList != nil:
			schema = s.additionalItems
		}
		if schema == nil {
			continue
		}
		if !schema.valid(e, item(at, i, errs), 0, errs) {
			if errs == nil {
				return false
			}
			ok = false
		}
	}
	if s.noAdditionalItems && s.itemList != nil && len(x) > len(s.itemList) {
		if errs == nil {
			return false
		}
		ok = false
		report(errs, at, "additionalItems", fmt.Sprintf("only %d items are allowed, but found %d items", len(s.itemList), len(x)))
	}
	if s.contains != nil && !s.anyContained(x) {
		if errs == nil {
			return false
		}
		ok = false
		report(errs, at, "contains", `no item is valid against the "contains" schema`)
	}
	return ok
}

func (s *Schema) anyContained(x []any) bool {
	for _, e := range x {
		if s.contains.valid(e, nil, 0, nil) {
			return true
		}
	}
	return false
}

// firstDuplicate finds the first item equal to an earlier one: i < j.
func firstDuplicate(x []any) (i, j int, found bool) {
	for j = 1; j < len(x); j++ {
		for i = 0; i < j; i++ {
			if equal(x[i], x[j]) {
				return i, j, true
			}
		}
	}
	return 0, 0, false
}

func (s *Schema) validString(x string, at *location, errs *[]Error) bool {
	ok := true
	if s.minLength >= 0 || s.maxLength >= 0 {
		n := utf8.RuneCountInString(x)
		if s.minLength >= 0 && n < s.minLength {
			if errs == nil {
				return false
			}
			ok = false
			report(errs, at, "minLength", fmt.Sprintf("length must be >= %d, but got %d", s.minLength, n))
		}
		if s.maxLength >= 0 && n > s.maxLength {
			if errs == nil {
				return false
			}
			ok = false
			report(errs, at, "maxLength", fmt.Sprintf("length must be <= %d, but got %d", s.maxLength, n))
		}
	}
	if s.pattern != nil && !s.pattern.MatchString(x) {
		if errs == nil {
			return false
		}
		ok = false
		report(errs, at, "pattern", "does not match pattern "+quote(s.pattern.String()))
	}
	return ok
}

func (s *Schema) validNumber(v any, at *location, errs *[]Error) bool {
	f, _ := toFloat(v)
	ok := true
	for _, c := range [...]struct {
		keyword string
		limit   bound
		fails   bool
		words   string
	}{
		{"minimum", s.minimum, f < s.minimum.value, "must be >= %v but found %v"},
		{"exclusiveMinimum", s.exclusiveMinimum, f <= s.exclusiveMinimum.value, "must be > %v but found %v"},
		{"maximum", s.maximum, f > s.maximum.value, "must be <= %v but found %v"},
		{"exclusiveMaximum", s.exclusiveMaximum, f >= s.exclusiveMaximum.value, "must be < %v but found %v"},
	} {
		if c.limit.set && c.fails {
			if errs == nil {
				return false
			}
			ok = false
			report(errs, at, c.keyword, fmt.Sprintf(c.words, c.limit.value, v))
		}
	}
	if s.multipleOf != 0 && !multipleOf(f, s.multipleOf) {
		if errs == nil {
			return false
		}
		ok = false
		report(errs, at, "multipleOf", fmt.Sprintf("%v not multipleOf %v", v, s.multipleOf))
	}
	return ok
}

// validApplied checks the keywords that apply other schemas to the same
// value: not, allOf, anyOf, oneOf, if/then/else.
func (s *Schema) validApplied(v any, at *location, depth int, errs *[]Error) bool {
	ok := true
	if s.not != nil && s.not.valid(v, at, depth+1, nil) {
		if errs == nil {
			return false
		}
		ok = false
		report(errs, at, "not", "not failed")
	}
	for _, one := range s.allOf {
		if !one.valid(v, at, depth+1, errs) {
			if errs == nil {
				return false
			}
			ok = false
		}
	}
	if len(s.anyOf) > 0 && !s.anyValid(v, at, depth) {
		if errs == nil {
			return false
		}
		ok = false
		for _, one := range s.anyOf {
			one.valid(v, at, depth+1, errs)
		}
	}
	if len(s.oneOf) > 0 {
		first, second := -1, -1
		for i, one := range s.oneOf {
			if one.valid(v, at, depth+1, nil) {
				if first < 0 {
					first = i
				} else {
					second = i
					break
				}
			}
		}
		if first < 0 || second >= 0 {
			if errs == nil {
				return false
			}
			ok = false
			if second >= 0 {
				report(errs, at, "oneOf", fmt.Sprintf("valid against schemas at indexes %d and %d", first, second))
			} else {
				for _, one := range s.oneOf {
					one.valid(v, at, depth+1, errs)
				}
			}
		}
	}
	if s.ifSchema != nil {
		branch := s.elseSchema
		if s.ifSchema.valid(v, at, depth+1, nil) {
			branch = s.thenSchema
		}
		if branch != nil && !branch.valid(v, at, depth+1, errs) {
			ok = false
		}
	}
	return ok
}

func (s *Schema) anyValid(v any, at *location, depth int) bool {
	for _, one := range s.anyOf {
		if one.valid(v, at, depth+1, nil) {
			return true
		}
	}
	return false
}
