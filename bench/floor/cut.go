package main

import "errors"

var errShape = errors.New("the page is not an object holding the record array")

// cutPage cuts the records out of a page in one pass, without validation:
// it walks the top-level object's keys, slices each element of the array
// under field by tracking strings, escapes and nesting depth, and keeps the
// next_cursor value (nil when absent or null) into p, whose record slice it
// reuses.
func cutPage(body []byte, field string, p *page) error {
	p.records, p.next = p.records[:0], nil
	i := skipSpace(body, 0)
	if i >= len(body) || body[i] != '{' {
		return errShape
	}
	i++
	for {
		i = skipSpace(body, i)
		if i >= len(body) || body[i] == '}' {
			return nil
		}
		if body[i] == ',' {
			i++
			continue
		}
		keyEnd := skipString(body, i)
		key := body[i+1 : keyEnd-1]
		i = skipSpace(body, keyEnd)
		i = skipSpace(body, i+1) // the colon
		switch {
		case string(key) == field && i < len(body) && body[i] == '[':
			i++
			for {
				i = skipSpace(body, i)
				if i >= len(body) {
					return errShape
				}
				if body[i] == ']' {
					i++
					break
				}
				if body[i] == ',' {
					i++
					continue
				}
				end := skipValue(body, i)
				p.records = append(p.records, body[i:end])
				i = end
			}
		case string(key) == "next_cursor":
			end := skipValue(body, i)
			if v := body[i:end]; string(v) != "null" {
				p.next = v
			}
			i = end
		default:
			i = skipValue(body, i)
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] ('"').
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// skipValue returns the index after the value starting at b[i].
func skipValue(b []byte, i int) int {
	depth := 0
	for ; i < len(b); i++ {
		switch b[i] {
		case '"':
			i = skipString(b, i) - 1
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i
			}
			depth--
			if depth == 0 {
				return i + 1
			}
		case ',':
			if depth == 0 {
				return i
			}
		}
	}
	return i
}
