package differential

import (
	"encoding/json"
	"fmt"
	"strings"
)

// refError is an error the reference printed in a command: of a stream, or
// of the whole command (stream ""), with its texts.
type refError struct {
	stream string
	text   string // message, internal message and the last line of the stack trace
}

// referenceErrors lists the errors of the reference's output o: its error
// TRACEs, a failed CONNECTION_STATUS, and the ERROR logs of a test read.
func referenceErrors(o output) []refError {
	var out []refError
	if o.stopped != "" {
		out = append(out, refError{text: "the reference did not end: " + o.stopped})
	}
	for _, e := range o.exchanges {
		if sentTemplate(e.Path + "?" + e.RawQuery + " " + e.Body) {
			out = append(out, refError{stream: e.Endpoint, text: "the reference sent a template's own text: " + e.Method + " " + e.Path})
			break
		}
	}
	for _, t := range o.ofType("TRACE") {
		e := asMap(asMap(t["trace"])["error"])
		if e == nil {
			continue
		}
		stream := ""
		if d := asMap(e["stream_descriptor"]); d != nil {
			stream = fmt.Sprint(d["name"])
		}
		texts := []string{fmt.Sprint(e["message"]), fmt.Sprint(e["internal_message"])}
		if st, _ := e["stack_trace"].(string); st != "" {
			texts = append(texts, lastLines(st, 1))
		}
		out = append(out, refError{stream: stream, text: strings.Join(texts, "\n")})
	}
	if o.stopped == "" && o.code == 0 {
		for _, stream := range unended(o) {
			out = append(out, refError{stream: stream, text: endedBefore})
		}
	}
	for _, m := range o.ofType("CONNECTION_STATUS") {
		if cs := asMap(m["connectionStatus"]); cs["status"] != "SUCCEEDED" {
			out = append(out, refError{text: fmt.Sprint(cs["message"])})
		}
	}
	if read := streamRead(o); read != nil {
		for _, l := range list(read["logs"]) {
			if log := asMap(l); log["level"] == "ERROR" {
				out = append(out, refError{text: fmt.Sprint(log["message"]) + "\n" + fmt.Sprint(log["stacktrace"])})
			}
		}
		if neverEnded(read) {
			out = append(out, refError{text: endedBefore})
		}
		if url := repeatedPage(read); url != "" {
			out = append(out, refError{text: "the reference requested a page exactly like an earlier one of its slice: " + url})
		}
	}
	return out
}

// endedBefore names a reference read that ended, without an error, before
// a stream it started did: its read loop (while item := queue.get()) ends
// at the first record without fields, which is falsy.
const endedBefore = "the reference's read ended before this stream did"

// unended lists the streams a read said STARTED and never said ended
// (COMPLETE or INCOMPLETE).
func unended(o output) []string {
	started, ended := map[string]bool{}, map[string]bool{}
	var order []string
	for _, t := range o.ofType("TRACE") {
		ss := asMap(asMap(t["trace"])["stream_status"])
		if ss == nil {
			continue
		}
		name := fmt.Sprint(asMap(ss["stream_descriptor"])["name"])
		switch ss["status"] {
		case "STARTED":
			if !started[name] {
				order = append(order, name)
			}
			started[name] = true
		case "COMPLETE", "INCOMPLETE":
			ended[name] = true
		}
	}
	var out []string
	for _, name := range order {
		if !ended[name] {
			out = append(out, name)
		}
	}
	return out
}

// neverEnded tells whether a test read's stream never ended: it read
// slices, logged no error, and wrote no state, where a stream writes one
// when it ends.
func neverEnded(read map[string]any) bool {
	slices := list(read["slices"])
	if len(slices) == 0 {
		return false
	}
	for _, l := range list(read["logs"]) {
		if asMap(l)["level"] == "ERROR" {
			return false
		}
	}
	for _, sl := range slices {
		if len(list(asMap(sl)["state"])) > 0 {
			return false
		}
	}
	return true
}

// repeatedPage is the URL of the first page of a test read whose request
// (method, URL, headers, body) equals an earlier page's of its slice: a
// read without end, which the builder's page limit cuts; "" for none.
func repeatedPage(read map[string]any) string {
	for _, sl := range list(read["slices"]) {
		seen := map[string]bool{}
		for _, p := range list(asMap(sl)["pages"]) {
			req := asMap(asMap(p)["request"])
			key, _ := json.Marshal([]any{req["http_method"], req["url"], req["headers"], req["body"]})
			if seen[string(key)] {
				return fmt.Sprint(req["url"])
			}
			seen[string(key)] = true
		}
	}
	return ""
}

// sentTemplate tells whether a request holds a template's own text ({{ or
// {%, as written or URL-encoded): the reference's answer to a template
// failing with a TypeError, which we never send.
func sentTemplate(s string) bool {
	for _, mark := range []string{"{{", "{%", "%7B%7B", "%7B%25", "%7b%7b", "%7b%25"} {
		if strings.Contains(s, mark) {
			return true
		}
	}
	return false
}

// failedWith tells whether the reference failed with an error holding text
// where a difference of stream lies: an error of that stream or of the
// whole command, or any error for a difference of the whole command.
func failedWith(errs []refError, stream, text string) bool {
	for _, e := range errs {
		if (stream == "" || e.stream == "" || e.stream == stream) && strings.Contains(e.text, text) {
			return true
		}
	}
	return false
}
