"""Per-client state of the HTTP replay: sessions, the table of them, and the stateless pass.

A `ClientSession` is one handshake-era client (a Streamable HTTP `Mcp-Session-Id`, or one
HTTP+SSE stream): its engine (with its overlay counters), the event streams of its requests still
open, and its GET stream. `SessionTable` opens, finds and ends them and remembers what each
ended one left unplayed. `StatelessPass` is the one pass through the cassette that all
2026-07-28 requests share.
"""

from __future__ import annotations

import uuid
from dataclasses import replace
from typing import Any

from mcptape.pairing import Exchange

from ..engine import ReplayEngine
from ..index import Miss, Pass, ReplayIndex
from ..matcher import Subject
from ..outputs import ReplayConfig
from .asgi import Outbox


class ClientSession:
    """One client session: its engine (and overlay counters), its open request streams, its GET stream."""

    def __init__(
        self,
        sid: str | None,
        engine: ReplayEngine,
        *,
        single_stream: bool = False,
    ) -> None:
        self.id = sid
        self.engine = engine
        """The session's engine, with its overlay counters (`mcptape serve --fault-file`, `--fault`)."""
        self.streams: dict[tuple[str, Any], Outbox] = {}
        self.get = Outbox()
        """The standalone GET stream (Streamable HTTP), or the one stream of HTTP+SSE."""
        self.get_open = False
        self.single_stream = single_stream
        """HTTP+SSE: every server message goes on the GET stream."""

    def end(self) -> None:
        self.get.close()
        for outbox in self.streams.values():
            outbox.close()
        self.streams.clear()

    def unplayed(self) -> list[Exchange]:
        """What this client never asked for (a failed era probe is answered outside sessions)."""
        return [
            ex
            for ex in self.engine.unplayed()
            if not (ex.method == "server/discover" and ex.error is not None)
        ]


class SessionTable:
    """The sessions of one HTTP replay: each with its own engine (its own pass and overlay counters)."""

    def __init__(self, index: ReplayIndex, config: ReplayConfig) -> None:
        self.index = index
        self.config = config
        self.plain = replace(config, overlay=())
        """`config` without the fault rules: the legacy HTTP+SSE transport is served without them."""
        self.by_id: dict[str, ClientSession] = {}
        self.shared: ClientSession | None = None
        """The session of a handshake-era server that minted no session ids."""
        self.ended: list[list[Exchange]] = []
        """What each ended session left unplayed (for --strict)."""

    def new(self, *, faults: bool = True, single_stream: bool = False) -> ClientSession:
        """A session not yet in the table (its id is given when its `initialize` succeeds)."""
        engine = ReplayEngine(self.index, self.config if faults else self.plain)
        return ClientSession(None, engine, single_stream=single_stream)

    def register(self, session: ClientSession) -> str:
        """Gives `session` a fresh id and files it under it."""
        session.id = uuid.uuid4().hex
        self.by_id[session.id] = session
        return session.id

    def get(self, sid: str) -> ClientSession | None:
        return self.by_id.get(sid)

    def shared_session(self) -> ClientSession:
        if self.shared is None:
            self.shared = self.new()
        return self.shared

    def end(self, session: ClientSession) -> None:
        if session.id is not None and self.by_id.pop(session.id, None) is session:
            session.end()
            left = session.unplayed()
            if left:
                self.ended.append(left)

    def unplayed(self) -> list[list[Exchange]]:
        """What each session, ended or live, left unplayed (the sessions that left something)."""
        live = [
            s.unplayed() for s in [*self.by_id.values(), *([self.shared] if self.shared else [])]
        ]
        return [left for left in [*self.ended, *live] if left]


class StatelessPass(Pass):
    """The pass shared by 2026-07-28 requests: a key's recordings start over once all played."""

    def take(
        self, subject: Subject, declared: dict[str, Any] | None = None, exact: bool = False
    ) -> Any:
        found = super().take(subject, declared, exact)
        if isinstance(found, Miss) and found.played and not self.allow_repeats:
            self.queues.pop(found.key, None)
            found = super().take(subject, declared, exact)
        return found
