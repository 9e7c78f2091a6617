package retrieve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"

	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/protocol"
	"github.com/airbyte-go/source-declarative/runtime/extract"
	"github.com/airbyte-go/source-declarative/runtime/failure"
	"github.com/airbyte-go/source-declarative/runtime/incremental"
	"github.com/airbyte-go/source-declarative/runtime/request"
	"github.com/airbyte-go/source-declarative/runtime/transform"
)

// fileUploader stages the file of each record a stream emits (its
// file_uploader), as Airbyte's DefaultFileUploader does: the first download
// target found in the record is requested with the uploader's requester
// (download_target among the template variables and the slice's extra
// fields), and the response body is written under the staging directory
// as <stream>/<file name>. For the Connector Builder (Env.Builder) the file
// is downloaded but not written (size -1), and the record shows its path
// under source_file_relative_path, as the CDK's NoopFileWriter and
// ConnectorBuilderFileUploader do.
type fileUploader struct {
	env    *Env
	stream string
	m      *manifest.FileUploader
	b      *builder
	target []string // download_target_extractor's field path, rendered
	dir    string   // the staging directory
}

func newFileUploader(env *Env, st *manifest.Stream) (*fileUploader, error) {
	m := st.FileUploader
	b, err := newBuilder(env, m.Requester, nil)
	if err != nil {
		return nil, err
	}
	target, err := interp.RenderEach(m.TargetPath, env.BuildVars(m.Parameters))
	if err != nil {
		return nil, failure.Config("%v", err) // the template error names the field_path
	}
	return &fileUploader{env: env, stream: st.Name, m: m, b: b, target: target, dir: stagingDir()}, nil
}

// upload stages the files of a page's records, in order, and returns the
// records as emitted with their files. When one cannot be staged, the
// records before it are returned with the error, as the CDK emits each
// record once its file is staged.
func (u *fileUploader) upload(ctx context.Context, records [][]byte) ([][]byte, []protocol.FileReference, error) {
	out := make([][]byte, 0, len(records))
	files := make([]protocol.FileReference, 0, len(records))
	for _, rec := range records {
		staged, file, err := u.stage(ctx, rec)
		if err != nil {
			if failure.As(err) == nil {
				err = failure.Config("%v", err) // a template the config or the record does not fit
			}
			return out, files, err
		}
		out, files = append(out, staged), append(files, file)
	}
	return out, files, nil
}

// stage downloads and writes the file of one record.
func (u *fileUploader) stage(ctx context.Context, rec []byte) ([]byte, protocol.FileReference, error) {
	data := extract.DecodeJSON(rec)
	target, err := u.downloadTarget(data)
	if err != nil {
		return nil, protocol.FileReference{}, err
	}
	name, err := u.fileName(data)
	if err != nil {
		return nil, protocol.FileReference{}, failure.Within("stream "+u.stream, err)
	}
	rel, inside := stagedPath(u.stream, name)
	if !inside {
		return nil, protocol.FileReference{}, failure.System("stream %s: %s.filename_extractor: the file path %q (<stream>/<file name>) leads out of the staging directory %s: not written",
			u.stream, u.m.Path, rel, u.dir)
	}
	file := protocol.FileReference{StagingFileURL: pathlibJoin(u.dir, rel), SourceFileRelativePath: rel}
	if file.FileSizeBytes, err = u.download(ctx, target, rel); err != nil {
		return nil, protocol.FileReference{}, err
	}
	u.env.Log(protocol.LevelInfo, "File uploaded successfully")
	u.env.Log(protocol.LevelInfo, "File url: "+file.StagingFileURL)
	u.env.Log(protocol.LevelInfo, "File size: "+interp.FormatFloat(float64(file.FileSizeBytes)/1024)+" KB")
	u.env.Log(protocol.LevelInfo, "File relative path: "+rel)
	if u.env.Builder {
		if rec, err = withRelativePath(rec, rel); err != nil {
			return nil, protocol.FileReference{}, failure.System("stream %s: %v", u.stream, err)
		}
	}
	return rec, file, nil
}

// downloadTarget is the first value download_target_extractor finds in the
// record, read as the CDK's DpathExtractor reads a response body: with a *
// in the path the values found, else the value found, a list giving its
// items and an empty value (null, "", 0, false, {}) none. It must be a
// string.
func (u *fileUploader) downloadTarget(data any) (string, error) {
	var targets []any
	matches := dpathMatches(data, u.target)
	switch {
	case slices.Contains(u.target, "*"):
		targets = matches
	case len(matches) == 0:
	default:
		if list, ok := matches[0].(interp.List); ok {
			targets = list
		} else if interp.Truthy(matches[0]) {
			targets = matches[:1]
		}
	}
	where := u.m.Path + ".download_target_extractor"
	if len(targets) == 0 {
		return "", failure.System("stream %s: %s: no download target found in the record", u.stream, where)
	}
	target, ok := targets[0].(string)
	if !ok {
		text, _ := json.Marshal(targets[0])
		return "", failure.System("stream %s: %s: the download target must be a string, not %s", u.stream, where, text)
	}
	return target, nil
}

// fileName is the name filename_extractor gives the record's file. A name the template renders as another value
// than a string (a number) is its text: the CDK fails on it.
func (u *fileUploader) fileName(data any) (string, error) {
	vars := u.env.BuildVars(u.m.Parameters)
	vars["record"] = data
	v, err := u.m.FileName.Eval(vars)
	if err != nil {
		return "", err
	}
	if name, ok := v.(string); ok {
		return name, nil
	}
	return u.m.FileName.Render(vars)
}

// download requests the target and writes the response body to the file
// rel of the staging directory (nowhere for the builder), as it arrives
// unless the error handler reads bodies; it returns the file's size (-1
// when not written). A body that breaks off is requested again; a file
// that cannot be written fails at once.
func (u *fileUploader) download(ctx context.Context, target, rel string) (int64, error) {
	size, written := int64(-1), false
	write := func(body io.Reader) error {
		if u.env.Builder {
			_, err := io.Copy(io.Discard, body)
			return err
		}
		src := &trackedReader{r: body}
		n, err := stageFile(u.dir, rel, src)
		if err != nil && src.err == nil {
			return failure.System("writing the file %s: %v", pathlibJoin(u.dir, rel), err)
		}
		size = n
		return err
	}
	ctx = request.ForStream(ctx, u.stream)
	if !u.b.policy.ReadsBody() {
		ctx = request.WithBodyReader(ctx, u.b.policy, func(_ *request.Response, body io.Reader) error {
			written = true
			return write(body)
		})
	}
	sl := &incremental.Slice{Extra: map[string]any{"download_target": target}}
	resp, err := u.env.Client.Send(ctx, func() (*http.Request, error) {
		p, err := u.b.build(ctx, pageRequest{token: u.b.pag.First(), slice: sl})
		if err != nil {
			return nil, err
		}
		req, err := p.HTTP(ctx)
		if err != nil {
			// The URL comes from the record (download_target): the API's
			// data, not the config, as Airbyte reports it (a system_error).
			return nil, failure.System("%v", err)
		}
		return req, nil
	}, u.b.policy)
	if err == nil && !written {
		// Read whole: an error handler that reads bodies, or a response it
		// ignored, whose body the CDK writes as the file.
		err = write(bytes.NewReader(resp.Body))
	}
	if err != nil {
		return 0, failure.Within(fmt.Sprintf("stream %s: %s", u.stream, u.m.Requester.Path), err)
	}
	return size, nil
}

// withRelativePath is the record with its file's relative path under
// source_file_relative_path, as the builder shows it.
func withRelativePath(rec []byte, rel string) ([]byte, error) {
	obj, err := transform.Decode(rec)
	if err != nil {
		return nil, err
	}
	obj.Set("source_file_relative_path", rel)
	return transform.AppendJSON(nil, obj), nil
}
