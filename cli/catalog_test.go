package cli

import (
	"fmt"
	"net/http"
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
