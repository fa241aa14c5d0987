"""`python -m mcptape.mocks.relay SOCKET`: the stdio command of a mock (`Mock.command`).

Internal, not a command of the CLI: `mock.command` gives it the Unix socket of a mock open in
the test process (`mcptape.mocks.stdio_socket`). It copies its stdin to the socket and the
socket to its stdout, and exits when the mock's end closes: after the client closed stdin and
the session ended, or when the mock closed. Its stdout is paced as the stdio replay's is
(`mcptape.replay.pacing`): a response that follows progress waits until the client has read
the progress, which a client such as the TypeScript SDK 1.x needs; the mock's own pacing
ends at the socket.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import socket
import sys
import threading
from typing import Any

from mcptape.proc.fds import write_all
from mcptape.replay.pacing import Pacer
from mcptape.wire.ndjson import LineFramer

CHUNK = 1 << 16


def _to_mock(sock: socket.socket) -> None:
    """stdin -> the socket; at the end of stdin, the mock sees the end of its input."""
    while True:
        try:
            chunk = os.read(0, CHUNK)
            if not chunk:
                break
            sock.sendall(chunk)
        except OSError:
            break
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_WR)


def _message(line: bytes) -> Any:
    try:
        return json.loads(line)
    except ValueError:
        return None


def _to_client(sock: socket.socket) -> None:
    """The socket -> stdout, line by line through the pacer, until the mock's end closes."""
    pacer = Pacer.on(1, functools.partial(write_all, 1))
    framer = LineFramer(sys.maxsize)  # no line limit, so no line comes as an `Oversize`
    while True:
        try:
            chunk = sock.recv(CHUNK)
        except OSError:
            break
        if not chunk:
            break
        lines = [line + b"\n" for line in framer.feed(chunk) if isinstance(line, bytes)]
        if not lines:
            continue
        messages = [_message(line) for line in lines] if pacer.unread else [None] * len(lines)
        if not pacer.send(lines, messages):
            return
    tail = framer.flush()
    if isinstance(tail, bytes):
        write_all(1, tail)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m mcptape.mocks.relay SOCKET (mock.command runs it)", file=sys.stderr)
        return 2
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(args[0])
    except OSError as exc:
        print(
            f"mcptape mock: cannot reach the mock at {args[0]} ({exc.strerror}); mock.command serves only while its mock is open: run it inside `with mcptape.mock() as mock`",
            file=sys.stderr,
        )
        return 1
    threading.Thread(target=_to_mock, args=(sock,), daemon=True).start()
    _to_client(sock)
    sock.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
