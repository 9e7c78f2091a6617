package components

import (
	"context"
	"strings"
	"testing"

	"github.com/airbyte-go/source-declarative/components/pythontest"
	"github.com/airbyte-go/source-declarative/manifest"
)

const testCode = `
from dataclasses import dataclass
from airbyte_cdk.sources.declarative.extractors.dpath_extractor import DpathExtractor
from airbyte_cdk.sources.declarative.transformations.transformation import RecordTransformation

@dataclass
class Upper(RecordTransformation):
    def transform(self, record, config=None, stream_state=None, stream_slice=None):
        record["name"] = record["name"].upper() + config["suffix"]

@dataclass
class Replacing(RecordTransformation):
    """Returns a new record and leaves its own alone: the CDK drops what transform returns."""
    def transform(self, record, config=None, stream_state=None, stream_slice=None):
        return {"replaced": True}

@dataclass
class Doubling(DpathExtractor):
    def extract_records(self, response):
        for r in super().extract_records(response):
            yield r
            yield {**r, "copy": True}
`

const testManifest = `
version: 7.0.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [items]}
streams:
  - type: DeclarativeStream
    name: items
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: "http://127.0.0.1:1", path: /items}
      record_selector:
        type: RecordSelector
        extractor:
          type: CustomRecordExtractor
          class_name: source_declarative_manifest.components.Doubling
          field_path: [data]
    transformations:
      - type: CustomTransformation
        class_name: source_declarative_manifest.components.Upper
      - type: CustomTransformation
        class_name: source_declarative_manifest.components.Replacing
    schema_loader: {type: InlineSchemaLoader, schema: {type: object}}
`

func TestHostCallsComponents(t *testing.T) {
	py := pythontest.Python(t)
	raw, err := manifest.Parse([]byte(testManifest))
	if err != nil {
		t.Fatal(err)
	}
	var logs []string
	h, err := Start(context.Background(), Options{Python: py, Code: &Code{Text: testCode, Name: "components.py"},
		Manifest: raw, Config: map[string]any{"suffix": "!"},
		Log: func(level, msg string) { logs = append(logs, level+" "+msg) }})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := h.Build(context.Background(), map[string]any{"suffix": "!"}, nil); err != nil {
		t.Fatal(err)
	}
	want := "[streams[0].retriever.record_selector.extractor streams[0].transformations[0] streams[0].transformations[1]]"
	if got := strings.Join([]string{"[" + strings.Join(h.Built, " ") + "]"}, ""); got != want {
		t.Fatalf("built %s, want %s", got, want)
	}
	ext := &manifest.Custom{Path: "streams[0].retriever.record_selector.extractor", Type: "CustomRecordExtractor", ClassName: "x"}
	out, err := h.CallBlob(context.Background(), ext, "extract", map[string]any{"status": 200, "headers": map[string]string{"Content-Type": "application/json"}}, []byte(`{"data":[{"id":1,"name":"a"}]}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(out); got != `{"id":1,"name":"a"}`+"\n"+`{"id":1,"name":"a","copy":true}` {
		t.Fatalf("extract: %s", got)
	}
	tr, err := h.CallBlob(context.Background(), nil, "transform", map[string]any{"paths": []string{"streams[0].transformations[0]", "streams[0].transformations[1]"}}, JoinRecords(SplitLines(out)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(tr); got != `{"id":1,"name":"A!"}`+"\n"+`{"id":1,"name":"A!","copy":true}` {
		t.Fatalf("transform: %s", got)
	}
	// An integer past 64 bits stays exact through the host, in and out (as
	// README says of every record; orjson alone reads it as a float and
	// cannot write it).
	big, err := h.CallBlob(context.Background(), nil, "transform", map[string]any{"paths": []string{"streams[0].transformations[0]"}}, []byte(`[{"id":123456789012345678901234567890,"name":"b","n":9223372036854775808}]`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(big); got != `{"id":123456789012345678901234567890,"name":"B!","n":9223372036854775808}` {
		t.Fatalf("transform of big integers: %s", got)
	}
	up := &manifest.Custom{Path: "streams[0].transformations[0]", Type: "CustomTransformation", ClassName: "source_declarative_manifest.components.Upper"}
	_, err = h.CallBlob(context.Background(), up, "transform", map[string]any{"paths": []string{up.Path}}, []byte(`[{"id":2}]`), nil)
	if want := "custom component CustomTransformation (source_declarative_manifest.components.Upper) at streams[0].transformations[0]: KeyError: 'name'"; err == nil || err.Error() != want {
		t.Fatalf("a Python error: %v, want %s", err, want)
	}
}
