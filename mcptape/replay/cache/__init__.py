"""A big cassette opened for replay with each message parsed when played.

A replay plays a few of a big cassette's messages, and needs of the rest only what indexing
reads: which messages make each exchange, and each request's method and matching key. A
cassette of at least `MIN_BYTES` is read in one pass (`first`): each line parsed, checked,
paired and let go of, each message read again from the cassette, by offset, when it is first
played (`mcptape.cassette.lazy`). The second replay of the same bytes writes what that pass
made into an index file in mcptape's cache (`writing`): every event, each message cut down to
its kind and where its line is, the pairing, and what the replay index reads of each request.
Later replays read the index instead (`reading`), its messages lazy as the first read's. The
pairing and plan travel to the replay index in an `IndexedCassette`
(`mcptape.replay.prepared`): the `Cassette` value itself carries no replay state.

The index file is named by the cassette's SHA-1 and size, so an edited cassette never meets an
old index (a copy of it, under any name, finds its own), and it says which mcptape wrote it.
Where it lives and how to turn the cache off: `location`. Failing to read or write it is never
an error: the replay reads the cassette in one pass.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from mcptape.cassette import Cassette, loads, unreadable_error
from mcptape.cassette.lazy import LineSource
from mcptape.errors import CassetteError
from mcptape.replay.prepared import IndexedCassette

from .first import first_read
from .location import KEEP, cache_dir, code_stamp, index_name, locked, prune
from .reading import from_index
from .writing import WORTH, write_index

__all__ = ["KEEP", "MIN_BYTES", "WORTH", "cache_dir", "code_stamp", "open_for_replay"]

MIN_BYTES = 1 << 20
"""Smaller cassettes are read whole every time: below it, a replay from an index file answers
its first request no sooner than one that reads the cassette whole (docs/performance.md)."""


def open_for_replay(path: str | os.PathLike[str]) -> Cassette:
    """The cassette at `path`, for a replay: as `load` reads it, but for a big one read in one
    pass or from its index file, each message is read from the file when first played.

    Raises:
        CassetteError: as `load` does.
        CassetteVersionError: as `load` does.
    """
    p = Path(path)
    if p.suffix in (".toml", ".json"):
        from mcptape.mocks.file import is_mock_file, open_mock

        if is_mock_file(p):  # a mock file: its declarations over its cassette
            return open_mock(p, open_for_replay)
    cache = cache_dir()
    try:
        fd = os.open(p, os.O_RDONLY)
    except OSError as exc:
        raise unreadable_error(p, exc) from None
    source = LineSource(fd, str(p))  # closes the file when no lazy event needs it any more
    served = False
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError
        if st.st_size < MIN_BYTES:
            return loads(_read_all(fd), name=str(p), path=p)
        index = cache / index_name(fd) if cache is not None else None  # (hashed a piece at a time)
        cached = from_index(index, p, source) if index is not None else None
        if isinstance(cached, Cassette):
            served = True
            return cached
        first = first_read(source, p)
        if first is not None:
            served = True
            if index is not None and cached is None and _unchanged(fd, st):
                _seen(index, first, st.st_size)
            return first
        os.lseek(fd, 0, os.SEEK_SET)
        data = _read_all(fd)  # an older format, migrated in memory
    except OSError as exc:
        raise unreadable_error(p, exc) from None
    finally:
        if not served:
            source.close()
    return loads(data, name=str(p), path=p)


def _unchanged(fd: int, before: os.stat_result) -> bool:
    """Whether the file open as `fd` is as it was (`before`) when it was hashed, so that its
    first read is of those bytes."""
    now = os.fstat(fd)
    return (now.st_size, now.st_mtime_ns) == (before.st_size, before.st_mtime_ns)


def _seen(index: Path, first: IndexedCassette, size: int) -> None:
    """After the first read of bytes of which `index` is the index file: the first time they
    are replayed, leaves a mark (`.seen`); the second, writes the index file from what the first
    read made (`write_index`), for the replays after. A cassette replayed once, as in a CI job
    with no cache kept, never pays for writing it. Nothing is marked or written while another
    process holds the cache's lock."""
    mark = index.with_suffix(".seen")
    try:
        mark.parent.mkdir(parents=True, exist_ok=True)
        with locked(mark.parent) as mine:
            if not mine:
                return
            if not mark.exists():
                mark.touch()
                prune(mark.parent, "*.seen")
                return
            mark.unlink()
            write_index(index, first, size)
    except (OSError, CassetteError):  # (a line read again for it changed: no index file)
        pass


def _read_all(fd: int) -> bytes:
    """The rest of the file open as `fd` (left open), read in one buffer of its size."""
    with os.fdopen(os.dup(fd), "rb") as f:
        return f.read()
