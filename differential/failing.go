package differential

import (
	"fmt"
	"strings"
)

// A command or a stream that fails on both sides is not a difference, but
// it proves nothing either: it is listed as failing in both, with why. The
// reason is the reference's error (what an Airbyte user sees) and, where the
// generic API is the cause, which part of the manifest it cannot serve: the
// request it answered with an error, and what it said it cannot serve of
// that stream. Judged per stream: a read failing on one stream still has
// the others compared.

// failing records that where fails on both sides, with the reference's
// error message and what the API answered; stream scopes the API's part.
func (m *run) failing(where, stream string, outs [2]output, message string) {
	if _, seen := m.res.Failing[where]; seen {
		return
	}
	reason := clip(oneLine(message), 200)
	if api := m.apiPart(stream, outs[1]); api != "" {
		reason += " (" + api + ")"
	}
	if m.res.Failing == nil {
		m.res.Failing = map[string]string{} // a run of the servers' comparison starts without one
	}
	m.res.Failing[where] = reason
}

// apiPart says what the API could not serve for a stream ("" for any): the
// first request it answered with an error, and the plan's problems.
func (m *run) apiPart(stream string, o output) string {
	var parts []string
	for _, e := range o.exchanges {
		if e.Status < 400 || stream != "" && e.Endpoint != stream && e.Endpoint != "" {
			continue
		}
		what := "the mock answers"
		switch {
		case e.Endpoint == "" && e.Status == 404:
			what = "the mock has no route for"
		case e.Endpoint == "" && e.Status == 403:
			what = "the mock answers the API's root with 403 to"
		}
		if what == "the mock answers" {
			what += fmt.Sprintf(" %d to", e.Status)
		}
		parts = append(parts, fmt.Sprintf("%s %s %s", what, e.Method, clip(e.Path, 100)))
		break
	}
	for _, p := range m.res.Problems {
		if stream == "" || strings.Contains(p, "stream "+stream+":") || strings.HasPrefix(p, stream+":") {
			parts = append(parts, "the mock: "+p)
		}
	}
	return strings.Join(parts, "; ")
}

// failedBoth tells whether both sides' command failed as a whole: a
// non-zero exit, or a status it reports as FAILED; message is the
// reference's error.
func failedBoth(outs [2]output) (message string, both bool) {
	failed := func(o output) (string, bool) {
		for _, m := range o.ofType("CONNECTION_STATUS") {
			cs := asMap(m["connectionStatus"])
			if cs["status"] != "SUCCEEDED" {
				return fmt.Sprint(cs["message"]), true
			}
		}
		if msg := firstErrorMessage(o, ""); msg != "" {
			return msg, true
		}
		if o.code != 0 {
			return fmt.Sprintf("exit code %d: %s", o.code, lastLines(o.stderr, 1)), true
		}
		return "", false
	}
	_, a := failed(outs[0])
	msg, b := failed(outs[1])
	return msg, a && b
}

// firstErrorMessage is the message of a command's first error trace about
// stream ("" for the command as a whole).
func firstErrorMessage(o output, stream string) string {
	for _, t := range o.ofType("TRACE") {
		e := asMap(asMap(t["trace"])["error"])
		if e == nil {
			continue
		}
		name := ""
		if d := asMap(e["stream_descriptor"]); d != nil {
			name = fmt.Sprint(d["name"])
		}
		if name == stream {
			return fmt.Sprint(e["message"])
		}
	}
	return ""
}

// readFailures lists each stream that a read ends INCOMPLETE on both sides,
// and a read failing as a whole on both, under label.
func (m *run) readFailures(label string, outs [2]output, a, b map[string]*streamParts) {
	streams := 0
	for _, name := range unionKeys(a, b) {
		pa, pb := a[name], b[name]
		if pa == nil || pb == nil || last(pa.statuses) != "INCOMPLETE" || last(pb.statuses) != "INCOMPLETE" {
			continue
		}
		if _, failedRead := m.res.Failing["read of "+name]; failedRead {
			continue // its read from state fails as it did
		}
		msg := firstErrorMessage(outs[1], name)
		if msg == "" {
			msg = firstErrorMessage(outs[1], "")
		}
		m.failing(label+" of "+name, name, outs, msg)
		streams++
	}
	if msg, both := failedBoth(outs); both && streams == 0 {
		m.failing(label, "", outs, msg)
	}
}

// testReadFailure lists a stream whose test read fails on both sides: no
// StreamRead, or one logging an error.
func (m *run) testReadFailure(stream string, outs [2]output) {
	msgs := [2]string{}
	for i, o := range outs {
		read := streamRead(o)
		if read == nil {
			msgs[i] = firstErrorMessage(o, "")
			if msgs[i] == "" {
				msgs[i] = "no StreamRead"
			}
			continue
		}
		for _, l := range list(read["logs"]) {
			if log := asMap(l); log["level"] == "ERROR" {
				msgs[i] = fmt.Sprint(log["message"])
				break
			}
		}
	}
	if msgs[0] == "" || msgs[1] == "" {
		return
	}
	if _, failedRead := m.res.Failing["read of "+stream]; failedRead {
		return
	}
	m.failing("test read of "+stream, stream, outs, msgs[1])
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
