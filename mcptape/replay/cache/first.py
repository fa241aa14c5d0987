"""A big cassette's first read for a replay: one pass over its lines, every message lazy.

Each line is parsed once and checked as `load` checks it (the same one-line errors), and what
the replay needs of it is taken there and then: its event without its message (a `LazyEvent`:
where its line is), its place in the pairing (`PairingStream`, which holds the messages of the
requests in flight, not the others), and, for a request, what the replay index reads of it (its
method, its key under the default policy, what its client had declared: a `Plan`). Then the
parsed line is let go. The replay sees what a replay from an index file sees
(`reading.cassette_of`): an `IndexedCassette` with its pairing and plan, each message read from
the file again when first played.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from mcptape.cassette.codec import NOT_JSON, read_lines
from mcptape.cassette.format import _corrupt, _full_event, _header, cut_short, truncated_warning
from mcptape.cassette.lazy import _MSG, _SEQ, UNREAD, LazyEvent, LineSource
from mcptape.cassette.model import FORMAT_VERSION, HEADER_MARKER, Event, Header, Kind, Source
from mcptape.cassette.shape import header_problem, plain_event
from mcptape.errors import CassetteError
from mcptape.pairing import Exchange, Item, PairingStream, Session, lazy_item
from mcptape.replay.declared import Recorded
from mcptape.replay.encoded import PROGRESS, rewrite_kind
from mcptape.replay.index import UNINDEXED, DefaultKeys
from mcptape.replay.prepared import IndexedCassette, Plan
from mcptape.wire.jsonrpc import MessageType, classify

BUFFER = 1 << 20
"""The reading buffer's size."""

_REQUEST, _NOTIFICATION = MessageType.REQUEST, MessageType.NOTIFICATION
_new = LazyEvent.__new__
_PROGRESS = "notifications/progress"
"""The method of the only notifications a replay rewrites as progress (`rewrite_kind`)."""


def first_read(source: LineSource, path: Path) -> IndexedCassette | None:
    """The cassette open as `source` (at `path`), read in one pass, its messages lazy; None when it
    is to be read whole (`loads`): a blank first line, or an older format (migrated in memory).

    Raises:
        CassetteError: as `load` does.
        CassetteVersionError: as `load` does.
        OSError: the file cannot be read.
    """
    name = str(path)
    with os.fdopen(os.dup(source.fd), "rb", buffering=BUFFER) as f:
        f.seek(0)
        first = f.readline()
        if not first.strip():
            return None
        head = _header(first, name)
        if type(marker := head.get(HEADER_MARKER)) is not int or marker != FORMAT_VERSION:
            return None
        reader = _Reader(source, name)
        truncated = reader.read(f, len(first))
        source.placed(0, reader.last)  # (each offset fit, as the last: `add` packs them inline)
    problem = header_problem(head)
    if problem is not None:
        raise CassetteError(f"{name}:1: malformed header: {problem}")
    events = reader.events
    warnings = [truncated] if truncated else []
    warnings.extend(cut_short(name, events))
    session, plan = reader.done()
    return IndexedCassette(
        Header.from_json(head),
        events,
        path,
        warnings,
        truncated,
        reader.lines_apart(),
        (events, len(events), session),
        plan,
        source.parsed,
    )


class _Reader:
    """The events, pairing and plan of a cassette's lines, one line at a time (`add`)."""

    def __init__(self, source: LineSource, name: str) -> None:
        self.source = source
        self.bits = source.bits
        self.last = 0
        """The offset of the last line read."""
        self.name = name
        self.events: list[Event] = []
        self.others: list[Event] = []
        self.lines: dict[int, int] = {}
        """`Cassette.lines`, as `lines_apart` makes it, while the seqs go up (`top`: the last)."""
        self.top: int | None = 0
        """The last seq read; None once one was not above the one before (`lines`)."""
        self.lines_of: dict[int, int] = {}
        """id(event) -> file line of the events that are not lazy (a `LazyEvent` knows its own)."""
        self.watcher = _Watcher()
        self.stream = PairingStream(self.watcher, keep=True, make=_item)
        self.held: list[LazyEvent] = []
        """Events whose message stays until the end: batches with a client request in them."""

    def read(self, f: Any, offset: int) -> str | None:
        """Reads every event line of `f` (the first at `offset`); the warning about a truncated
        last line, which is dropped (None: there is none)."""
        add = self.add
        for lineno, start, line, obj in read_lines(f, 2, offset):
            if obj is NOT_JSON:
                if not line.endswith(b"\n"):  # the last line: a recorder stopped mid-write
                    return truncated_warning(self.name, lineno, len(self.events))
                raise _corrupt(self.name, lineno)
            ev = plain_event(obj) if type(obj) is dict else None  # (`_event`, inlined: per line)
            if ev is None:
                ev = _full_event(obj, self.name, lineno)
            add(ev, lineno, start)
            self.last = start
        return None

    def add(self, ev: Event, lineno: int, offset: int) -> None:
        """Files the event read from file line `lineno` (at `offset`)."""
        seq, top = ev.seq, self.top
        if top is not None:
            if seq > top:
                self.top = seq
                if lineno != seq + 1:
                    self.lines[seq] = lineno
            else:
                self.top = None
        if ev.kind is not Kind.MESSAGE or ev.src is None:
            self.events.append(ev)
            self.others.append(ev)
            self.lines_of[id(ev)] = lineno
            return
        lazy = _new(LazyEvent)  # (`lazy_at`, in place)
        lazy._source = source = self.source
        _SEQ.__set__(lazy, seq << self.bits | offset)  # (`LineSource.placed`)
        lazy.t, lazy.kind, lazy.src = ev.t, ev.kind, ev.src
        lazy.text, lazy.b64, lazy.size = ev.text, ev.b64, ev.size
        lazy.http, lazy.info, lazy.redacted = ev.http, ev.info, ev.redacted
        msg = ev.msg
        _MSG.__set__(lazy, msg)  # while it is paired
        if lineno != seq + 1:
            source.apart[offset] = lineno
        self.events.append(lazy)
        if type(msg) is list:
            self.stream.add(lazy)
        else:
            self.stream.add_one(lazy, msg)
        answers = self.watcher.answers
        if answers:  # their requests are read no more
            for ex in answers:
                if type(_MSG.__get__(ex.request.event)) is not list:
                    release(ex.request.event)
            answers.clear()
        if ev.src is Source.CLIENT:
            if type(msg) is list:
                if any(classify(m) is _REQUEST for m in msg):
                    self.held.append(lazy)
                    return
            elif classify(msg) is _REQUEST:  # let go of when answered (`_Watcher.answered`)
                return
        _MSG.__set__(lazy, UNREAD)  # (`release`)

    def lines_apart(self) -> dict[int, int]:
        """`Cassette.lines` (`cassette.format.lines_apart`) of the events read."""
        if self.top is not None:
            return self.lines
        apart: dict[int, int] = {}
        lines_of = self.lines_of
        for ev in self.events:
            apart.setdefault(ev.seq, ev.line if isinstance(ev, LazyEvent) else lines_of[id(ev)])
        return apart

    def done(self) -> tuple[Session, Plan]:
        """The session and plan of the events read; every message let go of."""
        watcher = self.watcher
        for ex in watcher.exchanges:  # requests never answered
            release(ex.request.event)
        for ev in self.held:
            release(ev)
        session = Session(
            watcher.exchanges,
            watcher.found,
            self.stream.replies,
            self.stream.orphans,
            self.others,
        )
        return session, watcher.plan(session)


def release(ev: Event) -> None:
    """Lets go of a lazy event's message: it is read from the file when next asked for."""
    if isinstance(ev, LazyEvent):
        _MSG.__set__(ev, UNREAD)


def _item(src: Source, m: Any, ev: Event, typ: MessageType) -> Item:
    """The lazy item of message `m` of `ev` (a `LazyEvent` whose message is still there):
    `m` itself while the event holds it, read from the file after (`release`)."""
    whole = _MSG.__get__(ev)
    progress = typ is _NOTIFICATION and m["method"] == _PROGRESS and rewrite_kind(m) == PROGRESS
    pos = -1 if whole is m else next(k for k, x in enumerate(whole) if x is m)
    return lazy_item(src, ev, typ, pos, progress)


class _Watcher:
    """What a `PairingStream` of the first read tells (`pairing.Watcher`): keeps the exchanges,
    and what the `Plan` holds of each request as it opens."""

    def __init__(self) -> None:
        self.exchanges: list[Exchange] = []
        self.found: list[tuple[int, Item]] = []
        """Unsolicited server messages (`Session.unsolicited`)."""
        self.answers: list[Exchange] = []
        """The exchanges answered by the event being paired."""
        self.methods: list[str] = []
        self.keys: list[bytes | None] = []
        self.declared: list[dict[str, Any]] = []
        self.redacted: set[str] = set()
        """Methods of which a recorded request has redactions: the index keys them itself."""
        self.recorded = Recorded()
        self.key_of = DefaultKeys()

    def opened(self, ex: Exchange) -> None:
        request = ex.request
        msg = request.msg
        method: str = msg["method"]  # (a string: `classify` says so of a request or notification)
        if len(method) <= 64:  # a short name: one string for every exchange of a method
            method = sys.intern(method)
        self.methods.append(method)
        self.declared.append(self.recorded.of(msg, ex.session))
        if request.type is _REQUEST and method not in UNINDEXED:
            self.keys.append(self.key_of(msg))
        else:
            self.keys.append(None)
        if request.event.redacted:
            self.redacted.add(method)
        self.exchanges.append(ex)

    def added(self, ex: Exchange, item: Item) -> None:
        ex.items.append(item)

    def answered(self, ex: Exchange) -> None:
        self.answers.append(ex)
        msg = ex.request.msg
        if msg.get("method") == "initialize" and ex.response is not None:
            http = ex.response.event.http
            minted = http.get("session") if http else None
            if minted is not None:  # over HTTP the session id comes with the answer
                self.recorded.minted(str(minted), msg)

    def unsolicited(self, before: int, item: Item) -> None:
        self.found.append((before, item))

    def plan(self, session: Session) -> Plan:
        """The `Plan` of what was read; `done` of the declarations."""
        self.recorded.done()
        keys = self.keys
        if self.redacted:
            keys = [
                None if m in self.redacted else k for m, k in zip(self.methods, keys, strict=True)
            ]
        return Plan(session, self.methods, keys, self.declared)
