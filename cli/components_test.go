package cli

import (
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/airbyte-go/source-declarative/components/pythontest"
	"github.com/airbyte-go/source-declarative/manifest"
)

// componentsPy are custom components as a connector's components.py writes
// them, on the CDK's interfaces.
const componentsPy = `
import hashlib
import json
from dataclasses import dataclass
from typing import Any, Iterable, Mapping
import requests
from airbyte_cdk.sources.declarative.extractors.record_extractor import RecordExtractor
from airbyte_cdk.sources.declarative.extractors.record_filter import RecordFilter
from airbyte_cdk.sources.declarative.transformations.transformation import RecordTransformation
from airbyte_cdk.sources.declarative.migrations.state_migration import StateMigration
from airbyte_cdk.sources.declarative.requesters.http_requester import HttpRequester
from airbyte_cdk.sources.declarative.auth.declarative_authenticator import DeclarativeAuthenticator
from airbyte_cdk.sources.declarative.requesters.paginators.strategies.pagination_strategy import PaginationStrategy
from airbyte_cdk.sources.declarative.decoders.decoder import Decoder
from airbyte_cdk.sources.declarative.decoders.json_decoder import JsonDecoder
from airbyte_cdk.models import FailureType
from airbyte_cdk.sources.declarative.requesters.error_handlers.default_error_handler import DefaultErrorHandler
from airbyte_cdk.sources.streams.http.error_handlers.backoff_strategy import BackoffStrategy
from airbyte_cdk.sources.streams.http.error_handlers.response_models import ErrorResolution, ResponseAction
from airbyte_cdk.sources.declarative.partition_routers.single_partition_router import SinglePartitionRouter
from airbyte_cdk.sources.types import StreamSlice

@dataclass
class ObjectValues(RecordExtractor):
    """The records are the values of the object at 'items', each with its key as 'key'."""
    config: Mapping[str, Any]
    parameters: Any = None
    def extract_records(self, response: requests.Response) -> Iterable[Mapping[str, Any]]:
        for key, value in response.json()["items"].items():
            yield {"key": key, **value}

@dataclass
class TaggedLines(RecordExtractor):
    """The records are the body's JSON lines, each tagged: it reads the response whole, whatever the decoder."""
    def extract_records(self, response):
        for line in response.text.splitlines():
            if line.strip():
                yield {**json.loads(line), "via": "custom"}

@dataclass
class Shout(RecordTransformation):
    def transform(self, record, config=None, stream_state=None, stream_slice=None):
        record["name"] = record["name"].upper() + config["suffix"]
        record["partition"] = dict(stream_slice.partition) if stream_slice else None

@dataclass
class EvenOnly(RecordFilter):
    def filter_records(self, records, stream_state, stream_slice=None, next_page_token=None):
        return [r for r in records if r["n"] % 2 == 0]

@dataclass
class Boom(RecordTransformation):
    def transform(self, record, config=None, stream_state=None, stream_slice=None):
        raise ValueError("no record " + str(record["n"]) + " here")

@dataclass
class NeedsFieldPath(RecordExtractor):
    """Built without field_path, its constructor raises a TypeError."""
    field_path: list
    config: Mapping[str, Any]
    parameters: Any = None
    def extract_records(self, response):
        return []

@dataclass
class BumpState(StateMigration):
    config: Mapping[str, Any]
    def should_migrate(self, stream_state):
        return stream_state.get("updated_at") == ""
    def migrate(self, stream_state):
        return {"updated_at": "2024-01-03"}

@dataclass
class Tag:
    """A config transformation (google-analytics-data-api's kind): the config gains a tag."""
    def transform(self, config):
        config["tag"] = "t" + str(config["count"])

@dataclass
class PickAuth(DeclarativeAuthenticator):
    """Typeform's kind: of the authenticators the manifest defines, the one the config asks for."""
    config: Mapping[str, Any]
    token_auth: Any
    oauth2: Any
    def __new__(cls, token_auth, oauth2, config, *args, **kwargs):
        return token_auth if config["credentials"]["auth_type"] == "access_token" else oauth2

@dataclass
class SigningAuth(DeclarativeAuthenticator):
    """A header, a query parameter, and a signature of the request as prepared (zoom's and nexus-datasets' kinds)."""
    config: Mapping[str, Any]
    parameters: Any = None
    def get_auth_header(self):
        return {"X-Key": self.config["key"]}
    def get_request_params(self):
        return {"sig_v": "1"}
    def __call__(self, request):
        request.headers["X-Signature"] = hashlib.sha256(request.url.encode()).hexdigest()[:16]
        return request

@dataclass
class CsvRows(Decoder):
    """youtube-analytics' kind: the body is CSV, its rows are the documents."""
    parameters: Any = None
    def is_stream_response(self):
        return False
    def decode(self, response):
        import csv, io
        yield from csv.DictReader(io.StringIO(response.text))

class Enveloped(JsonDecoder):
    """A JsonDecoder that unwraps the answer's envelope: it may read pages."""
    def __init__(self, parameters=None, **kwargs):
        super().__init__(parameters or {})
    def decode(self, response):
        for doc in super().decode(response):
            yield doc["envelope"]

@dataclass
class TeapotHandler(DefaultErrorHandler):
    """linkedin-ads' and google-sheets' kind: a DefaultErrorHandler with answers of its own."""
    def interpret_response(self, r):
        if isinstance(r, requests.Response) and r.status_code == 418:
            return ErrorResolution(response_action=ResponseAction.IGNORE, failure_type=None, error_message="a teapot")
        if isinstance(r, requests.Response) and r.status_code == 409:
            return ErrorResolution(response_action=ResponseAction.RETRY, failure_type=FailureType.transient_error, error_message="busy, said the handler")
        return super().interpret_response(r)

@dataclass
class OfflineIgnored(DefaultErrorHandler):
    """Skips an API that cannot be reached (requests' ConnectionError)."""
    def interpret_response(self, r):
        if isinstance(r, requests.exceptions.ConnectionError):
            return ErrorResolution(response_action=ResponseAction.IGNORE, failure_type=None, error_message="offline: skipped")
        return super().interpret_response(r)

@dataclass
class OfflineFails(DefaultErrorHandler):
    """Calls an API that cannot be reached the config's fault."""
    def interpret_response(self, r):
        if isinstance(r, requests.exceptions.ConnectionError):
            return ErrorResolution(response_action=ResponseAction.FAIL, failure_type=FailureType.config_error, error_message="the API is offline: check its host")
        return super().interpret_response(r)

@dataclass
class Quick(BackoffStrategy):
    """Waits a quarter of a second per attempt."""
    config: Mapping[str, Any] = None
    parameters: Any = None
    def backoff_time(self, response_or_exception, attempt_count):
        return 0.25 * attempt_count

class RangeRouter(SinglePartitionRouter):
    """google-sheets' kind: ranges of rows from the config as partitions, each asked for with a parameter and a header."""
    config: Mapping[str, Any]
    def __init__(self, parameters: Mapping[str, Any], config: Mapping[str, Any]) -> None:
        super().__init__(parameters)
        self.config = config
    def stream_slices(self):
        start, rows, batch = 2, self.config["rows"], 3
        while start <= rows:
            yield StreamSlice(partition={"start": start, "end": start + batch}, cursor_slice={}, extra_fields={"sheet": "s1"})
            start += batch + 1
    def get_request_params(self, stream_state=None, stream_slice=None, next_page_token=None):
        return {"range": f"{stream_slice.partition['start']}:{stream_slice.partition['end']}"}
    def get_request_headers(self, stream_state=None, stream_slice=None, next_page_token=None):
        return {"X-Range": str(stream_slice.partition["start"])}

@dataclass
class AwareAuth(SigningAuth):
    """Learns from responses (the CDK's ResponseAwareAuthenticator), which the host does not run per request."""
    def update_from_response(self, request, response):
        pass

@dataclass
class FailingAuth(DeclarativeAuthenticator):
    config: Mapping[str, Any]
    parameters: Any = None
    def get_auth_header(self):
        raise ValueError("no token today")

@dataclass
class AfterStrategy(PaginationStrategy):
    """hubspot's search kind: a token of its own (a dict), stopping on a short page or when the answer has no paging."""
    page_size: int
    @property
    def initial_token(self):
        return {"after": 0}
    def next_page_token(self, response, last_page_size, last_record, last_page_token_value=None):
        if last_page_size < self.page_size or not response.json().get("paging"):
            return None
        return {"after": last_page_token_value["after"] + last_page_size, "last_id": last_record["id"]}
    def get_page_size(self):
        return self.page_size

@dataclass
class LogToken(RecordTransformation):
    """Logs the access token the config holds now."""
    def transform(self, record, config=None, stream_state=None, stream_slice=None):
        import logging
        logging.getLogger("airbyte").info("record %s with token %s", record["id"], config["credentials"]["access_token"])

@dataclass
class PathRequester(HttpRequester):
    """A custom requester: its stream is read whole by the CDK."""
    def get_path(self, *, stream_state=None, stream_slice=None, next_page_token=None):
        return "/custom/" + self.config["suffix"].strip("!") + "items"

@dataclass
class LoudPathRequester(HttpRequester):
    """A custom requester asking for its path in capitals: its stream is read whole by the CDK."""
    def get_path(self, *, stream_state=None, stream_slice=None, next_page_token=None):
        return super().get_path(stream_state=stream_state, stream_slice=stream_slice, next_page_token=next_page_token).upper()
`

// componentsRun is a connector whose components.py is given by
// --components-path, with AIRBYTE_ENABLE_UNSAFE_CODE as Airbyte asks.
func componentsRun(t *testing.T, manifestYAML string, config map[string]any, streams ...string) (*connector, string) {
	t.Helper()
	t.Setenv("AIRBYTE_PYTHON", pythontest.Python(t))
	t.Setenv("AIRBYTE_ENABLE_UNSAFE_CODE", "True")
	c := newConnector(t, manifestYAML, config, streams...)
	return c, writeFile(t, c.dir, "components.py", componentsPy)
}

func TestCustomExtractorTransformationAndFilter(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		switch r.URL.Query().Get("page") {
		case "1":
			fmt.Fprint(w, `{"items": {"a": {"n": 1, "name": "x"}, "b": {"n": 2, "name": "y"}}, "more": true}`)
		default:
			fmt.Fprint(w, `{"items": {"c": {"n": 4, "name": "z"}}, "more": false}`)
		}
	})
	m := `version: 7.0.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [things]}
streams:
  - type: DeclarativeStream
    name: things
    primary_key: [key]
    schema_loader: {type: InlineSchemaLoader, schema: {type: object}}
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: "` + a.URL + `", path: /things, authenticator: {type: BearerAuthenticator, api_token: "{{ config.token }}"}}
      partition_router: {type: ListPartitionRouter, cursor_field: region, values: [eu]}
      record_selector:
        type: RecordSelector
        extractor: {type: CustomRecordExtractor, class_name: source_declarative_manifest.components.ObjectValues}
        record_filter: {type: CustomRecordFilter, class_name: source_declarative_manifest.components.EvenOnly}
      paginator:
        type: DefaultPaginator
        pagination_strategy: {type: PageIncrement, start_from_page: 1, page_size: 2}
        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}
    transformations:
      - type: AddFields
        fields: [{path: [seen], value: "{{ record.key }}"}]
      - type: CustomTransformation
        class_name: source_declarative_manifest.components.Shout
`
	c, code := componentsRun(t, m, map[string]any{"token": "tok-secret", "suffix": "!"}, "things")
	res := c.read(t, "--components-path", code)
	if res.code != 0 {
		t.Fatalf("exit %d: %s %v", res.code, res.stderr, res.errors())
	}
	equalLists(t, "requests", a.lines(), []string{"GET /things?page=1", "GET /things?page=2"})
	for _, r := range a.requests() {
		if got := r.Header.Get("Authorization"); got != "Bearer tok-secret" {
			t.Errorf("Authorization %q", got)
		}
	}
	equalLists(t, "records", res.records("things"), []string{
		`{"key":"b","n":2,"name":"Y!","partition":{"region":"eu"},"seen":"b"}`,
		`{"key":"c","n":4,"name":"Z!","partition":{"region":"eu"},"seen":"c"}`,
	})
	equalLists(t, "statuses", res.statuses("things"), []string{"STARTED", "RUNNING", "COMPLETE"})
}

// notPermittedText is AirbyteCustomCodeNotPermittedError's message.
const notPermittedText = "Custom connector code is not permitted in this environment. If you need to run custom code, please ask your administrator to set the `AIRBYTE_ENABLE_UNSAFE_CODE` environment variable to 'true' in your Airbyte environment. If you see this message in Airbyte Cloud, your workspace does not allow executing custom connector code."

// A custom extractor takes the whole response whatever the decoder, as in
// the CDK: a JSON lines body is not streamed record by record past it.
func TestCustomExtractorOfAStreamingDecoder(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		w.Header().Set("Content-Type", "application/jsonl")
		fmt.Fprint(w, "{\"n\": 1}\n{\"n\": 2}\n")
	})
	m := strings.NewReplacer("      requester:", "      decoder: {type: JsonlDecoder}\n      requester:",
		"components.ObjectValues", "components.TaggedLines").Replace(customExtractorManifest(a.URL))
	c, code := componentsRun(t, m, map[string]any{}, "things")
	res := c.read(t, "--components-path", code)
	if res.code != 0 {
		t.Fatalf("exit %d: %s %v", res.code, res.stderr, res.errors())
	}
	equalLists(t, "requests", a.lines(), []string{"GET /things"})
	equalLists(t, "records", res.records("things"), []string{`{"n":1,"via":"custom"}`, `{"n":2,"via":"custom"}`})
}

func TestCustomComponentsNotPermitted(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) { fmt.Fprint(w, `{"items": {}}`) })
	m := customExtractorManifest(a.URL)
	c := newConnector(t, m, map[string]any{}, "things")
	code := writeFile(t, c.dir, "components.py", componentsPy)
	t.Setenv("AIRBYTE_ENABLE_UNSAFE_CODE", "")
	want := "streams[0].retriever.record_selector.extractor: " + notPermittedText
	res := c.read(t)
	if errs := res.errors(); res.code != 1 || len(errs) != 1 || errs[0]["message"] != want || errs[0]["failure_type"] != "config_error" {
		t.Fatalf("read without permission: exit %d, %v", res.code, errs)
	}
	check := c.check(t)
	if st := check.ofType("CONNECTION_STATUS"); len(st) != 1 || st[0]["connectionStatus"].(map[string]any)["message"] != want {
		t.Fatalf("check without permission: %v", check.msgs)
	}
	// --components-path is Airbyte's untrusted code too.
	res = c.read(t, "--components-path", code)
	if errs := res.errors(); res.code != 1 || len(errs) != 1 || errs[0]["message"] != want {
		t.Fatalf("read with --components-path, without permission: exit %d, %v", res.code, errs)
	}
	if n := len(a.requests()); n != 0 {
		t.Errorf("%d requests were made", n)
	}
}

func customExtractorManifest(url string) string {
	return `version: 7.0.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [things]}
streams:
  - type: DeclarativeStream
    name: things
    schema_loader: {type: InlineSchemaLoader, schema: {type: object}}
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: "` + url + `", path: /things}
      record_selector:
        type: RecordSelector
        extractor: {type: CustomRecordExtractor, class_name: source_declarative_manifest.components.ObjectValues}
`
}

func TestInjectedComponentsNeedChecksums(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		fmt.Fprint(w, `{"items": {"a": {"n": 1}}}`)
	})
	t.Setenv("AIRBYTE_PYTHON", pythontest.Python(t))
	sum := md5.Sum([]byte(componentsPy))
	for _, tc := range []struct {
		unsafe    string
		checksums any
		want      string // the error, "" for a read that works
	}{
		{"true", map[string]any{"md5": hex.EncodeToString(sum[:])}, ""},
		{"", map[string]any{"md5": hex.EncodeToString(sum[:])}, "streams[0].retriever.record_selector.extractor: " + notPermittedText},
		{"TRUE", nil, "__injected_components_py_checksums: a checksum is required to validate the code in __injected_components_py (md5 or sha256)"},
		{"true", map[string]any{"sha1": "x"}, `__injected_components_py_checksums: unsupported checksum type "sha1"; supported checksum types are md5 and sha256`},
		{"true", map[string]any{"md5": "0123"}, "__injected_components_py_checksums: md5 checksum does not match the code in __injected_components_py (expected 0123, got " + hex.EncodeToString(sum[:]) + "): the code may have been tampered with"},
	} {
		t.Setenv("AIRBYTE_ENABLE_UNSAFE_CODE", tc.unsafe)
		config := map[string]any{"__injected_components_py": componentsPy}
		if tc.checksums != nil {
			config["__injected_components_py_checksums"] = tc.checksums
		}
		before := len(a.requests())
		c := newConnector(t, customExtractorManifest(a.URL), config, "things")
		res := c.read(t)
		if tc.want == "" {
			if res.code != 0 || strings.Join(res.records("things"), " ") != `{"key":"a","n":1}` {
				t.Errorf("%v: exit %d, records %v, errors %v", tc.checksums, res.code, res.records("things"), res.errors())
			}
			continue
		}
		if errs := res.errors(); res.code != 1 || len(errs) != 1 || !strings.HasPrefix(errs[0]["message"].(string), tc.want) {
			t.Errorf("%v (unsafe %q): exit %d, %v\nwant %s", tc.checksums, tc.unsafe, res.code, errs, tc.want)
		}
		if len(a.requests()) != before {
			t.Errorf("%v: a request was made", tc.checksums)
		}
	}
}

func TestComponentErrorNamesItsPathAndClass(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) { fmt.Fprint(w, `{"items": {"a": {"n": 7}}}`) })
	m := strings.Replace(customExtractorManifest(a.URL), "    schema_loader:", `    transformations:
      - type: CustomTransformation
        class_name: source_declarative_manifest.components.Boom
    schema_loader:`, 1)
	c, code := componentsRun(t, m, map[string]any{"secret": "s3cr3t"}, "things")
	res := c.read(t, "--components-path", code)
	want := "custom component CustomTransformation (source_declarative_manifest.components.Boom) at streams[0].transformations[0]: ValueError: no record 7 here"
	if errs := res.errors(); res.code != 1 || len(errs) != 2 || errs[0]["message"] != want || errs[0]["failure_type"] != "system_error" {
		b, _ := json.Marshal(errs)
		t.Fatalf("exit %d, errors %s\nwant %s", res.code, b, want)
	}
	equalLists(t, "statuses", res.statuses("things"), []string{"STARTED", "RUNNING", "INCOMPLETE"})
}

// What the code raises while its components are built is the code's fault:
// check says the connection failed with it and prints no TRACE, discover
// and read fail with a system_error, as the CDK reports what building its
// streams raised; nothing is requested.
func TestComponentConstructorErrorIsASystemError(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) { fmt.Fprint(w, `{"items": {}}`) })
	m := strings.Replace(customExtractorManifest(a.URL), "components.ObjectValues", "components.NeedsFieldPath", 1)
	c, code := componentsRun(t, m, map[string]any{}, "things")
	want := "components host: TypeError: NeedsFieldPath.__init__() missing 1 required positional argument: 'field_path'"
	check := runCLI(t, "check", "--manifest", c.manifest, "--config", c.config, "--components-path", code)
	st := check.ofType("CONNECTION_STATUS")
	if check.code != 0 || len(check.msgs) != 1 || len(st) != 1 || st[0]["connectionStatus"].(map[string]any)["status"] != "FAILED" || st[0]["connectionStatus"].(map[string]any)["message"] != want {
		b, _ := json.Marshal(check.msgs)
		t.Errorf("check: exit %d, %s\nwant one FAILED status: %s", check.code, b, want)
	}
	for _, cmd := range []string{"discover", "read"} {
		args := []string{cmd, "--manifest", c.manifest, "--config", c.config, "--components-path", code}
		if cmd == "read" {
			args = append(args, "--catalog", c.catalog)
		}
		res := runCLI(t, args...)
		if errs := res.errors(); res.code != 1 || len(errs) != 1 || errs[0]["message"] != want || errs[0]["failure_type"] != "system_error" {
			b, _ := json.Marshal(errs)
			t.Errorf("%s: exit %d, errors %s\nwant one system_error: %s", cmd, res.code, b, want)
		}
	}
	if n := len(a.requests()); n != 0 {
		t.Errorf("%d requests were made", n)
	}
}

// A custom requester cannot be called on its own: the CDK reads the whole
// stream, with Go's authenticator, and its records and states come through
// our writer.
func TestCustomRequesterStreamIsReadByTheCDK(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		fmt.Fprintf(w, `{"data": [{"id": 1, "updated_at": "%s", "note": null}]}`, r.URL.Query().Get("since"))
	})
	m := `version: 7.0.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [custom]}
streams:
  - type: DeclarativeStream
    name: custom
    primary_key: [id]
    schema_loader: {type: InlineSchemaLoader, schema: {type: object, properties: {id: {type: integer}}}}
    incremental_sync:
      type: DatetimeBasedCursor
      cursor_field: updated_at
      datetime_format: "%Y-%m-%d"
      start_datetime: "2024-01-01"
      end_datetime: "2024-01-02"
      step: P1D
      cursor_granularity: P1D
      start_time_option: {type: RequestOption, inject_into: request_parameter, field_name: since}
    state_migrations:
      - type: CustomStateMigration
        class_name: source_declarative_manifest.components.BumpState
    retriever:
      type: SimpleRetriever
      requester:
        type: CustomRequester
        class_name: source_declarative_manifest.components.PathRequester
        url_base: "` + a.URL + `"
        path: /ignored
        authenticator: {type: BearerAuthenticator, api_token: "{{ config.token }}"}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
`
	c, code := componentsRun(t, m, map[string]any{"token": "tok-secret", "suffix": "v2!"}, "custom")
	catalog := `{"streams":[{"stream":{"name":"custom","json_schema":{},"supported_sync_modes":["full_refresh","incremental"]},"sync_mode":"incremental","destination_sync_mode":"append"}]}`
	c.catalog = writeFile(t, c.dir, "catalog.json", catalog)
	res := c.read(t, "--components-path", code)
	if res.code != 0 {
		t.Fatalf("exit %d: %v %s", res.code, res.errors(), res.stderr)
	}
	// One slice: the CDK's cursor ends its windows one granularity before the end.
	equalLists(t, "requests", a.lines(), []string{"GET /custom/v2items?since=2024-01-01"})
	for _, r := range a.requests() {
		if got := r.Header.Get("Authorization"); got != "Bearer tok-secret" {
			t.Errorf("Authorization %q", got)
		}
	}
	// A record's nulls are printed, as for a stream Go reads (the CDK's serializer leaves them out).
	equalLists(t, "records", res.records("custom"), []string{`{"id":1,"note":null,"updated_at":"2024-01-01"}`})
	equalLists(t, "statuses", res.statuses("custom"), []string{"STARTED", "RUNNING", "COMPLETE"})
	states := res.ofType("STATE")
	if len(states) == 0 {
		t.Fatal("no state")
	}
	last, _ := json.Marshal(states[len(states)-1]["state"])
	if want := `{"sourceStats":{"recordCount":0},"stream":{"stream_descriptor":{"name":"custom"},"stream_state":{"updated_at":"2024-01-01"}},"type":"STREAM"}`; string(last) != want {
		t.Errorf("last state %s\nwant %s", last, want)
	}
	// From a state the CDK's own migration moves, the read starts there.
	state := writeFile(t, c.dir, "state.json", `[{"type":"STREAM","stream":{"stream_descriptor":{"name":"custom"},"stream_state":{"updated_at":""}}}]`)
	before := len(a.lines())
	res = c.read(t, "--components-path", code, "--state", state)
	if res.code != 0 {
		t.Fatalf("from state: exit %d: %v", res.code, res.errors())
	}
	equalLists(t, "requests from state", a.lines()[before:], []string{})
	// check and discover ask the CDK too.
	chk := runCLI(t, "check", "--manifest", c.manifest, "--config", c.config, "--components-path", code)
	if st := chk.ofType("CONNECTION_STATUS"); len(st) != 1 || st[0]["connectionStatus"].(map[string]any)["status"] != "SUCCEEDED" {
		t.Errorf("check: %v", chk.msgs)
	}
	disc := runCLI(t, "discover", "--manifest", c.manifest, "--config", c.config, "--components-path", code)
	cat, _ := json.Marshal(disc.ofType("CATALOG"))
	if want := `[{"catalog":{"streams":[{"default_cursor_field":["updated_at"],"is_file_based":false,"is_resumable":true,"json_schema":{"properties":{"id":{"type":"integer"}},"type":"object"},"name":"custom","source_defined_cursor":true,"source_defined_primary_key":[["id"]],"supported_sync_modes":["full_refresh","incremental"]}]},"type":"CATALOG"}]`; string(cat) != want {
		t.Errorf("catalog %s\nwant %s", cat, want)
	}
}

// A test read, as the builder sends it (manifest and components injected in
// the config), of a stream the CDK reads whole is the CDK's StreamRead, our
// masking on it; of a stream with called components, ours.
func TestTestReadWithComponents(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		fmt.Fprint(w, `{"data": [{"id": 1}], "items": {"k": {"n": 2, "name": "q"}}}`)
	})
	t.Setenv("AIRBYTE_PYTHON", pythontest.Python(t))
	t.Setenv("AIRBYTE_ENABLE_UNSAFE_CODE", "true")
	m := `version: 7.0.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [whole]}
spec: {type: Spec, connection_specification: {type: object, properties: {token: {type: string, airbyte_secret: true}}}}
streams:
  - type: DeclarativeStream
    name: whole
    schema_loader: {type: InlineSchemaLoader, schema: {type: object}}
    retriever:
      type: SimpleRetriever
      requester: {type: CustomRequester, class_name: source_declarative_manifest.components.PathRequester, url_base: "` + a.URL + `", path: /x,
        authenticator: {type: BearerAuthenticator, api_token: "{{ config.token }}"}}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
  - type: DeclarativeStream
    name: called
    schema_loader: {type: InlineSchemaLoader, schema: {type: object}}
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: "` + a.URL + `", path: /called,
        authenticator: {type: BearerAuthenticator, api_token: "{{ config.token }}"}}
      record_selector: {type: RecordSelector, extractor: {type: CustomRecordExtractor, class_name: source_declarative_manifest.components.ObjectValues}}
`
	raw, err := manifestAsJSON(m)
	if err != nil {
		t.Fatal(err)
	}
	sum := md5.Sum([]byte(componentsPy))
	for _, stream := range []string{"whole", "called"} {
		config := map[string]any{"token": "tok-secret", "suffix": "!", "__command": "test_read", "__injected_declarative_manifest": raw,
			"__injected_components_py": componentsPy, "__injected_components_py_checksums": map[string]any{"md5": hex.EncodeToString(sum[:])}}
		c := newConnector(t, "", config, stream)
		res := runCLI(t, "read", "--config", c.config, "--catalog", c.catalog)
		recs := res.ofType("RECORD")
		if res.code != 0 || len(recs) != 1 {
			t.Fatalf("%s: exit %d, %v", stream, res.code, res.msgs)
		}
		b, _ := json.Marshal(recs[0]["record"].(map[string]any)["data"])
		if strings.Contains(string(b), "tok-secret") {
			t.Errorf("%s: the token is shown: %s", stream, b)
		}
		pg, ok := onlyPage(b)
		if !ok {
			t.Fatalf("%s: %s", stream, b)
		}
		if len(pg.Records) != 1 {
			t.Errorf("%s: page %+v", stream, pg)
		}
		// The inferred schema, the CDK builder's for the stream it reads
		// whole, as it wrote it.
		var read struct {
			Schema map[string]any `json:"inferred_schema"`
		}
		if json.Unmarshal(b, &read); read.Schema["$schema"] != "http://json-schema.org/schema#" || read.Schema["type"] != "object" || read.Schema["properties"] == nil {
			t.Errorf("%s: inferred_schema %v", stream, read.Schema)
		}
		// The CDK's builder shows no request for a custom requester's page
		// (its message repository is not passed to custom components).
		if stream == "called" && (pg.Request.URL != a.URL+"/called" || pg.Request.Headers["Authorization"] != "Bearer ****") {
			t.Errorf("%s: page %+v", stream, pg)
		}
	}
}

// readPage is a page of a builder StreamRead, as the tests look at it.
type readPage struct {
	Records []map[string]any `json:"records"`
	Request struct {
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers"`
	} `json:"request"`
}

// onlyPage is the one page of a StreamRead (JSON) of one slice; ok is
// false when the read is not JSON or has another number of slices or pages.
func onlyPage(streamRead []byte) (page readPage, ok bool) {
	var read struct {
		Slices []struct {
			Pages []readPage `json:"pages"`
		} `json:"slices"`
	}
	if json.Unmarshal(streamRead, &read) != nil || len(read.Slices) != 1 || len(read.Slices[0].Pages) != 1 {
		return readPage{}, false
	}
	return read.Slices[0].Pages[0], true
}

func manifestAsJSON(y string) (map[string]any, error) {
	return manifest.Parse([]byte(y))
}

// A custom config transformation runs in the CDK and changes the config the
// streams read, not the user's: no CONTROL message and no config written
// back, as Airbyte prints one only for a migration that changed the config
// (google-analytics-data-api printed one on every command, the config
// unchanged); and the config's whole numbers stay whole (a count of 2 is
// 2 in a path, not 2.0).
func TestCustomConfigTransformationChangesNoUserConfig(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) { fmt.Fprint(w, `{"data": [{"id": 1}]}`) })
	m := `version: 7.0.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [items]}
streams:
  - type: DeclarativeStream
    name: items
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: "` + a.URL + `", path: "/items/{{ config['count'] }}/{{ config['tag'] }}"}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
spec:
  type: Spec
  connection_specification: {type: object, properties: {count: {type: integer}}}
  config_normalization_rules:
    type: ConfigNormalizationRules
    transformations:
      - type: CustomConfigTransformation
        class_name: source_declarative_manifest.components.Tag
`
	c, code := componentsRun(t, m, map[string]any{"count": 2}, "items")
	before, _ := os.ReadFile(c.config)
	check := runCLI(t, "check", "--manifest", c.manifest, "--config", c.config, "--components-path", code)
	for _, res := range []result{check, c.read(t, "--components-path", code)} {
		if res.code != 0 || len(res.ofType("CONTROL")) != 0 {
			t.Errorf("exit %d, CONTROL %v: %s", res.code, res.ofType("CONTROL"), res.stderr)
		}
	}
	equalLists(t, "requests", a.lines(), []string{"GET /items/2/t2", "GET /items/2/t2"})
	if after, _ := os.ReadFile(c.config); string(after) != string(before) {
		t.Errorf("config file rewritten: %s", after)
	}
}

// TestCheckOfAStreamTheCDKReadsIsItsAvailabilityCheck: check of a stream the
// CDK reads whole is the CDK's own availability check: its first partition's
// first record, one request; no partition at all is a stream not available,
// in the CDK's words, and a FAILED status (jira's issues, whose projects
// gave it no partition, passed here).
func TestCheckOfAStreamTheCDKReadsIsItsAvailabilityCheck(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		fmt.Fprint(w, `{"data": [{"id": 1}, {"id": 2}]}`)
	})
	m := `version: 7.0.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [custom]}
streams:
  - type: DeclarativeStream
    name: custom
    primary_key: [id]
    schema_loader: {type: InlineSchemaLoader, schema: {type: object}}
    retriever:
      type: SimpleRetriever
      requester: {type: CustomRequester, class_name: source_declarative_manifest.components.PathRequester, url_base: "` + a.URL + `", path: /ignored}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
      partition_router: {type: ListPartitionRouter, cursor_field: id, values: "{{ config.ids }}"}
`
	for _, tc := range []struct {
		ids      []any
		status   string
		requests []string
	}{
		{[]any{"a", "b"}, `{"status":"SUCCEEDED"}`, []string{"GET /custom/v2items"}},
		{[]any{}, `{"message":"Stream custom is not available: Cannot attempt to connect to stream custom - no stream slices were found","status":"FAILED"}`, nil},
	} {
		a.reqs = nil
		c, code := componentsRun(t, m, map[string]any{"suffix": "v2!", "ids": tc.ids}, "custom")
		res := runCLI(t, "check", "--manifest", c.manifest, "--config", c.config, "--components-path", code)
		statuses := res.ofType("CONNECTION_STATUS")
		if res.code != 0 || len(statuses) != 1 {
			t.Fatalf("ids %v: exit %d: %s", tc.ids, res.code, res.stdout)
		}
		if b, _ := json.Marshal(statuses[0]["connectionStatus"]); string(b) != tc.status {
			t.Errorf("ids %v: status %s, want %s", tc.ids, b, tc.status)
		}
		equalLists(t, fmt.Sprintf("ids %v: requests", tc.ids), a.lines(), tc.requests)
	}
}

// TestStreamTheCDKReadsTracesEachFailedPartition: a stream the CDK reads
// whole prints one error TRACE for each partition that failed, as the CDK
// prints them (paypal-transaction's list_disputes), then INCOMPLETE.
func TestStreamTheCDKReadsTracesEachFailedPartition(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		w.WriteHeader(400)
		fmt.Fprint(w, `{"error": "no"}`)
	})
	m := `version: 7.0.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [custom]}
streams:
  - type: DeclarativeStream
    name: custom
    primary_key: [id]
    schema_loader: {type: InlineSchemaLoader, schema: {type: object}}
    retriever:
      type: SimpleRetriever
      requester: {type: CustomRequester, class_name: source_declarative_manifest.components.PathRequester, url_base: "` + a.URL + `", path: /ignored}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
      partition_router: {type: ListPartitionRouter, cursor_field: id, values: [a, b]}
`
	c, code := componentsRun(t, m, map[string]any{"suffix": "v2!"}, "custom")
	res := c.read(t, "--components-path", code)
	var streamErrs int
	for _, e := range res.errors() {
		if d, _ := e["stream_descriptor"].(map[string]any); d["name"] == "custom" {
			streamErrs++
		}
	}
	if res.code == 0 || streamErrs != 2 {
		t.Fatalf("exit %d, %d errors of the stream, want one for each of its 2 partitions: %v", res.code, streamErrs, res.errors())
	}
	if st := res.statuses("custom"); len(st) == 0 || st[len(st)-1] != "INCOMPLETE" {
		t.Errorf("statuses %v", st)
	}
}

// A dynamic stream whose template has a custom requester: the CDK makes
// its streams (ConfigComponentsResolver) and reads the one asked for whole,
// in a sync and in a test read, whose source makes the dynamic streams
// again (the host makes them once per definition and config). The custom
// requester replaces the template's, and its request_parameters with it:
// no days parameter (checked with refcdk7: the same streams, requests and
// records).
func TestDynamicStreamWithACustomRequester(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		fmt.Fprintf(w, `{"rows":[{"table":%q,"days":%q}]}`, r.URL.Path, r.URL.Query().Get("days"))
	})
	reports := strings.Replace(configReports, "stream_template: {$ref: \"#/definitions/template\"}",
		"stream_template: {$ref: \"#/definitions/template\", retriever: {$ref: \"#/definitions/template/retriever\", requester: {type: CustomRequester, class_name: source_declarative_manifest.components.LoudPathRequester, url_base: \""+a.URL+"\", path: /placeholder}}}", 1)
	m := strings.Replace(dynamicManifest(a.URL, reports), "check: {type: CheckStream, stream_names: [static]}",
		"check: {type: CheckStream, stream_names: [static]}\nspec: {type: Spec, connection_specification: {type: object}}", 1)
	config := map[string]any{"reports": []any{map[string]any{"name": "monthly", "days": 30}}, "suffix": "!"}

	c, code := componentsRun(t, m, config, "report_monthly")
	equalLists(t, "streams", catalogNames(t, runCLI(t, "discover", "--manifest", c.manifest, "--config", c.config, "--components-path", code)), []string{"static <nil>", "report_monthly [[id] [day]]", "report_yearly [[id] [day]]"})
	res := c.read(t, "--components-path", code)
	if res.code != 0 {
		t.Fatalf("exit %d: %s %v", res.code, res.stderr, res.errors())
	}
	equalLists(t, "requests", a.lines(), []string{"GET /REPORTS/MONTHLY/ROWS"})
	equalLists(t, "records", res.records("report_monthly"), []string{`{"days":"","table":"/REPORTS/MONTHLY/ROWS"}`})

	raw, err := manifestAsJSON(m)
	if err != nil {
		t.Fatal(err)
	}
	sum := md5.Sum([]byte(componentsPy))
	config["__command"], config["__injected_declarative_manifest"] = "test_read", raw
	config["__injected_components_py"], config["__injected_components_py_checksums"] = componentsPy, map[string]any{"md5": hex.EncodeToString(sum[:])}
	tr := newConnector(t, "", config, "report_monthly")
	res = runCLI(t, "read", "--config", tr.config, "--catalog", tr.catalog)
	recs := res.ofType("RECORD")
	if res.code != 0 || len(recs) != 1 {
		t.Fatalf("test read: exit %d, %v", res.code, res.msgs)
	}
	b, _ := json.Marshal(recs[0]["record"].(map[string]any)["data"])
	pg, ok := onlyPage(b)
	if !ok || len(pg.Records) != 1 || pg.Records[0]["table"] != "/REPORTS/MONTHLY/ROWS" || pg.Records[0]["days"] != "" {
		t.Errorf("test read: %s", b)
	}
	equalLists(t, "requests", a.lines(), []string{"GET /REPORTS/MONTHLY/ROWS", "GET /REPORTS/MONTHLY/ROWS"})
}

// A single-use refresh token that the connector's own code rotates (an
// OAuthAuthenticator with a refresh_token_updater that a custom
// authenticator picks, as typeform's does) is kept as Go's own rotations
// are: the new config is one CONTROL message (the CDK prints it on stdout
// and queues it too), written back with --write-config, and the tokens are
// secrets from then on, masked in what the code logs after.
func TestConfigTheConnectorsCodeRotatesIsKept(t *testing.T) {
	a := rotatingTokenAPI(t)
	m := pickAuthManifest(a.URL)
	config := map[string]any{"credentials": pickAuthCredentials()}
	c, code := componentsRun(t, m, config, "items")
	res := c.read(t, "--components-path", code, "--write-config")
	if res.code != 0 {
		t.Fatalf("exit %d: %v %s", res.code, res.errors(), res.stderr)
	}
	reqs := a.requests()
	if len(reqs) != 2 || reqs[0].Path != "/token" || reqs[0].Body != "grant_type=refresh_token&client_id=cid&client_secret=cs&refresh_token=rt-old-1" ||
		reqs[1].Path != "/items" || reqs[1].Header.Get("Authorization") != "Bearer at-new-1" {
		t.Fatalf("requests %v", reqs)
	}
	controls := res.controls()
	if len(controls) != 1 {
		t.Fatalf("%d CONTROL messages, want 1: %v", len(controls), controls)
	}
	creds := controls[0]["credentials"].(map[string]any)
	if creds["refresh_token"] != "rt-new-2" || creds["access_token"] != "at-new-1" || creds["client_secret"] != "cs" {
		t.Errorf("CONTROL config %v", controls[0])
	}
	saved, err := os.ReadFile(c.config)
	if err != nil || !strings.Contains(string(saved), `"rt-new-2"`) {
		t.Errorf("config written back: %s %v", saved, err)
	}
	equalLists(t, "records", res.records("items"), []string{`{"id":1}`})
	for _, line := range strings.Split(res.stdout, "\n") {
		if strings.Contains(line, `"CONTROL"`) {
			continue
		}
		if strings.Contains(line, "at-new-1") || strings.Contains(line, "rt-new-2") {
			t.Errorf("a token outside the CONTROL message: %s", line)
		}
	}
	if logs := strings.Join(res.logs("INFO"), "\n"); !strings.Contains(logs, "record 1 with token ****") {
		t.Errorf("the code's log of the token, masked: %s", logs)
	}
}

// A custom authenticator of a stream Go reads (and of its parent) is asked
// per request, as the CDK asks it: its header and query parameter go into
// the request Go builds, and its own __call__ signs the request as sent.
// The API checks the signature itself, over the URL it was asked.
func TestCustomAuthenticatorIsAskedPerRequest(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		sum := sha256.Sum256([]byte("http://" + r.Host + r.URL.RequestURI()))
		if r.Header.Get("X-Signature") != hex.EncodeToString(sum[:])[:16] || r.Header.Get("X-Key") != "k-secret-9" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		switch {
		case r.URL.Path == "/owners":
			fmt.Fprint(w, `{"data": [{"id": "a"}]}`)
		case r.URL.Query().Get("page") == "1":
			fmt.Fprint(w, `{"data": [{"n": 1}, {"n": 2}]}`)
		default:
			fmt.Fprint(w, `{"data": [{"n": 3}]}`)
		}
	})
	m := `version: 7.0.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [owners]}
definitions:
  owners:
    type: DeclarativeStream
    name: owners
    primary_key: [id]
    schema_loader: {type: InlineSchemaLoader, schema: {type: object}}
    retriever:
      type: SimpleRetriever
      requester:
        type: HttpRequester
        url_base: "` + a.URL + `"
        path: /owners
        authenticator: {class_name: source_declarative_manifest.components.SigningAuth}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
streams:
  - $ref: "#/definitions/owners"
  - type: DeclarativeStream
    name: items
    primary_key: [n]
    schema_loader: {type: InlineSchemaLoader, schema: {type: object}}
    retriever:
      type: SimpleRetriever
      requester:
        type: HttpRequester
        url_base: "` + a.URL + `"
        path: "/owners/{{ stream_partition.owner }}/items"
        request_parameters: {size: "2"}
        authenticator: {class_name: source_declarative_manifest.components.SigningAuth}
      paginator:
        type: DefaultPaginator
        pagination_strategy: {type: PageIncrement, start_from_page: 1, page_size: 2}
        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}
      partition_router:
        type: SubstreamPartitionRouter
        parent_stream_configs:
          - {type: ParentStreamConfig, stream: {$ref: "#/definitions/owners"}, parent_key: id, partition_field: owner}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
  - type: DeclarativeStream
    name: clash
    schema_loader: {type: InlineSchemaLoader, schema: {type: object}}
    retriever:
      type: SimpleRetriever
      requester:
        type: HttpRequester
        url_base: "` + a.URL + `"
        path: /owners
        request_headers: {X-Key: mine}
        authenticator: {class_name: source_declarative_manifest.components.SigningAuth}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
  - type: DeclarativeStream
    name: broken
    schema_loader: {type: InlineSchemaLoader, schema: {type: object}}
    retriever:
      type: SimpleRetriever
      requester:
        type: HttpRequester
        url_base: "` + a.URL + `"
        path: /owners
        authenticator: {class_name: source_declarative_manifest.components.FailingAuth}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
  - type: DeclarativeStream
    name: aware
    schema_loader: {type: InlineSchemaLoader, schema: {type: object}}
    retriever:
      type: SimpleRetriever
      requester:
        type: HttpRequester
        url_base: "` + a.URL + `"
        path: /owners
        authenticator: {class_name: source_declarative_manifest.components.AwareAuth}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
`
	c, code := componentsRun(t, m, map[string]any{"key": "k-secret-9"}, "owners", "items", "clash", "broken", "aware")
	res := c.read(t, "--components-path", code)
	equalSorted(t, "requests", a.lines(), []string{"GET /owners?sig_v=1", "GET /owners/a/items?page=1&sig_v=1&size=2", "GET /owners/a/items?page=2&sig_v=1&size=2"})
	for _, r := range a.requests() {
		if r.Header.Get("X-Signature") == "" || r.Header.Get("X-Key") != "k-secret-9" {
			t.Errorf("%s %s?%s: headers %v", r.Method, r.Path, r.Query, r.Header)
		}
	}
	equalLists(t, "owners", res.records("owners"), []string{`{"id":"a"}`})
	equalLists(t, "items", res.records("items"), []string{`{"n":1}`, `{"n":2}`, `{"n":3}`})
	// A header both the requester and the authenticator set is refused, as
	// the CDK refuses it; the authenticator's exception is a system_error
	// naming it, as the CDK reports an exception of a stream; one that learns
	// from responses fails its stream, saying why.
	equalLists(t, "clash", res.statuses("clash"), []string{"STARTED", "RUNNING", "INCOMPLETE"})
	var errs []string
	for _, e := range res.errors() {
		errs = append(errs, fmt.Sprint(e["failure_type"], ": ", e["message"]))
	}
	equalSorted(t, "errors", errs, []string{
		`system_error: stream clash: header "X-Key" is set twice`,
		"system_error: stream broken: custom component CustomAuthenticator (source_declarative_manifest.components.FailingAuth) at streams[3].retriever.requester.authenticator: ValueError: no token today",
		"system_error: stream aware: custom component CustomAuthenticator (source_declarative_manifest.components.AwareAuth) at streams[4].retriever.requester.authenticator: TypeError: AwareAuth learns from responses or rotates tokens (ResponseAwareAuthenticator, TokenRotatingAuthenticator): the components host does not run such an authenticator per request",
		"config_error: During the sync, the following streams did not sync successfully: clash, broken, aware"})
	// Go read these streams: the CDK's own read logs ("Starting syncing") are not there.
	if logs := strings.Join(res.logs("INFO"), "\n"); strings.Contains(logs, "Starting syncing") {
		t.Errorf("a stream was read by the CDK: %s", logs)
	}
}

// A custom pagination strategy of a stream Go reads is asked as the CDK's
// retriever asks it: its initial_token and page size before the first
// request, then after each page the response, the number of records the
// page gave after the filter (id 4 is dropped, so the second page is
// short and the last), the last of them and the page's token; its tokens
// (objects) are the next_page_token of the request templates.
func TestCustomPaginationStrategyIsAskedPerPage(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, body string) {
		var q struct{ After, Limit int }
		if err := json.Unmarshal([]byte(body), &q); err != nil || q.Limit == 0 {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		var ids []string
		for id := q.After + 1; id <= min(q.After+q.Limit, 5); id++ {
			ids = append(ids, fmt.Sprintf(`{"id": %d}`, id))
		}
		paging := "null"
		if q.After+q.Limit < 5 {
			paging = `{"next": {}}`
		}
		fmt.Fprintf(w, `{"results": [%s], "paging": %s}`, strings.Join(ids, ", "), paging)
	})
	m := `version: 7.0.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [deals]}
streams:
  - type: DeclarativeStream
    name: deals
    primary_key: [id]
    schema_loader: {type: InlineSchemaLoader, schema: {type: object}}
    retriever:
      type: SimpleRetriever
      requester:
        type: HttpRequester
        url_base: "` + a.URL + `"
        path: /search
        http_method: POST
        request_body_json:
          after: "{{ next_page_token.next_page_token.after }}"
          last: "{{ next_page_token.next_page_token.get('last_id', 'none') }}"
      paginator:
        type: DefaultPaginator
        pagination_strategy:
          type: CustomPaginationStrategy
          class_name: source_declarative_manifest.components.AfterStrategy
          page_size: 2
        page_size_option: {type: RequestOption, inject_into: body_json, field_name: limit}
      record_selector:
        type: RecordSelector
        extractor: {type: DpathExtractor, field_path: [results]}
        record_filter: {type: RecordFilter, condition: "{{ record.id != 4 }}"}
`
	c, code := componentsRun(t, m, map[string]any{}, "deals")
	res := c.read(t, "--components-path", code)
	if res.code != 0 {
		t.Fatalf("exit %d: %v %s", res.code, res.errors(), res.stderr)
	}
	var bodies []string
	for _, r := range a.requests() {
		bodies = append(bodies, r.Method+" "+r.Path+" "+r.Body)
	}
	equalLists(t, "requests", bodies, []string{`POST /search {"after":0,"last":"none","limit":2}`, `POST /search {"after":2,"last":2,"limit":2}`})
	equalLists(t, "records", res.records("deals"), []string{`{"id":1}`, `{"id":2}`, `{"id":3}`})
	if logs := strings.Join(res.logs("INFO"), "\n"); strings.Contains(logs, "Starting syncing") {
		t.Errorf("the stream was read by the CDK: %s", logs)
	}
}

// rotatingTokenAPI gives the tokens at-new-1 and rt-new-2 at /token, and
// the record {"id": 1} to a request with the access token.
func rotatingTokenAPI(t *testing.T) *api {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		switch {
		case r.URL.Path == "/token":
			fmt.Fprint(w, `{"access_token": "at-new-1", "refresh_token": "rt-new-2", "expires_in": 3600}`)
		case r.Header.Get("Authorization") == "Bearer at-new-1":
			fmt.Fprint(w, `{"data": [{"id": 1}]}`)
		default:
			w.WriteHeader(http.StatusUnauthorized)
		}
	})
	return a
}

// pickAuthCredentials are OAuth credentials with a refresh token and no
// access token yet, for pickAuthManifest.
func pickAuthCredentials() map[string]any {
	return map[string]any{"auth_type": "oauth2", "client_id": "cid", "client_secret": "cs", "refresh_token": "rt-old-1", "access_token": "", "token_expiry_date": ""}
}

// pickAuthManifest is a stream whose custom authenticator picks, as
// typeform's does, an OAuthAuthenticator that rotates a single-use refresh
// token (refresh_token_updater) with the token endpoint at url/token.
func pickAuthManifest(url string) string {
	return `version: 7.0.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [items]}
spec:
  type: Spec
  connection_specification:
    type: object
    properties:
      credentials: {type: object, properties: {refresh_token: {type: string, airbyte_secret: true}}}
streams:
  - type: DeclarativeStream
    name: items
    primary_key: [id]
    schema_loader: {type: InlineSchemaLoader, schema: {type: object, properties: {id: {type: integer}}}}
    transformations:
      - {type: CustomTransformation, class_name: source_declarative_manifest.components.LogToken}
    retriever:
      type: SimpleRetriever
      requester:
        type: HttpRequester
        url_base: "` + url + `"
        path: /items
        authenticator:
          class_name: source_declarative_manifest.components.PickAuth
          token_auth: {type: BearerAuthenticator, api_token: "{{ config.credentials.access_token }}"}
          oauth2:
            type: OAuthAuthenticator
            token_refresh_endpoint: "` + url + `/token"
            client_id: "{{ config.credentials.client_id }}"
            client_secret: "{{ config.credentials.client_secret }}"
            refresh_token: "{{ config.credentials.refresh_token }}"
            refresh_token_updater: {}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
`
}

// A test read of a stream with a custom authenticator is the CDK's builder's
// (its token requests are Python's, which only the CDK's builder shows as
// auxiliary requests), masked with the tokens it obtained.
func TestTestReadOfACustomAuthenticatorsStreamIsTheCDKs(t *testing.T) {
	a := rotatingTokenAPI(t)
	t.Setenv("AIRBYTE_PYTHON", pythontest.Python(t))
	t.Setenv("AIRBYTE_ENABLE_UNSAFE_CODE", "true")
	raw, err := manifestAsJSON(pickAuthManifest(a.URL))
	if err != nil {
		t.Fatal(err)
	}
	sum := md5.Sum([]byte(componentsPy))
	config := map[string]any{"credentials": pickAuthCredentials(), "__command": "test_read", "__injected_declarative_manifest": raw,
		"__injected_components_py": componentsPy, "__injected_components_py_checksums": map[string]any{"md5": hex.EncodeToString(sum[:])}}
	c := newConnector(t, "", config, "items")
	res := runCLI(t, "read", "--config", c.config, "--catalog", c.catalog)
	recs := res.ofType("RECORD")
	if res.code != 0 || len(recs) != 1 {
		t.Fatalf("exit %d, %v", res.code, res.msgs)
	}
	var read struct {
		Auxiliary []struct {
			Request struct {
				URL string `json:"url"`
			} `json:"request"`
		} `json:"auxiliary_requests"`
	}
	b, _ := json.Marshal(recs[0]["record"].(map[string]any)["data"])
	if err := json.Unmarshal(b, &read); err != nil || len(read.Auxiliary) != 1 || read.Auxiliary[0].Request.URL != a.URL+"/token" {
		t.Errorf("auxiliary requests: %s", b)
	}
	// The new config is the builder's to keep, as written (and a CONTROL
	// message, as the CDK prints it); the tokens are masked everywhere else.
	var latest struct {
		Config map[string]any `json:"latest_config_update"`
	}
	if json.Unmarshal(b, &latest); latest.Config["credentials"].(map[string]any)["refresh_token"] != "rt-new-2" {
		t.Errorf("latest_config_update: %v", latest.Config)
	}
	if controls := res.controls(); len(controls) != 1 || controls[0]["credentials"].(map[string]any)["refresh_token"] != "rt-new-2" {
		t.Errorf("CONTROL messages %v", controls)
	}
	for _, line := range strings.Split(res.stdout, "\n") {
		line = strings.Replace(line, `"refresh_token":"rt-new-2"`, "", 1)
		line = strings.Replace(line, `"access_token":"at-new-1"`, "", 1)
		if strings.Contains(line, "at-new-1") || strings.Contains(line, "rt-new-2") {
			t.Errorf("a token obtained is shown: %s", line)
		}
	}
}

// A custom decoder of a SimpleRetriever is asked per response for its
// documents, as the CDK's record selector asks it; the first document is
// what a cursor paginator reads as the response (a JsonDecoder's subclass
// may read pages, as the CDK's factory allows).
func TestCustomDecoderIsAskedPerResponse(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		switch {
		case r.URL.Path == "/report":
			w.Header().Set("Content-Type", "text/csv")
			fmt.Fprint(w, "id,name\n1,a\n2,b\n")
		case r.URL.Query().Get("cursor") == "c2":
			fmt.Fprint(w, `{"envelope": {"data": [{"id": 3}], "next": null}}`)
		default:
			fmt.Fprint(w, `{"envelope": {"data": [{"id": 1}, {"id": 2}], "next": "c2"}}`)
		}
	})
	m := `version: 7.0.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [report]}
streams:
  - type: DeclarativeStream
    name: report
    schema_loader: {type: InlineSchemaLoader, schema: {type: object}}
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: "` + a.URL + `", path: /report}
      decoder: {type: CustomDecoder, class_name: source_declarative_manifest.components.CsvRows}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}
  - type: DeclarativeStream
    name: enveloped
    schema_loader: {type: InlineSchemaLoader, schema: {type: object}}
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: "` + a.URL + `", path: /env}
      decoder: {type: CustomDecoder, class_name: source_declarative_manifest.components.Enveloped}
      paginator:
        type: DefaultPaginator
        pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next }}", stop_condition: "{{ not response.next }}"}
        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: cursor}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
`
	c, code := componentsRun(t, m, map[string]any{}, "report", "enveloped")
	res := c.read(t, "--components-path", code)
	if res.code != 0 {
		t.Fatalf("exit %d: %v %s", res.code, res.errors(), res.stderr)
	}
	equalSorted(t, "requests", a.lines(), []string{"GET /env", "GET /env?cursor=c2", "GET /report"})
	equalLists(t, "report", res.records("report"), []string{`{"id":"1","name":"a"}`, `{"id":"2","name":"b"}`})
	equalLists(t, "enveloped", res.records("enveloped"), []string{`{"id":1}`, `{"id":2}`, `{"id":3}`})
	if logs := strings.Join(res.logs("INFO"), "\n"); strings.Contains(logs, "Starting syncing") {
		t.Errorf("a stream was read by the CDK: %s", logs)
	}
}

// A custom error handler is asked per response what to do (its own answers
// and its DefaultErrorHandler's), with its max_retries, and how long to wait
// (its backoff_strategies, as the CDK's requester takes them); a custom
// backoff strategy of a built-in handler is asked for its wait, counting
// attempts from 1 as the CDK counts them.
func TestCustomErrorHandlerIsAskedPerResponse(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		mu.Lock()
		seen[r.URL.Path]++
		n := seen[r.URL.Path]
		mu.Unlock()
		switch {
		case r.URL.Path == "/teapot":
			w.WriteHeader(http.StatusTeapot)
		case r.URL.Path == "/fail", r.URL.Path == "/busy" && n <= 2:
			w.WriteHeader(http.StatusConflict)
		case r.URL.Path == "/quick" && n == 1:
			w.WriteHeader(http.StatusInternalServerError)
		}
		fmt.Fprintf(w, `{"data": [{"id": %d}]}`, n)
	})
	m := `version: 7.0.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [busy]}
concurrency_level: {type: ConcurrencyLevel, default_concurrency: 1}
definitions:
  base:
    type: DeclarativeStream
    schema_loader: {type: InlineSchemaLoader, schema: {type: object}}
    retriever:
      type: SimpleRetriever
      requester:
        type: HttpRequester
        url_base: "` + a.URL + `"
        path: "/{{ parameters.name }}"
        error_handler:
          type: CustomErrorHandler
          class_name: source_declarative_manifest.components.TeapotHandler
          max_retries: 2
          backoff_strategies: [{type: ConstantBackoffStrategy, backoff_time_in_seconds: 0.5}]
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
streams:
  - {$ref: "#/definitions/base", name: teapot, $parameters: {name: teapot}}
  - {$ref: "#/definitions/base", name: busy, $parameters: {name: busy}}
  - {$ref: "#/definitions/base", name: fail, $parameters: {name: fail}}
  - type: DeclarativeStream
    name: quick
    schema_loader: {type: InlineSchemaLoader, schema: {type: object}}
    retriever:
      type: SimpleRetriever
      requester:
        type: HttpRequester
        url_base: "` + a.URL + `"
        path: /quick
        error_handler:
          type: DefaultErrorHandler
          backoff_strategies: [{type: CustomBackoffStrategy, class_name: source_declarative_manifest.components.Quick}]
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
`
	waits := fakeClock(t)
	c, code := componentsRun(t, m, map[string]any{}, "teapot", "busy", "fail", "quick")
	res := c.read(t, "--components-path", code)
	equalSorted(t, "requests", a.lines(), []string{"GET /busy", "GET /busy", "GET /busy", "GET /fail", "GET /fail", "GET /fail", "GET /quick", "GET /quick", "GET /teapot"})
	equalLists(t, "teapot", res.records("teapot"), nil)
	equalLists(t, "busy", res.records("busy"), []string{`{"id":3}`})
	equalLists(t, "quick", res.records("quick"), []string{`{"id":2}`})
	equalLists(t, "fail", res.statuses("fail"), []string{"STARTED", "RUNNING", "INCOMPLETE"})
	var errs []string
	for _, e := range res.errors() {
		errs = append(errs, fmt.Sprint(e["failure_type"], ": ", e["message"]))
	}
	equalLists(t, "errors", errs, []string{"transient_error: stream fail: busy, said the handler (gave up after 3 attempts)",
		"config_error: During the sync, the following streams did not sync successfully: fail"})
	var got []string
	for _, w := range *waits {
		got = append(got, w.String())
	}
	equalLists(t, "waits", got, []string{"500ms", "500ms", "500ms", "500ms", "250ms"})
	if logs := strings.Join(res.logs("WARN"), "\n"); !strings.Contains(logs, "Ignoring HTTP 418 from GET "+a.URL+"/teapot: a teapot") {
		t.Errorf("warnings: %s", logs)
	}
}

// A custom partition router that reads no stream is asked for its slices
// and the request options it gives for each; its partitions and extra
// fields are the templates' stream_partition and stream_slice. With an
// incremental_sync the CDK reads the stream: its factory drops a router
// that subclasses SinglePartitionRouter then, and only Python can tell.
func TestCustomPartitionRouterIsAskedForItsSlices(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		fmt.Fprintf(w, `{"data": [{"range": %q, "header": %q, "updated": "2024-01-02"}]}`, r.URL.Query().Get("range"), r.Header.Get("X-Range"))
	})
	m := `version: 7.0.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [rows]}
streams:
  - type: DeclarativeStream
    name: rows
    schema_loader: {type: InlineSchemaLoader, schema: {type: object}}
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: "` + a.URL + `", path: /rows}
      partition_router: {type: CustomPartitionRouter, class_name: source_declarative_manifest.components.RangeRouter}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
    transformations:
      - type: AddFields
        fields:
          - {path: [start], value: "{{ stream_partition.start }}"}
          - {path: [sheet], value: "{{ stream_slice.extra_fields.sheet }}"}
  - type: DeclarativeStream
    name: updates
    schema_loader: {type: InlineSchemaLoader, schema: {type: object}}
    incremental_sync:
      type: DatetimeBasedCursor
      cursor_field: updated
      datetime_format: "%Y-%m-%d"
      start_datetime: "2024-01-01"
      end_datetime: "2024-01-03"
      step: P10D
      cursor_granularity: P1D
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: "` + a.URL + `", path: /updates}
      partition_router: {type: CustomPartitionRouter, class_name: source_declarative_manifest.components.RangeRouter}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
`
	c, code := componentsRun(t, m, map[string]any{"rows": 9}, "rows", "updates")
	res := c.read(t, "--components-path", code)
	if res.code != 0 {
		t.Fatalf("exit %d: %v %s", res.code, res.errors(), res.stderr)
	}
	equalSorted(t, "requests", a.lines(), []string{"GET /rows?range=2%3A5", "GET /rows?range=6%3A9", "GET /updates"})
	equalSorted(t, "rows", res.records("rows"), []string{`{"header":"2","range":"2:5","sheet":"s1","start":2,"updated":"2024-01-02"}`,
		`{"header":"6","range":"6:9","sheet":"s1","start":6,"updated":"2024-01-02"}`})
	equalLists(t, "updates", res.records("updates"), []string{`{"header":"","range":"","updated":"2024-01-02"}`})
	if got := res.states(); len(got) == 0 || !strings.Contains(got[len(got)-1], `"stream_state":{"updated":"2024-01-02"}`) {
		t.Errorf("states %v", got)
	}
}

// A request that gets no response (nothing listens at the port) is handed
// to a custom error handler as requests' ConnectionError, as the CDK hands
// it: what it ignores ends the stream without records, what it fails is a
// failure of its type and message, the connection error kept as the
// internal message.
func TestCustomErrorHandlerIsHandedConnectionErrors(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	l.Close()
	m := `version: 7.0.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [ignored]}
streams:
  - type: DeclarativeStream
    name: ignored
    schema_loader: {type: InlineSchemaLoader, schema: {type: object}}
    retriever:
      type: SimpleRetriever
      requester:
        type: HttpRequester
        url_base: "` + closed + `"
        path: /items
        error_handler: {type: CustomErrorHandler, class_name: source_declarative_manifest.components.OfflineIgnored}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
  - type: DeclarativeStream
    name: failed
    schema_loader: {type: InlineSchemaLoader, schema: {type: object}}
    retriever:
      type: SimpleRetriever
      requester:
        type: HttpRequester
        url_base: "` + closed + `"
        path: /items
        error_handler: {type: CustomErrorHandler, class_name: source_declarative_manifest.components.OfflineFails}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
`
	c, code := componentsRun(t, m, map[string]any{}, "ignored", "failed")
	res := c.read(t, "--components-path", code)
	equalLists(t, "ignored", res.statuses("ignored"), []string{"STARTED", "RUNNING", "COMPLETE"})
	equalLists(t, "failed", res.statuses("failed"), []string{"STARTED", "RUNNING", "INCOMPLETE"})
	errs := res.errors()
	if len(errs) != 2 || errs[0]["failure_type"] != "config_error" || errs[0]["message"] != "stream failed: the API is offline: check its host" ||
		!strings.Contains(fmt.Sprint(errs[0]["internal_message"]), "connection refused") {
		t.Errorf("errors %v", errs)
	}
	if logs := strings.Join(res.logs("WARN"), "\n"); !strings.Contains(logs, "Ignoring offline: skipped") {
		t.Errorf("warnings: %s", logs)
	}
}
