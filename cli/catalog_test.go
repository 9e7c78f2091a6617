package cli

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCatalogFieldsAsTheReferencePrintsThem pins the whole CATALOG line:
// streams in manifest order, each primary key form, a cursor field taken
// from the config, the empty schema of a stream without schema, and
// is_file_based false on every stream; discover sends no request.
func TestCatalogFieldsAsTheReferencePrintsThem(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) { fmt.Fprint(w, `{"data":[]}`) })
	m := fmt.Sprintf(`version: 6.0.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [zeta]}
definitions:
  base:
    type: DeclarativeStream
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: %q, path: /x}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
streams:
  - {$ref: "#/definitions/base", name: zeta, primary_key: id}
  - {$ref: "#/definitions/base", name: alpha, primary_key: [id, name]}
  - {$ref: "#/definitions/base", name: listed, primary_key: [[id], [name]]}
  - {$ref: "#/definitions/base", name: nokey}
  - {$ref: "#/definitions/base", name: emptykey, primary_key: []}
  - $ref: "#/definitions/base"
    name: dated
    primary_key: id
    schema_loader: {type: InlineSchemaLoader, schema: {type: object, properties: {id: {type: integer}}}}
    incremental_sync:
      type: DatetimeBasedCursor
      cursor_field: "{{ config['cursor'] }}"
      datetime_format: "%%Y-%%m-%%d"
      start_datetime: "2024-01-01"
`, a.URL)
	c := newConnector(t, m, map[string]any{"cursor": "modified_at"})
	res := discover(c, t)
	plain := `"json_schema":{},"supported_sync_modes":["full_refresh"]`
	want := `{"type":"CATALOG","catalog":{"streams":[` +
		`{"name":"zeta",` + plain + `,"source_defined_primary_key":[["id"]],"is_resumable":false,"is_file_based":false},` +
		`{"name":"alpha",` + plain + `,"source_defined_primary_key":[["id"],["name"]],"is_resumable":false,"is_file_based":false},` +
		`{"name":"listed",` + plain + `,"source_defined_primary_key":[["id"],["name"]],"is_resumable":false,"is_file_based":false},` +
		`{"name":"nokey",` + plain + `,"is_resumable":false,"is_file_based":false},` +
		`{"name":"emptykey",` + plain + `,"is_resumable":false,"is_file_based":false},` +
		`{"name":"dated","json_schema":{"properties":{"id":{"type":"integer"}},"type":"object"},"supported_sync_modes":["full_refresh","incremental"],"source_defined_cursor":true,"default_cursor_field":["modified_at"],"source_defined_primary_key":[["id"]],"is_resumable":true,"is_file_based":false}` +
		`]}}` + "\n"
	if res.code != 0 || res.stdout != want {
		t.Errorf("exit %d\n got: %s\nwant: %s", res.code, res.stdout, want)
	}
	equalLists(t, "requests", a.lines(), nil)
}

// TestSchemaFileRefsAreResolved: a schema file's $refs are replaced as the
// reference replaces them: refs into the file itself, whole shared files
// and parts of them, refs inside a shared file to its own definitions. The
// replaced objects lose their other keys and the definitions of what
// replaces them; the file's own definitions stay.
func TestSchemaFileRefsAreResolved(t *testing.T) {
	c := newConnector(t, source(namedStream("inline", "http://127.0.0.1:1", "/x", "schema_loader: {type: JsonFileSchemaLoader, file_path: ./schemas/users.json}")), nil)
	schemas := filepath.Join(c.dir, "schemas")
	os.MkdirAll(filepath.Join(schemas, "shared"), 0o700)
	writeFile(t, schemas, "users.json", `{"type":"object",
 "definitions":{"addr":{"type":"object","properties":{"city":{"type":"string"}}}},
 "properties":{"home":{"$ref":"#/definitions/addr","description":"dropped"},"owner":{"$ref":"owner.json"},"tag":{"$ref":"common.json#/definitions/tag"},"list":{"type":"array","items":{"$ref":"common.json#/definitions/pair/items/1"}}}}`)
	writeFile(t, filepath.Join(schemas, "shared"), "owner.json", `{"type":"object","definitions":{"n":{"type":"string"}},"properties":{"name":{"$ref":"#/definitions/n"}}}`)
	writeFile(t, filepath.Join(schemas, "shared"), "common.json", `{"definitions":{"tag":{"type":"string"},"pair":{"items":[{"type":"integer"},{"type":"boolean"}]}}}`)
	equalLists(t, "schema", catalogSchemas(t, discover(c, t)), []string{
		`inline {"definitions":{"addr":{"properties":{"city":{"type":"string"}},"type":"object"}},"properties":{` +
			`"home":{"properties":{"city":{"type":"string"}},"type":"object"},` +
			`"list":{"items":{"type":"boolean"},"type":"array"},` +
			`"owner":{"properties":{"name":{"type":"string"}},"type":"object"},` +
			`"tag":{"type":"string"}},"type":"object"}`,
	})

	for file, want := range map[string]string{
		`{"properties":{"a":{"$ref":"#/definitions/missing"}}}`: `schema $ref "#/definitions/missing" in DIR/schemas/users.json: #/definitions/missing: no "definitions"`,
		`{"properties":{"a":{"$ref":"nowhere.json"}}}`:          `schema $ref "nowhere.json": no such file in DIR/schemas/shared`,
		`{"properties":{"a":{"$ref":"#/properties/a"}}}`:        `schema $ref "#/properties/a" in DIR/schemas/users.json nests too deep (a cycle?)`,
	} {
		writeFile(t, schemas, "users.json", file)
		res := discover(c, t)
		var msgs []string
		for _, e := range res.errors() {
			msgs = append(msgs, strings.ReplaceAll(e["message"].(string), c.dir, "DIR"))
		}
		if res.code != 1 {
			t.Errorf("%s: exit %d", file, res.code)
		}
		equalLists(t, file, msgs, []string{"streams[0].schema_loader.file_path: " + want})
	}
}
