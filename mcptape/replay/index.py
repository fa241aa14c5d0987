"""The replay index: a cassette's exchanges by matching key, built once; and one pass over it.

Pure. `ReplayIndex` pairs the cassette's events into exchanges and files every playable
client request under its key (method + significant params, see `mcptape.keys`), in
recorded order. It also keeps what the engine answers outside the index: the legacy
`initialize` handshakes, the `server/discover` probes, unsolicited server messages, and
the point where the recorded client hung up (nothing the server sent after it is played).

A `Pass` is one client session's walk through the index: each recorded exchange plays
once, first in first out per key; with `allow_repeats` an empty queue replays its last
exchange again. A new client session starts a new pass, from the top.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from mcptape.cassette import Cassette
from mcptape._perf import paused_gc
from mcptape.keys import redacted_param_paths, request_key
from mcptape.model import Kind, Source
from mcptape.pairing import Exchange, Item, pair
from mcptape.versions import is_modern
from mcptape.wire.jsonrpc import MessageType

from .matcher import MatchPolicy, Subject

UNINDEXED: frozenset[str] = frozenset({"initialize", "ping"})
"""Methods the engine answers itself rather than from the index."""


@dataclass(slots=True)
class Entry:
    """One playable recorded exchange."""

    exchange: Exchange
    key: bytes
    subject: Subject

    @property
    def seq(self) -> int:
        return self.exchange.request.event.seq


@dataclass(slots=True)
class Miss:
    """Why a pass had nothing for a key: never recorded, or every recording already played."""

    key: bytes
    played: int
    """How many recorded exchanges with this key were played (0: never recorded, or filtered)."""
    rejected: list[tuple[Entry, list[str]]] = field(default_factory=list)
    """Queued entries that extra matchers turned down, with their reasons."""


class ReplayIndex:
    """A cassette's exchanges, indexed for replay under one `MatchPolicy`."""

    def __init__(self, cassette: Cassette, policy: MatchPolicy | None = None) -> None:
        with paused_gc():
            self._build(cassette, policy)

    def _build(self, cassette: Cassette, policy: MatchPolicy | None) -> None:
        self.cassette = cassette
        self.policy = policy or MatchPolicy()
        session = pair(cassette.events)
        self.session = session
        eofs = [e.seq for e in cassette.events if e.kind is Kind.EOF and e.src is Source.CLIENT]
        self.hangup: int | None = eofs[0] if eofs else None
        """Seq of the recorded client's end of input. Results and notifications after it are
        played (a server that finishes its work at end of input writes them, and the client
        reads them); server requests (the client could not answer them) and error answers
        (a server saying the connection closed) are not."""
        self.redacted: dict[str, tuple[tuple[str, ...], ...]] = {}
        for ex in session.exchanges:
            paths = redacted_param_paths(ex.request.event.redacted)
            if paths:
                known = self.redacted.get(ex.method, ())
                self.redacted[ex.method] = known + tuple(p for p in paths if p not in known)
        self.entries: list[Entry] = []
        self.initialize: list[Exchange] = []
        self.discover: list[Exchange] = []
        by_key: dict[bytes, list[Entry]] = {}
        for ex in session.exchanges:
            if ex.is_notification:
                continue
            if ex.method == "initialize":
                self.initialize.append(ex)
                continue
            if ex.method == "server/discover":
                self.discover.append(ex)
            if ex.method in UNINDEXED:
                continue
            subject = self.subject(ex.msg)
            entry = Entry(ex, self.key(subject), subject)
            self.entries.append(entry)
            by_key.setdefault(entry.key, []).append(entry)
        self.by_key: dict[bytes, tuple[Entry, ...]] = {k: tuple(v) for k, v in by_key.items()}
        self.modern = any(is_modern(ex.protocol_version) for ex in session.exchanges if ex.method != "initialize")
        """True when the cassette speaks 2026-07-28 or later (no handshake)."""
        self.legacy = any(ex.result is not None for ex in self.initialize)
        """True when the cassette opened with an `initialize` handshake that succeeded."""
        self.after: dict[int, list[Item]] = {}
        """Unsolicited server messages, filed under the request exchange they followed."""
        requests = [ex.index for ex in session.exchanges if not ex.is_notification]
        for before, item in session.unsolicited:
            prior = [i for i in requests if i < before]
            self.after.setdefault(prior[-1] if prior else -1, []).append(item)

    def subject(self, msg: dict[str, Any]) -> Subject:
        """The matching view of a request, ignoring what was redacted in recordings of its method."""
        return self.policy.subject(msg, self.redacted.get(str(msg.get("method", "")), ()))

    def key(self, subject: Subject) -> bytes:
        """The index key: method + significant params, or the method alone without the `params` matcher."""
        if not self.policy.exact:
            return subject.method.encode()
        return request_key({"method": subject.method, "params": subject.params})

    def played_out(self, item: Item) -> bool:
        """True for a server request or error sent after the recorded client closed its input."""
        if self.hangup is None or item.event.seq < self.hangup:
            return False
        return item.type is MessageType.REQUEST or (isinstance(item.msg, dict) and "error" in item.msg)

    def new_pass(self, allow_repeats: bool = False) -> Pass:
        return Pass(self, allow_repeats)


class Pass:
    """One client session's consumption of the index."""

    def __init__(self, index: ReplayIndex, allow_repeats: bool = False) -> None:
        self.index = index
        self.allow_repeats = allow_repeats
        self.queues: dict[bytes, deque[Entry]] = {}
        self.last: dict[bytes, Entry] = {}
        self.plays: dict[int, int] = {}
        """exchange index -> times played in this pass."""

    def take(self, subject: Subject) -> Entry | Miss:
        """The next recorded exchange for an incoming request, or why there is none."""
        index = self.index
        key = index.key(subject)
        recorded = index.by_key.get(key)
        if recorded is None:
            return Miss(key, 0)
        queue = self.queues.get(key)
        if queue is None:
            queue = self.queues[key] = deque(recorded)
        extra = index.policy.extra
        rejected: list[tuple[Entry, list[str]]] = []
        chosen: Entry | None = None
        if not extra and queue:
            chosen = queue.popleft()
        else:
            for entry in queue:
                reasons = [r for m in extra if (r := m(entry.subject, subject)) is not None]
                if not reasons:
                    chosen = entry
                    break
                rejected.append((entry, reasons))
            if chosen is not None:
                queue.remove(chosen)
        if chosen is None and self.allow_repeats:
            last = self.last.get(key)
            if last is not None and not [m for m in extra if m(last.subject, subject) is not None]:
                chosen = last
        if chosen is None:
            played = sum(self.plays.get(e.exchange.index, 0) for e in recorded)
            return Miss(key, played, rejected)
        self.last[key] = chosen
        self.plays[chosen.exchange.index] = self.plays.get(chosen.exchange.index, 0) + 1
        return chosen

    def mark(self, exchange: Exchange) -> None:
        """Counts a recorded exchange as played although it was answered outside `take`."""
        for entry in self.index.entries:
            if entry.exchange is exchange:
                queue = self.queues.setdefault(entry.key, deque(self.index.by_key[entry.key]))
                if entry in queue:
                    queue.remove(entry)
                self.last[entry.key] = entry
        self.plays[exchange.index] = self.plays.get(exchange.index, 0) + 1

    def unplayed(self) -> list[Entry]:
        """Recorded exchanges this pass never played, in cassette order."""
        return [e for e in self.index.entries if e.exchange.index not in self.plays]

    def candidates(self, method: str | None = None) -> Iterable[tuple[int, Subject]]:
        """Every indexed recorded request (of `method`, when given) as (seq, subject)."""
        return [(e.seq, e.subject) for e in self.index.entries if method is None or e.subject.method == method]
