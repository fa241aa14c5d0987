"""A big cassette opened for replay with each message parsed when played.

A replay plays a few of a big cassette's messages, and needs of the rest only what indexing
reads: which messages make each exchange, and each request's method and matching key. The
first replay of a cassette of at least `MIN_BYTES` (and every one, with the cache off) reads
it in one pass (`first`): each line parsed, checked, paired and let go of, each message read
again from the cassette, by offset, when it is first played (`mcptape.cassette.lazy`). The second reads
it whole, as `load` does, and writes an index file into mcptape's cache (`writing`): every
event as read, but each message cut down to its kind and where its line is, the cassette's
pairing, and what the replay index reads of each request. Later replays of the same bytes
read the index instead (`reading`), its messages lazy as the first read's. The pairing and
plan travel to the replay index in an `IndexedCassette` (`mcptape.replay.prepared`): the
`Cassette` value itself carries no replay state.

The index file is named by the cassette's SHA-1 and size, so an edited cassette never meets an
old index (a copy of it, under any name, finds its own), and it says which mcptape wrote it.
Where it lives and how to turn the cache off: `location`. Failing to read or write it is never
an error: the replay reads the cassette as `load` does.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from mcptape.cassette import Cassette, loads, unreadable_error
from mcptape.cassette.lazy import LineSource
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
        cached: IndexedCassette | bool | None = None
        if cache is not None:
            index = cache / index_name(fd)  # hashed a piece at a time: not held
            cached = from_index(index, p, source)
            if isinstance(cached, Cassette):
                served = True
                return cached
        if cache is None or (cached is None and not _seen_before(index)):
            first = first_read(source, p)
            if first is not None:
                served = True
                return first
        os.lseek(fd, 0, os.SEEK_SET)
        data = _read_all(fd)
    except OSError as exc:
        raise unreadable_error(p, exc) from None
    finally:
        if not served:
            source.close()
    cas = loads(data, name=str(p), path=p)
    if cache is not None and cached is None:  # named by what was read now (it may have changed)
        return _seen(cache / index_name(data), data, cas)
    return cas


def _seen_before(index: Path) -> bool:
    """Whether the bytes of `index` were replayed before (their mark, `.seen`, is there); if not,
    leaves the mark. The first replay of a cassette reads it in one pass (`first_read`); the
    second, whole, and writes its index file (`_seen`): a cassette replayed once, as in a CI job
    with no cache kept, never pays for writing it. Nothing is marked while another process
    holds the cache's lock."""
    mark = index.with_suffix(".seen")
    try:
        if mark.exists():
            return True
        mark.parent.mkdir(parents=True, exist_ok=True)
        with locked(mark.parent) as mine:
            if mine and not mark.exists():
                mark.touch()
                prune(mark.parent, "*.seen")
    except OSError:
        pass
    return False


def _seen(index: Path, data: bytes, cas: Cassette) -> Cassette:
    """A cassette read whole for a replay: the second time its bytes are (`_seen_before`), their
    index file is written (writing it costs half a reading). A replay that read it whole without
    a mark leaves one. Nothing is written while another process holds the cache's lock."""
    mark = index.with_suffix(".seen")
    try:
        mark.parent.mkdir(parents=True, exist_ok=True)
        with locked(mark.parent) as mine:
            if not mine:
                return cas
            if not mark.exists():
                mark.touch()
                prune(mark.parent, "*.seen")
                return cas
            mark.unlink()
            return write_index(index, data, cas)
    except OSError:
        return cas


def _read_all(fd: int) -> bytes:
    """The rest of the file open as `fd` (left open), read in one buffer of its size."""
    with os.fdopen(os.dup(fd), "rb") as f:
        return f.read()
