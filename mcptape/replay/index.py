"""The replay index: a cassette's exchanges by matching key, built once; and one pass over it.

Pure. `ReplayIndex` pairs the cassette's events into exchanges and files every playable
client request under its key (method + significant params, see `mcptape.keys`), in
recorded order. It also keeps what the engine answers outside the index: the legacy
`initialize` handshakes, the `server/discover` probes, unsolicited server messages, and
the point where the recorded client hung up (nothing the server sent after it is played).

A `Pass` is one client session's walk through the index: each recorded exchange plays
once, first in first out per key; with `allow_repeats` an empty queue replays its last
exchange again. A new client session starts a new pass, from the top.

What the client declared about itself (its capabilities, and the log level it asked for,
per request in 2026-07-28 or by handshake and `logging/setLevel` before) is not part of the
key: it is compared apart (`declared_of`), so the same request finds its recordings in either
era and from any client. Among a key's recordings the one whose declaration fits is played;
when none fits, the nearest, and the pass says what differed (`Pass.differs`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson

from mcptape._perf import trimmed
from mcptape.cassette import Cassette
from mcptape.cassette.model import Kind, Source
from mcptape.keys import batch_position, redacted_param_paths
from mcptape.pairing import Exchange, Item, Session
from mcptape.versions import is_modern
from mcptape.wire.jsonrpc import MessageType

from .declared import (
    CLIENT_INFO,
    DECLARED_PATHS,
    LEVEL_UNKNOWN,
    comparable,
    declared,
    declared_in,
    declared_of,
    only_who,
    recorded_declarations,
)
from .encoded import Encodings
from .matcher import FieldDiff, MatchPolicy, Subject, field_diff
from .prepared import Plan, kept_plan, paired

__all__ = [
    "CLIENT_INFO",
    "DECLARED_PATHS",
    "LEVEL_UNKNOWN",
    "UNINDEXED",
    "Entry",
    "Miss",
    "Pass",
    "Plan",
    "ReplayIndex",
    "declared",
    "declared_in",
    "declared_of",
    "keyed_by_default",
    "only_who",
    "recorded_declarations",
]

UNINDEXED: frozenset[str] = frozenset({"initialize", "ping"})
"""Methods the engine answers itself rather than from the index."""


class Entry:
    """One playable recorded exchange.

    Its `subject` (the matching view of the recorded request) is made when first asked, when the
    index was built with its keys at hand (`Plan`): the default policy matches by key alone, and
    only extra matchers and a no-match report look at subjects.
    """

    __slots__ = ("_subject", "_view", "declared", "exchange", "key")

    def __init__(
        self,
        exchange: Exchange,
        key: bytes,
        subject: Subject | None,
        declared: dict[str, Any] | None = None,
        view: Callable[[dict[str, Any]], Subject] | None = None,
    ) -> None:
        self.exchange = exchange
        self.key = key
        self._subject = subject
        self._view = view
        """What makes the subject of the recorded request, when `subject` is None."""
        self.declared: dict[str, Any] = {} if declared is None else declared
        """What the recorded client declared (capabilities, log level) when it sent the request."""

    @property
    def subject(self) -> Subject:
        subject = self._subject
        if subject is None:
            assert self._view is not None
            subject = self._subject = self._view(self.exchange.request.msg)
        return subject

    @property
    def seq(self) -> int:
        return self.exchange.request.event.seq

    def __repr__(self) -> str:
        return f"Entry(exchange={self.exchange.index}, key={self.key!r})"


@dataclass(slots=True)
class Miss:
    """Why a pass had nothing for a key: never recorded, or every recording already played."""

    key: bytes
    played: int
    """How many recorded exchanges with this key were played (0: never recorded, or filtered)."""
    rejected: list[tuple[Entry, list[str]]] = field(default_factory=list)
    """Queued entries that extra matchers turned down, with their reasons."""
    declared: tuple[FieldDiff, ...] = ()
    """Exact declarations were asked for and only recordings declared otherwise: the nearest's difference."""


def _redactions(session: Session, methods: list[str]) -> dict[str, tuple[tuple[str, ...], ...]]:
    """Method -> the request params its recordings redacted (a redacted value matches any).
    `methods`: each exchange's method (only the requests with redactions are read)."""
    redacted: dict[str, tuple[tuple[str, ...], ...]] = {}
    for ex, method in zip(session.exchanges, methods, strict=True):
        event = ex.request.event
        if not event.redacted:
            continue
        paths = redacted_param_paths(event.redacted, batch_position(ex.request.msg, event.msg))
        if paths:
            known = redacted.get(method, ())
            redacted[method] = known + tuple(p for p in paths if p not in known)
    return redacted


class _Subjects:
    """The matching view of requests under `policy`, ignoring what recordings of each method
    redacted (`redacted`) and what the client declared (`ReplayIndex.subject`)."""

    __slots__ = ("_ignored", "policy", "redacted")

    def __init__(
        self, policy: MatchPolicy, redacted: dict[str, tuple[tuple[str, ...], ...]]
    ) -> None:
        self.policy = policy
        self.redacted = redacted
        self._ignored: dict[str, tuple[tuple[str, ...], ...]] = {}
        """Method -> every params path left out of its subject (computed once per method)."""

    def __call__(self, msg: dict[str, Any]) -> Subject:
        method = str(msg.get("method", ""))
        ignored = self._ignored.get(method)
        if ignored is None:
            ignored = self._ignored[method] = (*self.redacted.get(method, ()), *DECLARED_PATHS)
        return self.policy.subject(msg, ignored)


def key_of(policy: MatchPolicy, subject: Subject) -> bytes:
    """`ReplayIndex.key` under `policy`."""
    if not policy.exact:
        return subject.method.encode()
    # subject.params is already stripped; only a `_meta` the ignored paths emptied is left
    params = subject.params
    if isinstance(params, dict) and params.get("_meta") == {}:
        params = {k: v for k, v in params.items() if k != "_meta"}
    return trimmed(
        orjson.dumps({"method": subject.method, "params": params}, option=orjson.OPT_SORT_KEYS)
    )


class DefaultKeys:
    """The key of a recorded request as an index under the default policy files it when no
    recording of its method redacted anything (`keyed_by_default`): for a reader that makes a
    `Plan` as it reads."""

    __slots__ = ("_policy", "_subjects")

    def __init__(self) -> None:
        self._policy = MatchPolicy()
        self._subjects = _Subjects(self._policy, {})

    def __call__(self, msg: dict[str, Any]) -> bytes:
        return key_of(self._policy, self._subjects(msg))


def keyed_by_default(policy: MatchPolicy) -> bool:
    """True when `policy` keys recorded requests as the default policy does (the params matcher,
    no ignored paths): a `Plan`'s keys are its keys."""
    return policy.exact and not policy.paths


class ReplayIndex:
    """A cassette's exchanges, indexed for replay under one `MatchPolicy`."""

    def __init__(self, cassette: Cassette, policy: MatchPolicy | None = None) -> None:
        self._build(cassette, policy)
        self.encodings = Encodings()
        """The bytes of recorded server messages that play more than once, encoded once."""

    def _build(self, cassette: Cassette, policy: MatchPolicy | None) -> None:
        self.cassette = cassette
        self.policy = policy or MatchPolicy()
        session = paired(cassette)
        self.session = session
        plan = kept_plan(cassette, session)
        self.methods: list[str] = (
            plan.methods if plan is not None else [ex.method for ex in session.exchanges]
        )
        """Each exchange's method, by its index."""
        eofs = [e.seq for e in cassette.events if e.kind is Kind.EOF and e.src is Source.CLIENT]
        self.hangup: int | None = eofs[0] if eofs else None
        """Seq of the recorded client's end of input. Results and notifications after it are
        played (a server that finishes its work at end of input writes them, and the client
        reads them); server requests (the client could not answer them) and error answers
        (a server saying the connection closed) are not."""
        self.redacted: dict[str, tuple[tuple[str, ...], ...]] = _redactions(session, self.methods)
        """Method -> the request params that recordings of it redacted (not matched)."""
        self._subjects = _Subjects(self.policy, self.redacted)
        """What `subject` asks (the entries made without a subject keep it too: not the index,
        whose entries they are, so that an index let go is freed at once)."""
        methods = self.methods
        self.pings: list[Exchange] = [
            ex
            for ex, method in zip(session.exchanges, methods, strict=True)
            if method == "ping" and ex.response is not None
        ]
        """Recorded `ping` answers: played before anything mcptape would make up."""
        self._index_requests(session, plan)
        self.modern = any(
            is_modern(ex.protocol_version)
            for ex, method in zip(session.exchanges, methods, strict=True)
            if method != "initialize"
        )
        """True when the cassette speaks 2026-07-28 or later (no handshake)."""
        self.legacy = any(ex.result is not None for ex in self.initialize)
        """True when the cassette opened with an `initialize` handshake that succeeded."""
        self.retries: dict[int, list[Exchange]] = {}
        """Recorded `input_required` retries, by the exchange that started the chain."""
        for ex in session.exchanges:
            if ex.retry_of is not None:
                self.retries.setdefault(ex.retry_of, []).append(ex)
        self._file_server_messages(session)

    def _index_requests(self, session: Session, plan: Plan | None) -> None:
        """Files every request exchange under its key; `initialize` and `server/discover` apart.
        With a `plan`, what the clients declared is read from it, and under a policy keyed by
        default, the keys too: no request is read."""
        self.entries: list[Entry] = []
        self.initialize: list[Exchange] = []
        self.discover: list[Exchange] = []
        by_key: dict[bytes, Any] = {}
        keys = plan.keys if plan is not None and keyed_by_default(self.policy) else None
        if plan is not None:
            declarations = plan.declared
        else:
            recorded = recorded_declarations(session)
            declarations = [recorded.get(ex.index, {}) for ex in session.exchanges]
        notification = MessageType.NOTIFICATION
        for ex, method in zip(session.exchanges, self.methods, strict=True):
            if ex.request.type is notification:
                continue
            if method == "initialize":
                self.initialize.append(ex)
                continue
            if method == "server/discover":
                self.discover.append(ex)
            if method in UNINDEXED:
                continue
            key = keys[ex.index] if keys is not None else None
            if key is not None:
                entry = Entry(ex, key, None, declarations[ex.index], self._subjects)
            else:
                subject = self.subject(ex.request.msg)
                entry = Entry(ex, self.key(subject), subject, declarations[ex.index])
            self.entries.append(entry)
            by_key.setdefault(entry.key, []).append(entry)
        for k, v in by_key.items():  # in place: each list let go of as its tuple is made
            by_key[k] = tuple(v)
        self.by_key: dict[bytes, tuple[Entry, ...]] = by_key

    def _file_server_messages(self, session: Session) -> None:
        """Files unsolicited server messages under what triggered them."""
        self.after: dict[int, list[Item]] = {}
        """Unsolicited server messages, filed under the request exchange they followed."""
        self.notified: dict[str, list[int]] = {}
        """Client notification method -> its recorded exchanges, in order: what they triggered is
        played when the client sends that notification (server-filesystem's `roots/list` right
        after `notifications/initialized`), not with the response before it."""
        self.replies: dict[int, Item] = {id(request): answer for request, answer in session.replies}
        """id(unsolicited server request) -> the recorded client's answer to it."""
        notification = MessageType.NOTIFICATION
        for ex, method in zip(session.exchanges, self.methods, strict=True):
            if ex.request.type is notification:
                self.notified.setdefault(method, []).append(ex.index)
        for before, item in session.unsolicited:
            prior = session.exchanges[before - 1] if 0 < before <= len(session.exchanges) else None
            self.after.setdefault(prior.index if prior is not None else -1, []).append(item)

    def subject(self, msg: dict[str, Any]) -> Subject:
        """The matching view of a request, ignoring what was redacted in recordings of its method
        and what the client declared (compared apart)."""
        return self._subjects(msg)

    def key(self, subject: Subject) -> bytes:
        """The index key: method + significant params, or the method alone without the `params` matcher."""
        return key_of(self.policy, subject)

    def played_out(self, item: Item) -> bool:
        """True for a server request or error sent after the recorded client closed its input."""
        if self.hangup is None or item.event.seq < self.hangup:
            return False
        return item.type is MessageType.REQUEST or (
            isinstance(item.msg, dict) and "error" in item.msg
        )

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
        self.differs: tuple[FieldDiff, ...] = ()
        """How the last recording taken differs in what the client declared (empty: it fits)."""
        self._compared = _Compared()

    def take(
        self, subject: Subject, declared: dict[str, Any] | None = None, exact: bool = False
    ) -> Entry | Miss:
        """The next recorded exchange for an incoming request, or why there is none.

        `declared`: what the client declared; a recording that declared the same is preferred,
        else the nearest is played and `differs` says how (with `exact`, it is refused instead).
        """
        self.differs = ()
        index = self.index
        key = index.key(subject)
        recorded = index.by_key.get(key)
        if recorded is None:
            return Miss(key, 0)
        queue = self.queues.get(key)
        if queue is None:
            queue = self.queues[key] = deque(recorded)
        fits, rejected = self._sift(queue, subject)
        chosen, differs = _best(fits, declared, self._compared)
        if chosen is None and self.allow_repeats:
            chosen, differs = self._repeat(key, subject, declared)
        if chosen is not None and differs and exact and not only_who(differs):
            return Miss(key, 0, rejected, differs)
        if chosen is None:
            played = sum(self.plays.get(e.exchange.index, 0) for e in recorded)
            return Miss(key, played, rejected)
        self._consume(key, queue, chosen)
        self.differs = differs
        return chosen

    def _sift(
        self, queue: deque[Entry], subject: Subject
    ) -> tuple[Iterable[Entry], list[tuple[Entry, list[str]]]]:
        """The recordings left that the policy's extra matchers accept (the queue itself when it
        has none), and those they reject, with why."""
        extra = self.index.policy.extra
        if not extra:
            return queue, []
        rejected: list[tuple[Entry, list[str]]] = []
        fits: list[Entry] = []
        for entry in queue:
            reasons = [r for m in extra if (r := m(entry.subject, subject)) is not None]
            if reasons:
                rejected.append((entry, reasons))
            else:
                fits.append(entry)
        return fits, rejected

    def _repeat(
        self, key: bytes, subject: Subject, declared: dict[str, Any] | None
    ) -> tuple[Entry | None, tuple[FieldDiff, ...]]:
        """With repeats allowed: the last recording played for `key` again, if it still fits."""
        last = self.last.get(key)
        extra = self.index.policy.extra
        if last is None or [m for m in extra if m(last.subject, subject) is not None]:
            return None, ()
        return _best([last], declared, self._compared)

    def _consume(self, key: bytes, queue: deque[Entry], chosen: Entry) -> None:
        """Takes `chosen` out of its queue and counts it played."""
        if queue and queue[0] is chosen:  # the common case: first in, first out
            queue.popleft()
        elif chosen in queue:
            queue.remove(chosen)
        self.last[key] = chosen
        self.plays[chosen.exchange.index] = self.plays.get(chosen.exchange.index, 0) + 1

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
        methods = self.index.methods
        return [
            (e.seq, e.subject)
            for e in self.index.entries
            if method is None or methods[e.exchange.index] == method
        ]


class _Compared:
    """How a recorded declaration differs from the client's, remembered for the last pair compared:
    one client declares the same on every request, and consecutive recordings mostly too."""

    __slots__ = ("diffs", "incoming", "rank", "recorded")

    def __init__(self) -> None:
        self.recorded: dict[str, Any] | None = None
        self.incoming: dict[str, Any] | None = None
        self.diffs: tuple[FieldDiff, ...] = ()
        self.rank = (0, 0)
        """Of the last differences returned: how many change answers (not `clientInfo`), how many in all."""

    def __call__(self, recorded: dict[str, Any], incoming: dict[str, Any]) -> tuple[FieldDiff, ...]:
        """The differences (empty: it fits), who the client is last (said after what changes answers)."""
        if (recorded is self.recorded or recorded == self.recorded) and (
            incoming is self.incoming or incoming == self.incoming
        ):
            return self.diffs
        rec, inc = comparable(recorded, incoming)
        diffs = (
            () if rec == inc else tuple(sorted(field_diff(rec, inc), key=lambda d: only_who([d])))
        )
        self.recorded, self.incoming, self.diffs = recorded, incoming, diffs
        self.rank = (sum(1 for d in diffs if not only_who([d])), len(diffs))
        return diffs


def _best(
    fits: Iterable[Entry], declared: dict[str, Any] | None, compared: _Compared | None = None
) -> tuple[Entry | None, tuple[FieldDiff, ...]]:
    """The first recording whose declaration is the client's, else the nearest: fewest differences
    in what changes a server's answers (capabilities, log level), then fewest in all."""
    best: tuple[tuple[int, int], Entry, tuple[FieldDiff, ...]] | None = None
    compare = compared if compared is not None else _Compared()
    for entry in fits:
        if declared is None or entry.declared == declared:
            return entry, ()
        diffs = compare(entry.declared, declared)
        if not diffs:
            return entry, ()
        rank = compare.rank
        if best is None or rank < best[0]:
            best = (rank, entry, diffs)
    return (best[1], best[2]) if best is not None else (None, ())
