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


class Oversize(NamedTuple):
    """A line longer than the framer's bound: its size and its first bytes."""

    size: int
    head: bytes


class LineFramer:
    """Splits a byte stream into lines at b"\\n"; a trailing b"\\r" is kept (bytes are verbatim)."""

    __slots__ = ("_buf", "_dropped", "_dropping", "_head", "_max")

    def __init__(self, max_line: int = DEFAULT_MAX_LINE) -> None:
        self._buf = bytearray()
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
            elif len(self._buf) + len(piece) > self._max:
                self._dropping = True
                self._head = bytes(self._buf[:4096]) if self._buf else bytes(piece[:4096])
                self._dropped = len(self._buf) + len(piece)
                self._buf.clear()
            elif nl >= 0 and not self._buf:
                out.append(
                    piece
                )  # fast path: a whole line inside one chunk, no copy into the buffer
                start = nl + 1
                continue
            else:
                self._buf += piece
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
        line = bytes(self._buf)
        self._buf.clear()
        return line

    def flush(self) -> bytes | Oversize | None:
        """At end of stream: the last line if it had no newline, else None."""
        if self._dropping or self._buf:
            return self._take()
        return None

    @property
    def pending(self) -> int:
        """How many bytes of an unfinished line are held."""
        return len(self._buf)
