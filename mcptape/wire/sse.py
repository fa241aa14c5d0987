"""Incremental parser and the one serializer for `text/event-stream` (server-sent events).

`SseParser.feed(chunk)` returns the events completed by the chunk. Follows the WHATWG
rules MCP servers rely on: `event`, `data` (multi-line, joined with "\\n"), `id`, `retry`,
comment lines (starting with ":") kept as `comment`, CRLF / LF / CR line ends (a CR ends
its line at once; an LF right after it, even in the next chunk, is part of the same line end),
and one UTF-8 byte-order mark at the start of the stream, which is skipped.
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_MAX_EVENT = 64 * 1024 * 1024
"""Default bound on one event's size."""


BOM = b"\xef\xbb\xbf"
"""The UTF-8 byte-order mark a stream may start with."""


class SseTooLarge(ValueError):
    """An event grew beyond the parser's bound."""


@dataclass(frozen=True, slots=True)
class SseEvent:
    """One dispatched event (or a comment line, where `comment` is set and the rest empty)."""

    data: str = ""
    event: str | None = None
    id: str | None = None
    retry: int | None = None
    comment: str | None = None


class SseParser:
    """Incremental event-stream parser; feed bytes, get events."""

    def __init__(self, max_event: int = DEFAULT_MAX_EVENT) -> None:
        self._buf = bytearray()
        self._scanned = 0  # bytes of _buf known to hold no line end
        self._max = max_event
        self._start = True  # nothing seen yet: a byte-order mark may come first
        self._after_cr = False  # the last line ended with a CR: an LF next belongs to it
        self._reset()

    def _reset(self) -> None:
        self._data: list[str] = []
        self._event: str | None = None
        self._id: str | None = None
        self._retry: int | None = None
        self._has_fields = False
        self._size = 0

    def feed(self, chunk: bytes) -> list[SseEvent]:
        """Adds bytes; returns the events they complete."""
        self._buf += chunk
        out: list[SseEvent] = []
        if self._start:
            if len(self._buf) < len(BOM) and BOM.startswith(self._buf):
                return out  # maybe the first bytes of a byte-order mark: wait for more
            self._start = False
            if self._buf.startswith(BOM):
                del self._buf[: len(BOM)]
        while True:
            if self._after_cr and self._buf:
                self._after_cr = False
                if self._buf[0] == 0x0A:
                    del self._buf[:1]
                    continue
            cut, skip = _line_end(self._buf, self._scanned)
            if cut < 0:
                if len(self._buf) > self._max:
                    raise SseTooLarge(f"an event-stream line is longer than {self._max} bytes")
                self._scanned = len(self._buf)
                break
            line = self._buf[:cut].decode("utf-8", errors="replace")
            self._after_cr = skip == 1 and self._buf[cut] == 0x0D
            del self._buf[: cut + skip]
            self._scanned = 0
            self._line(line, out)
        return out

    def _line(self, line: str, out: list[SseEvent]) -> None:
        if line == "":
            if self._has_fields:
                out.append(SseEvent("\n".join(self._data), self._event, self._id, self._retry))
            self._reset()
            return
        if line.startswith(":"):
            out.append(SseEvent(comment=line[1:].removeprefix(" ")))
            return
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        self._size += len(line)
        if self._size > self._max:
            raise SseTooLarge(f"an event is longer than {self._max} bytes")
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self._id = value
        elif name == "retry":
            if value.isdigit():
                self._retry = int(value)
        else:
            return
        self._has_fields = True

    def close(self) -> list[SseEvent]:
        """At end of stream: an event not ended by a blank line is discarded, per the standard."""
        self._buf.clear()
        self._after_cr = False
        self._reset()
        return []


def _line_end(buf: bytes | bytearray, start: int = 0) -> tuple[int, int]:
    """Index of the first line end at or after `start` and its length (CRLF counts as one)."""
    lf = buf.find(b"\n", start)
    cr = buf.find(b"\r", start)
    if cr < 0 and lf < 0:
        return -1, 0
    if cr < 0 or (0 <= lf < cr):
        return lf, 1
    return (cr, 2) if buf[cr + 1 : cr + 2] == b"\n" else (cr, 1)


def serialize(event: SseEvent) -> bytes:
    """Encodes one event (or comment) as it goes on the wire, blank line included."""
    if event.comment is not None:
        return f":{event.comment}\n\n".encode()
    return encode(event.data.encode(), event.event, event_id=event.id, retry=event.retry)


def encode(
    data: bytes,
    event: str | None = None,
    *,
    event_id: str | None = None,
    retry: int | None = None,
    complete: bool = True,
) -> bytes:
    """One event from its data bytes (one `data:` line per line of it), the module's one serializer.

    `complete=False` leaves off the line end that completes the event: a client never sees it
    (the replay's `truncate` fault).
    """
    parts = []
    if event is not None:
        parts.append(b"event: " + event.encode() + b"\n")
    if event_id is not None:
        parts.append(b"id: " + event_id.encode() + b"\n")
    if retry is not None:
        parts.append(b"retry: " + str(retry).encode() + b"\n")
    parts.extend(b"data: " + line + b"\n" for line in data.split(b"\n"))
    if not complete:
        return b"".join(parts)[:-1]
    parts.append(b"\n")
    return b"".join(parts)
