// Package protocol holds the Airbyte protocol message types and the single
// writer that prints them, one JSON object per line, on stdout.
package protocol

import (
	"encoding/json"
	"strconv"
)

// Message types of the Airbyte protocol envelope.
const (
	TypeRecord           = "RECORD"
	TypeState            = "STATE"
	TypeLog              = "LOG"
	TypeSpec             = "SPEC"
	TypeConnectionStatus = "CONNECTION_STATUS"
	TypeCatalog          = "CATALOG"
	TypeTrace            = "TRACE"
	TypeControl          = "CONTROL"
)

// Failure types of a TRACE ERROR.
const (
	ConfigError    = "config_error"
	TransientError = "transient_error"
	SystemError    = "system_error"
)

// Stream statuses carried by TRACE STREAM_STATUS messages.
const (
	StatusStarted    = "STARTED"
	StatusRunning    = "RUNNING"
	StatusComplete   = "COMPLETE"
	StatusIncomplete = "INCOMPLETE"
)

// Message is the AirbyteMessage envelope. Only the field matching Type is set.
type Message struct {
	Type             string            `json:"type"`
	Record           *Record           `json:"record,omitempty"`
	State            *State            `json:"state,omitempty"`
	Log              *Log              `json:"log,omitempty"`
	Spec             json.RawMessage   `json:"spec,omitempty"`
	ConnectionStatus *ConnectionStatus `json:"connectionStatus,omitempty"`
	Catalog          *Catalog          `json:"catalog,omitempty"`
	Trace            *Trace            `json:"trace,omitempty"`
	Control          *Control          `json:"control,omitempty"`
}

// Record is one row of a stream. Data holds the record's JSON bytes as received.
type Record struct {
	Stream        string          `json:"stream"`
	Data          json.RawMessage `json:"data"`
	EmittedAt     int64           `json:"emitted_at"`
	Namespace     string          `json:"namespace,omitempty"`
	FileReference *FileReference  `json:"file_reference,omitempty"`
}

// FileReference is the file_reference of a record whose file was staged (a
// stream's file_uploader): where the file was written, its path relative to
// the files directory, and its size (-1 when it was not written).
type FileReference struct {
	StagingFileURL         string `json:"staging_file_url"`
	SourceFileRelativePath string `json:"source_file_relative_path"`
	FileSizeBytes          int64  `json:"file_size_bytes"`
}

// StreamDescriptor names a stream.
type StreamDescriptor struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
}

// State is an AirbyteStateMessage of type STREAM or GLOBAL.
type State struct {
	Type        string       `json:"type"`
	Stream      *StreamState `json:"stream,omitempty"`
	Global      *GlobalState `json:"global,omitempty"`
	SourceStats *StateStats  `json:"sourceStats,omitempty"`
}

// StreamState is the state of one stream.
type StreamState struct {
	StreamDescriptor StreamDescriptor `json:"stream_descriptor"`
	StreamState      any              `json:"stream_state,omitempty"`
}

// GlobalState is a state shared by several streams.
type GlobalState struct {
	SharedState  any           `json:"shared_state,omitempty"`
	StreamStates []StreamState `json:"stream_states"`
}

// StateStats counts the records a state message covers.
type StateStats struct {
	RecordCount Count `json:"recordCount"`
}

// Count is a record count written as a JSON number with a decimal point (42.0),
// as the protocol asks of recordCount.
type Count int64

// MarshalJSON writes the count with a decimal point.
func (c Count) MarshalJSON() ([]byte, error) {
	return []byte(strconv.FormatInt(int64(c), 10) + ".0"), nil
}

// UnmarshalJSON reads a count written either way (42 or 42.0).
func (c *Count) UnmarshalJSON(b []byte) error {
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return err
	}
	*c = Count(f)
	return nil
}

// Log is a log line.
type Log struct {
	Level      string `json:"level"`
	Message    string `json:"message"`
	StackTrace string `json:"stack_trace,omitempty"`
}

// ConnectionStatus is the answer of check.
type ConnectionStatus struct {
	Status  string `json:"status"`
	Message string `json:"message,omitempty"`
}

// Catalog is the answer of discover.
type Catalog struct {
	Streams []Stream `json:"streams"`
}

// Stream describes one stream in a catalog.
type Stream struct {
	Name                    string     `json:"name"`
	JSONSchema              any        `json:"json_schema"`
	SupportedSyncModes      []string   `json:"supported_sync_modes"`
	SourceDefinedCursor     *bool      `json:"source_defined_cursor,omitempty"`
	DefaultCursorField      []string   `json:"default_cursor_field,omitempty"`
	SourceDefinedPrimaryKey [][]string `json:"source_defined_primary_key,omitempty"`
	Namespace               string     `json:"namespace,omitempty"`
	IsResumable             *bool      `json:"is_resumable,omitempty"`
	IsFileBased             *bool      `json:"is_file_based,omitempty"`
}

// Trace is a TRACE message: an error, a stream status or an estimate.
type Trace struct {
	Type         string        `json:"type"`
	EmittedAt    float64       `json:"emitted_at"`
	Error        *TraceError   `json:"error,omitempty"`
	StreamStatus *StreamStatus `json:"stream_status,omitempty"`
	Estimate     *Estimate     `json:"estimate,omitempty"`
}

// TraceError is the payload of a TRACE ERROR.
type TraceError struct {
	Message          string            `json:"message"`
	InternalMessage  string            `json:"internal_message,omitempty"`
	StackTrace       string            `json:"stack_trace,omitempty"`
	FailureType      string            `json:"failure_type,omitempty"`
	StreamDescriptor *StreamDescriptor `json:"stream_descriptor,omitempty"`
}

// StreamStatus is the payload of a TRACE STREAM_STATUS.
type StreamStatus struct {
	StreamDescriptor StreamDescriptor     `json:"stream_descriptor"`
	Status           string               `json:"status"`
	Reasons          []StreamStatusReason `json:"reasons,omitempty"`
}

// StreamStatusReason says why a stream has its status: RATE_LIMITED.
type StreamStatusReason struct {
	Type string `json:"type"`
}

// Estimate is the payload of a TRACE ESTIMATE.
type Estimate struct {
	Name         string `json:"name"`
	Type         string `json:"type"`
	Namespace    string `json:"namespace,omitempty"`
	RowEstimate  int64  `json:"row_estimate,omitempty"`
	ByteEstimate int64  `json:"byte_estimate,omitempty"`
}

// Control is a CONTROL message; the only kind is CONNECTOR_CONFIG.
type Control struct {
	Type            string           `json:"type"`
	EmittedAt       float64          `json:"emitted_at"`
	ConnectorConfig *ConnectorConfig `json:"connectorConfig,omitempty"`
}

// ConnectorConfig carries the whole updated connector configuration.
type ConnectorConfig struct {
	Config map[string]any `json:"config"`
}

// ConfiguredCatalog is the catalog given to read.
type ConfiguredCatalog struct {
	Streams []ConfiguredStream `json:"streams"`
}

// ConfiguredStream is one stream selected for a read.
type ConfiguredStream struct {
	Stream              Stream     `json:"stream"`
	SyncMode            string     `json:"sync_mode"`
	DestinationSyncMode string     `json:"destination_sync_mode"`
	CursorField         []string   `json:"cursor_field,omitempty"`
	PrimaryKey          [][]string `json:"primary_key,omitempty"`
}
