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

from mcptape.cassette.codec import DecodeError, decode_line
from mcptape.cassette.model import Event, Kind, Source
from mcptape.errors import CassetteError

_MSG = Event.__dict__["msg"]
"""The slot `Event.msg` is stored in (a `LazyEvent` puts a property in front of it)."""
_SEQ = Event.__dict__["seq"]
"""The slot `Event.seq` is stored in: a `LazyEvent` keeps its seq and offset there, as one int."""

UNREAD: Any = object()
"""What a `LazyEvent`'s message slot holds until its line is read."""

BLOCK = 1 << 16
"""How much `LineSource.line` reads ahead from a short line."""


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
        self.bits = max(os.fstat(fd).st_size * 2, 1 << 32).bit_length()
        """The bits of an offset in a lazy event's `seq` slot (`placed`): room for the file to
        double while it is read."""
        self.apart: dict[int, int] = {}
        """Offset -> file line of the lazy events whose line is not `seq + 1` (`LazyEvent.line`)."""
        self._lock = threading.Lock()
        self._ahead: tuple[int, bytes] = (0, b"")
        """(offset, the bytes read from there): what the last read read ahead."""

    def line(self, offset: int) -> bytes:
        """The line at `offset`, without its newline (the file's last line may have none). A
        short line is read with the `BLOCK` bytes after it, and the lines in those are sliced
        from them: a replay plays its lines in about the order they are in the file, and a
        `pread` a line cost a pipelined replay more than its reads ahead do."""
        start, ahead = self._ahead  # (one read of one attribute: no lock needed)
        at = offset - start
        if at >= 0:
            end = ahead.find(b"\n", at)
            if end >= 0:
                return ahead[at:end]
        with self._lock:
            if self.fd < 0:
                raise CassetteError(f"{self.name}: closed")
            ahead = os.pread(self.fd, BLOCK, offset)
            end = ahead.find(b"\n")
            if end >= 0:
                self._ahead = (offset, ahead)
                return ahead[:end]
            return self._long_line(offset, ahead)

    def _long_line(self, offset: int, first: bytes) -> bytes:
        """The line at `offset` that the `first` bytes read from there do not end (a long line,
        or the last one, without a newline), read on in growing pieces; not kept as read ahead."""
        parts = [first]
        at, size = offset + len(first), BLOCK
        while len(parts[-1]) == size:  # a full read: the line may go on (a short one: the end)
            size *= 2
            part = os.pread(self.fd, size, at)
            end = part.find(b"\n")
            if end >= 0:
                parts.append(part[:end])
                break
            parts.append(part)
            at += len(part)
        return b"".join(parts)

    def placed(self, seq: int, offset: int) -> int:
        """What a lazy event of seq `seq` at `offset` keeps in its `seq` slot: both in one int,
        which holds them in the memory either would take (a replay of a big cassette holds one
        for each of its events)."""
        if offset >> self.bits:
            raise CassetteError(f"{self.name}: the file grew while it was read; replay it again")
        return seq << self.bits | offset

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

    It holds no more than where its line is: its file line is its source's to say (`apart`), as
    a line apart from `seq + 1` is rare. Assigning `msg` sets it as for any event. `_replace`
    gives a plain `Event`.
    """

    __slots__ = ("_source",)

    _source: LineSource

    @property
    def seq(self) -> int:
        """Its seq, kept with its offset (`LineSource.placed`)."""
        return _SEQ.__get__(self) >> self._source.bits  # type: ignore[no-any-return]

    @seq.setter
    def seq(self, value: int) -> None:
        _SEQ.__set__(self, self._source.placed(value, self._offset))

    @property
    def _offset(self) -> int:
        """Where its line starts in the file."""
        return _SEQ.__get__(self) & ((1 << self._source.bits) - 1)  # type: ignore[no-any-return]

    @property
    def line(self) -> int:
        """The event's file line."""
        return self.where()[2]

    def where(self) -> tuple[int, int, int]:
        """(seq, offset, file line), in one call (an index file's writer asks each event)."""
        source, placed = self._source, _SEQ.__get__(self)
        bits = source.bits
        seq, offset = placed >> bits, placed & ((1 << bits) - 1)
        return seq, offset, source.apart.get(offset) or seq + 1

    @property
    def msg(self) -> Any:
        msg = _MSG.__get__(self)
        if msg is not UNREAD:
            return msg
        source = self._source
        msg = _message_of(source.line(self._offset), self, source.name)
        _MSG.__set__(self, msg)
        source.parsed.count += 1
        return msg

    @msg.setter
    def msg(self, value: Any) -> None:
        _MSG.__set__(self, value)

    def peek(self) -> Any:
        """Its message, read from the file if it is not in memory, and not kept (nor counted)."""
        msg = _MSG.__get__(self)
        if msg is not UNREAD:
            return msg
        return _message_of(self._source.line(self._offset), self, self._source.name)

    def _replace(self, **changes: Any) -> Event:
        values = {f.name: getattr(self, f.name) for f in dataclasses.fields(Event)}
        return Event(**(values | changes))

    def __reduce__(self) -> tuple[Any, ...]:
        """A copy (or a pickle) is a plain `Event`, its message read: its slots are not its
        fields."""
        return (Event, tuple(getattr(self, f.name) for f in dataclasses.fields(Event)))


def lazy_event(fields: tuple[Any, ...], source: LineSource, offset: int, lineno: int) -> LazyEvent:
    """The `LazyEvent` of `Event(*fields)` (its `msg` field unused), whose message is read from
    the line at `offset` (file line `lineno`) of `source`."""
    out = lazy_at(source, fields[0], offset)
    out.t, out.kind, out.src = fields[1:4]
    out.text, out.b64, out.size, out.http, out.info, out.redacted = fields[5:]
    if lineno != fields[0] + 1:
        source.apart[offset] = lineno
    return out


def lazy_at(source: LineSource, seq: int, offset: int) -> LazyEvent:
    """A `LazyEvent` of seq `seq` whose line is at `offset` of `source`, its message unread (the
    caller sets its other fields)."""
    out = LazyEvent.__new__(LazyEvent)
    out._source = source
    _SEQ.__set__(out, source.placed(seq, offset))
    _MSG.__set__(out, UNREAD)
    return out


def plain_messages(
    source: LineSource,
    offset_steps: list[int],
    seq_steps: list[int],
    ts: list[float],
    apart: list[list[int]],
    clients: list[int],
) -> list[LazyEvent]:
    """The `LazyEvent`s of message events that are nothing but a message (no text, HTTP
    metadata, info or redactions): the `k`th at the sum of the first `k + 1` offset steps
    (each from the offset before, the first from 0) of `source`, event of the sum of as many
    seq steps, at `ts[k]`, on file line `seq + 1` but for the `[k, line]` pairs of `apart`,
    from the server but for the `k`s of `clients`. Steps are small numbers, which Python does
    not allocate: offsets and seqs read as they are peaked at many megabytes, let go of
    among the events kept. Built without `Event.__init__`, whose `msg` field goes through
    `LazyEvent.msg`'s setter, which would take about as long again (`docs/performance.md`)."""
    out: list[LazyEvent] = []
    add, new = out.append, LazyEvent.__new__
    message, server, unread, unset = Kind.MESSAGE, Source.SERVER, UNREAD, _MSG.__set__
    bits, set_seq = source.bits, _SEQ.__set__
    offset = seq = 0
    for step, seq_step, t in zip(offset_steps, seq_steps, ts, strict=True):
        offset += step
        seq += seq_step
        ev = new(LazyEvent)
        ev._source = source
        set_seq(ev, seq << bits | offset)
        ev.t, ev.kind, ev.src = t, message, server
        unset(ev, unread)
        ev.text = ev.b64 = ev.size = ev.http = ev.info = None
        ev.redacted = ()
        add(ev)
    source.placed(0, offset)  # (the last offset is the greatest: each fit, as `placed` has it)
    lines = source.apart
    for k, lineno in apart:
        lines[out[k]._offset] = lineno
    client = Source.CLIENT
    for k in clients:
        out[k].src = client
    return out


def _message_of(line: bytes, event: LazyEvent, name: str) -> Any:
    """The message of `event`'s line, which must still be that event's line."""
    try:
        obj = decode_line(line)
        # (a kind and a source are `StrEnum`s, equal to their strings: `.value` is a descriptor
        # call, a third of what this check took)
        if obj["seq"] == event.seq and obj["kind"] == event.kind and obj["from"] == event.src:
            return obj["msg"]
    except (DecodeError, KeyError, TypeError, AttributeError):
        pass
    raise CassetteError(
        f"{name}:{event.line}: the cassette changed on disk while it was replayed "
        "(this line no longer holds the event read); restart the replay"
    )
