"""Cassettes on disk: JSON Lines, a header line then one event per line, in wire order.

The only module that reads or writes cassette files. Writing appends and flushes one
complete line per event with a single `write()`, so a recorder killed at any moment leaves
a cassette that reads back up to its last complete line; reading tolerates (and reports)
a truncated last line. See docs/cassette-format.md.
"""

from __future__ import annotations

import os
import stat
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

import orjson

from mcptape import __version__
from mcptape._perf import paused_gc
from mcptape.errors import CassetteError, CassetteNotFoundError
from mcptape.migrate import check_version, migrate
from mcptape.model import HEADER_MARKER, Event, Header, Transport


@dataclass(slots=True)
class Cassette:
    """A cassette read into memory: its header, its events, and what the reader noticed."""

    header: Header
    events: list[Event]
    path: Path | None = None
    warnings: list[str] = field(default_factory=list)
    truncated: str | None = None
    """The warning about a truncated last line, which reading dropped (None: there was none)."""

    @property
    def name(self) -> str:
        return str(self.path) if self.path else "<memory>"


def new_header(transport: Transport, target: dict[str, Any], redaction: dict[str, Any]) -> Header:
    """A header for a recording that starts now. Secrets in the target (tokens on the command
    line, secret query parameters) are redacted by the rules `redaction` describes."""
    if redaction.get("enabled"):
        from mcptape.redact import (  # the write path only
            DEFAULT_KEYS,
            DEFAULT_PATTERNS,
            RedactConfig,
            Redactor,
        )

        keys, patterns = redaction.get("keys", DEFAULT_KEYS), redaction.get("patterns", DEFAULT_PATTERNS)
        target = Redactor(RedactConfig(True, tuple(keys), tuple(patterns))).target(target)
    now = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return Header(transport=transport, target=target, recorded_at=now, mcptape_version=__version__, redaction=redaction)


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
    except FileNotFoundError:
        raise CassetteNotFoundError(f"{p.absolute()}: no such cassette") from None
    except IsADirectoryError:
        raise CassetteError(f"{p}: is a directory, not a cassette") from None
    except OSError as exc:
        raise CassetteError(f"{p}: cannot read: {exc.strerror}") from None
    return loads(data, name=str(p), path=p)


def loads(data: bytes, name: str = "<memory>", path: Path | None = None) -> Cassette:
    """Parses cassette bytes; see `load`."""
    lines = data.split(b"\n")
    complete = data.endswith(b"\n")
    if complete:
        lines.pop()
    if not lines or not any(ln.strip() for ln in lines):
        raise CassetteError(f"{name}: empty file, not an mcptape cassette (record one with `mcptape record`)")
    warnings: list[str] = []
    try:
        head = orjson.loads(lines[0])
    except orjson.JSONDecodeError:
        raise CassetteError(f"{name}:1: not an mcptape cassette (line 1 is not JSON)") from None
    if not isinstance(head, dict) or HEADER_MARKER not in head:
        raise CassetteError(f"{name}:1: not an mcptape cassette (no {HEADER_MARKER!r} header on line 1)")
    check_version(head, f"{name}:1")
    with paused_gc():
        return _parse_events(lines, head, complete, name, path, warnings)


def _parse_events(
    lines: list[bytes], head: dict[str, Any], complete: bool, name: str, path: Path | None, warnings: list[str]
) -> Cassette:
    raw: list[dict[str, Any]] = []
    truncated: str | None = None
    last = len(lines)
    loads_ = orjson.loads
    for lineno, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        try:
            obj = loads_(line)
        except orjson.JSONDecodeError:
            if lineno == last and not complete:
                truncated = f"{name}:{lineno}: last line is truncated (the recorder was stopped mid-write); read {len(raw)} events before it"
                warnings.append(truncated)
                break
            raise CassetteError(f"{name}:{lineno}: corrupt line (not JSON); fix or delete that line") from None
        if not isinstance(obj, dict) or "kind" not in obj or "seq" not in obj:
            raise CassetteError(f"{name}:{lineno}: not a cassette event (needs 'seq' and 'kind')")
        if ("http" in obj or "info" in obj) and not metadata_ok(obj):
            raise CassetteError(f"{name}:{lineno}: malformed event metadata ('http' and 'info' are objects; http.exchange an integer, http.session a string)")
        raw.append(obj)
    head, raw = migrate(head, raw)
    try:
        header = Header.from_json(head)
        events = [Event.from_json(obj) for obj in raw]
    except (KeyError, ValueError, TypeError) as exc:
        raise CassetteError(f"{name}: malformed cassette: {exc}") from None
    if not events or events[-1].kind != "end":
        warnings.append(
            f"{name}: the recording was cut short (no end marker; the recorder was killed?); "
            f"it holds {len(events)} events"
        )
    return Cassette(header, events, path, warnings, truncated)


def metadata_ok(obj: dict[str, Any]) -> bool:
    """`http` and `info` are objects, and the HTTP hints readers use as keys have their types."""
    http, info = obj.get("http"), obj.get("info")
    if not isinstance(info, (dict, type(None))) or not isinstance(http, (dict, type(None))):
        return False
    if http is None:
        return True
    exchange, session = http.get("exchange"), http.get("session")
    return (exchange is None or (isinstance(exchange, int) and not isinstance(exchange, bool))) and isinstance(session, (str, type(None)))


def dumps_event(event: Event) -> bytes:
    """One event as its cassette line, newline included."""
    return orjson.dumps(event.to_json()) + b"\n"


def dumps(cassette: Cassette) -> bytes:
    """A whole cassette as bytes."""
    parts = [orjson.dumps(cassette.header.to_json()) + b"\n"]
    parts.extend(dumps_event(e) for e in cassette.events)
    return b"".join(parts)


def save(cassette: Cassette, path: str | os.PathLike[str]) -> None:
    """Writes a whole cassette atomically (see `write_atomic`), creating its directory."""
    write_atomic(path, dumps(cassette))


def write_atomic(path: str | os.PathLike[str], data: bytes) -> None:
    """Replaces `path` with `data` atomically (a synced temporary file renamed over it),
    keeping its permissions, creating its directory: a reader sees the old file or the new
    one, never half of one.

    Raises:
        CassetteError: the file cannot be written (the original is left as it was).
    """
    p = Path(path)
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CassetteError(f"{p}: cannot write: {exc.strerror or exc}") from None
    tmp = p.with_name(f".{p.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if p.exists():
            os.chmod(tmp, stat.S_IMODE(os.stat(p).st_mode))
        os.replace(tmp, p)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise CassetteError(f"{p}: cannot write: {exc.strerror or exc}") from None


class LineWriter(Protocol):
    """Where a recorder appends event lines: a `CassetteWriter` (a file, as it happens) or a
    `CassetteBuffer` (memory, written at the end with `write_atomic`)."""

    def write_line(self, line: bytes) -> None: ...


class CassetteBuffer:
    """A cassette's lines collected in memory, its header first; `data()` for `write_atomic`."""

    def __init__(self, header: Header) -> None:
        self._parts = [orjson.dumps(header.to_json()) + b"\n"]

    def write_line(self, line: bytes) -> None:
        self._parts.append(line)

    @property
    def lines(self) -> int:
        """Lines so far, the header's included."""
        return len(self._parts)

    def data(self) -> bytes:
        return b"".join(self._parts)


class CassetteWriter:
    """Appends events to a cassette file, one complete line per `write()` system call.

    Thread-safe. Any failure to write raises `CassetteError` at once: a recorder must stop
    rather than let traffic through unrecorded.
    """

    def __init__(self, path: str | os.PathLike[str], header: Header) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o644)
        except OSError as exc:
            raise CassetteError(f"{self.path}: cannot write the cassette: {exc.strerror}") from None
        self._closed = False
        self._write(orjson.dumps(header.to_json()) + b"\n")

    def _write(self, line: bytes) -> None:
        view = memoryview(line)
        try:
            while view:
                n = os.write(self._fd, view)
                view = view[n:]
        except OSError as exc:
            raise CassetteError(f"{self.path}: cannot write the cassette: {exc.strerror}") from None

    def write(self, event: Event) -> None:
        self.write_line(dumps_event(event))

    def write_line(self, line: bytes) -> None:
        """Appends one ready-made event line (newline included)."""
        with self._lock:
            if self._closed:
                raise CassetteError(f"{self.path}: cassette already closed")
            self._write(line)

    def close(self) -> None:
        with self._lock:
            if not self._closed:
                self._closed = True
                os.close(self._fd)
