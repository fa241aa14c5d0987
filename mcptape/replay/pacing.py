"""Stdio delivery pacing: a response that follows progress reaches the client in a later read.

The order on the wire is already right (a request's notifications, then its response), but a
client may still see them the wrong way round when they arrive in one read. The TypeScript SDK
1.x handles a response at once and a notification one microtask later: a progress notification
read together with its response finds its handler gone ("Received a progress notification for an
unknown token"). Other notifications lose nothing (their handler's microtask still runs before the
caller's code resumes), so only progress needs this. Node runs every pending microtask between two
reads, so the fix is to let the client read the progress before the response is complete: after
writing a progress notification, and before writing a response, wait until the client has read
everything written. Only pipes and sockets can say so (FIONREAD on a pipe; TIOCOUTQ on the socket
pair Node gives a child's stdout); a file or terminal gets no wait. Each wait is bounded (`limit`):
a client that does not read in time gets the rest at once, as before.

On a socket, "read" is not yet "returned to the client": the kernel counts a message read as soon
as it has copied it, and the same read then takes whatever else is queued. A response written in
that moment comes back in the read that carried the progress: 8 to 13 reads in 200,000 on a socket
pair when this wrote a response whole (the TS SDK client matrix failed on it in CI). A pipe holds
its lock for the whole read, so it never does this. So on a socket a response after progress is
written in two parts, all but its last byte and then the last byte, each once the client has read
what came before it. The client can only complete the response in a read after the one that carried
the progress: the first part may still join that read, but then the last byte is written only once
the first part is read, and the read would have to be caught in that moment twice (none in
600,000).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from mcptape.proc.fds import reads_take_later_writes, unread_probe

__all__ = ["Kind", "Pacer", "kind_of", "unread_probe"]

Kind = Literal["response", "progress", "other"]
"""What a line carries, as far as pacing cares."""

LIMIT = 1.0
"""Longest wait for the client to read, seconds. A client reads within microseconds when the
machine is idle, but a loaded one can keep it off the CPU for tens of milliseconds: a limit that
short lost the progress of many calls of a TS SDK client on a loaded CI machine. A client
that reads only after writing all its requests pays this once: after a wait runs out there is no
other until it has read everything."""

SPIN = 50e-6
"""How long a wait first yields the CPU and asks again, before it naps, seconds. A client on the
other core reads within microseconds, and one on this core may run when we yield; a nap costs
far more than it asks for on a virtual machine (it often sleeps several times as long). Yielding
for longer helped an idle machine no more and cost a loaded one the core the client needs."""

_FIRST_NAP = 20e-6
_LONGEST_NAP = 1e-3


_tightened: set[int] = set()


def _tight_timers() -> None:
    """Lets this thread's naps be as short as asked: Linux adds its default timer slack to
    every sleep, several times a `_FIRST_NAP`; this sets the thread's slack to a microsecond
    (`PR_SET_TIMERSLACK`, per thread, once). Elsewhere, or when it cannot, nothing changes."""
    thread = threading.get_ident()
    if thread in _tightened:
        return
    _tightened.add(thread)
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes  # only when a wait naps: not on the import path

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_TIMERSLACK, 1000, 0, 0, 0)
    except (OSError, AttributeError):
        pass


_PR_SET_TIMERSLACK = 29


def kind_of(msg: object) -> Kind:
    """A JSON-RPC response (or a batch of them), a progress notification, or anything else."""
    if isinstance(msg, dict):
        if "method" in msg:
            return "progress" if msg["method"] == "notifications/progress" else "other"
        return "response" if "id" in msg else "other"
    if isinstance(msg, list):
        return "response" if msg and all(kind_of(m) == "response" for m in msg) else "other"
    return "other"


@dataclass
class Pacer:
    """Writes lines to the client, holding a response back until the client has read what came
    before it, and its last byte until the client has read the rest, when a progress notification
    came before it."""

    write: Callable[[bytes], bool]
    unread: Callable[[], int] | None
    limit: float = LIMIT
    split: bool = True
    """Write a response after progress in two parts (the module's docstring): where the client's
    read can take what is written while it runs, a socket; not a pipe."""
    _pending: bool = False
    """A progress notification was written and no response after it yet."""
    _gave_up: bool = field(default=False)
    """The last wait ran out: the client is not reading; no more waits until it catches up."""

    @classmethod
    def on(cls, fd: int, write: Callable[[bytes], bool], *, limit: float = LIMIT) -> Pacer:
        """The pacer for lines `write` puts on `fd`, waiting as far as `fd` can tell."""
        return cls(write, unread_probe(fd), limit, split=reads_take_later_writes(fd))

    def send(self, lines: list[bytes], messages: Sequence[object]) -> bool:
        """Writes `lines` (`messages[i]` is what line i carries) in as few writes as the order
        allows; False when the client's end is closed. An end that cannot say what is unread
        gets one write, and the messages are not looked at."""
        if self.unread is None:
            return not lines or self.write(b"".join(lines))  # (one line: joined without a copy)
        pieces: list[bytes] = []
        """What the next write carries."""
        for line, msg in zip(lines, messages, strict=True):
            kind = kind_of(msg)
            if kind == "response" and self._pending:
                if pieces and not self.write(b"".join(pieces)):
                    return False
                self._wait()
                # on a socket: all but the last byte, read before the last is written
                if self.split and len(line) > 1:
                    if not self.write(line[:-1]):
                        return False
                    self._wait()
                    line = line[-1:]
                pieces = [line]
            else:
                pieces.append(line)
            if kind != "other":
                self._pending = kind == "progress"
        return not pieces or self.write(b"".join(pieces))

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
            spun = min(time.monotonic() + SPIN, deadline)
            while time.monotonic() < spun:
                os.sched_yield()
                if self.unread() == 0:
                    return
            _tight_timers()
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
