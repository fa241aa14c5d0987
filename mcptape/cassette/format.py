"""Cassettes as bytes: the `Cassette` value, reading a file whole, and writing one whole.

JSON Lines, a header line then one event per line, in wire order (docs/cassette-format.md); each
line is encoded and decoded by `mcptape.cassette.codec`. Reading tolerates (and reports) a
truncated last line: a recorder killed mid-write leaves one. Public names are imported from
`mcptape.cassette`.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mcptape._version import __version__
from mcptape.cassette.codec import (
    NOT_JSON,
    DecodeError,
    Line,
    decode_line,
    event_line,
    header_line,
    read_lines,
)
from mcptape.cassette.migrate import check_version, migrate
from mcptape.cassette.model import FORMAT_VERSION, HEADER_MARKER, Event, Header, Kind, Transport
from mcptape.cassette.shape import _event_problem, event_problem, header_problem, plain_event
from mcptape.errors import CassetteError, CassetteNotFoundError


@dataclass(slots=True)
class Cassette:
    """A cassette read into memory: its header, its events, and what the reader noticed."""

    header: Header
    events: list[Event]
    path: Path | None = None
    warnings: list[str] = field(default_factory=list)
    truncated: str | None = None
    """The warning about a truncated last line, which reading dropped (None: there was none)."""
    lines: dict[int, int] = field(default_factory=dict)
    """The file line of an event read, by its `seq` (the first event with that seq), where it is
    not `seq + 1` (`line_of`)."""
    answerer: Any = field(default=None, kw_only=True)
    """Declarations served before the recording (`mcptape.mocks`: a mock file read in its place,
    `ReplayConfig.answerer`); None for a plain cassette."""

    @property
    def name(self) -> str:
        return str(self.path) if self.path else "<memory>"

    def line_of(self, seq: int) -> int:
        """The file line of the event numbered `seq`, as `check` and every message cite it (the
        header is line 1). A cassette made in memory has no file: its events would be written
        one a line after the header, so line `seq + 1`."""
        return self.lines.get(seq, seq + 1)


def new_header(transport: Transport, target: dict[str, Any], redaction: dict[str, Any]) -> Header:
    """A header for a recording that starts now, `target` as given: a recorder redacts it
    first (`mcptape.capture.recorder.recording_header`)."""
    now = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return Header(
        transport=transport,
        target=target,
        recorded_at=now,
        mcptape_version=__version__,
        redaction=redaction,
    )


def load(path: str | os.PathLike[str]) -> Cassette:
    """Reads a cassette file.

    Raises:
        CassetteError: the file is missing, empty, not a cassette, or has a corrupt line
            (the message names the file and line).
        CassetteVersionError: the file was written by a newer mcptape.
    """
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise unreadable_error(p, exc) from None
    return loads(data, name=str(p), path=p)


def unreadable_error(p: Path, exc: OSError) -> CassetteError:
    """The one-line error for a cassette file that cannot be opened or read."""
    if isinstance(exc, FileNotFoundError):
        return CassetteNotFoundError(f"{p}: no such cassette")
    if isinstance(exc, IsADirectoryError):
        return CassetteError(f"{p}: is a directory, not a cassette")
    return CassetteError(f"{p}: cannot read: {exc.strerror}")


def _header(line: bytes, name: str) -> dict[str, Any]:
    """Line 1 of a cassette, checked: JSON, the header marker, a format this mcptape reads."""
    try:
        head = decode_line(line)
    except DecodeError:
        raise CassetteError(f"{name}:1: not an mcptape cassette (line 1 is not JSON)") from None
    if not isinstance(head, dict) or HEADER_MARKER not in head:
        raise CassetteError(
            f"{name}:1: not an mcptape cassette (no {HEADER_MARKER!r} header on line 1)"
        )
    check_version(head, f"{name}:1")
    return head


def loads(data: bytes, name: str = "<memory>", path: Path | None = None) -> Cassette:
    """Parses cassette bytes; see `load`."""
    lines = io.BytesIO(data)
    first = lines.readline()
    if not data or data.isspace():
        raise CassetteError(
            f"{name}: empty file, not an mcptape cassette (record one with `mcptape record`)"
        )
    warnings: list[str] = []
    head = _header(first, name)
    return _parse_events(read_lines(lines, 2, len(first)), head, name, path, warnings)


def _parse_events(
    lines: Iterator[Line],
    head: dict[str, Any],
    name: str,
    path: Path | None,
    warnings: list[str],
) -> Cassette:
    current = type(version := head.get(HEADER_MARKER)) is int and version == FORMAT_VERSION
    raw: list[dict[str, Any]] = []
    events: list[Event] = []
    linenos: list[int] = []
    truncated: str | None = None
    for lineno, _, line, obj in lines:
        if obj is NOT_JSON:
            if not line.endswith(b"\n"):  # the last line: a recorder stopped mid-write
                truncated = truncated_warning(name, lineno, len(linenos))
                warnings.append(truncated)
                break
            raise _corrupt(name, lineno)
        if current:  # built as read; an older format is migrated first, as dicts
            events.append(_event(obj, name, lineno))
        else:
            raw.append(_checked(obj, name, lineno))
        linenos.append(lineno)
    problem = header_problem(head)
    if problem is not None:
        raise CassetteError(f"{name}:1: malformed header: {problem}")
    if not current:
        head, raw = migrate(head, raw)
        if len(linenos) != len(raw):  # a migration added or dropped events: number them by seq
            linenos = [int(obj.get("seq", 0)) + 1 for obj in raw]
        events = [_built(obj, name, lineno) for lineno, obj in zip(linenos, raw, strict=True)]
    header = Header.from_json(head)
    warnings.extend(cut_short(name, events))
    return Cassette(header, events, path, warnings, truncated, lines_apart(linenos, events))


def _event(obj: Any, name: str, lineno: int) -> Event:
    """A parsed event line's `Event`, checked as every reader checks it (`load` and `stream`
    alike): the fast path of `shape.plain_event`, else the full checks."""
    event = plain_event(obj) if type(obj) is dict else None
    return event if event is not None else _full_event(obj, name, lineno)


def _full_event(obj: Any, name: str, lineno: int) -> Event:
    """`_event` of a line its fast path said no to: the full checks alone, then the `Event`."""
    return _built(_checked(obj, name, lineno, _event_problem), name, lineno)


def _built(obj: dict[str, Any], name: str, lineno: int) -> Event:
    try:
        return Event.from_json(obj)
    except (KeyError, ValueError, TypeError) as exc:  # what `event_problem` does not know
        raise _malformed(name, lineno, str(exc)) from None


def _checked(
    obj: Any,
    name: str,
    lineno: int,
    problem_of: Callable[[dict[str, Any]], str | None] = event_problem,
) -> dict[str, Any]:
    """A parsed event line, checked as every reader checks it (`load` and `stream` alike);
    `problem_of`: the checks (the full ones alone, where the fast path already said no)."""
    if not isinstance(obj, dict) or "kind" not in obj or "seq" not in obj:
        raise CassetteError(f"{name}:{lineno}: not a cassette event (needs 'seq' and 'kind')")
    problem = problem_of(obj)
    if problem is not None:
        raise _malformed(name, lineno, problem)
    return obj


def _malformed(name: str, lineno: int, problem: str) -> CassetteError:
    return CassetteError(f"{name}:{lineno}: malformed event: {problem}; fix or delete that line")


def _corrupt(name: str, lineno: int) -> CassetteError:
    return CassetteError(f"{name}:{lineno}: corrupt line (not JSON); fix or delete that line")


def truncated_warning(name: str, lineno: int, read: int) -> str:
    """The warning (or, for a rewrite, the start of the error) about a truncated last line."""
    return (
        f"{name}:{lineno}: last line is truncated (the recorder was stopped mid-write); "
        f"read {read} events before it"
    )


def lines_apart(linenos: list[int], events: list[Event]) -> dict[int, int]:
    """`Cassette.lines`: the file line of each seq that is not on line `seq + 1`, where a cassette
    written in one go has every event (a dict of every line cost memory for nothing)."""
    apart: dict[int, int] = {}
    top = 0
    for lineno, event in zip(linenos, events, strict=True):
        if event.seq <= top:  # seqs out of order or repeated: every first line of a seq, then
            apart = {}
            for n, ev in zip(linenos, events, strict=True):
                apart.setdefault(ev.seq, n)
            return apart
        top = event.seq
        if lineno != top + 1:
            apart[top] = lineno
    return apart


def cut_short(name: str, events: list[Event]) -> list[str]:
    """The warning for a recording without its end marker (none when it has one)."""
    return cut_short_after(name, len(events), events[-1].kind if events else None)


def cut_short_after(name: str, count: int, last: Kind | None) -> list[str]:
    """`cut_short` of `count` events, the last of kind `last` (None: no events)."""
    if last == "end":
        return []
    return [
        f"{name}: the recording was cut short (no end marker; the recorder was killed?); "
        f"it holds {count} events"
    ]


def metadata_ok(obj: dict[str, Any]) -> bool:
    """`http` and `info` are objects, and the HTTP hints readers use as keys have their types."""
    http, info = obj.get("http"), obj.get("info")
    if not isinstance(info, (dict, type(None))) or not isinstance(http, (dict, type(None))):
        return False
    if http is None:
        return True
    exchange, session = http.get("exchange"), http.get("session")
    return (
        exchange is None or (isinstance(exchange, int) and not isinstance(exchange, bool))
    ) and isinstance(session, (str, type(None)))


dumps_event = event_line
"""One event as its cassette line, newline included (`codec.event_line`, by the name callers
of `mcptape.cassette` know)."""


def dumps(cassette: Cassette) -> bytes:
    """A whole cassette as bytes."""
    parts = [header_line(cassette.header)]
    parts.extend(map(event_line, cassette.events))
    return b"".join(parts)
