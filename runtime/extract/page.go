// Package extract turns response bodies into the records a stream emits:
// the decoder's documents, the records at the selector's path (cut out of
// JSON by a zero-copy scanner), the record expander, and the record
// pipeline of filter, transformations and schema normalization.
package extract

import (
	"context"
	"errors"
	"fmt"

	"github.com/airbyte-go/source-declarative/components"
	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/runtime/decode"
	"github.com/airbyte-go/source-declarative/runtime/expand"
	"github.com/airbyte-go/source-declarative/runtime/request"
)

// Extractor takes the records out of a stream's responses, for one reader
// at a time; Fresh makes another reader's.
type Extractor struct {
	Stream  string
	Decoder *decode.Decoder // the retriever's decoder
	Path    []string        // the record path, rendered
	// Expander splits each extracted record (record_expander); nil: none.
	Expander *expand.Expander
	// Log takes the warnings of the stream's responses.
	Log func(level, msg string)
	// ignoredLogged says that a document leaving part of its body out was
	// logged.
	ignoredLogged bool
	// Recycle says that nothing keeps a record once it was emitted: each
	// page's records are then cut into the previous page's slice.
	Recycle bool
	spare   [][]byte // with Recycle, the slice the last page's records were cut into
	// nonFiniteLogged says that a body with NaN or Infinity was logged.
	nonFiniteLogged bool
	// Custom, when set, is the stream's custom extractor: Host gives the
	// records of each response, the decoder still reading the body for
	// templates.
	Custom *manifest.Custom
	Host   *components.Host
}

// Fresh is a copy of x for another reader: it shares no buffer with x.
func (x Extractor) Fresh() Extractor {
	x.spare = nil
	return x
}

// Page is what a response read whole holds.
type Page struct {
	Records [][]byte
	doc     []byte // the body as one JSON document: cursor templates' response
	top     []topMember
}

// ResponseValue is the response variable of cursor templates: the decoded
// body, with only the top-level keys the templates read.
func (p Page) ResponseValue(u interp.Usage) any { return decodeTopKeys(p.doc, p.top, u) }

// Page decodes a response read whole with the stream's decoder and
// extracts its records (expanded when the extractor has a record_expander:
// the paginator counts and sees the expanded records, as in the reference,
// whose paginators recount with the extractor and its expander). The JSON
// decoder cuts them out of the body itself, in one pass and without
// copying; other decoders' documents are decoded first and their records
// copied.
func (x *Extractor) Page(ctx context.Context, resp *request.Response) (Page, error) {
	if x.Custom != nil {
		return x.customPage(ctx, resp)
	}
	if c := x.Decoder.Custom(); c != nil {
		return x.customDecoded(ctx, resp, c)
	}
	if x.Decoder.IsJSON() {
		var into [][]byte
		if x.Recycle {
			into = x.spare[:0] // the previous page's, emitted
		}
		body := decode.TrimBOM(resp.Body)
		records, top, err := cutRecords(into, body, x.Path, true)
		if fixed, ok := nonFinite(body, err); ok {
			body = fixed
			records, top, err = cutRecords(into, body, x.Path, true)
			x.logNonFinite(err)
		}
		if x.Recycle {
			x.spare = records
		}
		if err == errNotJSON || err == errTooDeep {
			err = &BadBody{decoder: x.Decoder.Name(), err: err}
		}
		if err == nil && x.Expander != nil {
			records, err = x.Expander.Expand(ctx, records)
		}
		return Page{Records: records, doc: body, top: top}, err
	}
	var p Page
	var batch Batch
	err := x.Decoder.DecodeBytes(resp.Body, func(doc decode.Doc) error {
		if p.doc == nil {
			p.doc = append([]byte(nil), doc.JSON...)
		}
		records, err := x.Doc(ctx, doc)
		batch.Add(records)
		return err
	})
	p.Records = batch.Records
	var de *decode.Error
	if errors.As(err, &de) {
		err = &BadBody{decoder: de.Decoder, err: de.Err}
	}
	return p, err
}

// customPage has the custom extractor take a response's records; the
// body (its first document, for another decoder than JSON) is what
// templates see as the response.
func (x *Extractor) customPage(ctx context.Context, resp *request.Response) (Page, error) {
	out, err := x.Host.CallBlob(ctx, x.Custom, "extract", components.ResponseParams(resp.Status, resp.Header, resp.URL), resp.Body, nil)
	if err != nil {
		return Page{}, err
	}
	p := Page{Records: components.SplitLines(out)}
	if x.Decoder.IsJSON() {
		p.doc = decode.TrimBOM(resp.Body)
		return p, nil
	}
	_ = x.Decoder.DecodeBytes(resp.Body, func(doc decode.Doc) error {
		if p.doc == nil {
			p.doc = append([]byte(nil), doc.JSON...)
		}
		return nil
	})
	return p, nil
}

// customDecoded has a custom decoder decode a response (its status,
// headers and body, as the CDK hands it a requests.Response): the records
// of its documents are taken as of any decoder's, and the first document is
// what templates see as the response, as the CDK's pagination reads it.
func (x *Extractor) customDecoded(ctx context.Context, resp *request.Response, c *manifest.Custom) (Page, error) {
	if x.Host == nil {
		return Page{}, fmt.Errorf("%s: no components host runs the custom decoder", c.Path)
	}
	out, err := x.Host.CallBlob(ctx, c, "decode", components.ResponseParams(resp.Status, resp.Header, resp.URL), resp.Body, nil)
	if err != nil {
		return Page{}, err
	}
	var p Page
	var batch Batch
	for _, doc := range components.SplitLines(out) {
		if p.doc == nil {
			p.doc = doc
		}
		records, err := x.Doc(ctx, decode.Doc{JSON: doc, Elements: true})
		batch.Add(records)
		if err != nil {
			p.Records = batch.Records
			return p, err
		}
	}
	p.Records = batch.Records
	return p, nil
}

// Doc takes the records of one decoded document, expanded when the
// extractor has a record_expander. A JSON lines line that is not JSON is
// skipped with a warning; another document that is not JSON is a bad body.
func (x *Extractor) Doc(ctx context.Context, doc decode.Doc) ([][]byte, error) {
	if doc.Ignored != "" && !x.ignoredLogged {
		x.ignoredLogged = true
		x.Log("WARN", fmt.Sprintf("Stream %s: %s: the response holds %s, left out", x.Stream, x.Decoder.Name(), doc.Ignored))
	}
	records, err := extractRecords(nil, doc.JSON, x.Path, doc.Elements)
	if fixed, ok := nonFinite(doc.JSON, err); ok {
		records, err = extractRecords(nil, fixed, x.Path, doc.Elements)
		x.logNonFinite(err)
	}
	if err == nil && x.Expander != nil {
		return x.Expander.Expand(ctx, records)
	}
	switch {
	case err == errTooDeep && doc.Line > 0:
		x.Log("WARN", fmt.Sprintf("Stream %s: %s: line %d is JSON nested more than %d levels deep, skipped", x.Stream, x.Decoder.Name(), doc.Line, maxDepth))
		return nil, nil
	case err != errNotJSON && err != errTooDeep:
		return records, err
	case doc.Line > 0:
		x.Log("WARN", fmt.Sprintf("Stream %s: %s: line %d is not JSON, skipped: %s", x.Stream, x.Decoder.Name(), doc.Line, request.BodyStart(doc.JSON)))
		return nil, nil
	}
	return nil, &BadBody{decoder: x.Decoder.Name(), err: err}
}

// nonFinite gives, when a document is not JSON and holds NaN, Infinity or
// -Infinity, the document with null in their place, to be read again as the
// reference reads such values.
func nonFinite(doc []byte, err error) ([]byte, bool) {
	if err != errNotJSON {
		return nil, false
	}
	return decode.NonFiniteToNull(doc)
}

// logNonFinite logs the first document of a reader read with null in place
// of NaN or Infinity.
func (x *Extractor) logNonFinite(err error) {
	if err == nil && !x.nonFiniteLogged {
		x.nonFiniteLogged = true
		x.Log("WARN", fmt.Sprintf("Stream %s: %s: the response holds NaN, Infinity or -Infinity, which JSON does not have: read as null", x.Stream, x.Decoder.Name()))
	}
}

// BadBody is a body that is not what the decoder expects: a response read
// whole is fetched again, as the body may have been cut short on the way.
type BadBody struct {
	decoder string
	err     error
}

func (e *BadBody) Error() string { return e.decoder + ": " + e.err.Error() }

// IsBadBody tells whether err is, or wraps, a BadBody that fetching the
// body again may cure: not JSON nested too deeply, which is whole.
func IsBadBody(err error) bool {
	var b *BadBody
	return errors.As(err, &b) && b.err != errTooDeep
}
