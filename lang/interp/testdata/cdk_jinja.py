"""The reference for TestDifferential: Jinja2 set up as Airbyte's declarative
CDK sets it up (airbyte_cdk/sources/declarative/interpolation/jinja.py,
macros.py, filters.py, interpolated_boolean.py), re-implemented here from the
reference's behaviour, with the clock frozen.

Reads {"now": ISO datetime, "context": {...}, "cases": [template, ...]} on
stdin and writes one result per case on stdout: for each of the modes eval,
body, render, param and bool either {"t": type, "v": value} or {"err": class, "msg": text},
or {"fallback": "TypeError", "msg": text, "v": result} when a rendering fell back to
the template's own text on a TypeError.
"""

import ast
import base64
import builtins
import datetime
import functools
import hashlib
import hmac as hmac_lib
import json
import re
import sys
import uuid
from collections.abc import Mapping
from urllib.parse import quote_plus

import isodate
import pytz
from dateutil import parser as dateutil_parser
from jinja2 import meta
from jinja2.exceptions import UndefinedError
from jinja2.sandbox import SandboxedEnvironment

NOW = None


# Macros (macros.py).
def now_utc():
    return NOW


def today_utc():
    return NOW.date()


def today_with_timezone(timezone):
    return NOW.astimezone(pytz.timezone(timezone)).date()


def timestamp(dt):
    if isinstance(dt, (int, float)):
        return int(dt)
    return str_to_datetime(dt).astimezone(pytz.utc).timestamp()


def str_to_datetime(s):
    parsed = dateutil_parser.isoparse(s)
    if not parsed.tzinfo:
        parsed = parsed.replace(tzinfo=pytz.utc)
    return parsed.astimezone(pytz.utc)


def max(*args):
    return builtins.max(*args)


def min(*args):
    return builtins.min(*args)


def day_delta(num_days, format="%Y-%m-%dT%H:%M:%S.%f%z"):
    return (NOW + datetime.timedelta(days=num_days)).strftime(format)


def duration(datestring):
    return isodate.parse_duration(datestring)


def _parse(date, format):
    """DatetimeParser.parse."""
    utc = datetime.timezone.utc
    if format == "%s":
        return datetime.datetime.fromtimestamp(int(date), tz=utc)
    if format == "%s_as_float":
        return datetime.datetime.fromtimestamp(float(date), tz=utc)
    if format == "%epoch_microseconds":
        return datetime.datetime(1970, 1, 1, tzinfo=utc) + datetime.timedelta(microseconds=int(date))
    if format == "%ms":
        return datetime.datetime(1970, 1, 1, tzinfo=utc) + datetime.timedelta(milliseconds=int(date))
    if "%_ms" in format:
        format = format.replace("%_ms", "%f")
    parsed = datetime.datetime.strptime(str(date), format)
    if parsed.tzinfo is None or parsed.tzinfo.utcoffset(parsed) is None:
        return parsed.replace(tzinfo=utc)
    return parsed


def _format(dt, format):
    """DatetimeParser.format."""
    if format == "%s":
        return str(int(dt.timestamp()))
    if format == "%s_as_float":
        return str(float(dt.timestamp()))
    if format == "%epoch_microseconds":
        return str(int(dt.timestamp() * 1_000_000))
    if format == "%ms":
        return str(int(dt.timestamp() * 1000))
    if "%_ms" in format:
        _format = format.replace("%_ms", "%f")
        milliseconds = int(dt.microsecond / 1000)
        return dt.strftime(_format).replace(dt.strftime("%f"), "%03d" % milliseconds)
    return dt.strftime(format)


def format_datetime(dt, format, input_format=None):
    if isinstance(dt, datetime.datetime):
        return dt.strftime(format)
    if isinstance(dt, int):
        dt_datetime = _parse(dt, input_format if input_format else "%s")
    else:
        dt_datetime = datetime.datetime.strptime(dt, input_format) if input_format else str_to_datetime(dt)
    if dt_datetime.tzinfo is None:
        dt_datetime = dt_datetime.replace(tzinfo=pytz.utc)
    return _format(dt_datetime, format)


def sanitize_url(value):
    return quote_plus(value)


def camel_case_to_snake_case(value):
    return re.sub(r"(?<!^)(?=[A-Z])", "_", value).lower()


def generate_uuid():
    return str(uuid.uuid4())


MACROS = {f.__name__: f for f in [now_utc, today_utc, timestamp, max, min, day_delta, duration, format_datetime,
                                  today_with_timezone, str_to_datetime, sanitize_url, camel_case_to_snake_case,
                                  generate_uuid]}


# Filters (filters.py).
def hash(value, hash_type="md5", salt=None):
    hash_func = getattr(hashlib, hash_type, None)
    if not hash_func:
        raise AttributeError(f"No hashing function named {hash_type}")
    hash_obj = hash_func()
    hash_obj.update(str(value).encode("utf-8"))
    if salt:
        hash_obj.update(str(salt).encode("utf-8"))
    return hash_obj.hexdigest()


def base64encode(value):
    return base64.b64encode(value.encode("utf-8")).decode()


def base64decode(value):
    return base64.b64decode(value.encode("utf-8")).decode()


def base64binascii_decode(value):
    return base64.standard_b64encode(value.encode("ascii")).decode("ascii")


def string(value):
    if isinstance(value, str):
        return value
    return f'"""{json.dumps(value)}"""'


def regex_search(value, regex):
    match = re.search(regex, value)
    if match and len(match.groups()) > 0:
        return match.group(1)
    return ""


def regex_replace(value, regex, replacement):
    return re.sub(regex, replacement, value)


def hmac(value, key, hash_type="sha256"):
    if hash_type != "sha256":
        raise ValueError(f"Hash type '{hash_type}' is not allowed. Allowed types: sha256")
    return hmac_lib.new(key=str(key).encode("utf-8"), msg=str(value).encode("utf-8"), digestmod=hashlib.sha256).hexdigest()


FILTERS = {f.__name__: f for f in [hash, base64encode, base64decode, base64binascii_decode, string, regex_search,
                                   regex_replace, hmac]}


# The template variables' objects (airbyte_cdk/sources/types.py): the slice
# is a StreamSlice, the paginator's last_record a Record.
class Record(Mapping):
    def __init__(self, data, stream_name):
        self._data = data
        self.stream_name = stream_name

    @property
    def data(self):
        return self._data

    def __repr__(self):
        return repr(self._data)

    def __getitem__(self, key):
        return self._data[key]

    def __len__(self):
        return len(self._data)

    def __iter__(self):
        return iter(self._data)

    def __contains__(self, item):
        return item in self._data


class StreamSlice(Mapping):
    def __init__(self, *, partition, cursor_slice, extra_fields=None):
        self._partition = partition
        self._cursor_slice = cursor_slice
        self._extra_fields = extra_fields or {}
        self._stream_slice = dict(partition) | dict(cursor_slice)

    @property
    def partition(self):
        return self._partition

    @property
    def cursor_slice(self):
        return self._cursor_slice

    @property
    def extra_fields(self):
        return self._extra_fields

    def __repr__(self):
        return repr(self._stream_slice)

    def __getitem__(self, key):
        return self._stream_slice[key]

    def __len__(self):
        return len(self._stream_slice)

    def __iter__(self):
        return iter(self._stream_slice)

    def __contains__(self, item):
        return item in self._stream_slice

    def keys(self):
        return self._stream_slice.keys()

    def items(self):
        return self._stream_slice.items()

    def values(self):
        return self._stream_slice.values()

    def get(self, key, default=None):
        return self._stream_slice.get(key, default)

    def __bool__(self):
        return bool(self._stream_slice) or bool(self._extra_fields)


class StreamPartitionAccessEnvironment(SandboxedEnvironment):
    """jinja.py's environment: StreamSlice._partition may be read."""

    def is_safe_attribute(self, obj, attr, value):
        if attr in ["_partition"]:
            return True
        return super().is_safe_attribute(obj, attr, value)


def with_objects(context):
    """The context with the slice and the last record as the CDK passes them
    (context.json writes the slice as its partition, cursor_slice and
    extra_fields)."""
    parts = context["stream_slice"]
    context["stream_slice"] = StreamSlice(partition=parts["partition"], cursor_slice=parts["cursor_slice"],
                                          extra_fields=parts["extra_fields"])
    context["stream_interval"] = context["stream_partition"] = context["stream_slice"]
    context["last_record"] = Record(context["last_record"], "stream")
    return context


def environment(finalize=None):
    env = StreamPartitionAccessEnvironment(finalize=finalize)
    env.filters.update(**FILTERS)
    env.globals.update(**MACROS)
    env.globals.pop("range", None)
    return env


ENV = environment()
# Our Render: Jinja's text, except that a None written by {{ }} is empty and
# booleans are true/false (README, "Behaviour worth knowing").
ENV_TEXT = environment(finalize=lambda v: "" if v is None else ("true" if v is True else "false" if v is False else v))


# The evaluation algorithm (jinja.py, JinjaInterpolation.eval).
def literal_eval(result, valid_types=None):
    try:
        evaluated = ast.literal_eval(result)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return result
    if (not valid_types and not isinstance(evaluated, complex)) or (valid_types and isinstance(evaluated, valid_types)):
        return evaluated
    return result


@functools.lru_cache(maxsize=None)
def undeclared_variables(env, s):
    return meta.find_undeclared_variables(env.parse(s))


@functools.lru_cache(maxsize=None)
def compiled(env, s):
    return env.from_string(s)


# Set when a rendering fell back to the template's own text on a TypeError,
# as the CDK does; the Go engine fails there instead (allowed.yaml).
FELL_BACK = []


def render(env, s, context):
    try:
        missing = {v for v in undeclared_variables(env, s) if v not in context}
        if missing:
            raise ValueError(f"Jinja macro has undeclared variables: {missing}")
        return compiled(env, s).render(context)
    except TypeError as e:
        FELL_BACK.append(str(e))
        return s


def check_stream_state(s):
    if "stream_state" in s:
        raise RuntimeError("stream_state is not supported")


def cdk_eval(s, context, default=None):
    """JinjaInterpolation.eval."""
    check_stream_state(s)
    try:
        result = render(ENV, s, context)
        if result:
            return literal_eval(result)
    except UndefinedError:
        pass
    if default is None:
        return None
    return literal_eval(render(ENV, default, context))


def mode_eval(s, context):
    """InterpolatedString.eval: its default, the template itself, renders
    the same empty text again or raises the same UndefinedError."""
    check_stream_state(s)
    result = render(ENV, s, context)
    return literal_eval(result)


def mode_body(s, context):
    """A JSON body field: InterpolatedNestedMapping's JinjaInterpolation.eval, default None."""
    return cdk_eval(s, context)


def mode_render(s, context):
    check_stream_state(s)
    return render(ENV_TEXT, s, context)


def sent_values(values):
    """The texts requests sends for a list parameter (RequestEncodingMixin._encode_params:
    None items left out; then urlencode(doseq=True): an item with a length, other than a
    string, sends each of its elements' str()). Checked against the reference's requests."""
    out = []
    for v in values:
        if v is None:
            continue
        if isinstance(v, str):
            out.append(v)
            continue
        try:
            len(v)
        except TypeError:
            out.append(str(v))
            continue
        out.extend(str(e) for e in v)
    return out


def mode_param(s, context):
    """A request parameter: InterpolatedMapping with valid types (str, list), on our text;
    a list as the values requests sends for it."""
    check_stream_state(s)
    try:
        text = render(ENV_TEXT, s, context)
    except UndefinedError:
        return None
    if text == "":
        return None
    v = literal_eval(text, (str, list))
    if isinstance(v, list):
        return sent_values(v)
    return v


FALSE_VALUES = ["False", "false", "{}", "[]", "()", "", "0", "0.0", {}, False, [], (), set()]


def mode_bool(s, context):
    """InterpolatedBoolean.eval."""
    evaluated = cdk_eval(s, context, default="False")
    return evaluated not in FALSE_VALUES


def json_key(k):
    try:
        return next(iter(json.loads(json.dumps({k: 0}))))
    except TypeError:
        return str(k)


def encode(v):
    if v is None:
        return {"t": "NoneType"}
    if isinstance(v, bool):
        return {"t": "bool", "v": v}
    if isinstance(v, int):
        return {"t": "int", "v": str(v)}
    if isinstance(v, float):
        return {"t": "float", "v": repr(v)}
    if isinstance(v, str):
        return {"t": "str", "v": v}
    if isinstance(v, (list, tuple)):
        return {"t": "list", "v": [encode(e) for e in v]}
    if isinstance(v, dict):  # keys as json.dumps writes them, as a JSON body carries them
        return {"t": "dict", "v": {json_key(k): encode(e) for k, e in v.items()}}
    return {"t": type(v).__name__, "v": repr(v)}


def main():
    global NOW
    data = json.load(sys.stdin)
    NOW = datetime.datetime.fromisoformat(data["now"])
    context = data["context"]
    out = []
    for s in data["cases"]:
        res = {}
        for name, mode in (("eval", mode_eval), ("body", mode_body), ("render", mode_render), ("param", mode_param),
                           ("bool", mode_bool)):
            ctx = with_objects(json.loads(json.dumps(context)))  # templates may change what they are given
            FELL_BACK.clear()
            try:
                res[name] = encode(mode(s, ctx))
            except Exception as e:  # every failure is compared as a failure
                name_ = "undefined" if isinstance(e, UndefinedError) else type(e).__name__
                res[name] = {"err": name_, "msg": str(e)[:200]}
            if FELL_BACK:
                res[name] = {"fallback": "TypeError", "msg": FELL_BACK[0][:200], "v": res[name]}
        out.append(res)
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
