package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/airbyte-go/source-declarative/manifest"
)

// values are a request's fields once valid, by name.
type values map[string]any

// object is a field holding a JSON object (manifest, config), its numbers
// as the runtime takes them (int64 or float64).
func (v values) object(name string) map[string]any {
	m, _ := manifest.Numbers(v[name]).(map[string]any)
	if m == nil {
		m = map[string]any{}
	}
	return m
}

// masked stands for a value an error would echo that may hold a secret.
const masked = "****"

// body reads and validates a request's body against its model, as FastAPI
// does: 413 past the size limit, 400 for a body that is not UTF-8, 422 with
// the list of errors for one that is not JSON or does not fit the model.
// It answers the request itself when the body is refused.
func (s *Server) body(w http.ResponseWriter, r *http.Request, model []field) (values, bool) {
	if r.ContentLength > s.opts.MaxBody {
		s.tooLarge(w)
		return nil, false
	}
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxBody))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		s.tooLarge(w)
		return nil, false
	case err != nil:
		writeDetail(w, http.StatusBadRequest, "There was an error parsing the body")
		return nil, false
	}
	var body any
	switch {
	case len(b) == 0:
		writeValidation(w, []fieldError{{Type: "missing", Loc: []any{"body"}, Msg: "Field required", Input: json.RawMessage("null")}})
		return nil, false
	case !isJSON(r.Header.Get("Content-Type")):
		// FastAPI validates the bytes themselves, which are no object; the
		// text is not echoed (it holds the config).
		writeValidation(w, []fieldError{modelTypeError([]any{"body"}, masked)})
		return nil, false
	}
	b = bytes.TrimPrefix(b, []byte("\ufeff")) // Python reads a UTF-8 BOM as utf-8-sig
	if !utf8.Valid(b) {
		writeDetail(w, http.StatusBadRequest, "There was an error parsing the body")
		return nil, false
	}
	if e := pythonJSONError(b); e != nil {
		if e.msg == tooDeep {
			writeDetail(w, http.StatusBadRequest, "There was an error parsing the body")
			return nil, false
		}
		writeValidation(w, []fieldError{{Type: "json_invalid", Loc: []any{"body", e.pos}, Msg: "JSON decode error", Input: json.RawMessage("{}"), Ctx: map[string]any{"error": e.msg}}})
		return nil, false
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&body); err != nil {
		writeDetail(w, http.StatusBadRequest, "There was an error parsing the body")
		return nil, false
	}
	if body == nil {
		writeValidation(w, []fieldError{{Type: "missing", Loc: []any{"body"}, Msg: "Field required", Input: json.RawMessage("null")}})
		return nil, false
	}
	vals, errs := validateModel(body, model, []any{"body"})
	if len(errs) > 0 {
		writeValidation(w, errs)
		return nil, false
	}
	return vals, true
}

func (s *Server) tooLarge(w http.ResponseWriter) {
	writeDetail(w, http.StatusRequestEntityTooLarge, "Request body too large: at most "+strconv.FormatInt(s.opts.MaxBody, 10)+" bytes")
}

// writeValidation answers 422 with FastAPI's detail list.
func writeValidation(w http.ResponseWriter, errs []fieldError) {
	writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"detail": errs})
}

// isJSON tells whether FastAPI reads a body of this Content-Type as JSON:
// none at all, application/json, or application/*+json.
func isJSON(contentType string) bool {
	if strings.TrimSpace(contentType) == "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt = strings.ToLower(strings.TrimSpace(strings.Split(contentType, ";")[0]))
	}
	sub, ok := strings.CutPrefix(mt, "application/")
	return ok && (sub == "json" || strings.HasSuffix(sub, "+json"))
}
