package cli

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// decoderStream is a one-stream manifest (stream d, GET /d) whose retriever
// has the decoder; more is YAML at the retriever level (a paginator).
func decoderStream(url, decoder, fieldPath, more string) string {
	return stream("d", "url_base: "+url+"\npath: /d", fieldPath, "decoder: "+decoder+"\n"+more)
}

// rawRecords lists the data of the stream's RECORD lines as printed, keys
// in the order we wrote them.
func rawRecords(res result, stream string) []string {
	var out []string
	prefix := `{"type":"RECORD","record":{"stream":"` + stream + `","data":`
	for _, line := range strings.Split(res.stdout, "\n") {
		if rest, ok := strings.CutPrefix(line, prefix); ok {
			out = append(out, rest[:strings.LastIndex(rest, `,"emitted_at":`)])
		}
	}
	return out
}

func gzipBytes(s string) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	w.Close()
	return b.Bytes()
}

func zipBytes(t *testing.T, files ...string) []byte {
	var b bytes.Buffer
	w := zip.NewWriter(&b)
	for i := 0; i < len(files); i += 2 {
		f, err := w.Create(files[i])
		if err != nil {
			t.Fatal(err)
		}
		f.Write([]byte(files[i+1]))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestJsonlDecoderSkipsLinesThatAreNotJSON(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		fmt.Fprint(w, "{\"id\":1}\n{\"id\":2,\n  \"x\": [1, 2]}\n{\"id\":2}\nnot json\n\n[{\"id\":3},{\"id\":4}]\n")
	})
	res := newConnector(t, decoderStream(a.URL, "{type: JsonlDecoder}", "[]", ""), nil, "d").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{"GET /d"})
	equalLists(t, "records", rawRecords(res, "d"), []string{`{"id":1}`, `{"id":2}`, `{"id":3}`, `{"id":4}`})
	equalLists(t, "warnings", res.logs("WARN"), []string{
		`Stream d: JsonlDecoder: line 2 is not JSON, skipped: {"id":2,`,
		`Stream d: JsonlDecoder: line 3 is not JSON, skipped: "x": [1, 2]}`,
		`Stream d: JsonlDecoder: line 5 is not JSON, skipped: not json`,
	})
	equalLists(t, "statuses", res.statuses("d"), []string{"STARTED", "RUNNING", "COMPLETE"})
}

func TestCsvDecoderDelimiterEncodingAndNulls(t *testing.T) {
	latin1 := "id\tname\tcity\tnote\n1\tZo\xe9\tNA\t\n2\t\"two\nlines\"\t\"a\"\"b\"\n\n3\n"
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) { w.Write([]byte(latin1)) })
	dec := `{type: CsvDecoder, delimiter: '\t', encoding: latin-1, set_values_to_none: [NA]}`
	res := newConnector(t, decoderStream(a.URL, dec, "[]", ""), nil, "d").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "records", rawRecords(res, "d"), []string{
		`{"id":"1","name":"Zoé","city":null,"note":""}`,
		`{"id":"2","name":"two\nlines","city":"a\"b","note":null}`,
		`{"id":"3","name":null,"city":null,"note":null}`,
	})
	// A field path applies to each row.
	res = newConnector(t, decoderStream(a.URL, dec, "[name]", ""), nil, "d").read(t)
	if errs := res.errors(); res.code == 0 || len(errs) != 2 || errs[0]["message"] != `stream d: a record must be a JSON object, got "Zoé" (HTTP 200 from `+a.URL+`/d)` {
		t.Errorf("a text cell is no record: exit %d %v", res.code, errs)
	}
}

func TestXmlDecoderRecordsAndCursorFromTheDocument(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		w.Header().Set("Content-Type", "application/xml")
		if r.URL.Query().Get("cursor") == "" {
			fmt.Fprint(w, `<?xml version="1.0"?><resp><items><item id="1"><name>a</name></item><item id="2"><name>b</name><tag>x</tag><tag>y</tag></item></items><next at="2">p2</next></resp>`)
			return
		}
		fmt.Fprint(w, `<resp><items><item id="3"/></items></resp>`)
	})
	res := newConnector(t, decoderStream(a.URL, "{type: XmlDecoder}", "[resp, items, item]", `paginator:
  type: DefaultPaginator
  page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: cursor}
  pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.resp.next['#text'] }}", stop_condition: "{{ 'next' not in response.resp }}"}`), nil, "d").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{"GET /d", "GET /d?cursor=p2"})
	equalLists(t, "records", rawRecords(res, "d"), []string{`{"@id":"1","name":"a"}`, `{"@id":"2","name":"b","tag":["x","y"]}`, `{"@id":"3"}`})
}

// An XML answer with text after its root element (here a trailing line an
// API appends) gives the root's records with one WARN for the stream:
// xmltodict calls it "junk after document element", and Airbyte's XmlDecoder
// then logs a warning and reads no record, which loses the page silently.
func TestXmlDecoderTextAfterTheRootElement(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		w.Header().Set("Content-Type", "application/xml")
		fmt.Fprintf(w, "<resp><item id=\"1\"/><item id=\"2\"/></resp>\n# served in 3 ms\n")
	})
	res := newConnector(t, decoderStream(a.URL, "{type: XmlDecoder}", "[resp, item]", ""), nil, "d").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{"GET /d"})
	equalLists(t, "records", rawRecords(res, "d"), []string{`{"@id":"1"}`, `{"@id":"2"}`})
	equalLists(t, "warnings", res.warnings(), []string{`Stream d: XmlDecoder: the response holds text "# served in 3 ms" after the root element, left out`})
}

func TestGzipDecoderWithAndWithoutCompression(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		switch r.URL.Query().Get("offset") {
		case "0":
			w.Write(gzipBytes(`{"data":` + items(0, 10) + `}`))
		case "10":
			fmt.Fprintf(w, `{"data":%s}`, items(10, 13)) // not compressed: read as it is
		}
	})
	res := newConnector(t, decoderStream(a.URL, "{type: GzipDecoder, decoder: {type: JsonDecoder}}", "[data]", offsetLimit10), nil, "d").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{"GET /d?limit=10&offset=0", "GET /d?limit=10&offset=10"})
	equalLists(t, "records", rawRecords(res, "d"), ids(0, 13))
}

func TestContentEncodingGzipIsDecompressedForEveryDecoder(t *testing.T) {
	csvFile := "id,name\n1,a\n2,b\n"
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		w.Header().Set("Content-Encoding", "gzip")
		switch r.URL.Path {
		case "/json":
			w.Write(gzipBytes(`{"data":[{"id":1}]}`))
		case "/deflate":
			w.Header().Set("Content-Encoding", "deflate")
			var b bytes.Buffer
			z := zlib.NewWriter(&b)
			z.Write([]byte(`{"data":[{"id":2}]}`))
			z.Close()
			w.Write(b.Bytes())
		case "/csv": // a .csv.gz file, compressed again on the way
			w.Write(gzipBytes(string(gzipBytes(csvFile))))
		}
	})
	m := func(path, decoder, fieldPath string) string {
		return stream("d", "url_base: "+a.URL+"\npath: "+path+"\nrequest_headers: {Accept-Encoding: gzip}", fieldPath, "decoder: "+decoder)
	}
	res := newConnector(t, m("/json", "{type: JsonDecoder}", "[data]"), nil, "d").read(t)
	equalLists(t, "json records", rawRecords(res, "d"), []string{`{"id":1}`})
	res = newConnector(t, m("/deflate", "{type: JsonDecoder}", "[data]"), nil, "d").read(t)
	equalLists(t, "deflate records", rawRecords(res, "d"), []string{`{"id":2}`})
	res = newConnector(t, m("/csv", "{type: GzipDecoder, decoder: {type: CsvDecoder}}", "[]"), nil, "d").read(t)
	equalLists(t, "csv records", rawRecords(res, "d"), []string{`{"id":"1","name":"a"}`, `{"id":"2","name":"b"}`})
	for _, r := range a.requests() {
		if r.Header.Get("Accept-Encoding") != "gzip" {
			t.Errorf("Accept-Encoding %q", r.Header.Get("Accept-Encoding"))
		}
	}
}

func TestZipfileDecoderReadsEveryFileInOrder(t *testing.T) {
	archive := zipBytes(t, "2024-01.csv", "id,v\n1,a\n2,b\n", "folder/", "", "folder/2024-02.csv", "id,v\n3,c\n", "2024-03.csv.gz", string(gzipBytes("id,v\n4,d\n")))
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) { w.Write(archive) })
	res := newConnector(t, decoderStream(a.URL, "{type: ZipfileDecoder, decoder: {type: GzipDecoder, decoder: {type: CsvDecoder}}}", "[]", ""), nil, "d").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "records", rawRecords(res, "d"), []string{`{"id":"1","v":"a"}`, `{"id":"2","v":"b"}`, `{"id":"3","v":"c"}`, `{"id":"4","v":"d"}`})
}

func TestIterableAndJsonItemsDecoders(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		switch r.URL.Path {
		case "/lines":
			fmt.Fprint(w, "first \"line\"\r\n\nthird\n")
		case "/items":
			fmt.Fprint(w, `{"meta":{"next":null},"result":{"rows":[{"id":1},{"id":2,"tags":["a"]}]}}`)
		}
	})
	m := func(path, decoder string) string {
		return stream("d", "url_base: "+a.URL+"\npath: "+path, "[]", "decoder: "+decoder)
	}
	res := newConnector(t, m("/lines", "{type: IterableDecoder}"), nil, "d").read(t)
	equalLists(t, "lines", rawRecords(res, "d"), []string{`{"record":"first \"line\""}`, `{"record":""}`, `{"record":"third"}`})
	res = newConnector(t, m("/items", "{type: JsonItemsDecoder, items_path: result.rows.item}"), nil, "d").read(t)
	equalLists(t, "items", rawRecords(res, "d"), []string{`{"id":1}`, `{"id":2,"tags":["a"]}`})
}

// A body that is not what the decoder expects is a TRACE naming the stream
// and the decoder: a body read whole is fetched again first (it may have
// been cut short on the way), a streamed one fails at once.
func TestBodiesTheDecoderCannotRead(t *testing.T) {
	cases := []struct {
		decoder  string
		body     []byte
		requests int
		message  string // after "stream d: "; URL stands for the request's URL, BINARY for the size of a binary body
	}{
		{"{type: JsonDecoder}", []byte(`{"data":[`), 2, `JsonDecoder: the response body is not valid JSON (HTTP 200 from GET URL): {"data":[ (gave up after 2 attempts)`},
		{"{type: XmlDecoder}", []byte(`<a><b></a>`), 2, `XmlDecoder: the body is not valid XML: unexpected </a> (HTTP 200 from GET URL): <a><b></a> (gave up after 2 attempts)`},
		{"{type: GzipDecoder, decoder: {type: JsonDecoder}}", gzipBytes(`{"data":`), 2, `GzipDecoder(JsonDecoder): the response body is not valid JSON (HTTP 200 from GET URL): BINARY (gave up after 2 attempts)`},
		{"{type: CsvDecoder}", []byte("id,name\n1,caf\xe9\n"), 1, `CsvDecoder: encoding: invalid UTF-8 (HTTP 200 from URL)`},
		{"{type: JsonlDecoder}", []byte("{\"id\":1}\n{\"id\":\"\xff\"}\n"), 1, `JsonlDecoder: line 2 is not valid UTF-8 text (HTTP 200 from URL)`},
		{"{type: IterableDecoder}", []byte("a\n\xff\n"), 1, `IterableDecoder: line 2 is not valid UTF-8 text (HTTP 200 from URL)`},
		{"{type: JsonItemsDecoder, items_path: data.item}", []byte(`{"data":[{"id":1},`), 1, `JsonItemsDecoder: the body is not valid JSON: it ends too early (HTTP 200 from URL)`},
		{"{type: ZipfileDecoder, decoder: {type: JsonDecoder}}", []byte(`{"data":[]}`), 1, `ZipfileDecoder(JsonDecoder): the body is not a valid zip archive: zip: not a valid zip file (HTTP 200 from URL)`},
		{"{type: GzipDecoder, decoder: {type: CsvDecoder}}", gzipBytes("id\n1\n")[:20], 1, `GzipDecoder(CsvDecoder): unexpected EOF (HTTP 200 from URL)`},
	}
	for _, c := range cases {
		t.Run(c.decoder, func(t *testing.T) {
			a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) { w.Write(c.body) })
			fast := "url_base: " + a.URL + "\npath: /d\nerror_handler: {type: DefaultErrorHandler, max_retries: 1, backoff_strategies: [{type: ConstantBackoffStrategy, backoff_time_in_seconds: 0.01}]}"
			res := newConnector(t, stream("d", fast, "[data]", "decoder: "+c.decoder), nil, "d").read(t)
			errs := res.errors()
			want := "stream d: " + strings.NewReplacer("URL", a.URL+"/d", "BINARY", fmt.Sprintf("(%d bytes of binary data)", len(c.body))).Replace(c.message)
			if res.code == 0 || len(errs) != 2 || errs[0]["message"] != want || errs[0]["failure_type"] != "system_error" {
				t.Errorf("exit %d, errors:\n%q\nwant first:\n%q", res.code, errs, want)
			}
			if len(a.requests()) != c.requests {
				t.Errorf("%d requests, want %d", len(a.requests()), c.requests)
			}
			equalLists(t, "statuses", res.statuses("d"), []string{"STARTED", "RUNNING", "INCOMPLETE"})
		})
	}
}

// A record path that is not in a response is an empty page, as in
// Airbyte's runtime: no records, no error, and offset or page pagination
// stops there.
func TestMissingRecordPathIsAnEmptyPage(t *testing.T) {
	bodies := []string{`{"meta":{"count":0}}`, `{"data":null}`, `{"data":{"items":null}}`, `{"data":{"other":[{"id":1}]}}`, `{"data":"none"}`, `{"data":[{"items":[{"id":1}]}]}`, `{}`, `[]`, ``}
	pagination := map[string]struct{ paginator, secondPage string }{
		"offset": {offsetLimit10, "GET /d?limit=10&offset=10"},
		"page": {`paginator:
  type: DefaultPaginator
  page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}
  page_size_option: {type: RequestOption, inject_into: request_parameter, field_name: limit}
  pagination_strategy: {type: PageIncrement, page_size: 10, start_from_page: 1, inject_on_first_request: true}`, "GET /d?limit=10&page=2"},
	}
	for name, p := range pagination {
		for _, body := range bodies {
			t.Run(name+" "+body, func(t *testing.T) {
				a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
					if q := r.URL.Query(); q.Get("offset") == "0" || q.Get("page") == "1" {
						fmt.Fprintf(w, `{"data":{"items":%s}}`, items(0, 10))
						return
					}
					fmt.Fprint(w, body)
				})
				res := newConnector(t, stream("d", "url_base: "+a.URL+"\npath: /d", "[data, items]", p.paginator), nil, "d").read(t)
				if res.code != 0 || len(res.errors()) != 0 {
					t.Fatalf("exit %d: %s", res.code, res.stdout)
				}
				if got := a.lines(); len(got) != 2 || got[1] != p.secondPage {
					t.Errorf("requests %q, want the second page to be the last", got)
				}
				equalLists(t, "records", rawRecords(res, "d"), ids(0, 10))
				equalLists(t, "statuses", res.statuses("d"), []string{"STARTED", "RUNNING", "COMPLETE"})
			})
		}
	}
}

func TestDecoderComponentsRefusedAtLoad(t *testing.T) {
	cases := []struct{ decoder, more, want string }{
		{"{type: CsvDecoder}", offsetLimit10, "streams[0].retriever.decoder: CsvDecoder cannot read pages of a DefaultPaginator (with pagination: JsonDecoder, XmlDecoder or GzipDecoder of JsonDecoder, as in Airbyte's runtime)"},
		{"{type: GzipDecoder, decoder: {type: JsonlDecoder}}", offsetLimit10, "streams[0].retriever.decoder: GzipDecoder(JsonlDecoder) cannot read pages of a DefaultPaginator"},
		{"{type: CsvDecoder, delimiter: ab}", "", `streams[0].retriever.decoder.delimiter: must be one character other than a quote or a line break, got "ab"`},
		{`{type: CsvDecoder, delimiter: '\q'}`, "", `streams[0].retriever.decoder.delimiter: "\\q" is not a valid escape sequence`},
		{"{type: CsvDecoder, encoding: klingon}", "", `streams[0].retriever.decoder.encoding: unknown encoding "klingon"`},
		{"{type: GzipDecoder}", "", "streams[0].retriever.decoder.decoder: is required"},
		{"{type: GzipDecoder, decoder: {type: XmlDecoder}}", "", "streams[0].retriever.decoder.decoder: XmlDecoder is not supported here (supported: CsvDecoder, GzipDecoder, JsonDecoder, JsonItemsDecoder, JsonlDecoder)"},
		{"{type: JsonItemsDecoder}", "", "streams[0].retriever.decoder.items_path: is required"},
		{"{type: CustomDecoder, class_name: source_x.components.MyDecoder}", "", "streams[0].retriever.decoder: " + notPermittedText},
	}
	for _, c := range cases {
		m := decoderStream("http://127.0.0.1:1", c.decoder, "[data]", c.more)
		res := newConnector(t, m, nil, "d").check(t)
		st := res.ofType("CONNECTION_STATUS")
		if len(st) != 1 || !strings.Contains(st[0]["connectionStatus"].(map[string]any)["message"].(string), c.want) {
			t.Errorf("%s: %s", c.decoder, res.stdout)
		}
	}
}

func TestSessionTokenFromAnXMLLoginResponse(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		if r.URL.Path == "/login" {
			fmt.Fprint(w, `<login><session id="s-42"/></login>`)
			return
		}
		fmt.Fprintf(w, `{"data":[{"id":1,"token":%q}]}`, r.Header.Get("X-Session"))
	})
	m := stream("d", "url_base: "+a.URL+"\npath: /d\nauthenticator:\n"+indent(`type: SessionTokenAuthenticator
login_requester: {type: HttpRequester, url_base: `+a.URL+`, path: /login, http_method: POST}
session_token_path: [login, session, "@id"]
decoder: {type: XmlDecoder}
request_authentication: {type: ApiKey, inject_into: {type: RequestOption, inject_into: header, field_name: X-Session}}`, 2), "[data]", "")
	res := newConnector(t, m, nil, "d").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{"POST /login", "GET /d"})
	equalLists(t, "records", rawRecords(res, "d"), []string{`{"id":1,"token":"s-42"}`})
}

// A builder test read shows a streaming decoder's body and records like
// any page's: the body is read whole there, as Airbyte's builder does.
func TestBuilderTestReadOfACsvStream(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		w.Header().Set("Content-Type", "text/csv")
		fmt.Fprint(w, "id,name\n1,a\n2,b\n")
	})
	m, err := yamlToMap(decoderStream(a.URL, "{type: CsvDecoder}", "[]", ""))
	if err != nil {
		t.Fatal(err)
	}
	c := newConnector(t, "", map[string]any{"__command": "test_read", "__injected_declarative_manifest": m}, "d")
	res := runCLI(t, "read", "--config", c.config, "--catalog", c.catalog)
	recs := res.ofType("RECORD")
	if res.code != 0 || len(recs) != 1 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	var read struct {
		Slices []struct {
			Pages []struct {
				Records  []map[string]any
				Response struct{ Body string }
			}
		}
	}
	b, _ := json.Marshal(recs[0]["record"].(map[string]any)["data"])
	json.Unmarshal(b, &read)
	if len(read.Slices) != 1 || len(read.Slices[0].Pages) != 1 {
		t.Fatalf("StreamRead %s", b)
	}
	page := read.Slices[0].Pages[0]
	got, _ := json.Marshal(page.Records)
	if string(got) != `[{"id":"1","name":"a"},{"id":"2","name":"b"}]` || page.Response.Body != "id,name\n1,a\n2,b\n" {
		t.Errorf("page %s", b)
	}
}

// A check stops reading a streamed body at its first records.
func TestCheckReadsTheFirstRecordsOfAStreamedBody(t *testing.T) {
	left := make(chan bool, 1)
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		fmt.Fprint(w, "id\n1\n2\n")
		w.(http.Flusher).Flush()
		select { // the rest of a long export, never sent
		case <-r.Context().Done():
			left <- true
		case <-time.After(5 * time.Second):
			left <- false
		}
	})
	res := newConnector(t, decoderStream(a.URL, "{type: CsvDecoder}", "[]", ""), nil, "d").check(t)
	st := res.ofType("CONNECTION_STATUS")
	if len(st) != 1 || st[0]["connectionStatus"].(map[string]any)["status"] != "SUCCEEDED" {
		t.Fatalf("check: %s", res.stdout)
	}
	if !<-left {
		t.Error("the check read the whole body")
	}
}

func TestMisspelledDecoderFieldIsWarnedAbout(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) { fmt.Fprint(w, "id;v\n1;a\n") })
	res := newConnector(t, decoderStream(a.URL, `{type: CsvDecoder, delimeter: ";"}`, "[]", ""), nil, "d").read(t)
	equalLists(t, "warnings", res.logs("WARN"), []string{`streams[0].retriever.decoder.delimeter: CsvDecoder has no field "delimeter" (did you mean delimiter?); it is ignored`})
	equalLists(t, "records", rawRecords(res, "d"), []string{`{"id;v":"1;a"}`})
}

// A body (or a first line) that starts with a UTF-8 byte order mark is read
// as if it did not: the reference reads an XML body so but drops a JSON body
// or JSON line that starts with one, and keeps it in a line's text.
func TestByteOrderMarkIsDropped(t *testing.T) {
	const bom = "\xef\xbb\xbf"
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		switch r.URL.Path + "?" + r.URL.RawQuery {
		case "/json?":
			fmt.Fprint(w, bom+`{"data":[{"id":1}],"next":"p2"}`)
		case "/json?cursor=p2":
			fmt.Fprint(w, bom+`[{"data":[{"id":2}]}]`)
		case "/xml?":
			fmt.Fprint(w, bom+`<r><item><id>3</id></item></r>`)
		case "/jsonl?":
			fmt.Fprint(w, bom+"{\"id\":4}\n{\"id\":5}\n")
		case "/lines?":
			fmt.Fprint(w, bom+"six\nseven\n")
		}
	})
	m := func(path, decoder, fieldPath, more string) string {
		return stream("d", "url_base: "+a.URL+"\npath: "+path, fieldPath, "decoder: "+decoder+"\n"+more)
	}
	cursor := `paginator:
  type: DefaultPaginator
  page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: cursor}
  pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next }}"}`
	cases := []struct {
		manifest string
		requests []string
		records  []string
	}{
		{m("/json", "{type: JsonDecoder}", "[data]", cursor), []string{"GET /json", "GET /json?cursor=p2"}, []string{`{"id":1}`, `{"id":2}`}},
		{m("/xml", "{type: XmlDecoder}", "[r, item]", ""), []string{"GET /xml"}, []string{`{"id":"3"}`}},
		{m("/jsonl", "{type: JsonlDecoder}", "[]", ""), []string{"GET /jsonl"}, []string{`{"id":4}`, `{"id":5}`}},
		{m("/lines", "{type: IterableDecoder}", "[]", ""), []string{"GET /lines"}, []string{`{"record":"six"}`, `{"record":"seven"}`}},
	}
	for _, c := range cases {
		before := len(a.lines())
		res := newConnector(t, c.manifest, nil, "d").read(t)
		if res.code != 0 || len(res.errors()) != 0 || len(res.logs("WARN")) != 0 {
			t.Fatalf("exit %d: %s", res.code, res.stdout)
		}
		equalLists(t, "requests", a.lines()[before:], c.requests)
		equalLists(t, "records", rawRecords(res, "d"), c.records)
	}
}

// NaN, Infinity and -Infinity, which APIs written in Python send, are read
// as null with one warning, as the reference reads them, instead of failing
// the stream.
func TestNaNAndInfinityAreReadAsNull(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		switch r.URL.Path + "?" + r.URL.RawQuery {
		case "/json?":
			fmt.Fprint(w, `{"data":[{"id":1,"score":NaN,"s":"NaN"}],"next":"p2","max":Infinity}`)
		case "/json?cursor=p2":
			fmt.Fprint(w, `{"data":[{"id":2,"score":-Infinity}]}`)
		case "/jsonl?":
			fmt.Fprint(w, "{\"id\":3,\"score\":NaN,\n{\"id\":4,\"score\":NaN}\n")
		}
	})
	cursor := `paginator:
  type: DefaultPaginator
  page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: cursor}
  pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next }}"}`
	res := newConnector(t, stream("d", "url_base: "+a.URL+"\npath: /json", "[data]", cursor), nil, "d").read(t)
	if res.code != 0 || len(res.errors()) != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{"GET /json", "GET /json?cursor=p2"})
	equalLists(t, "records", rawRecords(res, "d"), []string{`{"id":1,"score":null,"s":"NaN"}`, `{"id":2,"score":null}`})
	equalLists(t, "warnings", res.logs("WARN"), []string{"Stream d: JsonDecoder: the response holds NaN, Infinity or -Infinity, which JSON does not have: read as null"})

	res = newConnector(t, stream("d", "url_base: "+a.URL+"\npath: /jsonl", "[]", "decoder: {type: JsonlDecoder}"), nil, "d").read(t)
	equalLists(t, "records", rawRecords(res, "d"), []string{`{"id":4,"score":null}`})
	equalLists(t, "warnings", res.logs("WARN"), []string{
		`Stream d: JsonlDecoder: line 1 is not JSON, skipped: {"id":3,"score":NaN,`,
		"Stream d: JsonlDecoder: the response holds NaN, Infinity or -Infinity, which JSON does not have: read as null",
	})
}

// Quotes that do not follow CSV's rules are read as Python's csv module
// reads them, so that the rows are Airbyte's: a quoted cell followed by more
// text or a space goes on unquoted, a quote inside an unquoted cell is text.
func TestCsvDecoderReadsMalformedQuotesAsAirbyteDoes(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		w.Header().Set("Content-Type", "text/csv")
		fmt.Fprint(w, "id,name\r\n1,a \"b\" c\r\n2,\"x\"y\r\n3,  \"z\"\r\n\"4\" ,q\r\n5,\"two\r\nlines\"\r\n")
	})
	res := newConnector(t, decoderStream(a.URL, "{type: CsvDecoder}", "[]", ""), nil, "d").read(t)
	if res.code != 0 || len(res.errors()) != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stdout)
	}
	equalLists(t, "requests", a.lines(), []string{"GET /d"})
	equalLists(t, "records", rawRecords(res, "d"), []string{
		`{"id":"1","name":"a \"b\" c"}`,
		`{"id":"2","name":"xy"}`,
		`{"id":"3","name":"  \"z\""}`,
		`{"id":"4 ","name":"q"}`,
		`{"id":"5","name":"two\nlines"}`,
	})
}
