"""Per-client state of the HTTP replay: sessions and the pass shared by stateless requests.

A `Session` is one handshake-era client (a Streamable HTTP `Mcp-Session-Id`, or one
HTTP+SSE stream): its engine, the event streams of its requests still open, and its GET
stream. `StatelessPass` is the one pass through the cassette that all 2026-07-28 requests
share.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcptape.pairing import Exchange

from .engine import ReplayEngine
from .http_asgi import Outbox
from .index import Miss, Pass
from .matcher import Subject

if TYPE_CHECKING:
    from .faults import FaultPlan


class Session:
    """One client session: its engine, its open request streams, its GET stream."""

    def __init__(self, sid: str | None, engine: ReplayEngine) -> None:
        self.id = sid
        self.engine = engine
        self.streams: dict[tuple[str, Any], Outbox] = {}
        self.get = Outbox()
        """The standalone GET stream (Streamable HTTP), or the one stream of HTTP+SSE."""
        self.get_open = False
        self.single_stream = False
        """HTTP+SSE: every server message goes on the GET stream."""
        self.faults: FaultPlan | None = None
        """This session's fault counters (`mcptape serve --faults`)."""

    def end(self) -> None:
        self.get.close()
        for outbox in self.streams.values():
            outbox.close()
        self.streams.clear()


class StatelessPass(Pass):
    """The pass shared by 2026-07-28 requests: a key's recordings start over once all played."""

    def take(self, subject: Subject, declared: dict[str, Any] | None = None, exact: bool = False) -> Any:
        found = super().take(subject, declared, exact)
        if isinstance(found, Miss) and found.played and not self.allow_repeats:
            self.queues.pop(found.key, None)
            found = super().take(subject, declared, exact)
        return found


def unplayed(session: Session) -> list[Exchange]:
    """What a handshake-era session never asked for (a failed era probe is answered outside sessions)."""
    return [ex for ex in session.engine.unplayed() if not (ex.method == "server/discover" and ex.error is not None)]
