"""What is still unread on a file descriptor, as the kernel counts it (Linux ioctls, no I/O).

Two questions, one per direction: how much of what we wrote our peer has not read yet
(`unread_probe`: the replay holds a response back until the client has read the progress
before it), and how much waits for us to read (`unread_input`: the recorder's end of session
records what the client wrote just before the server went).

`fcntl` and `termios` are POSIX-only: they are imported when a question is asked, so this
module (and the recorder and replay that import it) loads on Windows too, where every
answer is "cannot tell".
"""

from __future__ import annotations

import os
import select
import stat
import struct
from collections.abc import Callable
from types import ModuleType


def _termios() -> ModuleType | None:
    """The `termios` module, or None where there is none (Windows)."""
    try:
        import termios
    except ImportError:
        return None
    return termios


def _ioctl_count(fd: int, request: int) -> int:
    import fcntl

    return int(struct.unpack("i", fcntl.ioctl(fd, request, b"\0\0\0\0"))[0])


def unread_probe(fd: int) -> Callable[[], int] | None:
    """A function returning the bytes written to `fd` that its reader has not read yet (0 once the
    reader has closed its end: nothing more will be read), or None when `fd` cannot tell (a file,
    a terminal, another platform)."""
    termios = _termios()
    if termios is None or not hasattr(select, "poll"):
        return None
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
    hangup = select.poll()
    hangup.register(fd, select.POLLERR | select.POLLHUP)

    def unread() -> int:
        pending = _ioctl_count(fd, request)
        return pending if pending == 0 or not hangup.poll(0) else 0

    try:
        unread()
    except OSError:
        return None
    return unread


def reads_take_later_writes(fd: int) -> bool:
    """Whether a read by `fd`'s peer can take what was written while it ran, after the kernel
    counted the earlier bytes read: a stream socket's read goes on to whatever is queued by then;
    a pipe's read holds the pipe's lock throughout, and a writer waits for it (so does FIONREAD).
    True when it cannot tell."""
    try:
        return not stat.S_ISFIFO(os.fstat(fd).st_mode)
    except OSError:
        return True


def unread_input(fd: int) -> int:
    """Bytes waiting to be read on `fd` (0 when it cannot say: a closed fd, a terminal gone,
    another platform)."""
    termios = _termios()
    if termios is None:
        return 0
    try:
        return _ioctl_count(fd, termios.FIONREAD)
    except OSError:
        return 0


def write_all(fd: int, data: bytes) -> bool:
    """Writes all of `data` to `fd`; False when the other end has gone (EPIPE, or any other
    write error: the caller stops writing there)."""
    view = memoryview(data)
    try:
        while view:
            view = view[os.write(fd, view) :]
    except OSError:
        return False
    return True
