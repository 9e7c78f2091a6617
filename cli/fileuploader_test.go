package cli

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/airbyte-go/source-declarative/server"
)

// A stream's file_uploader, as Airbyte's CDK 7.28 runs it: the file of each
// record is downloaded and staged, and the RECORD says where.

// filesAPI serves /items in two pages of records naming their files
// (content_url, on the same server), or in one page of the records given
// (BASE standing for the server's URL), and each file at /files/<id>;
// /files/404 is not found, /redirect/<host>/<path> redirects to that URL.
func filesAPI(t *testing.T, records ...string) *api {
	return newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		base := "http://" + r.Host
		switch {
		case r.URL.Path == "/items" && len(records) > 0:
			fmt.Fprintf(w, `{"items":[%s]}`, strings.ReplaceAll(strings.Join(records, ","), "BASE", base))
		case r.URL.Path == "/items" && r.URL.Query().Get("page") == "":
			fmt.Fprintf(w, `{"items":[{"id":1,"file_name":"a.txt","content_url":"%[1]s/files/1"},{"id":2,"file_name":"b.txt","content_url":"%[1]s/files/2"}],"next":"2"}`, base)
		case r.URL.Path == "/items":
			fmt.Fprintf(w, `{"items":[{"id":3,"file_name":"c.txt","content_url":"%s/files/3"}],"next":null}`, base)
		case strings.HasPrefix(r.URL.Path, "/redirect/"):
			http.Redirect(w, r, "http://"+strings.TrimPrefix(r.URL.Path, "/redirect/"), http.StatusFound)
		case r.URL.Path == "/files/404":
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"error":"no such file"}`)
		default:
			w.Header().Set("Content-Type", "application/octet-stream")
			fmt.Fprintf(w, "file %s\n", strings.TrimPrefix(r.URL.Path, "/files/"))
		}
	})
}

// filesManifest reads filesAPI's items (stream name) with the config's
// api_key as a bearer token, and downloads each record's file with it; file
// is the file uploader's filename_extractor ("": none) and more of its
// requester's fields.
func filesManifest(url, name, file, requester string) string {
	fileName := ""
	if file != "" {
		fileName = "\n      filename_extractor: " + file
	}
	if requester != "" {
		requester = "\n" + indent(requester, 8)
	}
	return fmt.Sprintf(`version: 6.0.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: ["%[2]s"]}
definitions:
  auth: {type: BearerAuthenticator, api_token: "{{ config.api_key }}"}
streams:
  - type: DeclarativeStream
    name: "%[2]s"
    primary_key: [id]
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: "%[1]s", path: /items, authenticator: "#/definitions/auth"}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [items]}}
      paginator:
        type: DefaultPaginator
        pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next }}", stop_condition: "{{ not response.next }}"}
        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}
    file_uploader:
      type: FileUploader
      requester:
        type: HttpRequester
        url_base: "{{ download_target }}"
        authenticator: "#/definitions/auth"%[4]s
      download_target_extractor: {type: DpathExtractor, field_path: [content_url]}%[3]s
  - type: DeclarativeStream
    name: plain
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: "%[1]s", path: /items}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [items]}}
spec:
  type: Spec
  connection_specification:
    type: object
    properties:
      api_key: {type: string, airbyte_secret: true}
`, url, name, fileName, requester)
}

// stagingDir is a staging directory of the test's own, as the platform
// mounts one.
func stagingDir(t *testing.T) string {
	dir := filepath.Join(t.TempDir(), "staging")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AIRBYTE_STAGING_DIRECTORY", dir)
	return dir
}

// printed lists the lines of stdout of the types given, emitted_at written 0.
func (r result) printed(types ...string) []string {
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		for _, typ := range types {
			if strings.HasPrefix(line, `{"type":"`+typ+`"`) {
				out = append(out, emittedAt.ReplaceAllString(line, `"emitted_at":0`))
			}
		}
	}
	return out
}

// stagedFiles lists the files under dir as "path: content".
func stagedFiles(t *testing.T, dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(path)
			rel, _ := filepath.Rel(dir, path)
			out = append(out, rel+": "+string(b))
		}
		return nil
	})
	return out
}

// Each record's file is downloaded with the stream's credentials once the
// record is read, before the next page, and written under the staging
// directory as <stream>/<file name>, the name normalised as pathlib does
// (zendesk-support's "{{ record.id }}/{{ record.file_name }}/"); its
// RECORD carries the file_reference, and four INFO lines say so, as the
// CDK's DefaultFileUploader logs them.
func TestFileUploaderStagesEachRecordsFile(t *testing.T) {
	dir := stagingDir(t)
	a := filesAPI(t)
	c := newConnector(t, filesManifest(a.URL, "items", `"{{ record.id }}//./{{ record.file_name }}/"`, ""), map[string]any{"api_key": "key-123"}, "items")
	res := c.read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %v", res.code, res.errors())
	}
	equalLists(t, "requests", a.lines(), []string{"GET /items", "GET /files/1", "GET /files/2", "GET /items?page=2", "GET /files/3"})
	for _, r := range a.requests() {
		if got := r.Header.Get("Authorization"); got != "Bearer key-123" {
			t.Errorf("%s: Authorization %q", r.Path, got)
		}
	}
	record := func(id int, name string) string {
		return fmt.Sprintf(`{"type":"RECORD","record":{"stream":"items","data":{"id":%[1]d,"file_name":"%[2]s","content_url":"%[3]s/files/%[1]d"},"emitted_at":0,`+
			`"file_reference":{"staging_file_url":"%[4]s/items/%[1]d/%[2]s","source_file_relative_path":"items/%[1]d/%[2]s","file_size_bytes":7}}}`, id, name, a.URL, dir)
	}
	equalLists(t, "records", res.printed("RECORD"), []string{record(1, "a.txt"), record(2, "b.txt"), record(3, "c.txt")})
	equalLists(t, "files", stagedFiles(t, dir), []string{"items/1/a.txt: file 1\n", "items/2/b.txt: file 2\n", "items/3/c.txt: file 3\n"})
	logs := res.printed("LOG")
	equalLists(t, "logs of the first file", logs[:4], []string{
		`{"type":"LOG","log":{"level":"INFO","message":"File uploaded successfully"}}`,
		`{"type":"LOG","log":{"level":"INFO","message":"File url: ` + dir + `/items/1/a.txt"}}`,
		`{"type":"LOG","log":{"level":"INFO","message":"File size: 0.0068359375 KB"}}`,
		`{"type":"LOG","log":{"level":"INFO","message":"File relative path: items/1/a.txt"}}`,
	})
	equalLists(t, "statuses", res.statuses("items"), []string{"STARTED", "RUNNING", "COMPLETE"})
}

// Without filename_extractor a file is named by a random UUID.
func TestFileUploaderNamesAFileByAUUIDWithoutFilenameExtractor(t *testing.T) {
	dir := stagingDir(t)
	a := filesAPI(t, `{"id":1,"content_url":"BASE/files/1"}`)
	res := newConnector(t, filesManifest(a.URL, "items", "", ""), map[string]any{"api_key": "key-123"}, "items").read(t)
	if res.code != 0 {
		t.Fatalf("exit %d: %v", res.code, res.errors())
	}
	files := stagedFiles(t, dir)
	uuid := regexp.MustCompile(`^items/[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}: file 1\n$`)
	if len(files) != 1 || !uuid.MatchString(files[0]) {
		t.Errorf("files %q", files)
	}
}

// A ".." that stays inside the staging directory is kept, as pathlib keeps
// it, and the folder it climbs out of is made first, as the CDK makes it.
func TestFileUploaderKeepsADotDotThatStaysInside(t *testing.T) {
	dir := stagingDir(t)
	a := filesAPI(t, `{"id":1,"file_name":"sub/../a.txt","content_url":"BASE/files/1"}`)
	res := newConnector(t, filesManifest(a.URL, "items", `"{{ record.file_name }}"`, ""), map[string]any{"api_key": "key-123"}, "items").read(t)
	equalLists(t, "records", res.printed("RECORD"), []string{fmt.Sprintf(`{"type":"RECORD","record":{"stream":"items","data":{"id":1,"file_name":"sub/../a.txt","content_url":"%s/files/1"},"emitted_at":0,`+
		`"file_reference":{"staging_file_url":"%s/items/sub/../a.txt","source_file_relative_path":"items/sub/../a.txt","file_size_bytes":7}}}`, a.URL, dir)})
	equalLists(t, "files", stagedFiles(t, dir), []string{"items/a.txt: file 1\n"})
	if info, err := os.Stat(filepath.Join(dir, "items", "sub")); err != nil || !info.IsDir() {
		t.Errorf("items/sub: %v", err)
	}
}

// discover says which streams are file based, as the CDK's catalog says.
func TestFileUploaderStreamIsFileBased(t *testing.T) {
	c := newConnector(t, filesManifest("https://api.test", "items", "", ""), map[string]any{"api_key": "key-123"})
	res := runCLI(t, "discover", "--manifest", c.manifest, "--config", c.config)
	equalLists(t, "catalog", res.printed("CATALOG"), []string{`{"type":"CATALOG","catalog":{"streams":[` +
		`{"name":"items","json_schema":{},"supported_sync_modes":["full_refresh"],"source_defined_primary_key":[["id"]],"is_resumable":false,"is_file_based":true},` +
		`{"name":"plain","json_schema":{},"supported_sync_modes":["full_refresh"],"is_resumable":false,"is_file_based":false}]}}`})
}

// The file name comes from the API's data; a path leading out of the
// staging directory (a ".." too many, or an absolute one, which the
// stream's name can make) fails the stream before its file is requested,
// and nothing is written. (The CDK writes it wherever it leads.)
func TestFileUploaderRefusesAPathOutOfTheStagingDirectory(t *testing.T) {
	for _, tc := range []struct{ stream, file, path string }{
		{"items", "../../outside", "items/../../outside"},
		{"items", "a/../../../outside", "items/a/../../../outside"},
		{"/items", "a.txt", "/items/a.txt"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			dir := stagingDir(t)
			a := filesAPI(t, fmt.Sprintf(`{"id":1,"file_name":%q,"content_url":"BASE/files/1"}`, tc.file))
			res := newConnector(t, filesManifest(a.URL, tc.stream, `"{{ record.file_name }}"`, ""), map[string]any{"api_key": "key-123"}, tc.stream).read(t)
			if res.code == 0 {
				t.Fatal("the read succeeded")
			}
			errs := res.errors()
			want := fmt.Sprintf(`stream %s: streams[0].file_uploader.filename_extractor: the file path %q (<stream>/<file name>) leads out of the staging directory %s: not written`, tc.stream, tc.path, dir)
			if errs[0]["message"] != want || errs[0]["failure_type"] != "system_error" {
				t.Errorf("error %v\nwant %s", errs[0], want)
			}
			equalLists(t, "requests", a.lines(), []string{"GET /items"})
			equalLists(t, "records", res.records(tc.stream), nil)
			equalLists(t, "files", stagedFiles(t, filepath.Dir(dir)), nil)
		})
	}
}

// A record without a download target, one that is not a string, and a
// download the API answers 404 fail the stream as in the CDK (system_error)
// once the records before are emitted with their files.
func TestFileUploaderFailures(t *testing.T) {
	for _, tc := range []struct {
		name, second, want string
		requests           []string
	}{
		{"no target", `{"id":2,"content_url":""}`, "streams[0].file_uploader.download_target_extractor: no download target found in the record",
			[]string{"GET /items", "GET /files/1"}},
		{"not a string", `{"id":2,"content_url":{"href":"BASE/files/2"}}`, `streams[0].file_uploader.download_target_extractor: the download target must be a string, not {"href":"URL/files/2"}`,
			[]string{"GET /items", "GET /files/1"}},
		{"not a URL", `{"id":2,"content_url":"content_url-2"}`, `streams[0].file_uploader.requester: invalid URL "content_url-2": it must start with http:// or https://`,
			[]string{"GET /items", "GET /files/1"}},
		{"not found", `{"id":2,"content_url":"BASE/files/404"}`, `streams[0].file_uploader.requester: HTTP 404 Not Found from GET URL/files/404: {"error":"no such file"}`,
			[]string{"GET /items", "GET /files/1", "GET /files/404"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := stagingDir(t)
			a := filesAPI(t, `{"id":1,"content_url":"BASE/files/1"}`, tc.second)
			res := newConnector(t, filesManifest(a.URL, "items", `"{{ record.id }}"`, ""), map[string]any{"api_key": "key-123"}, "items").read(t)
			equalLists(t, "requests", a.lines(), tc.requests)
			equalLists(t, "records", res.printed("RECORD"), []string{fmt.Sprintf(`{"type":"RECORD","record":{"stream":"items","data":{"id":1,"content_url":"%[1]s/files/1"},"emitted_at":0,`+
				`"file_reference":{"staging_file_url":"%[2]s/items/1","source_file_relative_path":"items/1","file_size_bytes":7}}}`, a.URL, dir)})
			errs := res.errors()
			if want := "stream items: " + strings.ReplaceAll(tc.want, "URL/", a.URL+"/"); len(errs) == 0 || errs[0]["message"] != want || errs[0]["failure_type"] != "system_error" {
				t.Errorf("errors %v\nwant %s", errs, want)
			}
			equalLists(t, "statuses", res.statuses("items"), []string{"STARTED", "RUNNING", "INCOMPLETE"})
		})
	}
}

// The download goes through the request machinery as every request does:
// a secret in its URL is masked in the error of a failed download, and its
// credentials do not follow a redirect to another server.
func TestFileUploaderDownloadKeepsSecrets(t *testing.T) {
	dir := stagingDir(t)
	cdn := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) { fmt.Fprint(w, "from the cdn") })
	cdnHost := strings.TrimPrefix(cdn.URL, "http://")
	a := filesAPI(t, `{"id":1,"content_url":"BASE/redirect/`+cdnHost+`/1"}`, `{"id":2,"content_url":"BASE/files/404"}`)
	m := filesManifest(a.URL, "items", `"{{ record.id }}"`, `request_parameters: {signature: "{{ config.api_key }}"}`)
	res := newConnector(t, m, map[string]any{"api_key": "key-123"}, "items").read(t)
	equalLists(t, "requests", a.lines(), []string{"GET /items", "GET /redirect/" + cdnHost + "/1?signature=key-123", "GET /files/404?signature=key-123"})
	cdnReqs := cdn.requests()
	if len(cdnReqs) != 1 || cdnReqs[0].Header.Get("Authorization") != "" || cdnReqs[0].Query != "" {
		t.Errorf("the redirected request carried credentials: %+v", cdnReqs)
	}
	equalLists(t, "files", stagedFiles(t, dir), []string{"items/1: from the cdn"})
	errs := res.errors()
	want := fmt.Sprintf(`stream items: streams[0].file_uploader.requester: HTTP 404 Not Found from GET %s/files/404?signature=****: {"error":"no such file"}`, a.URL)
	if len(errs) == 0 || errs[0]["message"] != want {
		t.Errorf("errors %v\nwant %s", errs, want)
	}
	if strings.Contains(res.stdout, "key-123") {
		t.Error("the key is printed")
	}
}

// A builder test read downloads each file without writing it, as the CDK's
// builder does (NoopFileWriter), shows each record with its file's
// relative path (ConnectorBuilderFileUploader), and shows no download
// request.
func TestFileUploaderTestReadShowsTheRelativePath(t *testing.T) {
	dir := stagingDir(t)
	a := filesAPI(t)
	got, _ := rawStreamRead(t, filesManifest(a.URL, "items", `"{{ record.id }}/{{ record.file_name }}"`, ""), map[string]any{"api_key": "key-123"}, "items")
	page := func(url, body, records string) string {
		return strings.Replace(jsonPage(url, body, records), `"headers":{}`, `"headers":{"Authorization":"Bearer ****"}`, 1)
	}
	first := fmt.Sprintf(`{"items":[{"id":1,"file_name":"a.txt","content_url":"%[1]s/files/1"},{"id":2,"file_name":"b.txt","content_url":"%[1]s/files/2"}],"next":"2"}`, a.URL)
	second := fmt.Sprintf(`{"items":[{"id":3,"file_name":"c.txt","content_url":"%s/files/3"}],"next":null}`, a.URL)
	record := func(id int, name string) string {
		return fmt.Sprintf(`{"id":%[1]d,"file_name":"%[2]s","content_url":"%[3]s/files/%[1]d","source_file_relative_path":"items/%[1]d/%[2]s"}`, id, name, a.URL)
	}
	want := `{"logs":[],"slices":[{"pages":[` +
		page(a.URL+"/items", first, "["+record(1, "a.txt")+","+record(2, "b.txt")+"]") + `,` +
		page(a.URL+"/items?page=2", second, "["+record(3, "c.txt")+"]") + `],` +
		`"slice_descriptor":"{}","state":[` + jsonState("items", `{"__ab_no_cursor_state_message":true}`, 3) + `],"auxiliary_requests":[]}],` +
		`"test_read_limit_reached":false,"auxiliary_requests":[],` +
		`"inferred_schema":{"$schema":"http://json-schema.org/schema#","type":"object","properties":{"id":{"type":"number"},"file_name":{"type":["string","null"]},"content_url":{"type":["string","null"]},"source_file_relative_path":{"type":["string","null"]}},"required":["id"]},` +
		`"inferred_datetime_formats":{}}`
	if got != want {
		t.Errorf("StreamRead\n got: %s\nwant: %s", got, want)
	}
	equalLists(t, "requests", a.lines(), []string{"GET /items", "GET /files/1", "GET /files/2", "GET /items?page=2", "GET /files/3"})
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the test read wrote %v", entries)
	}
}

// check stages the file of the first record it reads, as the CDK's check
// does; a manifest server's check, for the Connector Builder, downloads it
// without writing it, as Airbyte's server does (its source is the
// builder's).
func TestFileUploaderCheck(t *testing.T) {
	dir := stagingDir(t)
	a := filesAPI(t)
	m := filesManifest(a.URL, "items", "", "")
	res := newConnector(t, m, map[string]any{"api_key": "key-123"}).check(t)
	equalLists(t, "check", res.printed("CONNECTION_STATUS"), []string{`{"type":"CONNECTION_STATUS","connectionStatus":{"status":"SUCCEEDED"}}`})
	equalLists(t, "requests", a.lines(), []string{"GET /items", "GET /files/1"})
	if files := stagedFiles(t, dir); len(files) != 1 || !strings.HasSuffix(files[0], ": file 1\n") {
		t.Errorf("files %q", files)
	}
	os.RemoveAll(filepath.Join(dir, "items"))
	s := startManifestServer(t, server.Options{})
	s.post(t, "/v1/manifest/check", requestJSON(t, m, map[string]any{"config": map[string]any{"api_key": "key-123"}})).is(t, "server's check", 200, `{"success":true,"message":null}`)
	equalLists(t, "requests", a.lines()[2:], []string{"GET /items", "GET /files/1"})
	equalLists(t, "files of the server's check", stagedFiles(t, dir), nil)
}

// A stream the CDK reads whole (a custom requester) stages its files in
// the CDK, whose file_reference its RECORD carries.
func TestFileUploaderOfAStreamTheCDKReads(t *testing.T) {
	dir := stagingDir(t)
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		if r.URL.Path == "/custom/v2items" {
			fmt.Fprintf(w, `{"data":[{"id":1,"content_url":"http://%s/files/1"}]}`, r.Host)
			return
		}
		fmt.Fprint(w, "file 1\n")
	})
	m := `version: 7.0.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [custom]}
streams:
  - type: DeclarativeStream
    name: custom
    retriever:
      type: SimpleRetriever
      requester:
        type: CustomRequester
        class_name: source_declarative_manifest.components.PathRequester
        url_base: "` + a.URL + `"
        authenticator: {type: BearerAuthenticator, api_token: "{{ config.token }}"}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
    file_uploader:
      type: FileUploader
      requester:
        type: HttpRequester
        url_base: "{{ download_target }}"
        authenticator: {type: BearerAuthenticator, api_token: "{{ config.token }}"}
      download_target_extractor: {type: DpathExtractor, field_path: [content_url]}
      filename_extractor: "{{ record.id }}.txt"
`
	c, code := componentsRun(t, m, map[string]any{"token": "tok-secret", "suffix": "v2!"}, "custom")
	res := c.read(t, "--components-path", code)
	if res.code != 0 {
		t.Fatalf("exit %d: %v %s", res.code, res.errors(), res.stderr)
	}
	equalLists(t, "requests", a.lines(), []string{"GET /custom/v2items", "GET /files/1"})
	for _, r := range a.requests() {
		if got := r.Header.Get("Authorization"); got != "Bearer tok-secret" {
			t.Errorf("%s: Authorization %q", r.Path, got)
		}
	}
	equalLists(t, "records", res.printed("RECORD"), []string{fmt.Sprintf(`{"type":"RECORD","record":{"stream":"custom","data":{"id":1,"content_url":"%s/files/1"},"emitted_at":0,`+
		`"file_reference":{"staging_file_url":"%s/custom/1.txt","source_file_relative_path":"custom/1.txt","file_size_bytes":7}}}`, a.URL, dir)})
	equalLists(t, "files", stagedFiles(t, dir), []string{"custom/1.txt: file 1\n"})
}
