"""Runs several Connector Builder requests in one process of the reference,
each as airbyte_cdk/connector_builder/main.py runs one (its handle_request,
and its handling of a failure), to save the reference's start-up per test
read. Each request gets its own REQUEST_CACHE_PATH, so that a parent cached
by one test read is not served to the next (a process of its own would
start with an empty in-memory cache).

Reads one JSON list of arguments per line on stdin; writes each answer on a
line starting with @@ANSWER@@.
"""

import json
import os
import shutil
import sys
import tempfile

import orjson

from airbyte_cdk.connector_builder.main import handle_request
from airbyte_cdk.models import AirbyteMessageSerializer
from airbyte_cdk.utils.traced_exception import AirbyteTracedException


def main():
    for line in sys.stdin:
        args = json.loads(line)
        cache = tempfile.mkdtemp(prefix="refcdk7-cache-")
        os.environ["REQUEST_CACHE_PATH"] = cache
        try:
            out = handle_request(args)
        except Exception as exc:  # noqa: BLE001 - as the builder's main does
            error = AirbyteTracedException.from_exception(exc, message=f"Error handling request: {str(exc)}")
            out = orjson.dumps(AirbyteMessageSerializer.dump(error.as_airbyte_message())).decode()
        finally:
            shutil.rmtree(cache, ignore_errors=True)
        print("@@ANSWER@@" + out, flush=True)


if __name__ == "__main__":
    main()
