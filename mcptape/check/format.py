"""The format check: every line is JSON; line 1 is a header of a format this mcptape reads;
each line is valid against the shipped JSON Schema (with `jsonschema`, when installed; the
usual event line is told valid by the readers' fast path, `mcptape.cassette.plain`, without it);
and the `Event` each event line holds, for the checks that read events."""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from mcptape.cassette import metadata_ok
from mcptape.cassette.migrate import check_version
from mcptape.cassette.model import HEADER_MARKER, Event
from mcptape.cassette.plain import plain_event
from mcptape.errors import CassetteVersionError
from mcptape.extras import missing_extra_message

from .report import Report, short

__all__ = [
    "LineSource",
    "bytes_lines",
    "event",
    "file_lines",
    "header_problem",
    "not_json",
    "plain",
    "schema",
    "schema_validators",
]

LineSource = Callable[[], Iterable[bytes]]
"""A fresh iteration over a cassette's lines (each with its newline, but a truncated last one):
`check_lines` reads them twice, once to check each line and pair skeletons of the messages,
once more for the lines whose messages the protocol check validates."""


def bytes_lines(data: bytes) -> LineSource:
    """The lines of a cassette's bytes in memory."""
    return lambda: io.BytesIO(data)


def file_lines(path: str | os.PathLike[str]) -> LineSource:
    """The lines of a cassette file, read one at a time each time (OSError when it cannot be
    read)."""

    def lines() -> Iterator[bytes]:
        with open(path, "rb") as f:
            yield from f

    return lines


def not_json(lineno: int, raw: bytes, report: Report) -> None:
    """What a line that is not JSON (`mcptape.cassette.NOT_JSON`) is: on line 1, not a
    cassette; without its newline (the last line), a truncated line (a warning); else a
    corrupt line."""
    if lineno == 1:
        report.add(1, "format", "not an mcptape cassette (line 1 is not JSON)")
    elif not raw.endswith(b"\n"):
        report.warn(lineno, "format", "last line is truncated (the recorder was stopped mid-write)")
    else:
        report.add(lineno, "format", "corrupt line (not JSON)")


def header_problem(obj: Any) -> str | None:
    """Why line 1 is not a header this mcptape reads (None: it is one)."""
    if not isinstance(obj, dict) or HEADER_MARKER not in obj:
        return f"not an mcptape cassette (no {HEADER_MARKER!r} header on line 1)"
    try:
        check_version(obj, "line 1")
    except CassetteVersionError as exc:
        return str(exc).removeprefix("line 1: ")
    return None


def schema_validators(report: Report) -> dict[str, Any] | None:
    """The JSON Schema validators of a header and of an event line; None (and a warning in
    `report`) when jsonschema is not installed."""
    try:
        import jsonschema
    except ImportError:
        report.warn(
            0, "format", "JSON Schema not checked: " + missing_extra_message("check", "that check")
        )
        return None
    from mcptape.schema import cassette_schema

    schema = cassette_schema()
    # an integer is one written as one (`1`, not `1.0`, which JSON Schema counts as an integer):
    # what mcptape writes, and what the readers take
    base = jsonschema.Draft202012Validator
    strict = jsonschema.validators.extend(
        base, type_checker=base.TYPE_CHECKER.redefine("integer", lambda _, v: type(v) is int)
    )
    return {
        part: strict({"$defs": schema["$defs"], "$ref": f"#/$defs/{part}"})
        for part in ("header", "event")
    }


def plain(lineno: int, obj: Any) -> Event | None:
    """The event of an event line the readers' fast path vouches for (certainly valid against
    the schema: it needs no validator), else None."""
    return plain_event(obj) if lineno > 1 and type(obj) is dict else None


def schema(validators: dict[str, Any], lineno: int, obj: Any, report: Report) -> None:
    """Validates one line against the cassette schema (the caller skips the lines `plain`
    vouches for)."""
    import jsonschema

    error = jsonschema.exceptions.best_match(
        validators["header" if lineno == 1 else "event"].iter_errors(obj)
    )
    if error is not None:
        where = error.json_path.removeprefix("$").lstrip(".") or "the line"
        report.add(
            lineno,
            "format",
            f"not valid against the cassette schema: {where}: {short(error.message)}",
        )


def event(obj: Any) -> Event | None:
    """The event an event line holds; None when it holds none (`schema` names what is wrong)."""
    try:
        if isinstance(obj, dict) and metadata_ok(obj):
            return Event.from_json(obj)
    except (KeyError, ValueError, TypeError):
        pass
    return None
