"""Incremental newline-delimited framing, as MCP's stdio transport uses (one message per line).

`LineFramer.feed(chunk)` returns the complete lines seen so far (without the newline);
a partial line is kept until its newline arrives. Lines longer than `max_line` are not
kept whole: the framer reports them as `Oversize` values (their size and first bytes), so
memory stays bounded whatever a peer sends.
"""

from __future__ import annotations

from typing import NamedTuple

DEFAULT_MAX_LINE = 256 * 1024 * 1024
"""Default bound on one line: 256 MiB, far above any real MCP message."""

HEAD = 4096
"""How many first bytes of an oversize line are kept."""


class Oversize(NamedTuple):
    """A line longer than the framer's bound: its size and its first bytes."""

    size: int
    head: bytes


class LineFramer:
    """Splits a byte stream into lines at b"\\n"; a trailing b"\\r" is kept (bytes are verbatim).

    An unfinished line is held as the pieces it came in, joined once when its newline comes,
    rather than grown into a buffer chunk by chunk and copied out of it again."""

    __slots__ = ("_dropped", "_dropping", "_head", "_held", "_max", "_parts")

    def __init__(self, max_line: int = DEFAULT_MAX_LINE) -> None:
        self._parts: list[bytes] = []
        self._held = 0
        """The bytes in `_parts`."""
        self._max = max_line
        self._dropping = False
        self._dropped = 0
        self._head = b""

    def feed(self, chunk: bytes) -> list[bytes | Oversize]:
        """Adds bytes; returns every line completed by them, in order."""
        out: list[bytes | Oversize] = []
        start = 0
        n = len(chunk)
        while start < n:
            nl = chunk.find(b"\n", start)
            end = n if nl < 0 else nl
            piece = chunk[start:end]
            if self._dropping:
                self._dropped += len(piece)
            elif self._held + len(piece) > self._max:
                self._dropping = True
                self._head = b"".join((*self._parts[:HEAD], piece[:HEAD]))[:HEAD]
                self._dropped = self._held + len(piece)
                self._parts.clear()
                self._held = 0
            elif nl >= 0 and not self._parts:
                out.append(piece)  # a whole line inside one chunk: no copy
                start = nl + 1
                continue
            elif piece:
                self._parts.append(piece)
                self._held += len(piece)
            if nl < 0:
                break
            out.append(self._take())
            start = nl + 1
        return out

    def _take(self) -> bytes | Oversize:
        if self._dropping:
            line: bytes | Oversize = Oversize(self._dropped, self._head)
            self._dropping, self._dropped, self._head = False, 0, b""
            return line
        line = b"".join(self._parts)  # (a line of one piece is that piece, not a copy)
        self._parts.clear()
        self._held = 0
        return line

    def flush(self) -> bytes | Oversize | None:
        """At end of stream: the last line if it had no newline, else None."""
        if self._dropping or self._parts:
            return self._take()
        return None

    @property
    def pending(self) -> int:
        """How many bytes of an unfinished line are held."""
        return self._held
