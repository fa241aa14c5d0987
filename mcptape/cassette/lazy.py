"""Events whose message is parsed from the cassette file when first read, not when loaded.

A replay of a big cassette plays a few of its messages; parsing every one of them up front was
most of its startup (`mcptape.replay.cache` says when it is done). A `LazyEvent` holds where its
line is in the file; reading `msg` reads that line, parses it, and keeps the message. Every
other field is there from the start (and the index file keeps the pairing, which is what read
the messages otherwise). Each `LineSource` counts the lines its events read so (`Parsed`): the
count is its owner's, not the process's (a replay server settles what it parsed by it).
"""

from __future__ import annotations

import dataclasses
import os
import threading
from typing import Any

import orjson

from mcptape.cassette.model import Event, Kind, Source
from mcptape.errors import CassetteError

_MSG = Event.__dict__["msg"]
"""The slot `Event.msg` is stored in (a `LazyEvent` puts a property in front of it)."""

BLOCK = 1 << 16
"""How much `LineSource.read` reads ahead from a short line."""


class Parsed:
    """How many lazy events of one `LineSource` have read and parsed their line."""

    __slots__ = ("count",)

    def __init__(self) -> None:
        self.count = 0


class LineSource:
    """An open cassette file that lazy events read their lines from, by offset.

    It keeps the file it was opened on: a recorder that replaces the cassette meanwhile moves a
    new file into place, and this one still reads the old. A file changed in place (an editor's
    save) is caught when a line no longer holds its event (`LazyEvent.msg` raises).
    """

    def __init__(self, fd: int, name: str) -> None:
        self.fd = fd
        self.name = name
        self.parsed = Parsed()
        """How many of its events' lines were read and parsed (held by whoever owns the events:
        it outlives this source, which closes once no event needs it)."""
        self._lock = threading.Lock()
        self._ahead: tuple[int, bytes] = (0, b"")
        """(offset, the bytes read from there): what the last read read ahead."""

    def read(self, offset: int, length: int) -> bytes:
        """The `length` bytes at `offset`. A short line is read with the `BLOCK` bytes after it,
        and the lines in those are sliced from them: a replay plays its lines in about the
        order they are in the file, and a `pread` a line cost a pipelined replay more than its
        reads ahead do."""
        start, ahead = self._ahead  # (one read of one attribute: no lock needed)
        at = offset - start
        if at >= 0 and at + length <= len(ahead):
            return ahead[at : at + length]
        with self._lock:
            if self.fd < 0:
                raise CassetteError(f"{self.name}: closed")
            if length >= BLOCK:
                return os.pread(self.fd, length, offset)
            ahead = os.pread(self.fd, BLOCK, offset)
            self._ahead = (offset, ahead)
            return ahead[:length]

    def close(self) -> None:
        with self._lock:
            if self.fd >= 0:
                os.close(self.fd)
                self.fd = -1
                self._ahead = (0, b"")

    def __del__(self) -> None:
        self.close()


class LazyEvent(Event):
    """An `Event` whose `msg` is read from its line in the file on first access (and kept).

    Assigning `msg` sets it as for any event. `_replace` gives a plain `Event`.
    """

    __slots__ = ("_length", "_lineno", "_offset", "_source")

    _source: LineSource | None
    _offset: int
    _length: int
    _lineno: int
    """The event's file line; 0 for line `seq + 1`, where a cassette written in one go has it."""

    @property
    def line(self) -> int:
        """The event's file line."""
        return self._lineno or self.seq + 1

    @property
    def msg(self) -> Any:
        source = self._source
        if source is None:
            return _MSG.__get__(self)
        msg = _message_of(source.read(self._offset, self._length), self, source.name)
        _MSG.__set__(self, msg)
        self._source = None
        source.parsed.count += 1
        return msg

    @msg.setter
    def msg(self, value: Any) -> None:
        _MSG.__set__(self, value)
        self._source = None

    def _replace(self, **changes: Any) -> Event:
        values = {f.name: getattr(self, f.name) for f in dataclasses.fields(Event)}
        return Event(**(values | changes))


def lazy_event(
    fields: tuple[Any, ...], source: LineSource, offset: int, length: int, lineno: int
) -> LazyEvent:
    """The `LazyEvent` of `Event(*fields)` (its `msg` field unused), whose message is read from
    the line at `offset` (`length` bytes, file line `lineno`, 0 for `seq + 1`) of `source`."""
    out = LazyEvent(*fields)
    out._source = source
    out._offset = offset
    out._length = length
    out._lineno = lineno
    return out


def plain_messages(
    source: LineSource,
    offsets: list[int],
    lengths: list[int],
    seqs: list[int],
    ts: list[float],
    apart: list[list[int]],
    clients: list[int],
) -> list[LazyEvent]:
    """The `LazyEvent`s of message events that are nothing but a message (no text, HTTP
    metadata, info or redactions): the `k`th at `offsets[k]` (`lengths[k]` bytes) of `source`,
    event `seqs[k]` at `ts[k]`, on file line `seq + 1` but for the `[k, line]` pairs of `apart`,
    from the server but for the `k`s of `clients`. Built without `Event.__init__`, whose `msg`
    field goes through `LazyEvent.msg`'s setter, which would take about as long again
    (`docs/performance.md`)."""
    out: list[LazyEvent] = []
    add, new = out.append, LazyEvent.__new__
    message, server = Kind.MESSAGE, Source.SERVER
    for offset, length, seq, t in zip(offsets, lengths, seqs, ts, strict=True):
        ev = new(LazyEvent)
        ev.seq, ev.t, ev.kind, ev.src = seq, t, message, server
        ev.text = ev.b64 = ev.size = ev.http = ev.info = None
        ev.redacted = ()
        ev._source, ev._offset, ev._length, ev._lineno = source, offset, length, 0
        add(ev)
    for k, lineno in apart:
        out[k]._lineno = lineno
    client = Source.CLIENT
    for k in clients:
        out[k].src = client
    return out


def _message_of(line: bytes, event: LazyEvent, name: str) -> Any:
    """The message of `event`'s line, which must still be that event's line."""
    try:
        obj = orjson.loads(line)
        # (a kind and a source are `StrEnum`s, equal to their strings: `.value` is a descriptor
        # call, a third of what this check took)
        if obj["seq"] == event.seq and obj["kind"] == event.kind and obj["from"] == event.src:
            return obj["msg"]
    except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError):
        pass
    raise CassetteError(
        f"{name}:{event.line}: the cassette changed on disk while it was replayed "
        "(this line no longer holds the event read); restart the replay"
    )
