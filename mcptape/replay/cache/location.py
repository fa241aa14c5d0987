"""Where index files live, what names them, and how many are kept.

The cache directory is `$MCPTAPE_CACHE_DIR/index` when that is set (`off` or empty: no cache),
else the platform's user cache directory for mcptape (`platformdirs.user_cache_dir`: on Linux
`$XDG_CACHE_HOME/mcptape`, else `~/.cache/mcptape`) plus `index`. `MCPTAPE_INDEX_CACHE=0` (or
`off`, `no`, `false`) turns the cache off wherever it is. A writer takes the directory's lock
(`filelock`) without waiting: a replay never waits for another to write an index file.
"""

from __future__ import annotations

import contextlib
import functools
import os
import time
from collections.abc import Iterator
from pathlib import Path

KEEP = 16
"""Index files kept in the cache, the most recently used."""

OFF = frozenset({"0", "off", "no", "false"})
"""Values of `MCPTAPE_INDEX_CACHE` that turn the cache off."""


def cache_dir() -> Path | None:
    """Where index files go; None when the cache is off (`MCPTAPE_INDEX_CACHE=0`,
    `MCPTAPE_CACHE_DIR=off`) or there is no user cache directory to be found."""
    if os.environ.get("MCPTAPE_INDEX_CACHE", "").strip().lower() in OFF:
        return None
    env = os.environ.get("MCPTAPE_CACHE_DIR")
    if env is not None:
        return None if env.strip() in ("", "off") else Path(env) / "index"
    try:
        Path.home()
    except RuntimeError:  # no home directory to be found: no cache
        return None
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("mcptape", appauthor=False)) / "index"


@functools.cache
def code_stamp() -> str:
    """The SHA-1 of the path, size and modification time of each of mcptape's own source files:
    an index file holds what this code made of a cassette (its pairing, its requests' keys), and
    an edited checkout (an editable install keeps its version number) must not meet an index
    file its old code wrote. Once a process; sources that cannot be read stamp this process
    alone (no index file is then used, and none is of use later)."""
    import hashlib

    found: list[str] = []
    folders = [Path(__file__).parents[2]]
    try:
        while folders:
            with os.scandir(folders.pop()) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name != "__pycache__":
                            folders.append(Path(entry.path))
                    elif entry.name.endswith(".py"):
                        st = entry.stat()
                        found.append(f"{entry.path}:{st.st_size}:{st.st_mtime_ns}")
    except OSError:
        found = [os.urandom(16).hex()]
    found.sort()
    return hashlib.sha1("\n".join(found).encode(), usedforsecurity=False).hexdigest()


def index_name(content: int | bytes) -> str:
    """The index file's name for the cassette open as file descriptor `content` (read to its end),
    or with these bytes: their SHA-1 and size."""
    import hashlib  # (here: not every replay's startup)

    digest = hashlib.sha1(usedforsecurity=False)
    if isinstance(content, bytes):
        digest.update(content)
        return f"{digest.hexdigest()}-{len(content)}.idx"
    size = 0
    while chunk := os.read(content, 1 << 20):
        digest.update(chunk)
        size += len(chunk)
    return f"{digest.hexdigest()}-{size}.idx"


@contextlib.contextmanager
def locked(directory: Path) -> Iterator[bool]:
    """Holds the cache directory's lock while an index file or a mark is written, if no other
    process holds it (yields False then, and at once: the caller writes nothing)."""
    from filelock import FileLock, Timeout

    lock = FileLock(directory / ".lock", timeout=0)
    try:
        lock.acquire()
    except (Timeout, OSError):
        yield False
        return
    try:
        yield True
    finally:
        lock.release()


def prune(directory: Path, pattern: str) -> None:
    """Deletes all but the `KEEP` most recently used files of `pattern` (index files, marks),
    and what writers killed mid-write left an hour ago or more."""
    for f in directory.glob(".*.tmp"):
        with contextlib.suppress(OSError):
            if f.stat().st_mtime < time.time() - 3600:
                f.unlink()
    files = []
    for f in directory.glob(pattern):
        with contextlib.suppress(OSError):
            files.append((f.stat().st_mtime_ns, f))
    files.sort(reverse=True)
    for _, f in files[KEEP:]:
        with contextlib.suppress(OSError):
            f.unlink()
