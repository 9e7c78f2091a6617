package manifest

import "github.com/airbyte-go/source-declarative/lang/interp"

// FileUploader is a stream's file_uploader: the file of each record the
// stream emits is downloaded with Requester, from the URL (or id) that
// TargetPath finds in the record, and staged under the name FileName gives.
type FileUploader struct {
	Path      string // manifest path, e.g. streams[0].file_uploader
	Requester *Requester
	// TargetPath is download_target_extractor's field path, run over the
	// record as over a response body.
	TargetPath []*interp.Template
	// FileName is filename_extractor, a template over config and record;
	// without one, a random UUID.
	FileName   *interp.Template
	Parameters map[string]any
}

// fileUploader decodes a stream's file_uploader. file_extractor, which
// Airbyte's CDK does not use (the whole response body is the file), is
// warned about; so is a file_uploader on an AsyncRetriever stream, whose
// records the CDK emits without downloading their files.
func (d *decoder) fileUploader(v any, st *Stream, path string) *FileUploader {
	m, _, ok := d.component(v, path, "FileUploader")
	if !ok {
		return nil
	}
	u := &FileUploader{Path: path}
	u.Parameters, _ = m["$parameters"].(map[string]any)
	u.Requester = d.requester(m["requester"], path+".requester", allAuth)
	u.TargetPath = d.dpath(m["download_target_extractor"], path+".download_target_extractor")
	name, _ := m["filename_extractor"].(string)
	if name == "" {
		name = "{{ generate_uuid() }}"
	}
	u.FileName = d.value(name, path+".filename_extractor")
	if x, ok := m["file_extractor"]; ok && x != nil {
		d.warn(path+".file_extractor", "is not used, as in Airbyte: the whole response body is the file")
	}
	if st.Retriever != nil && st.Retriever.Async != nil {
		d.warn(path, "is not run on an AsyncRetriever stream, as in Airbyte: its records are emitted without their files")
	}
	return u
}
