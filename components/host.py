"""The components host: custom Python components of a declarative manifest, run in Airbyte's own CDK.

The Go runtime starts this file with the Python that has airbyte-cdk 7.x and talks to it over two pipes of
its own, fds 3 (requests in) and 4 (replies out): never stdout, where the CDK and components may print
(the Go side forwards what they print as LOG messages). A frame is two big-endian uint32 lengths, a JSON
header and a blob (a response body, or records as JSON lines).

Every custom component is built by the CDK's own factory over the manifest as the CDK resolves it, so
that $parameters, nested components, config and the keyword arguments a parent passes are the CDK's: the
host builds the source's streams once, and the factory's create_custom_component is wrapped to remember
each component it makes under the manifest path the host tagged its definition with (__go_path). Go then
calls a component by that path: record extractors, filters, transformations, schema normalizations,
schema loaders, state migrations, config rules, a requester's authenticator and error handler (or a backoff
strategy of its), a paginator's strategy, a SimpleRetriever's decoder and a partition router that reads no
stream. A stream with any other custom part (a retriever, requester, paginator, a router that reads streams,
or an incremental sync) is read whole with the CDK's own stream (op read); its built-in authenticator is Go's, asked per
request, so that a token is refreshed by one process only.
"""

import collections.abc
import concurrent.futures
import dataclasses
import functools
import http.client
import json
import logging
import os
import struct
import sys
import threading
import traceback
import types

try:
    import orjson
except ImportError:  # pragma: no cover - the CDK requires orjson
    orjson = None

IN_FD, OUT_FD = 3, 4
TAG = "__go_path"


def _default(value):
    if isinstance(value, collections.abc.Mapping):
        return dict(value)
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    raise TypeError(f"Type is not JSON serializable: {type(value).__name__}")


def dumps(value) -> bytes:
    """Python values to JSON with orjson; what it cannot write (an integer past 64 bits) with the standard
    module, as the CDK's entrypoint writes a message orjson refuses."""
    if orjson is not None:
        try:
            return orjson.dumps(value, default=_default, option=orjson.OPT_NON_STR_KEYS)
        except orjson.JSONEncodeError:
            pass
    return json.dumps(value, default=_default, separators=(",", ":"), ensure_ascii=False).encode()


# orjson reads an integer past 64 bits as a float (1.2e+29), where the standard parser, and so the CDK, keeps it
# exact. A body holding a run of 19 digits or more (such an integer, or a long string of digits, or a number
# written with many digits: all read the same by both) is read by the standard parser. The run is found by
# turning every digit into "0" and anything else into a space, then looking for 19 zeros: ten times faster than
# a regular expression on a page of numbers.
DIGITS_AS_ZEROS = bytes(0x30 if 0x30 <= c <= 0x39 else 0x20 for c in range(256))
NINETEEN_DIGITS = b"0" * 19


def long_number(b: bytes) -> bool:
    return b.translate(DIGITS_AS_ZEROS).find(NINETEEN_DIGITS) >= 0


def loads(b):
    """JSON to Python values as the standard parser gives them, with orjson where it gives the same (it refuses
    NaN, Infinity and bytes that are not UTF-8; a long number is not given to it)."""
    if orjson is not None and not long_number(b):
        try:
            return orjson.loads(b)
        except orjson.JSONDecodeError:
            pass
    return json.loads(b)


def lines(values) -> bytes:
    return b"\n".join(dumps(v) for v in values)


def records_in(blob: bytes):
    """Records from Go: a JSON array (a record cut from a body may span lines)."""
    return loads(blob) if blob else []


class Channel:
    """Frames in from Go and out to it; calls to Go wait for their reply."""

    def __init__(self):
        self._in = os.fdopen(IN_FD, "rb")
        self._out = os.fdopen(OUT_FD, "wb")
        self._lock = threading.Lock()
        self._calls = {}
        self._next = 0

    def read(self):
        head = self._in.read(8)
        if len(head) < 8:
            return None, None
        n, m = struct.unpack(">II", head)
        header = loads(self._in.read(n))
        blob = self._in.read(m) if m else b""
        return header, blob

    def send(self, header, blob=b""):
        h = dumps(header)
        with self._lock:
            self._out.write(struct.pack(">II", len(h), len(blob)) + h)
            if blob:
                self._out.write(blob)
            self._out.flush()

    def call_go(self, op, params, blob=b""):
        """Asks Go (op auth) and waits for its answer."""
        future = concurrent.futures.Future()
        with self._lock:
            self._next += 1
            cid = self._next
            self._calls[cid] = future
        self.send({"call": cid, "op": op, **params}, blob)
        return future.result()

    def answered(self, header, blob):
        future = self._calls.pop(header["re_call"], None)
        if future is None:
            return
        if "error" in header:
            future.set_exception(RuntimeError(header["error"]))
        else:
            future.set_result((header.get("ok") or {}, blob))


CHANNEL = None


class ChannelLogHandler(logging.Handler):
    """Python's log records go to Go as LOG messages, in the CDK's levels."""

    def emit(self, record):
        try:
            CHANNEL.send({"log": record.levelname, "message": self.format(record)})
        except Exception:  # pragma: no cover - a log never breaks a call
            pass


def last_line(exc) -> str:
    text = "".join(traceback.format_exception_only(type(exc), exc)).strip().splitlines()
    return text[-1] if text else type(exc).__name__


def failure_of(exc):
    from airbyte_cdk.utils.traced_exception import AirbyteTracedException

    if isinstance(exc, AirbyteTracedException) and exc.failure_type is not None:
        return exc.failure_type.value
    return None


class Host:
    def __init__(self):
        self._source = None
        self.manifest = None
        self.config = None
        self.components = {}  # manifest path -> the component the CDK's factory made
        self.dynamic = {}  # name -> definition of a stream a dynamic stream made (op dynamic_streams)
        self.classes = {}  # manifest path -> class_name
        self.lock = threading.Lock()
        # local.streams: the streams being made on this thread, innermost last; local.go_auth: the
        # streams whose built-in authenticators are Go's (op auth), when a stream is read whole here.
        self.local = threading.local()

    # --- start ---

    def init(self, h, blob):
        """Registers the components module and reads the manifest as the CDK does."""
        code = h.get("code")
        if code:
            module = types.ModuleType("components")
            sys.modules["components"] = module
            sys.modules["source_declarative_manifest.components"] = module
            exec(compile(code, h.get("code_name") or "components.py", "exec"), module.__dict__)
        self.manifest = h["manifest"]
        self.config = h["config"]
        self._patch_factory()
        return {}, b""

    @property
    def source(self):
        """The source the ops but a read share, made when first needed: a test read of a stream read whole
        makes its own, and pays for one source only, as the CDK's builder does."""
        if self._source is None:
            self._source = self.new_source(catalog=None, state=None)
        return self._source

    def build(self, h, blob):
        """Builds the components of the streams named (every stream's without names) with the config the
        runtime settled."""
        self.config = h["config"]
        self.source._config = self.config
        self.source._config_for_validation = self.config
        self._tag(self.source._source_config, "")
        names = h.get("streams")
        if names is None:
            self._build_streams(self.source)
        else:
            for name in names:
                self._create_streams(self.source, self._configs_named(self.source, name))
        return {"built": sorted(self.components)}, b""

    def new_source(self, catalog, state, **kwargs):
        # The config is already migrated and transformed by Go (or by op config): the source is
        # made without one, so that it runs no migration (whose CONTROL message it would print),
        # then given it.
        source = source_class()(
            catalog=catalog,
            config=None,
            state=state,
            source_config=json.loads(json.dumps(self.manifest)),
            **kwargs,
        )
        source._config = self.config
        source._config_for_validation = self.config
        return source

    def _patch_factory(self):
        from airbyte_cdk.sources.declarative.models import declarative_component_schema as models
        from airbyte_cdk.sources.declarative.parsers.model_to_component_factory import (
            ModelToComponentFactory,
        )

        host = self
        original_custom = ModelToComponentFactory.create_custom_component

        def create_custom_component(factory, model, config, **kwargs):
            component = original_custom(factory, model, config, **kwargs)
            path = (model.__dict__ or {}).get(TAG)
            if path is None and hasattr(model, "__fields_set__"):
                path = getattr(model, TAG, None)
            if path is not None:
                with host.lock:
                    host.components[path] = component
                    host.classes[path] = model.class_name
            return component

        ModelToComponentFactory.create_custom_component = create_custom_component

        # Built-in authenticators of a stream read whole here are Go's (see GoAuthenticator).
        auth_models = {
            models.ApiKeyAuthenticator: "create_api_key_authenticator",
            models.BasicHttpAuthenticator: "create_basic_http_authenticator",
            models.BearerAuthenticator: "create_bearer_authenticator",
            models.OAuthAuthenticator: "create_oauth_authenticator",
            models.SessionTokenAuthenticator: "create_session_token_authenticator",
            models.JwtAuthenticator: "create_jwt_authenticator",
            models.SelectiveAuthenticator: "create_selective_authenticator",
            models.LegacySessionTokenAuthenticator: "create_legacy_session_token_authenticator",
        }
        original_from_model = ModelToComponentFactory._create_component_from_model

        def from_model(factory, model, config, **kwargs):
            local = host.local
            streams = local.__dict__.get("streams")
            go_auth = local.__dict__.get("go_auth") or ()
            if model.__class__ in auth_models and streams and streams[-1] in go_auth:
                return go_authenticator(streams[-1])
            if isinstance(model, models.DeclarativeStream):
                local.__dict__.setdefault("streams", []).append(model.name or "")
                try:
                    return original_from_model(factory, model, config, **kwargs)
                finally:
                    local.streams.pop()
            return original_from_model(factory, model, config, **kwargs)

        ModelToComponentFactory._create_component_from_model = from_model

    def _tag(self, node, path):
        """Marks each custom component's definition with its manifest path."""
        if isinstance(node, dict):
            if self._is_tagged_kind(node) and path:
                node[TAG] = path
            for key, value in node.items():
                if key in ("$parameters", "schema", "definitions") or key == TAG:
                    continue
                self._tag(value, f"{path}.{key}" if path else key)
        elif isinstance(node, list):
            for i, value in enumerate(node):
                self._tag(value, f"{path}[{i}]")

    @staticmethod
    def _is_tagged_kind(node):
        return "class_name" in node

    def _build_streams(self, source):
        # ConcurrentDeclarativeSource.streams without dynamic streams (Go resolves those).
        configs = source._stream_configs(source._source_config)
        prepared = source._initialize_cache_for_parent_streams(configs)
        self._create_streams(source, prepared)

    @staticmethod
    def _create_streams(source, configs):
        from airbyte_cdk.sources.declarative.models import declarative_component_schema as models

        streams = []
        for config in configs:
            model = (
                models.StateDelegatingStream
                if config.get("type") == "StateDelegatingStream"
                else models.DeclarativeStream
            )
            streams.append(source._constructor.create_component(model, config, source._config))
        return streams

    def component(self, h):
        path = h["path"]
        comp = self.components.get(path)
        if comp is None:
            raise LookupError(f"the CDK built no custom component at {path}")
        return comp

    # --- per-call component interfaces ---

    def extract(self, h, blob):
        comp = self.component(h)
        records = list(comp.extract_records(response(h, blob)))
        return {"count": len(records)}, lines(records)

    def transform(self, h, blob):
        comps = [self.component({"path": p}) for p in h["paths"]]
        records = records_in(blob)
        state, sl = h.get("state") or {}, stream_slice(h.get("slice"))
        out = []
        for record in records:
            for comp in comps:
                # What transform returns is dropped, as the CDK's record selector drops it: the interface
                # changes the record it is given.
                comp.transform(record, config=self.config, stream_state=state, stream_slice=sl)
            out.append(record)
        return {"count": len(out)}, lines(out)

    def filter(self, h, blob):
        comp = self.component(h)
        kept = list(
            comp.filter_records(
                records_in(blob),
                stream_state=h.get("state") or {},
                stream_slice=stream_slice(h.get("slice")),
                next_page_token=h.get("next_page_token"),
            )
        )
        return {"count": len(kept)}, lines(kept)

    def normalize(self, h, blob):
        comp = self.component(h)
        out = []
        for record in records_in(blob):
            comp.transform(record, h.get("schema") or {})
            out.append(record)
        return {"count": len(out)}, lines(out)

    def authenticate(self, h, blob):
        """The credentials a custom authenticator puts on one request, asked as the CDK's HttpRequester asks
        it: its header, query parameters and body fields, which Go merges into the request; and whether it
        has a __call__ of its own for requests' session to call (op authenticate_call) on the request so made
        (the CDK's authenticators' sets the header again)."""
        from airbyte_cdk.sources.streams.http.requests_native_auth.protocols import (
            ResponseAwareAuthenticator,
            TokenRotatingAuthenticator,
        )

        auth = self.component(h)
        if isinstance(auth, (ResponseAwareAuthenticator, TokenRotatingAuthenticator)):
            raise TypeError(
                f"{type(auth).__name__} learns from responses or rotates tokens (ResponseAwareAuthenticator, "
                "TokenRotatingAuthenticator): the components host does not run such an authenticator per request"
            )
        data = auth.get_request_body_data() or {}
        return {
            "headers": {str(k): str(v) for k, v in (auth.get_auth_header() or {}).items()},
            "params": dict(auth.get_request_params() or {}),
            "body_data": data if isinstance(data, str) else dict(data),
            "body_json": dict(auth.get_request_body_json() or {}),
            "own_call": _own_call(auth),
        }, b""

    def authenticate_call(self, h, blob):
        """A custom authenticator's own __call__ on the request as Go sends it (its URL, headers and body):
        the URL it leaves (the one it may have signed), the headers it sets and the body if it changes it."""
        import requests

        auth = self.component(h)
        request = requests.PreparedRequest()
        request.prepare(method=h["method"], url=h["url"], headers=h["headers"], data=blob or None)
        headers_before, body_before = dict(request.headers), request.body
        request = auth(request) or request
        out = {
            "url": request.url,
            "headers": {k: v for k, v in request.headers.items() if headers_before.get(k) != v and k.lower() != "content-length"},
        }
        if request.body != body_before:
            body = request.body or b""
            out["body"] = body.decode("utf-8", "replace") if isinstance(body, bytes) else str(body)
        return out, b""

    def decode(self, h, blob):
        """A custom decoder's documents of one response (its decode, given the requests.Response)."""
        docs = list(self.component(h).decode(response(h, blob)))
        return {"count": len(docs)}, lines(docs)

    def error_handler_start(self, h, blob):
        """A custom error handler's max_retries (None: the client's default)."""
        return {"max_retries": getattr(self.component(h), "max_retries", None)}, b""

    def interpret_response(self, h, blob):
        """What a custom error handler makes of a response, or of the exception of a request that got none
        (interpret_response's ErrorResolution)."""
        resolution = self.component(h).interpret_response(response_or_exception(h, blob))
        action, failure = resolution.response_action, resolution.failure_type
        return {
            "action": action.name if action is not None else "SUCCESS",
            "failure_type": failure.value if failure is not None else None,
            "error_message": resolution.error_message,
        }, b""

    def backoff_time(self, h, blob):
        """The first wait a custom backoff strategy (or a custom error handler's backoff_strategies, as the
        CDK's HttpRequester takes them) gives before a retry, as the CDK's HttpClient asks it."""
        comp = self.component(h)
        strategies = (getattr(comp, "backoff_strategies", None) or []) if h.get("handler") else [comp]
        asked = response_or_exception(h, blob)  # one for every strategy, as the CDK hands them one
        for strategy in strategies:
            seconds = strategy.backoff_time(response_or_exception=asked, attempt_count=h["attempt_count"])
            if seconds:
                return {"seconds": seconds}, b""
        return {"seconds": None}, b""

    def partitions(self, h, blob):
        """A custom partition router's slices (stream_slices()), each with the request options it gives for
        it, as the CDK's requester asks them for the slice's first page."""
        comp = self.component(h)
        out = []
        for sl in comp.stream_slices():
            partition = getattr(sl, "partition", None)
            if partition is None:
                partition = sl
            if getattr(sl, "cursor_slice", None):
                raise ValueError(
                    f"slice {dict(sl)} has cursor_slice values: a custom partition router's slices are partitions"
                )
            options = {}
            for kind in ("params", "headers", "body_data", "body_json"):
                value = getattr(comp, "get_request_" + kind)(stream_state=None, stream_slice=sl, next_page_token=None)
                if isinstance(value, str):
                    raise ValueError(f"get_request_{kind} gives a text: a custom partition router's options are fields")
                options[kind] = dict(value or {})
            out.append({"partition": dict(partition), "extra_fields": dict(getattr(sl, "extra_fields", None) or {}), "options": options})
        return {"count": len(out)}, lines(out)

    def pagination_start(self, h, blob):
        """A custom pagination strategy's first token (its initial_token) and page size (get_page_size())."""
        comp = self.component(h)
        return {"token": comp.initial_token, "page_size": comp.get_page_size()}, b""

    def next_page_token(self, h, blob):
        """A custom pagination strategy's next token, asked as the CDK's SimpleRetriever asks it after a page:
        the response, the number of records the page gave and the last of them (a Record), the page's token;
        and whether there is a next page (the CDK's `if next_page_token`)."""
        from airbyte_cdk.sources.types import Record

        comp = self.component(h)
        last = h.get("last_record")
        token = comp.next_page_token(
            response=response(h, blob),
            last_page_size=h["last_page_size"],
            last_record=None if last is None else Record(data=last, stream_name=h.get("stream", ""), associated_slice=None),
            last_page_token_value=h.get("token"),
        )
        return {"token": token, "more": bool(token)}, b""

    def migrate_state(self, h, blob):
        state = h.get("state") or {}
        migrated = False
        for path in h["paths"]:
            comp = self.component({"path": path})
            if comp.should_migrate(state):
                state = dict(comp.migrate(state))
                migrated = True
        return {"migrated": migrated, "state": state}, b""

    def schema(self, h, blob):
        stream = self.stream_named(h["stream"])
        return {"schema": stream.get_json_schema()}, b""

    def catalog_stream(self, h, blob):
        """The stream as discover shows it (the CDK's AirbyteStream)."""
        from airbyte_cdk.models import AirbyteCatalog, AirbyteMessage, AirbyteMessageSerializer, Type

        stream = self.stream_named(h["stream"]).as_airbyte_stream()
        message = AirbyteMessage(type=Type.CATALOG, catalog=AirbyteCatalog(streams=[stream]))
        return {"stream": AirbyteMessageSerializer.dump(message)["catalog"]["streams"][0]}, b""

    def stream_named(self, name):
        for stream in self._create_streams(self.source, self._configs_named(self.source, name)):
            return stream
        raise LookupError(f"stream {name} is not in the manifest")

    def _configs_named(self, source, name):
        configs = source._stream_configs(source._source_config)
        if name in self.dynamic:
            configs = configs + [json.loads(json.dumps(self.dynamic[name]))]
        prepared = source._initialize_cache_for_parent_streams(configs)
        return [c for c in prepared if c.get("name") == name]

    def dynamic_streams(self, h, blob):
        """The streams the CDK makes from one dynamic stream (its resolver run, Go's authenticators on its
        requests, under the dynamic stream's name)."""
        index = int(h["dynamic"].split("[")[1].rstrip("]"))
        self.local.streams, self.local.go_auth = [h["name"]], set(h.get("go_auth") or ())
        try:
            configs = self.source.dynamic_definition_configs(index)
        finally:
            self.local.streams, self.local.go_auth = [], ()
        for config in configs:
            self.dynamic[config["name"]] = config
        return {"streams": configs}, b""

    def config(self, h, blob):
        """The spec's config rules (migrations, transformations, validations), as the CDK runs them."""
        spec = self.source._spec_component
        config = dict(h["config"])
        if spec is None:
            return {"migrated": config, "config": config}, b""
        spec.migrate_config(config)
        migrated = dict(config)
        spec.transform_config(config)
        spec.validate_config(config)
        self.config = config
        return {"migrated": migrated, "config": config}, b""

    # --- whole streams ---

    def read(self, h, blob, rid):
        """Reads one stream with the CDK's own stream; its messages go to Go as they come."""
        from airbyte_cdk.models import (
            AirbyteMessageSerializer,
            AirbyteStateMessageSerializer,
            ConfiguredAirbyteCatalogSerializer,
            Type,
        )

        catalog = ConfiguredAirbyteCatalogSerializer.load({"streams": [h["configured_stream"]]})
        state = [AirbyteStateMessageSerializer.load(s) for s in h.get("state") or []]
        source = self.new_source(catalog=catalog, state=state)
        self._tag(source._source_config, "")
        self.local.go_auth = set(h.get("go_auth") or ())
        try:
            streams = self._create_streams(source, self._configs_named(source, h["stream"]))
        finally:
            self.local.go_auth = ()
        limit = h.get("max_records")
        records = 0
        logger = logging.getLogger("airbyte")
        for message in source._concurrent_source.read(streams):
            if message.type == Type.RECORD:
                records += 1
                # The record as the stream made it: the serializer (serpyco-rs, omit_none) would leave its
                # top-level nulls out, and Go prints a record's nulls (README, record-nulls).
                record = {"data": message.record.data}
                if message.record.file_reference is not None:  # a file_uploader staged the record's file
                    record["file_reference"] = dataclasses.asdict(message.record.file_reference)
                CHANNEL.send({"re": rid, "msg": {"type": "RECORD", "record": record}})
            else:
                CHANNEL.send({"re": rid, "msg": AirbyteMessageSerializer.dump(message)})
            if limit is not None and records >= limit:
                break
        del logger
        return {"records": records}, b""

    def check(self, h, blob):
        """The CDK's own availability check of one stream read whole (CheckStream's evaluate_availability:
        its first partition's first record; no partition is a stream not available)."""
        from airbyte_cdk.sources.declarative.checks.check_stream import evaluate_availability

        self.local.go_auth = set(h.get("go_auth") or ())
        try:
            stream = self.stream_named(h["stream"])
        finally:
            self.local.go_auth = ()
        try:
            available, reason = evaluate_availability(stream, logging.getLogger("airbyte"))
        except Exception as error:  # noqa: BLE001 - as CheckStream's _log_error words it
            return {"available": False, "reason": f"Encountered an error while checking availability of stream {h['stream']}. Error: {error}"}, b""
        if not available:
            return {"available": False, "reason": f"Stream {h['stream']} is not available: {reason}"}, b""
        return {"available": True}, b""

    def test_read(self, h, blob):
        """The Connector Builder's StreamRead of one stream, as the CDK's builder makes it."""
        from airbyte_cdk.connector_builder.connector_builder_handler import read_stream
        from airbyte_cdk.models import (
            AirbyteMessageSerializer,
            AirbyteStateMessageSerializer,
            ConfiguredAirbyteCatalogSerializer,
        )
        from airbyte_cdk.sources.declarative.concurrent_declarative_source import TestLimits

        limits = TestLimits(**h["limits"])
        catalog = ConfiguredAirbyteCatalogSerializer.load({"streams": [h["configured_stream"]]})
        state = [AirbyteStateMessageSerializer.load(s) for s in h.get("state") or []]
        manifest = json.loads(json.dumps(self.manifest))
        if "concurrency_level" in manifest:
            manifest["concurrency_level"]["default_concurrency"] = 1
        else:
            manifest["concurrency_level"] = {"type": "ConcurrencyLevel", "default_concurrency": 1}
        source = source_class()(
            catalog=catalog,
            config=None,
            state=state,
            source_config=manifest,
            emit_connector_builder_messages=True,
            limits=limits,
        )
        source._config = self.config
        source._config_for_validation = self.config
        message = read_stream(source, self.config, catalog, state, limits)
        return {"message": AirbyteMessageSerializer.dump(message)}, b""


_SOURCE_CLASS = None


def source_class():
    """ConcurrentDeclarativeSource, but resolving, propagating and validating a manifest once per host, as
    one CDK process does once per command: a sync makes a source for each stream it reads whole here (its
    own catalog and state), and bing-ads' 400 KB manifest took 0.7 s of resolving and validating each time,
    plus the CDK's schema, parsed from YAML for every source."""
    global _SOURCE_CLASS
    if _SOURCE_CLASS is not None:
        return _SOURCE_CLASS
    from airbyte_cdk.sources.declarative import concurrent_declarative_source as cds

    cds._get_declarative_component_schema = functools.cache(cds._get_declarative_component_schema)
    resolved = {}  # the manifest's JSON -> the manifest resolved and propagated, as JSON
    validated = set()  # the JSON of the resolved manifests that passed validation
    made = {}  # a dynamic stream definition, its index and the config, as JSON -> its streams, as JSON

    class Source(cds.ConcurrentDeclarativeSource):
        def _pre_process_manifest(self, manifest):
            key = json.dumps(manifest, sort_keys=True)
            text = resolved.get(key)
            if text is None:
                text = json.dumps(super()._pre_process_manifest(manifest))
                resolved[key] = text
            self._resolved_text = text
            return json.loads(text)

        def _validate_source(self):
            text = getattr(self, "_resolved_text", None)
            if text is not None and text in validated and not self._should_migrate:
                return
            super()._validate_source()
            if text is not None and not self._should_migrate:
                validated.add(text)

        def dynamic_definition_configs(self, index, with_dynamic_stream_name=True):
            """The streams one dynamic stream definition makes, as _dynamic_stream_configs makes them;
            remembered for a resolver that sends no request (its streams follow from the definition and
            the config): Go asks for each definition's, and a test read's source then makes them all."""
            definition = self._source_config["dynamic_streams"][index]
            key = None
            if _makes_no_request(definition):
                key = json.dumps([_untagged(definition), index, bool(with_dynamic_stream_name), self._config], sort_keys=True)
                if key in made:
                    return json.loads(made[key])
            configs = cds.ConcurrentDeclarativeSource._dynamic_stream_configs(
                self, {"dynamic_streams": [definition]}, with_dynamic_stream_name
            )
            if with_dynamic_stream_name and "name" not in definition:
                for config in configs:  # the name _dynamic_stream_configs gives it by its index
                    config["dynamic_stream_name"] = f"dynamic_stream_{index}"
            if key is not None:
                try:
                    made[key] = json.dumps(configs)
                except TypeError:
                    pass
            return configs

        def _dynamic_stream_configs(self, manifest, with_dynamic_stream_name=None):
            definitions = manifest.get("dynamic_streams", [])
            if manifest is not self._source_config or not all(_makes_no_request(d) for d in definitions):
                return super()._dynamic_stream_configs(manifest, with_dynamic_stream_name)
            configs = [
                config
                for index in range(len(definitions))
                for config in self.dynamic_definition_configs(index, with_dynamic_stream_name)
            ]
            names = [config.get("name") for config in configs]
            if len(set(names)) < len(names):  # the CDK's own error, in its words
                return super()._dynamic_stream_configs(manifest, with_dynamic_stream_name)
            return configs

    _SOURCE_CLASS = Source
    return Source


def _untagged(node):
    """node without the manifest paths the host tagged it with (the shared source's manifest is tagged, a
    test read's is not)."""
    if isinstance(node, dict):
        return {k: _untagged(v) for k, v in node.items() if k != TAG}
    if isinstance(node, list):
        return [_untagged(v) for v in node]
    return node


def _makes_no_request(definition):
    resolver = definition.get("components_resolver") if isinstance(definition, dict) else None
    return isinstance(resolver, dict) and resolver.get("type") in (
        "ConfigComponentsResolver",
        "ParametrizedComponentsResolver",
    )


_GO_AUTHENTICATOR = None


def go_authenticator(stream):
    """A built-in authenticator of a stream read whole in Python: Go's, asked per request (op auth)."""
    global _GO_AUTHENTICATOR
    if _GO_AUTHENTICATOR is None:
        from airbyte_cdk.sources.declarative.auth.declarative_authenticator import (
            DeclarativeAuthenticator,
        )

        class GoAuthenticator(DeclarativeAuthenticator):
            def __init__(self, stream):
                self.stream = stream

            @property
            def auth_header(self):
                return ""

            @property
            def token(self):
                return ""

            def get_auth_header(self):
                return {}

            def __call__(self, request):
                body = request.body or b""
                if isinstance(body, str):
                    body = body.encode()
                answer, _ = CHANNEL.call_go(
                    "auth",
                    {
                        "stream": self.stream,
                        "method": request.method,
                        "url": request.url,
                        "headers": dict(request.headers),
                    },
                    body,
                )
                request.headers.update(answer.get("headers") or {})
                if answer.get("url"):
                    request.url = answer["url"]
                return request

        _GO_AUTHENTICATOR = GoAuthenticator
    return _GO_AUTHENTICATOR(stream)


def send_config(config):
    """The CDK prints a config its code changed (an OAuth authenticator's rotated refresh token) as a CONTROL
    message on stdout; the host sends it to Go on the channel instead, in order with what follows, so that Go
    masks the new token before a log that shows it, keeps it and prints it."""
    CHANNEL.send({"config": config})


def route_config_messages():
    import airbyte_cdk
    from airbyte_cdk import config_observation
    from airbyte_cdk.sources.streams.http.requests_native_auth import oauth

    for module in (airbyte_cdk, config_observation, oauth):
        module.emit_configuration_as_airbyte_control_message = send_config


def _own_call(auth):
    """Whether requests' session calls the authenticator with something of its own: the CDK's authenticators'
    __call__ sets their header again; one that is no AuthBase is not called (HttpClient)."""
    from requests.auth import AuthBase
    from airbyte_cdk.sources.streams.http.requests_native_auth.abstract_oauth import AbstractOauth2Authenticator
    from airbyte_cdk.sources.streams.http.requests_native_auth.abstract_token import AbstractHeaderAuthenticator

    if not isinstance(auth, AuthBase):
        return False
    return type(auth).__call__ not in (AbstractHeaderAuthenticator.__call__, AbstractOauth2Authenticator.__call__)


def response_or_exception(h, body):
    """The response Go got, or requests' exception of the kind Go names for a request that got none."""
    kind = h.get("exception")
    if kind is None:
        return response(h, body)
    import requests

    return getattr(requests.exceptions, kind, requests.exceptions.RequestException)(h.get("message", ""))


def response(h, body):
    import requests
    from requests.structures import CaseInsensitiveDict

    r = requests.Response()
    r.status_code = h.get("status", 200)
    r.headers = CaseInsensitiveDict(h.get("headers") or {})
    r._content = body
    r._content_consumed = True
    r.url = h.get("url", "")
    r.reason = http.client.responses.get(r.status_code, "")
    r.encoding = requests.utils.get_encoding_from_headers(r.headers)
    req = requests.PreparedRequest()
    req.method = h.get("method", "GET")
    req.url = r.url
    req.headers = CaseInsensitiveDict(h.get("request_headers") or {})
    req.body = h.get("request_body")
    r.request = req
    return r


def stream_slice(s):
    from airbyte_cdk.sources.types import StreamSlice

    if s is None:
        return None
    return StreamSlice(
        partition=s.get("partition") or {},
        cursor_slice=s.get("cursor_slice") or {},
        extra_fields=s.get("extra_fields") or {},
    )


OPS = {
    "extract": Host.extract,
    "transform": Host.transform,
    "filter": Host.filter,
    "normalize": Host.normalize,
    "migrate_state": Host.migrate_state,
    "authenticate": Host.authenticate,
    "authenticate_call": Host.authenticate_call,
    "pagination_start": Host.pagination_start,
    "decode": Host.decode,
    "partitions": Host.partitions,
    "error_handler_start": Host.error_handler_start,
    "interpret_response": Host.interpret_response,
    "backoff_time": Host.backoff_time,
    "next_page_token": Host.next_page_token,
    "schema": Host.schema,
    "config": Host.config,
    "build": Host.build,
    "catalog_stream": Host.catalog_stream,
    "dynamic_streams": Host.dynamic_streams,
    "test_read": Host.test_read,
    "check": Host.check,
}


LOG_HANDLER = None


def keep_log_handler():
    """The CDK's init_logger (run when some of its modules are imported) gives the root logger a handler
    printing to stdout; the host's logs go to Go over the channel instead, in order with the rest."""
    root = logging.getLogger()
    if root.handlers != [LOG_HANDLER]:
        root.handlers = [LOG_HANDLER]


def serve(host, h, blob):
    rid = h["id"]
    keep_log_handler()
    try:
        op = h["op"]
        if op == "read":
            result, out = host.read(h, blob, rid)
        else:
            result, out = OPS[op](host, h, blob)
        CHANNEL.send({"re": rid, "ok": result}, out)
    except BaseException as exc:  # noqa: BLE001 - every failure is the call's answer
        CHANNEL.send(
            {
                "re": rid,
                "error": {
                    "type": type(exc).__name__,
                    "last_line": last_line(exc),
                    "failure_type": failure_of(exc),
                    "message": getattr(exc, "message", None) or str(exc),
                },
            }
        )


def main():
    global CHANNEL
    CHANNEL = Channel()
    global LOG_HANDLER
    LOG_HANDLER = ChannelLogHandler()
    LOG_HANDLER.setFormatter(logging.Formatter("%(message)s"))
    root = logging.getLogger()
    root.handlers = [LOG_HANDLER]
    root.setLevel(logging.DEBUG if os.environ.get("LOG_LEVEL", "").lower() == "debug" else logging.INFO)
    try:
        import airbyte_cdk  # noqa: F401
        from importlib.metadata import version

        cdk = version("airbyte-cdk")
    except Exception as exc:  # noqa: BLE001
        CHANNEL.send({"hello": None, "error": last_line(exc)})
        return
    route_config_messages()
    CHANNEL.send({"hello": {"cdk": cdk, "python": sys.version.split()[0]}})
    host = Host()
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=int(os.environ.get("COMPONENTS_HOST_THREADS", "32")))
    while True:
        h, blob = CHANNEL.read()
        if h is None:
            break
        if "re_call" in h:
            CHANNEL.answered(h, blob)
        elif h.get("op") == "init":
            serve_init(host, h, blob)
        else:
            pool.submit(serve, host, h, blob)
    pool.shutdown(wait=False, cancel_futures=True)
    os._exit(0)


def serve_init(host, h, blob):
    # init runs on the reader's thread: nothing else is asked before it is done.
    try:
        result, out = host.init(h, blob)
        keep_log_handler()
        CHANNEL.send({"re": h["id"], "ok": result}, out)
    except BaseException as exc:  # noqa: BLE001
        CHANNEL.send(
            {
                "re": h["id"],
                "error": {
                    "type": type(exc).__name__,
                    "last_line": last_line(exc),
                    "failure_type": failure_of(exc),
                    "message": str(exc),
                },
            }
        )


if __name__ == "__main__":
    main()
