"""A cassette read one line at a time (`stream`): memory holds one line, whatever its size.

For the commands that rewrite or check a whole file (`fmt`, `prune`, `check`). Public names are
imported from `mcptape.cassette`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from mcptape.cassette.codec import NOT_JSON, event_line, read_lines
from mcptape.cassette.format import (
    _corrupt,
    _event,
    _header,
    load,
    truncated_warning,
    unreadable_error,
)
from mcptape.cassette.model import FORMAT_VERSION, HEADER_MARKER, Event
from mcptape.cassette.shape import header_problem
from mcptape.errors import CassetteError


class EventLine(NamedTuple):
    """One event as `stream` reads it: where it is in the file, its bytes, and what they hold."""

    lineno: int
    offset: int
    """Where the line starts in the file (bytes)."""
    raw: bytes
    """The line as in the file, its newline included (none on a last line without one)."""
    obj: dict[str, Any]
    event: Event


@dataclass(slots=True)
class CassetteStream:
    """A cassette read one line at a time (`stream`): its header now, its events as iterated.

    Iterating `events` validates each line as `load` does and raises `CassetteError` with the
    file and line at the first bad one; a truncated last line is an error too (the commands
    that stream rewrite or check the whole file, and would lose it). Nothing is kept: memory
    stays that of one line, whatever the cassette's size.
    """

    name: str
    path: Path
    size: int
    head: dict[str, Any]
    head_raw: bytes
    """Line 1 as in the file, its newline included."""
    events: Iterator[EventLine]
    warnings: list[str] = field(default_factory=list)
    """With `tolerate_truncated`: the warning about a truncated last line, once the events are read."""


def stream(
    path: str | os.PathLike[str], action: str = "rewriting", tolerate_truncated: bool = False
) -> CassetteStream:
    """Opens a cassette to read it line by line; `action` names, in the error about a truncated
    last line, what it would be lost to ("rewriting would drop it"). With `tolerate_truncated`,
    that line is dropped with a warning instead (in `warnings`), as `load` does.

    Raises:
        CassetteError: as `load` does, for the header now and for each event line as it is read.
        CassetteVersionError: the file was written by a newer mcptape.
    """
    p = Path(path)
    name = str(p)
    try:
        f = open(p, "rb")  # noqa: SIM115 (closed by the events' generator)
    except OSError as exc:
        raise unreadable_error(p, exc) from None
    try:
        size = os.fstat(f.fileno()).st_size
        first = f.readline()
        if not first.strip() and not any(ln.strip() for ln in f):
            raise CassetteError(
                f"{name}: empty file, not an mcptape cassette (record one with `mcptape record`)"
            )
        head = _header(first, name)
    except OSError as exc:
        f.close()
        raise CassetteError(f"{p}: cannot read: {exc.strerror}") from None
    except BaseException:
        f.close()
        raise
    if head[HEADER_MARKER] != FORMAT_VERSION:  # an older format: migrate it whole, in memory
        f.close()
        return CassetteStream(name, p, size, head, first, _migrated(p, action))
    problem = header_problem(head)  # before any event is read or written
    if problem is not None:
        f.close()
        raise CassetteError(f"{name}:1: malformed header: {problem}")
    out = CassetteStream(name, p, size, head, first, iter(()))
    out.events = _stream_events(f, first, head, name, action, out.warnings, tolerate_truncated)
    return out


def _migrated(path: Path, action: str) -> Iterator[EventLine]:
    cas = load(path)
    if cas.truncated is not None:
        raise CassetteError(
            f"{cas.truncated}: {action} would drop it; fix or delete that line first"
        )
    for event in cas.events:
        raw = event_line(event)
        yield EventLine(cas.line_of(event.seq), -1, raw, event.to_json(), event)


def _stream_events(
    f: Any,
    first: bytes,
    head: dict[str, Any],
    name: str,
    action: str,
    warnings: list[str],
    tolerate_truncated: bool,
) -> Iterator[EventLine]:
    count = 0
    with f:
        try:
            for lineno, start, raw, obj in read_lines(f, 2, len(first)):
                if obj is NOT_JSON:
                    if not raw.endswith(b"\n"):
                        truncated = truncated_warning(name, lineno, count)
                        if tolerate_truncated:
                            warnings.append(truncated)
                            break
                        raise CassetteError(
                            f"{truncated}: {action} would drop it; fix or delete that line first"
                        )
                    raise _corrupt(name, lineno)
                event = _event(obj, name, lineno)
                count += 1
                yield EventLine(lineno, start, raw, obj, event)
        except OSError as exc:
            raise CassetteError(f"{name}: cannot read: {exc.strerror}") from None
