"""Cassettes read for their exchanges only, in one pass and a few arrays: `outline`.

The commands that need a big cassette's exchanges but not all of its messages at once
(`prune`, `show --format json`) read it once to pair the messages' skeletons as they come
(`mcptape.pairing.PairingStream`), keeping of each event and each exchange a few numbers, then
read the file again, line by line, for the rest: memory holds the outline, not the cassette nor
its skeletons.

Events are known by their place in the file (0 for the first after the header), not by `seq`:
a hand-edited cassette may repeat a `seq`, and its events are still distinct lines.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcptape.cassette import EventLine, cut_short_after, stream
from mcptape.cassette.model import Header, Kind
from mcptape.pairing import Exchange, Item, PairingStream, skeleton_event
from mcptape.wire.jsonrpc import MessageType

if TYPE_CHECKING:
    import os  # (for `os.PathLike` alone: opening the file is `stream`'s)

NONE = -1
"""No exchange (an event none of whose messages belongs to one), no HTTP exchange."""
NO_SEQ = -(2**63)
"""No partner (in `Outline.partner`: a partner whose `seq` is this or does not fit in 64 bits
is in `Outline.partner_apart`)."""
_MAX_SEQ = 2**63 - 1


@dataclass(slots=True)
class Outline:
    """What `prune` and `show --format json` need of a cassette's pairing: per event, the
    exchanges its messages belong to and each message's partner; per exchange, what names it.
    Built by `outline`; `pairing.pair` on the same events builds the same exchanges."""

    path: Path
    name: str
    head: dict[str, Any]
    """Line 1, parsed (`header` reads it once the lines are read: they are checked with it)."""
    warnings: list[str] = field(default_factory=list)
    # per event, by its place in the file
    first: array[int] = field(default_factory=lambda: array("q"))
    """The lowest index of an exchange one of the event's messages belongs to, or `NONE`."""
    more: dict[int, list[list[int]]] = field(default_factory=dict)
    """The events whose messages belong to more than one exchange, and every batch: for each
    message, the indexes of its exchanges (a `notifications/cancelled` is an exchange of its own
    and belongs to the request it cancels)."""
    http_exchange: array[int] = field(default_factory=lambda: array("q"))
    """The event's `http.exchange`, numbered 0, 1, ... in order of appearance, or `NONE`."""
    message: bytearray = field(default_factory=bytearray)
    """1 for a message event."""
    partner: array[int] = field(default_factory=lambda: array("q"))
    """The `seq` of the request a response answers, or of the response a request got; `NO_SEQ`."""
    latency_ms: array[float] = field(default_factory=lambda: array("d"))
    partner_apart: dict[tuple[int, int], tuple[int, float]] = field(default_factory=dict)
    """`partner` and `latency_ms` of a message in a batch, by (event place, place in the batch),
    and of one whose partner's `seq` the array cannot hold (place 0)."""
    # per exchange, by its index
    methods: list[str] = field(default_factory=list)
    names: list[str | None] = field(default_factory=list)
    """The tool or prompt name, or the resource URI, the request is about (`Exchange.name`)."""
    notification: bytearray = field(default_factory=bytearray)
    retry_of: array[int] = field(default_factory=lambda: array("q"))
    """The exchange a 2026-07-28 retry continues (`Exchange.retry_of`), or `NONE`."""
    line: array[int] = field(default_factory=lambda: array("q"))
    """The file line of the request."""
    sessions: list[str] = field(default_factory=list)
    """The client session each exchange belongs to (an HTTP initialize: the one its answer mints),
    as `views.timeline.event_sessions` tells it."""
    versions: list[Any] = field(default_factory=list)
    """The protocol version of each exchange (`Exchange.protocol_version`: an `initialize` takes
    the one its answer names)."""
    ends_with: Kind | None = None
    """The kind of the last event."""

    @property
    def header(self) -> Header:
        return Header.from_json(self.head)

    def __len__(self) -> int:
        return len(self.first)

    def exchanges_of(self, pos: int) -> list[list[int]]:
        """For each message of the event at `pos`, the exchanges it belongs to."""
        more = self.more.get(pos)
        if more is not None:
            return more
        first = self.first[pos]
        return [[first]] if first != NONE else [[]]

    def describe(self, ex: int) -> str:
        """The exchange as the commands name it: method, name, file line."""
        name = self.names[ex]
        return f"{self.methods[ex]}{f' {name!r}' if name else ''} (line {self.line[ex]})"


def outline(path: str | os.PathLike[str], tolerate_truncated: bool = False) -> Outline:
    """Reads the cassette at `path` once, line by line, into its `Outline`. Every line is
    validated as `load` does; a truncated last line is an error, or with `tolerate_truncated` a
    warning, as with `load`.

    Raises:
        CassetteError: as `load` does (and for a truncated last line, see above).
    """
    src = stream(path, tolerate_truncated=tolerate_truncated)
    out = Outline(src.path, src.name, src.head)
    _Outliner(out).read(src.events)
    out.warnings = [*src.warnings, *cut_short_after(src.name, len(out), out.ends_with)]
    return out


class _Outliner:
    """Fills an `Outline` as a `PairingStream` tells what it pairs (a `pairing.Watcher`)."""

    def __init__(self, out: Outline) -> None:
        self.out = out
        self.stream = PairingStream(self)
        self.pos = 0
        self.lineno = 0
        self.batch: dict[int, int] | None = None
        """id of each message of the batch being filed -> its place in the batch."""
        self.asked: dict[int, tuple[int, int]] = {}
        """An unanswered request's exchange -> (event place, place in batch or -1) of the request."""
        self.strings: dict[str, str] = {}
        self.http_ids: dict[Any, int] = {}

    def read(self, lines: Iterable[EventLine]) -> None:
        out = self.out
        for el in lines:
            ev = el.event
            self.pos = len(out.first)
            self.lineno = el.lineno
            out.first.append(NONE)
            out.partner.append(NO_SEQ)
            out.latency_ms.append(0.0)
            hx = ev.http.get("exchange") if ev.http else None
            out.http_exchange.append(
                NONE if hx is None else self.http_ids.setdefault(hx, len(self.http_ids))
            )
            out.ends_with = ev.kind
            if ev.kind is not Kind.MESSAGE or ev.src is None:
                out.message.append(0)
                continue
            out.message.append(1)
            skel = skeleton_event(ev)
            if isinstance(skel.msg, list):
                self.batch = {id(m): i for i, m in enumerate(skel.msg)}
                out.more[self.pos] = [[] for _ in skel.msg]
            else:
                self.batch = None
            self.stream.add(skel)

    def _shared(self, text: str) -> str:
        """One string for every exchange of a session id or name."""
        return self.strings.setdefault(text, text)

    def _place(self, item: Item) -> int:
        return -1 if self.batch is None else self.batch[id(item.msg)]

    def _member(self, index: int, at: int) -> None:
        """The message at place `at` of the event being filed belongs to exchange `index`."""
        out, pos = self.out, self.pos
        first = out.first[pos]
        more = out.more.get(pos)
        if more is None:
            if first in (NONE, index):
                out.first[pos] = index
                return
            more = out.more[pos] = [[first]]  # a second exchange for the one message
        more[max(at, 0)].append(index)
        if first == NONE or index < first:
            out.first[pos] = index

    def opened(self, ex: Exchange) -> None:
        out = self.out
        out.methods.append(ex.method)  # (a skeleton's: one string per short method name)
        name = ex.name
        out.names.append(None if name is None else self._shared(name))
        out.notification.append(1 if ex.is_notification else 0)
        out.line.append(self.lineno)
        out.sessions.append(self._shared(ex.session))
        out.retry_of.append(NONE if ex.retry_of is None else ex.retry_of)
        out.versions.append(ex.protocol_version)
        at = self._place(ex.request)
        self._member(ex.index, at)
        if ex.request.type is MessageType.REQUEST:
            self.asked[ex.index] = (self.pos, at)

    def added(self, ex: Exchange, item: Item) -> None:
        self._member(ex.index, self._place(item))

    def answered(self, ex: Exchange) -> None:
        out = self.out
        assert ex.response is not None
        at = self._place(ex.response)
        self._member(ex.index, at)
        a, b = ex.request.event, ex.response.event
        latency = (b.t - a.t) * 1000
        asked = self.asked.pop(ex.index, None)
        if asked is not None:
            self._partner(asked, b.seq, latency)
        self._partner((self.pos, at), a.seq, latency)
        sid = b.http.get("session") if b.http else None
        if sid is not None:  # an HTTP initialize: the session id comes with its answer
            out.sessions[ex.index] = self._shared(str(sid))
        out.versions[ex.index] = ex.protocol_version  # (an initialize's, from its answer)

    def _partner(self, where: tuple[int, int], seq: int, latency: float) -> None:
        pos, at = where
        if at == -1 and NO_SEQ < seq <= _MAX_SEQ:
            self.out.partner[pos] = seq
            self.out.latency_ms[pos] = latency
        else:
            self.out.partner_apart[pos, max(at, 0)] = (seq, latency)

    def unsolicited(self, before: int, item: Item) -> None:
        pass
