"""Cassette format migrations: a table of converters, one per format version.

`CONVERTERS[n]` turns a format-`n` header and event dicts into format `n + 1`. Reading an
older cassette walks the table up to `FORMAT_VERSION`; a newer one is refused with
"upgrade mcptape". Format 1 is the first, so the table is empty.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcptape.cassette.model import FORMAT_VERSION, HEADER_MARKER
from mcptape.errors import CassetteVersionError

Converter = Callable[
    [dict[str, Any], list[dict[str, Any]]], tuple[dict[str, Any], list[dict[str, Any]]]
]

CONVERTERS: dict[int, Converter] = {}
"""format version -> converter to the next version."""


def check_version(header: dict[str, Any], where: str) -> int:
    """The header's format version; raises when it is newer than this mcptape or malformed."""
    version = header.get(HEADER_MARKER)
    if not isinstance(version, int) or version < 1:
        raise CassetteVersionError(f"{where}: bad format version {version!r} in the header")
    if version > FORMAT_VERSION:
        raise CassetteVersionError(
            f"{where}: written in cassette format {version}, but this mcptape reads formats up to "
            f"{FORMAT_VERSION}: upgrade mcptape (pull your checkout, then pip install -U .)"
        )
    return version


def migrate(
    header: dict[str, Any], events: list[dict[str, Any]]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Brings an older cassette up to `FORMAT_VERSION`."""
    version = header[HEADER_MARKER]
    while version < FORMAT_VERSION:
        header, events = CONVERTERS[version](header, events)
        version += 1
        header[HEADER_MARKER] = version
    return header, events
