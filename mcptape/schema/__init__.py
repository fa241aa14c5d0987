"""The JSON Schema of the cassette format, shipped with the package: the source of truth for what
a cassette line may hold. The model's enums and the one validator that follows it (the readers'
`mcptape.cassette.shape`, with its fast path `mcptape.cassette.plain`) are held to it
(`tests/test_cassette_codec.py`, `tests/test_one_validator.py`); `mcptape.cassette.codec` writes
the lines."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any


def cassette_schema() -> dict[str, Any]:
    """The JSON Schema one cassette line validates against (format 1)."""
    return json.loads(resources.files(__package__).joinpath("cassette-v1.schema.json").read_text())  # type: ignore[no-any-return]
