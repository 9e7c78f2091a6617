"""Custom components of the example connector (manifest.yaml beside it), on the
interfaces of Airbyte's declarative CDK, as a connector's components.py writes
them. They run in the CDK, in the components host beside the Go runtime."""

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

import requests
from airbyte_cdk.sources.declarative.extractors.record_extractor import RecordExtractor
from airbyte_cdk.sources.declarative.transformations.transformation import RecordTransformation


@dataclass
class DataExtractor(RecordExtractor):
    """The records are the items of the answer's "data" list."""

    def extract_records(self, response: requests.Response) -> Iterable[Mapping[str, Any]]:
        yield from response.json().get("data", [])


@dataclass
class DisplayName(RecordTransformation):
    """Adds display_name: the name, then the e-mail address in angle brackets."""

    def transform(self, record, config=None, stream_state=None, stream_slice=None):
        record["display_name"] = f"{record['name']} <{record['email']}>"
