package manifest

import (
	"errors"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// SchemaError is one keyword a value failed.
type SchemaError struct {
	Instance string // JSON pointer to the value that failed ("" is the value validated); for "required", to the missing property
	Keyword  string // the keyword that failed: "type", "required", "enum", ...
	Message  string // what is wrong, in words
	Enum     []any  // for "enum": the values allowed
}

// SchemaErrors is every keyword a value failed, in the order of the places
// that failed.
type SchemaErrors []SchemaError

func (e SchemaErrors) Error() string {
	lines := make([]string, len(e))
	for i, one := range e {
		lines[i] = one.Message
		if one.Instance != "" {
			lines[i] = one.Instance + ": " + one.Message
		}
	}
	return strings.Join(lines, "; ")
}

// Validate checks v against the schema: nil when v is valid, else
// SchemaErrors.
func (s *JSONSchema) Validate(v any) error {
	err := s.schema.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		return wordErrors(ve, v, s.docs)
	}
	var notJSON jsonschema.InvalidJSONTypeError
	if errors.As(err, &notJSON) {
		return SchemaErrors{{Keyword: "type", Message: string(notJSON) + " is not a JSON value"}}
	}
	return SchemaErrors{{Message: strings.TrimPrefix(err.Error(), "jsonschema: ")}} // a $ref loop
}

// wordErrors lists the keywords that failed (the leaves of the library's
// tree of errors), ordered by the place in the value, then in the schema.
// docs, when not nil, gives the schema's values: the names a "required"
// lists, so that each missing property is an error at its own place, and the
// values of an "enum".
func wordErrors(root *jsonschema.ValidationError, instance any, docs *schemaDocuments) SchemaErrors {
	type placed struct {
		SchemaError
		keywordAt string
	}
	var all []placed
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		// The causes of "contains" (draft-07's is a minContains of 1 here) are
		// each item's failures: the keyword itself says what is wrong.
		if !strings.HasSuffix(e.KeywordLocation, "/minContains") {
			for _, cause := range e.Causes {
				walk(cause)
			}
			if len(e.Causes) > 0 {
				return
			}
		}
		for _, one := range wordError(e, instance, docs) {
			all = append(all, placed{one, e.KeywordLocation})
		}
	}
	walk(root)
	sort.SliceStable(all, func(i, j int) bool {
		if c := comparePointers(all[i].Instance, all[j].Instance); c != 0 {
			return c < 0
		}
		return comparePointers(all[i].keywordAt, all[j].keywordAt) < 0
	})
	out := make(SchemaErrors, len(all))
	for i, one := range all {
		out[i] = one.SchemaError
	}
	return out
}

// wordError is what one failed keyword says.
func wordError(e *jsonschema.ValidationError, instance any, docs *schemaDocuments) []SchemaError {
	at := libraryPointer(e.InstanceLocation)
	one := SchemaError{Instance: at, Keyword: keywordOf(e), Message: e.Message}
	switch one.Keyword {
	case "minContains":
		one.Keyword, one.Message = "contains", `no item is valid against the "contains" schema`
	case "additionalProperties":
		one.Message = sortedNames(e.Message)
	}
	if docs == nil {
		return []SchemaError{one}
	}
	switch one.Keyword {
	case "required":
		names, _ := docs.at(e.AbsoluteKeywordLocation)
		list, _ := names.([]any)
		v, _ := valueAt(instance, at)
		obj, _ := v.(map[string]any)
		var missing []SchemaError
		for _, name := range list {
			name, isName := name.(string)
			if _, has := obj[name]; isName && obj != nil && !has {
				missing = append(missing, SchemaError{Instance: at + "/" + escapeSegment(name), Keyword: one.Keyword, Message: "is required"})
			}
		}
		if len(missing) > 0 {
			return missing
		}
	case "enum":
		values, _ := docs.at(e.AbsoluteKeywordLocation)
		one.Enum, _ = values.([]any)
	}
	return []SchemaError{one}
}

// keywordOf is the keyword that failed: the end of its place in the schema
// ("/properties/a/type"), "dependencies" for one of a dependency's names,
// "false" for a false schema (whose place is the schema's own).
func keywordOf(e *jsonschema.ValidationError) string {
	if e.Message == "not allowed" {
		return "false"
	}
	segs := strings.Split(e.KeywordLocation, "/")
	if n := len(segs); n >= 3 && segs[n-3] == "dependencies" { // dependencies/a/0
		if _, err := strconv.Atoi(segs[n-1]); err == nil {
			return "dependencies"
		}
	}
	return segs[len(segs)-1]
}

// sortedNames sorts the quoted names of a message such as
// "additionalProperties 'z', 'b' not allowed", which the library lists in
// no fixed order.
func sortedNames(message string) string {
	first, last := strings.IndexByte(message, '\''), strings.LastIndexByte(message, '\'')
	if first < 0 || last <= first {
		return message
	}
	var names []string
	for rest := message[first : last+1]; rest != ""; {
		end := 1
		for end < len(rest) && rest[end] != '\'' {
			if rest[end] == '\\' {
				end++
			}
			end++
		}
		if end >= len(rest) {
			return message
		}
		names = append(names, rest[:end+1])
		rest = strings.TrimPrefix(rest[end+1:], ", ")
	}
	sort.Strings(names)
	return message[:first] + strings.Join(names, ", ") + message[last+1:]
}

// comparePointers orders two JSON pointers segment by segment, array
// indexes as numbers.
func comparePointers(a, b string) int {
	as, bs := strings.Split(a, "/"), strings.Split(b, "/")
	for i := 0; i < len(as) && i < len(bs); i++ {
		if as[i] == bs[i] {
			continue
		}
		an, aerr := strconv.Atoi(as[i])
		bn, berr := strconv.Atoi(bs[i])
		if aerr == nil && berr == nil {
			if an < bn {
				return -1
			}
			return 1
		}
		if as[i] < bs[i] {
			return -1
		}
		return 1
	}
	return len(as) - len(bs)
}
