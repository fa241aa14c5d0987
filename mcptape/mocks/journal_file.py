"""`mcptape replay --journal FILE` and `mcptape serve --journal FILE`: the journal
(`mcptape.mocks.journal`) written as JSON lines, for a test in another process (the TypeScript
helper's `calls`, `callCount`, `assertCalledWith`, `assertAllCalled`). docs/cli.md describes
the lines.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

from mcptape.replay.outputs import Step

from .journal import Call, Journal, Listening


class JournalFile(Listening):
    """An answerer that answers nothing and writes the journal as JSON lines, for a test in
    another process (`mcptape replay --journal FILE`, `mcptape serve --journal FILE`).

    A call's line (`Call.to_json`) is written once its final answer is known, before that
    answer goes out, so a client that got its answer finds the line in the file; a call still
    unanswered (or still asking for input) when the replay ends is written then. Lines come
    in answer order: `n` gives the order received. For a mock file, `{"unused": [...]}` lists
    the declarations no request used yet (`MockServer.unused`): once at the start and again
    whenever it changes, so the last such line is the current state.
    """

    def __init__(self, out: IO[str], unused: Callable[[], list[str]] | None = None) -> None:
        super().__init__(Journal())
        self._out = out
        self._unused = unused
        self._said: list[str] | None = None
        self._waiting: list[tuple[int, Call]] = []
        self._lock = threading.Lock()
        with self._lock:
            self._say_unused()

    @classmethod
    def open(cls, path: Path, answerer: Any = None) -> JournalFile:
        """A journal written to `path` (emptied first); `answerer`: the cassette's own (a mock
        file's declarations), whose unused declarations it reports."""
        from mcptape.errors import ConfigError

        try:
            out = path.open("w", encoding="utf-8")
        except OSError as exc:
            raise ConfigError(
                f"--journal {path}: cannot write it ({exc.strerror}); name a file in a folder that exists"
            ) from None
        unused = getattr(answerer, "unused", None)
        return cls(out, unused if callable(unused) else None)

    def saw(self, msg: dict[str, Any], outputs: Sequence[Step]) -> None:
        with self._lock:
            before = len(self.journal.calls)
            self.journal.saw(msg, outputs)
            self._waiting += enumerate(self.journal.calls[before:], before)
            done = [(n, c) for n, c in self._waiting if c.answer is not None and not c.asks]
            if done:
                written = {n for n, _ in done}
                self._waiting = [w for w in self._waiting if w[0] not in written]
                self._write(done)
            self._say_unused()

    def close(self) -> None:
        """Writes the calls never answered, and closes the file."""
        with self._lock:
            self._write(self._waiting)
            self._waiting = []
            self._out.close()

    def _write(self, calls: list[tuple[int, Call]]) -> None:
        for n, call in calls:
            self._out.write(json.dumps(call.to_json(n), ensure_ascii=False, default=str) + "\n")
        self._out.flush()

    def _say_unused(self) -> None:
        if self._unused is None:
            return
        unused = self._unused()
        if unused != self._said:
            self._said = unused
            self._out.write(json.dumps({"unused": unused}, ensure_ascii=False) + "\n")
            self._out.flush()
