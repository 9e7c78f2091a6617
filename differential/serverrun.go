package differential

import (
	"encoding/base64"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/airbyte-go/source-declarative/genapi"
	"github.com/airbyte-go/source-declarative/manifest"
)

// The manifest servers side by side: ours and Airbyte's, each asking its
// own instance of the generic API, given the same requests for a manifest
// (resolve, check, discover, full resolve, a test read of every stream);
// their answers are compared as the command line's are.

// CompareServers compares the two servers' answers for one manifest.
func CompareServers(path string, servers [2]*ManifestServer, allowed []Entry) (res Result) {
	res = Result{Name: strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)), Deliberate: map[string]int{}}
	start := time.Now()
	defer func() { res.Elapsed = time.Since(start) }()
	raw, err := manifest.ReadFile(path)
	if err != nil {
		res.Differences = append(res.Differences, Difference{What: "load", Detail: err.Error()})
		return res
	}
	m := &run{Runner: &Runner{Allowed: allowed}, res: &res, raw: raw, started: start}
	for i, name := range []string{"ours", "reference"} {
		m.sides[i] = &side{name: name, api: genapi.Start()}
		defer m.sides[i].api.Close()
	}
	m.compareServers(servers)
	return res
}

// answers are the two servers' answers to one request, their bodies
// normalized as a command's output is.
type answers [2]Response

func (m *run) compareServers(servers [2]*ManifestServer) {
	resolved, err := manifest.ResolveOnly(manifest.DeepCopy(m.raw).(map[string]any))
	if err != nil {
		m.differ(Difference{What: "load", Detail: err.Error()})
		return
	}
	spec, _ := manifest.Spec(resolved)
	connSpec, _ := spec["connectionSpecification"].(map[string]any)
	configs, manifests, ok := m.configure(connSpec)
	if !ok {
		return
	}
	body := func(fields func(i int) map[string]any) [2]any {
		return [2]any{fields(0), fields(1)}
	}
	withConfig := func(i int) map[string]any { return map[string]any{"manifest": manifests[i], "config": configs[i]} }
	resolve := m.ask(servers, "/v1/manifest/resolve", body(func(i int) map[string]any { return map[string]any{"manifest": manifests[i]} }))
	m.compareManifests("resolve", resolve)
	check := m.ask(servers, "/v1/manifest/check", body(withConfig))
	if refused := refusedCode(check); refused != "" {
		m.res.Refused = refused
		m.compareStatus("check", check)
		return
	}
	m.compareCheckAnswers(check)
	discover := m.ask(servers, "/v1/manifest/discover", body(withConfig))
	if m.compareStatus("discover", discover) {
		m.differ(compareCatalogs(catalogOutputs(discover))...)
	}
	full := m.ask(servers, "/v1/manifest/full_resolve", body(withConfig))
	m.compareManifests("full_resolve", full)
	secrets := specSecrets(connSpec, asJSON(configs[1]), nil)
	streams := catalogStreams(catalogOutputs(discover)[0])
	m.res.Streams = len(streams)
	for _, st := range streams {
		name := fmt.Sprint(st["name"])
		read := m.send(servers, "/v1/manifest/test_read", body(func(i int) map[string]any {
			return map[string]any{"manifest": manifests[i], "config": configs[i], "stream_name": name,
				"record_limit": testReadMaxRecords, "page_limit": serverPageLimit, "slice_limit": serverSliceLimit}
		}))
		if read[1].Status == 200 {
			m.note("server-test-read-secrets", maskSecrets(read[1].JSON, secrets))
		}
		m.normalize(&read)
		if m.compareStatus("test read", read, name) {
			m.compareTestRead(name, [2]output{asRecord(read[0]), asRecord(read[1])})
		}
	}
}

// specSecrets are the config's values that its spec marks airbyte_secret,
// in objects and oneOf options too.
func specSecrets(schema, config map[string]any, into []string) []string {
	for key, p := range asMap(schema["properties"]) {
		prop := asMap(p)
		switch v := config[key].(type) {
		case string:
			if prop["airbyte_secret"] == true && v != "" {
				into = append(into, v)
			}
		case map[string]any:
			into = specSecrets(prop, v, into)
			for _, option := range list(prop["oneOf"]) {
				into = specSecrets(asMap(option), v, into)
			}
		}
	}
	return into
}

// maskSecrets writes **** for each secret inside the texts of a StreamRead
// (the reference's) but its latest_config_update (the config the builder
// keeps, which both show whole), and counts the texts it changed. Airbyte's
// server never registers the spec's secrets (its command line does, in the
// entrypoint's read), so its test reads show them.
func maskSecrets(read any, secrets []string) int {
	n := 0
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				x[k] = walk(e)
			}
		case []any:
			for i, e := range x {
				x[i] = walk(e)
			}
		case string:
			masked := x
			for _, s := range secrets {
				masked = strings.ReplaceAll(masked, s, "****")
			}
			if masked != x {
				n++
			}
			return masked
		}
		return v
	}
	for k, v := range asMap(read) {
		if k != "latest_config_update" {
			walk(v)
		}
	}
	return n
}

// The limits of the servers' test reads: fewer pages and slices than the
// command line's test reads (testReads) compare, to keep the comparison
// within a couple of minutes on two cores; those compare the pages.
const (
	serverPageLimit  = 2
	serverSliceLimit = 2
)

// ask sends each server its side's body and normalizes the answers.
func (m *run) ask(servers [2]*ManifestServer, path string, bodies [2]any) answers {
	a := m.send(servers, path, bodies)
	m.normalize(&a)
	return a
}

// normalize makes equal in the answers' bodies what differs between two
// runs without meaning anything, as in a command's output.
func (m *run) normalize(a *answers) {
	for i := range a {
		n := normalizer{api: m.sides[i].api.URL, from: m.started.Add(-nowSlack), till: time.Now().Add(laterSlack)}
		a[i].JSON = n.value(a[i].JSON)
	}
}

// send sends each server its side's body.
func (m *run) send(servers [2]*ManifestServer, path string, bodies [2]any) answers {
	var out answers
	var errs [2]error
	done := make(chan struct{})
	go func() {
		out[1], errs[1] = servers[1].Post(path, bodies[1])
		close(done)
	}()
	out[0], errs[0] = servers[0].Post(path, bodies[0])
	<-done
	for i := range out {
		if errs[i] != nil {
			out[i] = Response{Status: -1, JSON: map[string]any{"detail": errs[i].Error()}}
		}
	}
	return out
}

// compareStatus compares the answers' status codes, and tells whether
// both succeeded (their bodies are then to compare). A failure's detail
// is the reference's words or ours: only the route's words before it
// ("Error reading stream: ...") are compared.
func (m *run) compareStatus(what string, a answers, stream ...string) bool {
	d := Difference{What: what}
	if len(stream) > 0 {
		d.Stream = stream[0]
	}
	switch {
	case a[0].Status != a[1].Status:
		d.Detail = fmt.Sprintf("status %d, the reference %d (ours: %s; reference: %s)", a[0].Status, a[1].Status, clip(detail(a[0]), 200), clip(detail(a[1]), 200))
	case a[0].Status != 200 && routeWords(detail(a[0])) != routeWords(detail(a[1])):
		d.Detail = fmt.Sprintf("detail %q, the reference %q", clip(detail(a[0]), 200), clip(detail(a[1]), 200))
	default:
		return a[0].Status == 200
	}
	m.differ(d)
	return false
}

// detail is a failure's text: FastAPI's detail, or the body.
func detail(r Response) string {
	if s, ok := asMap(r.JSON)["detail"].(string); ok {
		return s
	}
	return string(r.Body)
}

// routeWords are a detail's words before its first colon.
func routeWords(detail string) string {
	words, _, _ := strings.Cut(detail, ":")
	return words
}

// refusedCode names the custom code our check refuses, "" when it does not.
func refusedCode(a answers) string {
	text := detail(a[0])
	if a[0].Status == 200 {
		text, _ = asMap(a[0].JSON)["message"].(string)
	}
	if strings.Contains(text, "Custom connector code is not permitted") || strings.Contains(text, "class_name") {
		return clip(text, 160)
	}
	return ""
}

// compareCheckAnswers compares check's success; its message is each
// runtime's words.
func (m *run) compareCheckAnswers(a answers) {
	if !m.compareStatus("check", a) {
		return
	}
	x, y := asMap(a[0].JSON)["success"], asMap(a[1].JSON)["success"]
	if x != y {
		m.differ(Difference{What: "check", Detail: fmt.Sprintf("success %v, the reference %v (ours: %v; reference: %v)", x, y,
			asMap(a[0].JSON)["message"], asMap(a[1].JSON)["message"])})
	}
}

// compareManifests compares the manifests resolve or full_resolve answer.
func (m *run) compareManifests(what string, a answers) {
	if !m.compareStatus(what, a) {
		return
	}
	if diff := firstDifference(asMap(a[0].JSON)["manifest"], asMap(a[1].JSON)["manifest"], "manifest"); diff != "" {
		m.differ(Difference{What: what, Detail: diff})
	}
}

// catalogOutputs are discover's answers as the command line's outputs (a
// CATALOG message), to compare as they are.
func catalogOutputs(a answers) [2]output {
	var outs [2]output
	for i, r := range a {
		if c := asMap(r.JSON)["catalog"]; r.Status == 200 && c != nil {
			outs[i].msgs = []map[string]any{{"type": "CATALOG", "catalog": c}}
		}
	}
	return outs
}

// asRecord is a test read's StreamRead as the builder's command line
// prints it (in a RECORD message), to compare as it is.
func asRecord(r Response) output {
	return output{msgs: []map[string]any{{"type": "RECORD", "record": map[string]any{"data": r.JSON}}}}
}

// ServerCase is one request both servers answer the same way whatever the
// manifest: authentication, and requests that do not fit the models.
type ServerCase struct {
	Name    string
	Method  string
	Path    string
	Body    string
	Headers []string // "Name", "value" pairs; an empty value takes the header away
}

// serverCases ask what every server must answer alike (compared whole:
// status, body and WWW-Authenticate).
func serverCases() []ServerCase {
	const small = `{"version":"6.0.0","type":"DeclarativeSource","check":{"type":"CheckStream","stream_names":["a"]},"streams":[{"type":"DeclarativeStream","name":"a","retriever":{"type":"SimpleRetriever","requester":{"type":"HttpRequester","url_base":"http://127.0.0.1:9","path":"/a"},"record_selector":{"type":"RecordSelector","extractor":{"type":"DpathExtractor","field_path":[]}}}}]}`
	read := `{"manifest":` + small + `,"config":{},"stream_name":"a"}`
	expired := Token(ServerSecret, fmt.Sprintf(`{"sub":"x","exp":%d}`, time.Now().Add(-time.Hour).Unix()))
	return []ServerCase{
		{Name: "health", Method: "GET", Path: "/health/"},
		{Name: "health without its slash", Method: "GET", Path: "/health"},
		{Name: "capabilities", Method: "GET", Path: "/capabilities/"},
		{Name: "no token", Method: "POST", Path: "/v1/manifest/resolve", Body: read, Headers: []string{"Authorization", ""}},
		{Name: "not a bearer token", Method: "POST", Path: "/v1/manifest/resolve", Body: read, Headers: []string{"Authorization", "Basic dXNlcjpwYXNz"}},
		{Name: "token of another secret", Method: "POST", Path: "/v1/manifest/check", Body: read, Headers: []string{"Authorization", "Bearer " + Token("another", `{"sub":"x"}`)}},
		{Name: "alg none", Method: "POST", Path: "/v1/manifest/discover", Body: read, Headers: []string{"Authorization", "Bearer " + unsignedToken(`{"sub":"x"}`)}},
		{Name: "expired token", Method: "POST", Path: "/v1/manifest/test_read", Body: read, Headers: []string{"Authorization", "Bearer " + expired}},
		{Name: "garbage token", Method: "POST", Path: "/v1/manifest/full_resolve", Body: read, Headers: []string{"Authorization", "Bearer abc"}},
		{Name: "empty body", Method: "POST", Path: "/v1/manifest/test_read", Body: `{}`},
		{Name: "fields of the wrong types", Method: "POST", Path: "/v1/manifest/test_read", Body: `{"manifest":[],"config":"x","stream_name":5,"state":{},"custom_components_code":1}`},
		{Name: "limits out of range", Method: "POST", Path: "/v1/manifest/test_read", Body: `{"manifest":` + small + `,"config":{},"stream_name":"a","record_limit":0,"page_limit":21,"slice_limit":"a"}`},
		{Name: "stream_limit out of range", Method: "POST", Path: "/v1/manifest/full_resolve", Body: `{"manifest":` + small + `,"config":{},"stream_limit":101}`},
		{Name: "context of the wrong type", Method: "POST", Path: "/v1/manifest/check", Body: `{"manifest":` + small + `,"config":{},"context":{"workspace_id":1}}`},
		{Name: "not JSON", Method: "POST", Path: "/v1/manifest/resolve", Body: `{"manifest":`},
		{Name: "a JSON array", Method: "POST", Path: "/v1/manifest/discover", Body: `[1]`},
		{Name: "unknown route", Method: "POST", Path: "/v1/manifest/nothing", Body: `{}`},
		{Name: "wrong method", Method: "GET", Path: "/v1/manifest/check"},
		{Name: "custom code not permitted", Method: "POST", Path: "/v1/manifest/test_read", Body: `{"manifest":` + small + `,"config":{},"stream_name":"a","custom_components_code":"x = 1\n"}`},
	}
}

// unsignedToken is a JWT with alg none and no signature.
func unsignedToken(claims string) string {
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	return enc(`{"alg":"none","typ":"JWT"}`) + "." + enc(claims) + "."
}

// CompareServerCases sends every ServerCase to both servers and compares
// the answers whole; the differences not on the allow-list are returned,
// those on it counted by entry.
func CompareServerCases(servers [2]*ManifestServer, allowed []Entry) Result {
	res := Result{Name: "protocol", Deliberate: map[string]int{}}
	start := time.Now()
	for _, c := range serverCases() {
		var a answers
		for i, s := range servers {
			r, err := s.Send(c.Method, c.Path, c.Body, c.Headers...)
			if err != nil {
				r = Response{Status: -1, Body: []byte(err.Error())}
			}
			a[i] = r
		}
		for _, d := range compareWhole(c.Name, a) {
			if id := allowedBy(allowed, res.Name, d, nil); id != "" {
				res.Deliberate[id]++
				continue
			}
			res.Differences = append(res.Differences, d)
		}
	}
	res.Elapsed = time.Since(start)
	return res
}

// compareWhole compares two answers' status, WWW-Authenticate, Location
// (the server's address made equal) and body.
func compareWhole(name string, a answers) []Difference {
	var ds []Difference
	d := func(format string, args ...any) {
		ds = append(ds, Difference{Stream: name, What: "protocol", Detail: fmt.Sprintf(format, args...)})
	}
	if a[0].Status != a[1].Status {
		d("status %d, the reference %d (ours: %s; reference: %s)", a[0].Status, a[1].Status, clip(string(a[0].Body), 300), clip(string(a[1].Body), 300))
		return ds
	}
	for _, h := range []string{"WWW-Authenticate", "Content-Type"} {
		if x, y := a[0].Header.Get(h), a[1].Header.Get(h); x != y {
			d("%s %q, the reference %q", h, x, y)
		}
	}
	if x, y := a[0].location(), a[1].location(); x != y {
		d("Location %q, the reference %q", x, y)
	}
	x, y := any(string(a[0].Body)), any(string(a[1].Body))
	if a[0].JSON != nil || a[1].JSON != nil {
		x, y = a[0].JSON, a[1].JSON
	}
	if diff := firstDifference(x, y, "body"); diff != "" {
		d("%s", diff)
	}
	return ds
}
