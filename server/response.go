package server

import (
	"github.com/airbyte-go/source-declarative/protocol"
	"github.com/airbyte-go/source-declarative/runtime"
)

// The response bodies of Airbyte's server, field by field as its response
// models write them (api_models), every optional field there, null when
// unset.

// streamReadResponse is StreamReadResponse: the builder's StreamRead in the
// model's order, with inferred_schema and latest_config_update null when
// there are none.
type streamReadResponse struct {
	Logs                    []runtime.TestLog          `json:"logs"`
	Slices                  []runtime.TestSlice        `json:"slices"`
	TestReadLimitReached    bool                       `json:"test_read_limit_reached"`
	AuxiliaryRequests       []runtime.AuxiliaryRequest `json:"auxiliary_requests"`
	InferredSchema          any                        `json:"inferred_schema"`
	InferredDatetimeFormats map[string]string          `json:"inferred_datetime_formats"`
	LatestConfigUpdate      map[string]any             `json:"latest_config_update"`
}

func newStreamReadResponse(read *runtime.StreamRead) streamReadResponse {
	resp := streamReadResponse{Logs: read.Logs, Slices: read.Slices, TestReadLimitReached: read.TestReadLimitReached,
		AuxiliaryRequests: read.AuxiliaryRequests, InferredDatetimeFormats: read.InferredDatetimeFormats, LatestConfigUpdate: read.LatestConfigUpdate}
	if read.InferredSchema != nil {
		resp.InferredSchema = read.InferredSchema
	}
	return resp
}

// checkResponse is CheckResponse.
type checkResponse struct {
	Success bool    `json:"success"`
	Message *string `json:"message"`
}

func newCheckResponse(ok bool, message string) checkResponse {
	resp := checkResponse{Success: ok}
	if message != "" {
		resp.Message = &message
	}
	return resp
}

// discoverResponse is DiscoverResponse: the protocol's AirbyteCatalog with
// each field of its streams.
type discoverResponse struct {
	Catalog struct {
		Streams []catalogStream `json:"streams"`
	} `json:"catalog"`
}

type catalogStream struct {
	Name                    string     `json:"name"`
	JSONSchema              any        `json:"json_schema"`
	SupportedSyncModes      []string   `json:"supported_sync_modes"`
	SourceDefinedCursor     *bool      `json:"source_defined_cursor"`
	DefaultCursorField      []string   `json:"default_cursor_field"`
	SourceDefinedPrimaryKey [][]string `json:"source_defined_primary_key"`
	Namespace               *string    `json:"namespace"`
	IsResumable             *bool      `json:"is_resumable"`
	IsFileBased             *bool      `json:"is_file_based"`
}

func newDiscoverResponse(c *protocol.Catalog) discoverResponse {
	var resp discoverResponse
	resp.Catalog.Streams = []catalogStream{}
	for _, st := range c.Streams {
		cs := catalogStream{Name: st.Name, JSONSchema: st.JSONSchema, SupportedSyncModes: st.SupportedSyncModes,
			SourceDefinedCursor: st.SourceDefinedCursor, DefaultCursorField: st.DefaultCursorField,
			SourceDefinedPrimaryKey: st.SourceDefinedPrimaryKey, IsResumable: st.IsResumable, IsFileBased: st.IsFileBased}
		if st.Namespace != "" {
			cs.Namespace = &st.Namespace
		}
		resp.Catalog.Streams = append(resp.Catalog.Streams, cs)
	}
	return resp
}

// manifestResponse is ManifestResponse.
type manifestResponse struct {
	Manifest map[string]any `json:"manifest"`
}
