"""Cassettes on disk: JSON Lines, a header line then one event per line, in wire order.

The package cassettes are read and written through. Writing appends and flushes one complete
line per event with a single `write()`, so a recorder killed at any moment leaves a cassette
that reads back up to its last complete line; reading tolerates (and reports) a truncated last
line. See docs/cassette-format.md. Its `__init__` records (`CassetteWriter`) and names what its
neighbours do: encoding and decoding every line (`mcptape.cassette.codec`), reading and writing a
cassette whole (`mcptape.cassette.format`), reading a line at a time (`mcptape.cassette.stream`),
replacing a file atomically (`mcptape.cassette.atomic`).
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

from mcptape.cassette.atomic import AtomicWriter, write_atomic
from mcptape.cassette.codec import NOT_JSON, Line, event_line, header_line, read_lines
from mcptape.cassette.format import (
    Cassette,
    cut_short,
    cut_short_after,
    dumps,
    dumps_event,
    lines_apart,
    load,
    loads,
    metadata_ok,
    new_header,
    truncated_warning,
    unreadable_error,
)
from mcptape.cassette.model import Event, Header
from mcptape.cassette.stream import CassetteStream, EventLine, stream
from mcptape.errors import CassetteError

__all__ = [
    "NOT_JSON",
    "PARTIAL",
    "AtomicWriter",
    "Cassette",
    "CassetteBuffer",
    "CassetteStream",
    "CassetteWriter",
    "EventLine",
    "Line",
    "LineWriter",
    "cut_short",
    "cut_short_after",
    "dumps",
    "dumps_event",
    "lines_apart",
    "load",
    "loads",
    "metadata_ok",
    "new_header",
    "read_lines",
    "save",
    "stream",
    "truncated_warning",
    "unreadable_error",
    "write_atomic",
]


def save(cassette: Cassette, path: str | os.PathLike[str]) -> None:
    """Writes a whole cassette atomically (see `write_atomic`), creating its directory."""
    write_atomic(path, dumps(cassette))


class LineWriter(Protocol):
    """Where a recorder appends event lines: a `CassetteWriter` (a file, as it happens) or a
    `CassetteBuffer` (memory, written at the end with `write_atomic`)."""

    def write_line(self, line: bytes) -> None: ...


class CassetteBuffer:
    """A cassette's lines collected in memory, its header first; `data()` for `write_atomic`."""

    def __init__(self, header: Header) -> None:
        self._parts = [header_line(header)]

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
        self.appended = 0
        """The session number this recording was appended as (0: it was not appended)."""
        self._write(header_line(header))

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
        self.write_line(event_line(event))

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

    def close_recording(self) -> None:
        """Syncs and closes the recording (at `partial`), for a caller that moves it itself."""
        try:
            self._close_fd(sync=True)
        except OSError as exc:
            raise CassetteError(
                f"{self.partial}: cannot write the cassette: {exc.strerror}"
            ) from None

    def dir_lock(self) -> contextlib.AbstractContextManager[None]:
        """The lock a commit holds on the cassette's directory while it checks and renames."""
        return _dir_lock(self.path.parent)

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
