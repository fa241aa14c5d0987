"""Stdio delivery pacing: a response that follows notifications reaches the client in a later read.

The order on the wire is already right (a request's notifications, then its response), but a
client may still see them the wrong way round when they arrive in one read. The TypeScript SDK
1.x handles a response at once and a notification one microtask later: a progress notification
read together with its response finds its handler gone ("Received a progress notification for an
unknown token"). Node runs every pending microtask between two reads of a pipe, so the fix is to
let the client read the notifications before the response is written: after writing lines that
end in a notification (or a server request), and before writing a response, wait until the pipe
holds no unread bytes. Only pipes and sockets can say so (FIONREAD on a pipe; TIOCOUTQ on the
socket pair Node gives a child's stdout); a file or terminal gets no wait. Each wait is bounded
(`limit`): a client that does not read in time gets the rest at once, as before.
"""

from __future__ import annotations

import fcntl
import os
import stat
import struct
import termios
import time
from collections.abc import Callable
from dataclasses import dataclass, field

LIMIT = 0.05
"""Longest wait for the client to read, seconds."""

_FIRST_NAP = 20e-6
_LONGEST_NAP = 1e-3


def unread_probe(fd: int) -> Callable[[], int] | None:
    """A function returning the bytes written to `fd` that its reader has not read yet, or None
    when `fd` cannot tell (a file, a terminal, another platform)."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return None
    if stat.S_ISFIFO(mode):
        request = termios.FIONREAD  # the pipe's buffer, the same from either end
    elif stat.S_ISSOCK(mode) and hasattr(termios, "TIOCOUTQ"):
        request = termios.TIOCOUTQ  # a stream socket's send queue: what the peer has not read
    else:
        return None
    buf = bytearray(4)

    def unread() -> int:
        fcntl.ioctl(fd, request, buf)
        return int(struct.unpack("i", buf)[0])

    try:
        unread()
    except OSError:
        return None
    return unread


@dataclass
class Pacer:
    """Writes lines to the client, holding a response back until the client has read what came
    before it, when notifications or server requests came before it."""

    write: Callable[[bytes], bool]
    unread: Callable[[], int] | None
    limit: float = LIMIT
    _pending: bool = False
    """A notification or server request was written and no response after it yet."""
    _gave_up: bool = field(default=False)
    """The last wait ran out: the client is not reading; no more waits until it catches up."""

    def send(self, lines: list[tuple[bytes, bool]]) -> bool:
        """Writes `lines` (each with True when it is a response), in as few writes as the order
        allows; False when the client's end is closed."""
        batch: list[bytes] = []
        for line, response in lines:
            if response and self._pending and self.unread is not None:
                if batch and not self.write(b"".join(batch)):
                    return False
                batch = []
                self._wait()
            batch.append(line)
            self._pending = not response
        return not batch or self.write(b"".join(batch))

    def _wait(self) -> None:
        self._pending = False
        if self.unread is None:
            return
        try:
            if self.unread() == 0:
                self._gave_up = False
                return
            if self._gave_up:
                return
            deadline = time.monotonic() + self.limit
            nap = _FIRST_NAP
            while self.unread() > 0:
                left = deadline - time.monotonic()
                if left <= 0:
                    self._gave_up = True
                    return
                time.sleep(min(nap, left))
                nap = min(nap * 2, _LONGEST_NAP)
        except OSError:  # the pipe went away: the write that follows says so
            return
