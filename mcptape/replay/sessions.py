"""Which recorded session a stdio replay launch plays, when its cassette holds several.

One `mcptape replay` launch is one client session. A cassette recorded by a client that starts
the server for every operation holds one session per operation, and that client starts the
replay once per operation too: each launch must play the session it matches. The handshake
(`initialize`, `notifications/initialized`, `server/discover`, `ping`) is answered from the
first session, whose answers any session's client can take; the client's first other request
picks the session: the first, in recorded order, whose first request has that request's key;
else the first that recorded that key at all; else the first. Sessions that earlier launches
of the same run picked (`MCPTAPE_RUN`, else the launching process, as when recording) are
passed over while others fit, so a run that repeats an operation gets each recording in turn.
The handshake is then replayed into the picked session's engine, its answers dropped (the
client has them).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcptape.cassette import Cassette
from mcptape.cassette.sessions import split
from mcptape.wire.jsonrpc import MessageType, classify

from .engine import ReplayConfig, ReplayEngine
from .index import ReplayIndex

PRELUDE = frozenset({"initialize", "notifications/initialized", "server/discover", "ping"})
"""Methods any session answers alike: they do not pick the session."""


class SessionPicker:
    """The engine of a stdio replay launch: the first session's until the client's first
    request past the handshake picks one (`route`)."""

    def __init__(
        self,
        cassette: Cassette,
        config: ReplayConfig,
        claims: Callable[[], Claims | None] | None = None,
    ) -> None:
        self.parts = split(cassette)
        self.config = config
        self._indexes: dict[int, ReplayIndex] = {}
        self.engine = ReplayEngine(self._index(0), config)
        self.chosen: int | None = 0 if len(self.parts) == 1 else None
        """The session played (0-based); None until the client's first request picks it."""
        self._prelude: list[Any] = []
        self._claims = claims

    def _index(self, n: int) -> ReplayIndex:
        index = self._indexes.get(n)
        if index is None:
            index = self._indexes[n] = ReplayIndex(self.parts[n], self.config.match)
        return index

    def route(self, value: Any) -> ReplayEngine:
        """The engine that takes client message `value` (a parsed JSON value)."""
        if self.chosen is not None:
            return self.engine
        if (
            not isinstance(value, dict)
            or classify(value) is not MessageType.REQUEST
            or value.get("method") in PRELUDE
        ):
            self._prelude.append(value)
            return self.engine
        claims = self._claims() if self._claims is not None else None
        taken = claims.taken() if claims is not None else set()
        self.chosen = self.pick(value, taken)
        if claims is not None:
            claims.add(self.chosen)
        if self.chosen != 0:
            self.engine = ReplayEngine(self._index(self.chosen), self.config)
            for msg in self._prelude:
                self.engine.receive(msg)  # the client had these answers from the first session
        self._prelude = []
        return self.engine

    def pick(self, request: dict[str, Any], taken: set[int]) -> int:
        """The session for a first request (see the module's docstring)."""
        order = [n for n in range(len(self.parts)) if n not in taken]
        order += [n for n in range(len(self.parts)) if n in taken]
        for first_only in (True, False):
            for n in order:
                index = self._index(n)
                key = index.key(index.subject(request))
                if first_only:
                    firsts = [e for e in index.entries if e.exchange.method != "server/discover"]
                    if firsts and firsts[0].key == key:
                        return n
                elif key in index.by_key:
                    return n
        return order[0]


class Claims:
    """The sessions of one cassette that launches of one run have picked, in a file of the
    temporary directory (locked while read and written): each launch is a fresh process."""

    def __init__(self, cassette: Path, run: str) -> None:
        try:
            stamp = os.stat(cassette).st_mtime_ns
        except OSError:
            stamp = 0
        from filelock import FileLock

        from mcptape.proc.runs import private_folder

        what = f"{cassette.resolve()}:{stamp}:{run}"
        folder = private_folder("mcptape-sessions")
        self.path = folder / (hashlib.sha256(what.encode()).hexdigest()[:24] + ".txt")
        self._lock = FileLock(str(self.path) + ".lock")

    def taken(self) -> set[int]:
        with self._lock:
            try:
                text = self.path.read_text()
            except OSError:
                return set()
        return {int(w) for w in text.split() if w.isdigit()}

    def add(self, n: int) -> None:
        with self._lock, self.path.open("a") as f:
            f.write(f"{n}\n")


def claims_for(cassette: Cassette) -> Callable[[], Claims | None]:
    """What `SessionPicker` asks for the claims of this launch's run (None: a cassette in memory)."""

    def make() -> Claims | None:
        if cassette.path is None:
            return None
        from mcptape.proc.runs import run_id

        try:
            return Claims(cassette.path, run_id())
        except OSError:
            return None

    return make
