package manifest

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"io/fs"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// The embedded schema: one file per component family (schema/*.json), each
// holding definitions; they are merged into one document so that "#/definitions/x"
// references work across files. One definition per supported component; each
// component is validated on its own, and its child components when they are
// decoded, so child fields are only "object" in their parent's definition.
//
//go:embed schema/*.json
var schemaFiles embed.FS

var (
	schemaOnce sync.Once
	schemas    map[string]*jsonschema.Schema
)

// componentSchema returns the compiled schema of one component type.
func componentSchema(typ string) *jsonschema.Schema {
	schemaOnce.Do(func() {
		defs := map[string]any{}
		files, err := fs.Glob(schemaFiles, "schema/*.json")
		if err != nil {
			panic(err)
		}
		for _, f := range files {
			b, err := schemaFiles.ReadFile(f)
			if err != nil {
				panic(err)
			}
			var doc struct {
				Definitions map[string]any `json:"definitions"`
			}
			if err := json.Unmarshal(b, &doc); err != nil {
				panic(f + ": " + err.Error())
			}
			for name, def := range doc.Definitions {
				if _, dup := defs[name]; dup {
					panic(f + ": definition " + name + " is also in another schema file")
				}
				defs[name] = def
			}
		}
		merged, err := json.Marshal(map[string]any{"$schema": "http://json-schema.org/draft-07/schema#", "definitions": defs})
		if err != nil {
			panic(err)
		}
		c := jsonschema.NewCompiler()
		if err := c.AddResource("manifest.json", bytes.NewReader(merged)); err != nil {
			panic(err)
		}
		schemas = map[string]*jsonschema.Schema{}
		for name := range defs {
			schemas[name] = c.MustCompile("manifest.json#/definitions/" + name)
		}
	})
	return schemas[typ]
}

var knownCDKTypes = map[string]bool{
	"DatetimeBasedCursor": true, "SubstreamPartitionRouter": true, "ListPartitionRouter": true, "SelectiveAuthenticator": true,
	"JwtAuthenticator": true, "AddFields": true, "RemoveFields": true, "XmlDecoder": true, "CsvDecoder": true, "GzipDecoder": true,
	"JsonlDecoder": true, "IterableDecoder": true, "CompositeRawDecoder": true, "AsyncRetriever": true, "DynamicDeclarativeStream": true,
	"JsonFileSchemaLoader": true, "DynamicSchemaLoader": true, "LegacySessionTokenAuthenticator": true, "StateDelegatingStream": true,
	"GroupingPartitionRouter": true, "DeclarativeOAuthAuthenticator": true,
}

func (d *decoder) schemaErrors(path string, err error) {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		d.fail(path, "%v", err)
		return
	}
	var leaves []*jsonschema.ValidationError
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			leaves = append(leaves, e)
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	seen := map[string]bool{}
	for _, l := range leaves {
		msg := l.Message
		if strings.HasSuffix(l.KeywordLocation, "/enum") {
			msg = "must be " + enumList(l.Message)
		}
		if strings.HasPrefix(msg, "missing properties: ") {
			for _, p := range strings.Split(strings.TrimPrefix(msg, "missing properties: "), ", ") {
				line := instancePath(path, l.InstanceLocation) + "." + strings.Trim(p, "'") + ": is required"
				if !seen[line] {
					seen[line] = true
					d.errs = append(d.errs, line)
				}
			}
			continue
		}
		line := instancePath(path, l.InstanceLocation) + ": " + msg
		if !seen[line] {
			seen[line] = true
			d.errs = append(d.errs, line)
		}
	}
}

var quoted = regexp.MustCompile(`"([^"]*)"`)

// enumList turns `value must be one of "GET", "POST"` into `GET or POST`.
func enumList(msg string) string {
	var vals []string
	for _, m := range quoted.FindAllStringSubmatch(msg, -1) {
		vals = append(vals, m[1])
	}
	switch len(vals) {
	case 0:
		return msg
	case 1:
		return vals[0]
	}
	return strings.Join(vals[:len(vals)-1], ", ") + " or " + vals[len(vals)-1]
}

// instancePath turns a JSON pointer into a manifest path under base.
func instancePath(base, pointer string) string {
	out := base
	for _, seg := range strings.Split(strings.TrimPrefix(pointer, "/"), "/") {
		if seg == "" {
			continue
		}
		seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
		if _, err := strconv.Atoi(seg); err == nil {
			out += "[" + seg + "]"
		} else {
			out = join(out, seg)
		}
	}
	return out
}
