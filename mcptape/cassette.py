"""Cassettes on disk: JSON Lines, a header line then one event per line, in wire order.

The only module that reads or writes cassette files. Writing appends and flushes one
complete line per event with a single `write()`, so a recorder killed at any moment leaves
a cassette that reads back up to its last complete line; reading tolerates (and reports)
a truncated last line. See docs/cassette-format.md.
"""

from __future__ import annotations

import contextlib
import os
import stat
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple, Protocol

import orjson

from mcptape._perf import paused_gc
from mcptape._version import __version__
from mcptape.errors import CassetteError, CassetteNotFoundError
from mcptape.migrate import check_version, migrate
from mcptape.model import FORMAT_VERSION, HEADER_MARKER, Event, Header, Kind, Transport
from mcptape.shape import event_problem, header_problem, plain_event


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
    pairing: tuple[list[Event], int, Any] | None = None
    """(`events`, their number, their `mcptape.pairing.Session`) when the reader paired them
    already (an index file keeps the pairing: `mcptape.sidecar`); `mcptape.pairing.paired`
    uses it while `events` is still that list, of that length."""
    plan: Any = None
    """What the replay index reads of each request of that pairing, as an index file keeps it
    (`mcptape.replay.index.Plan`; None: not at hand)."""
    answerer: Any = None
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
        return CassetteNotFoundError(f"{p.absolute()}: no such cassette")
    if isinstance(exc, IsADirectoryError):
        return CassetteError(f"{p}: is a directory, not a cassette")
    return CassetteError(f"{p}: cannot read: {exc.strerror}")


def _header(line: bytes, name: str) -> dict[str, Any]:
    """Line 1 of a cassette, checked: JSON, the header marker, a format this mcptape reads."""
    try:
        head = orjson.loads(line)
    except orjson.JSONDecodeError:
        raise CassetteError(f"{name}:1: not an mcptape cassette (line 1 is not JSON)") from None
    if not isinstance(head, dict) or HEADER_MARKER not in head:
        raise CassetteError(
            f"{name}:1: not an mcptape cassette (no {HEADER_MARKER!r} header on line 1)"
        )
    check_version(head, f"{name}:1")
    return head


def loads(data: bytes, name: str = "<memory>", path: Path | None = None) -> Cassette:
    """Parses cassette bytes; see `load`."""
    lines = data.split(b"\n")
    complete = data.endswith(b"\n")
    if complete:
        lines.pop()
    if not lines or not any(ln.strip() for ln in lines):
        raise CassetteError(
            f"{name}: empty file, not an mcptape cassette (record one with `mcptape record`)"
        )
    warnings: list[str] = []
    head = _header(lines[0], name)
    with paused_gc():
        return _parse_events(lines, head, complete, name, path, warnings)


def _parse_events(
    lines: list[bytes],
    head: dict[str, Any],
    complete: bool,
    name: str,
    path: Path | None,
    warnings: list[str],
) -> Cassette:
    current = type(version := head.get(HEADER_MARKER)) is int and version == FORMAT_VERSION
    raw: list[dict[str, Any]] = []
    events: list[Event] = []
    linenos: list[int] = []
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
                truncated = truncated_warning(name, lineno, len(linenos))
                warnings.append(truncated)
                break
            raise _corrupt(name, lineno) from None
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
    return event if event is not None else _built(_checked(obj, name, lineno), name, lineno)


def _built(obj: dict[str, Any], name: str, lineno: int) -> Event:
    try:
        return Event.from_json(obj)
    except (KeyError, ValueError, TypeError) as exc:  # what `event_problem` does not know
        raise _malformed(name, lineno, str(exc)) from None


def _checked(obj: Any, name: str, lineno: int) -> dict[str, Any]:
    """A parsed event line, checked as every reader checks it (`load` and `stream` alike)."""
    if not isinstance(obj, dict) or "kind" not in obj or "seq" not in obj:
        raise CassetteError(f"{name}:{lineno}: not a cassette event (needs 'seq' and 'kind')")
    problem = event_problem(obj)
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
    written in one go has every event (a dict of every line was 7 MB per 100k events)."""
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


NOT_JSON: Any = object()
"""What `read_lines` gives for the value of a line that is not JSON."""


Line = tuple[int, int, bytes, Any]
"""One line of a cassette as `read_lines` reads it: (its number, where it starts in the file in
bytes, its bytes as in the file, newline included but on a last line without one, its JSON
value or `NOT_JSON`). A plain tuple, not a named one: one is made for every line read."""


def read_lines(lines: Iterable[bytes], lineno: int = 1, offset: int = 0) -> Iterator[Line]:
    """The lines of a cassette that are not blank, parsed, one at a time (`Line`): numbered
    from `lineno` and placed from `offset` (those of the first line `lines` gives). It decides
    nothing: a line that is not JSON comes with `NOT_JSON` (truncated when it is the last one
    and has no newline, else corrupt), and the caller says what that means (`stream` raises;
    `mcptape check` reports it and reads on)."""
    loads_ = orjson.loads
    for raw in lines:
        start = offset
        offset += len(raw)
        lineno += 1
        if not raw.strip():
            continue
        try:
            obj = loads_(raw)
        except orjson.JSONDecodeError:
            obj = NOT_JSON
        yield lineno - 1, start, raw, obj


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
        raw = dumps_event(event)
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
    out = AtomicWriter(path)
    try:
        out.write(data)
        out.commit()
    finally:
        out.abort()


class AtomicWriter:
    """Writes a file piece by piece into a sibling temporary file, then `commit()` renames it
    over `path` atomically (synced, `path`'s permissions kept, its directory created):
    `write_atomic` for output too big to hold in memory. Until `commit()`, `path` is untouched;
    `abort()` (a no-op after `commit()`) deletes the temporary file, so a failed rewrite never
    replaces a good cassette.

    Raises (every method):
        CassetteError: the file cannot be written (the original is left as it was).
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        self._file: Any = None
        self._done = False
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = open(self.tmp, "wb")  # noqa: SIM115 (closed by commit or abort)
        except OSError as exc:
            self._fail(exc)

    def _fail(self, exc: OSError) -> None:
        self.abort()
        raise CassetteError(f"{self.path}: cannot write: {exc.strerror or exc}") from None

    def write(self, data: bytes) -> None:
        try:
            self._file.write(data)
        except OSError as exc:
            self._fail(exc)

    def commit(self) -> None:
        """Syncs the temporary file and moves it over `path`."""
        try:
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()
            if self.path.exists():
                os.chmod(self.tmp, stat.S_IMODE(os.stat(self.path).st_mode))
            os.replace(self.tmp, self.path)
            self._done = True
        except OSError as exc:
            self._fail(exc)

    def abort(self) -> None:
        """Deletes the temporary file (`path` untouched); nothing after `commit()`."""
        if self._done:
            return
        self._done = True
        if self._file is not None:
            with contextlib.suppress(OSError):
                self._file.close()
        with contextlib.suppress(OSError):
            self.tmp.unlink(missing_ok=True)


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


PARTIAL = ".partial"
"""What a recording in progress adds to its cassette's name (`demo.jsonl.partial`, then
`demo.jsonl.partial-2`, ... while others exist): a recorder killed mid-session leaves it there."""


class CassetteWriter:
    """Records a cassette into a sibling file, then moves it into place.

    Appends one complete line per `write()` system call to `partial` (`<name>.partial`,
    created exclusively, so two writers never share a file), which reads back as a cassette
    at every moment. `commit()` syncs it and renames it over `path` atomically; `keep()`
    leaves it where it is (a failed recording, kept for inspection); `discard()` deletes it.
    A recorder killed before either leaves `partial` behind, readable up to its last line.
    `path` is never touched until `commit()`: a failed re-recording keeps the old cassette.

    With `fresh=True` (default names), `path` itself must not exist yet: when it (or its
    recording) does, the next free `<stem>-2.jsonl`, `<stem>-3.jsonl`, ... is taken instead,
    so every launch gets its own cassette. Thread-safe. Any failure to write raises
    `CassetteError` at once.
    """

    def __init__(
        self, path: str | os.PathLike[str], header: Header, *, fresh: bool = False
    ) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        try:
            if self.path.exists() and not self.path.is_file():
                raise CassetteError(f"{self.path}: cannot write the cassette: not a regular file")
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.partial, self._fd = _open_sibling(self.path, fresh)
        except OSError as exc:
            raise CassetteError(
                f"{self.path}: cannot write the cassette: {exc.strerror or exc}"
            ) from None
        if fresh:
            self.path = self.partial.with_name(self.partial.name.removesuffix(PARTIAL))
        # a fresh name replaces nothing: a cassette another recorder committed there after
        # `_open_sibling` looked (it had taken `path` while its recording was still partial) is
        # kept, and this one goes to the next free name at `commit()`
        self._before = None if fresh else _identity(self.path)
        self._closed = False
        self.replaced = self._before is not None
        """`commit()` replaced an existing cassette."""
        self._write(orjson.dumps(header.to_json()) + b"\n")

    def _write(self, line: bytes) -> None:
        view = memoryview(line)
        try:
            while view:
                n = os.write(self._fd, view)
                view = view[n:]
        except OSError as exc:
            raise CassetteError(
                f"{self.partial}: cannot write the cassette: {exc.strerror}"
            ) from None

    def write(self, event: Event) -> None:
        self.write_line(dumps_event(event))

    def write_line(self, line: bytes) -> None:
        """Appends one ready-made event line (newline included)."""
        with self._lock:
            if self._closed:
                raise CassetteError(f"{self.path}: cassette already closed")
            self._write(line)

    def _close_fd(self, sync: bool) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            try:
                if sync:
                    os.fsync(self._fd)
            finally:
                os.close(self._fd)

    def commit(self) -> Path:
        """Moves the recording into place (atomically) and returns where it is.

        When another recorder put a cassette at `path` while this one recorded, that one is
        kept and this recording goes to the next free numbered name instead.

        Raises:
            CassetteError: the recording cannot be synced or moved (it stays at `partial`).
        """
        try:
            self._close_fd(sync=True)
            with _dir_lock(self.path.parent):
                if _identity(self.path) != self._before:
                    self.path = _free_name(self.path)
                    os.link(self.partial, self.path)  # fails if taken meanwhile: never replaces
                    os.unlink(self.partial)
                else:
                    os.replace(self.partial, self.path)
        except OSError as exc:
            raise CassetteError(
                f"{self.partial}: cannot move the recording into place: {exc.strerror or exc}"
            ) from None
        return self.path

    def keep(self) -> Path:
        """Closes the recording and leaves it at `partial` (`path` untouched); returns `partial`."""
        with contextlib.suppress(OSError):
            self._close_fd(sync=False)
        return self.partial

    def discard(self) -> None:
        """Closes the recording and deletes it (`path` untouched)."""
        with contextlib.suppress(OSError):
            self._close_fd(sync=False)
        self.partial.unlink(missing_ok=True)

    def close(self) -> None:
        """Ends the recording: `commit()`, unless it was already kept, discarded or committed."""
        if not self._closed:
            self.commit()


def _open_sibling(path: Path, fresh: bool) -> tuple[Path, int]:
    """Creates, exclusively, the first free recording file for `path` (see `CassetteWriter`)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND
    for n in range(1, 10_000):
        if fresh:
            target = path if n == 1 else path.with_name(f"{path.stem}-{n}{path.suffix}")
            if target.exists():
                continue
            partial = target.with_name(target.name + PARTIAL)
        else:
            partial = path.with_name(path.name + PARTIAL + ("" if n == 1 else f"-{n}"))
        try:
            return partial, os.open(partial, flags, 0o644)
        except FileExistsError:
            continue
    raise OSError(f"no free name for a recording beside {path}")


def _free_name(path: Path) -> Path:
    for n in range(2, 10_000):
        candidate = path.with_name(f"{path.stem}-{n}{path.suffix}")
        if not candidate.exists() and not candidate.with_name(candidate.name + PARTIAL).exists():
            return candidate
    raise OSError(f"no free name beside {path}")


def _identity(path: Path) -> tuple[int, int, int, int] | None:
    """What tells one file at `path` from another (None: nothing there)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


@contextlib.contextmanager
def _dir_lock(directory: Path) -> Iterator[None]:
    """Holds an exclusive lock on `directory` (for a moment: the check and rename of a commit).

    Where there is no `fcntl` (Windows) there is no lock: two recorders finishing at the same
    moment may both see the cassette unchanged, and the later rename wins (on POSIX the later
    one moves to a free name instead).
    """
    try:
        import fcntl
    except ImportError:
        yield
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
