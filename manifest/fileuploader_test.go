package manifest

import (
	"strings"
	"testing"
)

const fileUploader = `
    file_uploader:
      type: FileUploader
      requester: {type: HttpRequester, url_base: "{{ download_target }}"}
      download_target_extractor: {type: DpathExtractor, field_path: [content_url]}`

func TestFileUploaderIsDecoded(t *testing.T) {
	src, err := loadWith(t, "name: s\n", "name: s\n"+strings.TrimPrefix(fileUploader, "\n")+"\n      filename_extractor: \"{{ record.id }}\"\n")
	if err != nil {
		t.Fatal(err)
	}
	u := src.Streams[0].FileUploader
	if u == nil || u.Path != "streams[0].file_uploader" || u.Requester.Path != "streams[0].file_uploader.requester" ||
		len(u.TargetPath) != 1 || u.FileName.Source != "{{ record.id }}" || len(src.Warnings) != 0 {
		t.Errorf("file uploader %+v, warnings %q", u, src.Warnings)
	}
}

// What Airbyte's CDK does not run is said: file_extractor (the whole body
// is the file), and a file_uploader on an AsyncRetriever stream (the CDK
// emits its records without their files).
func TestFileUploaderWarnings(t *testing.T) {
	src, err := loadWith(t, "name: s\n", "name: s\n"+strings.TrimPrefix(fileUploader, "\n")+"\n      file_extractor: {type: DpathExtractor, field_path: [data]}\n")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"streams[0].file_uploader.file_extractor: is not used, as in Airbyte: the whole response body is the file"}
	if strings.Join(src.Warnings, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings:\n got %q\nwant %q", src.Warnings, want)
	}
	async := `version: 6.0.0
check: {stream_names: [s]}
streams:
  - type: DeclarativeStream
    name: s
    retriever:
      type: AsyncRetriever
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}
      status_mapping: {type: AsyncJobStatusMap, running: [r], completed: [c], failed: [f], timeout: [t]}
      status_extractor: {type: DpathExtractor, field_path: [status]}
      download_target_extractor: {type: DpathExtractor, field_path: [url]}
      creation_requester: {type: HttpRequester, url_base: "https://a", path: /jobs, http_method: POST}
      polling_requester: {type: HttpRequester, url_base: "https://a", path: /jobs/1}
      download_requester: {type: HttpRequester, url_base: "https://a", path: /download}` + fileUploader + "\n"
	src, err = Load(parse(t, async))
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"streams[0].file_uploader: is not run on an AsyncRetriever stream, as in Airbyte: its records are emitted without their files"}
	if strings.Join(src.Warnings, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings:\n got %q\nwant %q", src.Warnings, want)
	}
}

func TestFileUploaderNeedsADownloadTargetExtractor(t *testing.T) {
	_, err := loadWith(t, "name: s\n", "name: s\n    file_uploader: {type: FileUploader, requester: {type: HttpRequester, url_base: \"{{ download_target }}\"}}\n")
	if want := "streams[0].file_uploader.download_target_extractor: is required"; err == nil || err.Error() != want {
		t.Errorf("error %v\nwant %s", err, want)
	}
}
