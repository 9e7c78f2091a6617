"""Runs commands of Airbyte's runtime (refcdk7), each in a child forked from
this process once the CDK's modules are imported: a command then starts as a
fresh process would (its own module state, caches and environment) without
the two seconds a Python process spends importing the CDK.

Reads one JSON request per line on stdin: {"kind": "command" | "test-read",
"args": [...], "env": {name: value}, "stdout": path, "stderr": path}; the
child runs with env added to the zygote's environment. A "command" runs as
`refcdk7 ARGS` does (refcdk7_run.handle_command); a "test-read" as the
builder's main.py runs one request (its handle_request, and its handling of a
failure), with a REQUEST_CACHE_PATH of its own. For each request it writes
"@@PID@@ <pid>" once the child runs, then "@@DONE@@ <exit code>".
"""

import json
import os
import shutil
import sys
import tempfile

import orjson
import refcdk7_run
from airbyte_cdk.cli.source_declarative_manifest import _run  # noqa: F401 - imported once, for the children
from airbyte_cdk.connector_builder.main import handle_request
from airbyte_cdk.models import AirbyteMessageSerializer
from airbyte_cdk.utils.traced_exception import AirbyteTracedException


def command(args):
    refcdk7_run.handle_command(args)


def test_read(args):
    cache = tempfile.mkdtemp(prefix="refcdk7-cache-")
    os.environ["REQUEST_CACHE_PATH"] = cache
    try:
        out = handle_request(args)
    except Exception as exc:  # noqa: BLE001 - as the builder's main does
        error = AirbyteTracedException.from_exception(exc, message=f"Error handling request: {str(exc)}")
        out = orjson.dumps(AirbyteMessageSerializer.dump(error.as_airbyte_message())).decode()
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    print(out)


def child(req):
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    for fd, path in ((1, req["stdout"]), (2, req["stderr"])):
        f = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(f, fd)
        os.close(f)
    os.environ.update(req.get("env") or {})
    code = 0
    try:
        {"command": command, "test-read": test_read}[req["kind"]](req["args"])
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:  # noqa: BLE001 - as an uncaught exception ends python
        # Python hands an uncaught exception to sys.excepthook, which the
        # entrypoint replaced by its handler: a TRACE on stdout.
        sys.excepthook(*sys.exc_info())
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def main():
    for line in sys.stdin:
        req = json.loads(line)
        sys.stdout.flush()
        pid = os.fork()
        if pid == 0:
            child(req)
        print(f"@@PID@@ {pid}", flush=True)
        _, status = os.waitpid(pid, 0)
        print(f"@@DONE@@ {os.waitstatus_to_exitcode(status)}", flush=True)


if __name__ == "__main__":
    main()
