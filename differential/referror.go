package differential

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/airbyte-go/source-declarative/genapi"
)

// refError is an error the reference printed in a command: of a stream, or
// of the whole command (stream ""), with its texts.
type refError struct {
	stream string
	text   string // message, internal message and the last line of the stack trace
}

// referenceErrors lists the errors of the reference's output o: its error
// TRACEs, a failed CONNECTION_STATUS, the ERROR logs of a test read, and the
// requests it should not have made (a template's own text, a Python object's
// text as a URL; children are the streams reading each parent stream).
func referenceErrors(o output, children map[string][]string) []refError {
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
	for _, stream := range objectURLStreams(o, children) {
		out = append(out, refError{stream: stream, text: "the reference sent a Python object's text as a URL"})
	}
	for _, stream := range noneInPathStreams(o, children) {
		out = append(out, refError{stream: stream, text: "the reference sent None in a URL path"})
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
	if o.stopped == "" && o.code == 0 && len(unended(o)) > 0 {
		// The read ended early: the streams it never started were not read
		// either, so the whole command is its.
		out = append(out, refError{text: endedBefore})
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
// at the first record without fields, which is falsy, leaving the streams
// it started unended and those after them never started.
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

// objectURLStreams are the streams a command's requests with a Python
// object's text as their path (sentObject) concern: in a test read, the
// whole command (""); in a read, the stream whose URL the object holds (the
// path of the URL innermost in it, as the stream first requested it), the
// stream whose route the generic API answered it from, and the streams
// reading either as a parent.
func objectURLStreams(o output, children map[string][]string) []string {
	sent := sentWith(o, sentObject)
	if len(sent) == 0 || streamRead(o) != nil {
		return wholeCommand(sent)
	}
	c := concerned{children: children, seen: map[string]bool{}}
	for _, e := range sent {
		c.add(e.Endpoint)
		urls := urlsInText.FindAllStringSubmatch(e.Path, -1)
		if len(urls) == 0 {
			continue
		}
		inner := urls[len(urls)-1][1]
		for _, first := range o.exchanges {
			if first.Path == inner && !sentObject(first.Path) {
				c.add(first.Endpoint)
				break
			}
		}
	}
	return c.out
}

// noneInPathStreams are the streams a command's requests with None as a
// path segment concern (the reference's text for a parent record's null
// key, which we skip): in a test read the whole command, in a read the
// stream whose route answered and the streams reading it as a parent.
func noneInPathStreams(o output, children map[string][]string) []string {
	sent := sentWith(o, func(path string) bool { return strings.Contains(path+"/", "/None/") })
	if len(sent) == 0 || streamRead(o) != nil {
		return wholeCommand(sent)
	}
	c := concerned{children: children, seen: map[string]bool{}}
	for _, e := range sent {
		c.add(e.Endpoint)
	}
	return c.out
}

// sentWith are the exchanges whose path is such.
func sentWith(o output, such func(path string) bool) []genapi.Exchange {
	var sent []genapi.Exchange
	for _, e := range o.exchanges {
		if such(e.Path) {
			sent = append(sent, e)
		}
	}
	return sent
}

// wholeCommand is the whole command ("") when any request was sent.
func wholeCommand(sent []genapi.Exchange) []string {
	if len(sent) == 0 {
		return nil
	}
	return []string{""}
}

// concerned collects streams, each once, with the streams reading them as
// a parent.
type concerned struct {
	children map[string][]string
	seen     map[string]bool
	out      []string
}

func (c *concerned) add(stream string) {
	if stream == "" || c.seen[stream] {
		return
	}
	c.seen[stream] = true
	c.out = append(c.out, stream)
	for _, child := range c.children[stream] {
		c.add(child)
	}
}

// urlsInText finds the URLs written in a text, each with its path.
var urlsInText = regexp.MustCompile(`https?:/+[^/'"]+(/[^'"?]*)`)

// sentObject tells whether a URL path holds the Python text of a dict
// ({'next': ...}, as written or URL-encoded): the reference's answer to a
// RequestPath page token that is a dict (str(token) joined to url_base),
// which we never send.
func sentObject(path string) bool {
	path = strings.ToLower(path)
	for _, mark := range []string{"{'", "%7b'", "%7b%27"} {
		if strings.Contains(path, mark) {
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
