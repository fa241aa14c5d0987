"""Writing a file atomically: a reader sees the old file or the new one, never half of one."""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path
from typing import Any

from mcptape.errors import CassetteError


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
